//! Rules that name calls, as people write them in config and flags: `bash(git status)`,
//! `bash(npm test:*)` (a prefix), `edit_file(src/**)` (a path glob), `read_file(**/.env)`,
//! `mcp__github__*` (every tool of a server), `web_fetch(domain:docs.rs)` (a host, or
//! `*.docs.rs` for its subdomains), or a bare tool name (every call of it).
//! Claude Code's tool names are accepted as aliases (`Bash(npm test:*)`, `Read(**/.env)`), so
//! rules can be pasted from its settings.

use std::fmt;
use std::path::Path;

use rein_tools::PathGlob;
use serde::Serialize;

use super::CallView;

/// Claude Code's tool names, and rein's.
const ALIASES: [(&str, &str); 15] = [
    ("Bash", "bash"),
    ("Read", "read_file"),
    ("Edit", "edit_file"),
    ("MultiEdit", "edit_file"),
    ("Write", "write_file"),
    ("Glob", "glob"),
    ("Grep", "grep"),
    ("LS", "glob"),
    ("Task", "agent"),
    ("TodoWrite", "todo_write"),
    ("BashOutput", "bash_output"),
    ("KillShell", "kill_shell"),
    ("KillBash", "kill_shell"),
    ("Skill", "skill"),
    ("WebFetch", "web_fetch"),
];

/// rein's name for a tool named `name` in a rule or a hook matcher.
pub fn canonical_tool_name(name: &str) -> &str {
    ALIASES
        .iter()
        .find(|(alias, _)| *alias == name)
        .map_or(name, |(_, rein)| rein)
}

/// Claude Code's tool names that rein accepts as aliases in rules and hook matchers.
pub(crate) fn claude_tool_names() -> impl Iterator<Item = &'static str> {
    ALIASES.iter().map(|(alias, _)| *alias)
}

/// A tool, and optionally which of its calls.
#[derive(Debug, Clone, Serialize)]
pub struct Rule {
    /// The tool's name (rein's; `*` matches any characters, for MCP servers' tools).
    pub tool: String,
    /// Which calls; `None`: every call.
    pub pattern: Option<Pattern>,
}

/// Which calls of a tool a rule names.
#[derive(Debug, Clone, Serialize)]
#[serde(into = "String")]
pub enum Pattern {
    /// A shell command: exactly this one, or (`prefix`) every one that starts with it as
    /// whole words. Matched against each simple command of a command line.
    Command {
        /// The command or prefix.
        text: String,
        /// Written `text:*`.
        prefix: bool,
    },
    /// A path glob: relative ones match paths inside the workspace (and, when they start
    /// with `**/`, anywhere), absolute ones (or `~/...`) match absolute paths.
    Path {
        /// The glob as written.
        glob: String,
        /// Compiled once.
        #[serde(skip)]
        matcher: PathGlob,
    },
    /// A host web_fetch reaches, as written in the URL (lowercase): exactly this one, or
    /// (written `*.docs.rs`) any below it.
    Domain {
        /// The host, without a leading `*.`.
        host: String,
        /// Written `*.host`: names the hosts below it (not the host itself).
        subdomains: bool,
    },
}

impl From<Pattern> for String {
    fn from(pattern: Pattern) -> String {
        pattern.to_string()
    }
}

impl PartialEq for Pattern {
    fn eq(&self, other: &Self) -> bool {
        self.to_string() == other.to_string()
    }
}

impl Eq for Pattern {}

impl PartialEq for Rule {
    fn eq(&self, other: &Self) -> bool {
        self.tool == other.tool && self.pattern == other.pattern
    }
}

impl Eq for Rule {}

/// The tools whose calls name a shell command.
fn is_command_tool(tool: &str) -> bool {
    tool == "bash"
}

/// The tool whose calls name a host.
const WEB_FETCH: &str = "web_fetch";

/// The host a web_fetch call's `url` names, lowercase, as written (no port).
pub(crate) fn url_host(arguments: &serde_json::Value) -> Option<String> {
    let url = arguments.get("url")?.as_str()?;
    let parsed = url::Url::parse(url.trim()).ok()?;
    Some(parsed.host_str()?.to_ascii_lowercase())
}
/// Why a rule does not parse: the rule as written, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct RuleError(String);

impl Rule {
    /// Parses a rule as written (`Bash(npm test:*)`, `read_file(**/.env)`, `mcp__x__*`).
    /// `home` expands a leading `~/` in path patterns.
    pub fn parse(text: &str, home: Option<&Path>) -> Result<Rule, RuleError> {
        Self::parse_text(text, home).map_err(RuleError)
    }

    fn parse_text(text: &str, home: Option<&Path>) -> Result<Rule, String> {
        let text = text.trim();
        let (name, pattern) = match text.split_once('(') {
            Some((name, rest)) => {
                let Some(inner) = rest.strip_suffix(')') else {
                    return Err(format!(
                        "\"{text}\" opens a parenthesis it does not close: write tool(pattern)"
                    ));
                };
                (name.trim(), Some(inner.trim()))
            }
            None => (text, None),
        };
        if name.is_empty()
            || !name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-*.".contains(c))
        {
            return Err(format!(
                "\"{text}\" does not start with a tool name (letters, digits, _ and * for many)"
            ));
        }
        let tool = canonical_tool_name(name).to_owned();
        let pattern = match pattern {
            None => None,
            Some("") | Some("*") | Some("**") if !is_command_tool(&tool) => None,
            Some("") => return Err(format!("\"{text}\" has an empty pattern")),
            Some(inner) if tool == WEB_FETCH => Some(Pattern::domain(inner, text)?),
            Some(inner) if is_command_tool(&tool) => Some(match inner.strip_suffix(":*") {
                Some(prefix) => Pattern::Command {
                    text: normalize_command(prefix),
                    prefix: true,
                },
                None => Pattern::Command {
                    text: normalize_command(inner),
                    prefix: false,
                },
            }),
            Some(inner) => Some(Pattern::path(inner, home)?),
        };
        Ok(Rule { tool, pattern })
    }

    /// The rule "yes for the rest of the session" adds for `call`: the exact command for
    /// bash; for a tool that names a file, every file inside the workspace (`tool(**)`: a
    /// yes to an edit in the project never lets edits elsewhere through); every call of
    /// any other tool.
    pub fn for_session(call: &CallView<'_>) -> Rule {
        let pattern = match call.tool {
            "bash" => call
                .arguments
                .get("command")
                .and_then(serde_json::Value::as_str)
                .map(|command| Pattern::Command {
                    text: normalize_command(command),
                    prefix: false,
                }),
            WEB_FETCH => url_host(call.arguments).map(|host| Pattern::Domain {
                host,
                subdomains: false,
            }),
            _ if call.arguments.get("file_path").is_some() => Pattern::path("**", None).ok(),
            _ => None,
        };
        Rule {
            tool: call.tool.to_owned(),
            pattern,
        }
    }

    /// The wider rule "yes for the session" offers for a plain command: its prefix
    /// (`bash(touch:*)` for `touch one.txt`); `None` where only the exact line is safe.
    pub fn prefix_for_session(call: &CallView<'_>) -> Option<Rule> {
        let prefix = call.shell?.prefix.as_ref()?;
        is_command_tool(call.tool).then(|| Rule {
            tool: call.tool.to_owned(),
            pattern: Some(Pattern::Command {
                text: normalize_command(prefix),
                prefix: true,
            }),
        })
    }

    /// Whether this rule is about `tool` at all.
    pub fn names_tool(&self, tool: &str) -> bool {
        match self.tool.find('*') {
            // `mcp__github`, Claude Code's form for every tool of a server.
            None if is_mcp_server(&self.tool) => tool
                .strip_prefix(self.tool.as_str())
                .is_some_and(|rest| rest.starts_with("__")),
            None => self.tool == tool,
            Some(_) => PathGlob::parse(&self.tool).is_ok_and(|glob| glob.is_match(tool)),
        }
    }

    /// Whether the rule names this simple command (one command of a command line, as
    /// text). A rule without a pattern names every command.
    pub fn names_command(&self, simple_command: &str) -> bool {
        match &self.pattern {
            None => true,
            Some(Pattern::Command { text, prefix }) => {
                let command = normalize_command(simple_command);
                if *prefix {
                    command
                        .strip_prefix(text.as_str())
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with(' '))
                } else {
                    command == *text
                }
            }
            Some(Pattern::Path { .. } | Pattern::Domain { .. }) => false,
        }
    }

    /// Whether the rule names `host` (lowercase), for web_fetch. A rule without a pattern
    /// names every host.
    pub fn names_host(&self, host: &str) -> bool {
        match &self.pattern {
            None => true,
            Some(Pattern::Domain {
                host: named,
                subdomains: false,
            }) => host == named,
            Some(Pattern::Domain {
                host: named,
                subdomains: true,
            }) => host
                .strip_suffix(named.as_str())
                .is_some_and(|rest| rest.ends_with('.')),
            Some(Pattern::Command { .. } | Pattern::Path { .. }) => false,
        }
    }

    /// Whether the rule names a call of a file tool on `path` (`in_workspace`: relative to
    /// the workspace, when inside it). A rule without a pattern names every path.
    pub fn names_path(&self, absolute: &Path, in_workspace: Option<&Path>) -> bool {
        match &self.pattern {
            None => true,
            Some(Pattern::Path { glob, matcher }) => {
                let anchored = glob.starts_with('/');
                let anywhere = glob.starts_with("**/");
                match in_workspace {
                    Some(relative) if !anchored && matcher.is_match(relative) => true,
                    _ => (anchored || anywhere) && matcher.is_match(absolute),
                }
            }
            Some(Pattern::Command { .. } | Pattern::Domain { .. }) => false,
        }
    }

    /// Whether the rule names `call` as a whole (a tool that is neither bash nor a file
    /// tool, or a rule without a pattern). Bash and file calls are matched through
    /// [`Rule::names_command`] and [`Rule::names_path`] by the engine.
    pub fn names_call(&self, call: &CallView<'_>) -> bool {
        if !self.names_tool(call.tool) {
            return false;
        }
        match &self.pattern {
            None => true,
            Some(Pattern::Command { .. }) => call.shell.is_some_and(|shell| {
                shell.simple_commands.iter().any(|c| self.names_command(c))
                    || shell
                        .rule_texts
                        .iter()
                        .flatten()
                        .any(|c| self.names_command(c))
            }),
            Some(Pattern::Path { .. }) => call
                .path
                .is_some_and(|p| self.names_path(&p.absolute, p.in_workspace.as_deref())),
            Some(Pattern::Domain { .. }) => {
                url_host(call.arguments).is_some_and(|host| self.names_host(&host))
            }
        }
    }
}

impl Pattern {
    /// `domain:HOST` (or `domain:*.HOST`), the only pattern web_fetch rules take.
    fn domain(inner: &str, text: &str) -> Result<Pattern, String> {
        let Some(host) = inner.strip_prefix("domain:").map(str::trim) else {
            return Err(format!(
                "\"{text}\": web_fetch rules name a host, as in web_fetch(domain:docs.rs)"
            ));
        };
        let (host, subdomains) = match host.strip_prefix("*.") {
            Some(rest) => (rest, true),
            None => (host, false),
        };
        if host.is_empty() || host.contains(['/', ':', '*', ' ']) && !host.starts_with('[') {
            return Err(format!(
                "\"{text}\" does not name a host: write web_fetch(domain:docs.rs), without \
                 scheme, port or path"
            ));
        }
        Ok(Pattern::Domain {
            host: host.to_ascii_lowercase(),
            subdomains,
        })
    }

    fn path(glob: &str, home: Option<&Path>) -> Result<Pattern, String> {
        let normalized = normalized_glob(glob);
        let expanded = match (normalized.strip_prefix("~/"), home) {
            (Some(rest), Some(home)) => format!("{}/{rest}", home.display()),
            _ => normalized,
        };
        let matcher = globset::GlobBuilder::new(&expanded)
            .literal_separator(true)
            .build()
            .map(|built| PathGlob::new(&built))
            .map_err(|e| format!("\"{glob}\" is not a valid path glob: {e}"))?;
        Ok(Pattern::Path {
            glob: expanded,
            matcher,
        })
    }
}

/// A glob as the calls it is matched with are written: `./src/**` is `src/**` (calls are
/// matched without their `./`), and a directory written `src/` is everything below it.
fn normalized_glob(glob: &str) -> String {
    let mut glob = glob;
    while let Some(rest) = glob.strip_prefix("./") {
        glob = rest.trim_start_matches('/');
    }
    match glob.strip_suffix('/') {
        Some(dir) if !dir.is_empty() && !dir.ends_with("**") => format!("{dir}/**"),
        _ => glob.to_owned(),
    }
}

/// A command with runs of whitespace made single spaces, for comparing.
fn normalize_command(command: &str) -> String {
    command.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl fmt::Display for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pattern::Command { text, prefix: true } => write!(f, "{text}:*"),
            Pattern::Command {
                text,
                prefix: false,
            } => f.write_str(text),
            Pattern::Path { glob, .. } => f.write_str(glob),
            Pattern::Domain {
                host,
                subdomains: false,
            } => write!(f, "domain:{host}"),
            Pattern::Domain {
                host,
                subdomains: true,
            } => write!(f, "domain:*.{host}"),
        }
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.pattern {
            Some(pattern) => write!(f, "{}({pattern})", self.tool),
            None => f.write_str(&self.tool),
        }
    }
}

/// Whether a rule's tool names a whole MCP server (`mcp__github`), not one of its tools
/// (`mcp__github__create_issue`).
fn is_mcp_server(tool: &str) -> bool {
    tool.strip_prefix("mcp__")
        .is_some_and(|server| !server.is_empty() && !server.contains("__"))
}

#[cfg(test)]
#[path = "rule_tests.rs"]
mod tests;
