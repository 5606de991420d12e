//! Permissions: what may run without asking, what asks, what is refused.
//!
//! A [`Policy`] decides for each call, after its arguments are checked. The built-in one,
//! [`ModePolicy`], follows the permission mode (DESIGN.md) and the rules the person added
//! during the session ("yes for the rest of the session"). The hard deny list of dangerous
//! commands is enforced by the bash tool itself, in every mode.

mod engine;
pub mod facts;
mod judge;
mod known;
mod mode;
mod rule;

use std::path::PathBuf;

use parking_lot::Mutex;
use rein_tools::ToolKind;
use serde_json::Value;

pub use engine::{RuleOrigin, RuleSet, SENSITIVE_FILES, SourcedRule, Verdict};
pub use known::{AGENT_TOOL_NAMES, RuleCheck, check_rule_tools, unknown_tool};
pub use mode::PermissionMode;
pub use rule::{Pattern, Rule, RuleError, canonical_tool_name};

/// A call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallView<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// What kind of effect the tool has.
    pub kind: ToolKind,
    /// The checked arguments.
    pub arguments: &'a Value,
    /// Where the call's `file_path` points, resolved, when it has one.
    pub path: Option<&'a PathTarget>,
    /// For a shell call, what is known of its command line.
    pub shell: Option<&'a ShellFacts>,
    /// Whether its effects stay inside rein's OS sandbox when one is enforced (false for an
    /// MCP server's tool whose server runs outside it).
    pub confined: bool,
}

/// What the shell parser found in a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellFacts {
    /// Each simple command, as text a rule can match (`npm test -- --watch`).
    pub simple_commands: Vec<String>,
    /// Each simple command in the form deny and ask rules also match: quotes removed,
    /// wrappers and git's global options skipped, the program's directory dropped
    /// (`command /usr/bin/git -C . "push"` → `git push`); `None` when the program is known
    /// only when it runs (`$CMD push`).
    pub rule_texts: Vec<Option<String>>,
    /// For each simple command, whether an argument is known only when it runs (`npm $X`):
    /// a rule naming the program cannot tell whether it names the command.
    pub dynamic_args: Vec<bool>,
    /// For each simple command, whether it is read-only on its own, when nothing around it
    /// (a substitution, a function, `&`, unparsable text) stands in the way; all `false`
    /// otherwise. A line whose commands are each read-only or allowed by a rule runs.
    pub harmless: Vec<bool>,
    /// Ok when the whole command line is provably read-only; else why not.
    pub read_only: Result<(), rein_shell::NotReadOnly>,
    /// The prefix "yes for the session" may offer (`touch` for `touch one.txt`), when the
    /// line is one plain command for which a prefix is safe.
    pub prefix: Option<String>,
    /// Set when the hard deny list refuses it.
    pub danger: Option<String>,
    /// The files its commands name (operands, `--opt=FILE` values, redirections, and what a
    /// recursive search of a named directory would read), resolved against its directory:
    /// file rules (`read_file(**/.env)` and the like) apply to them too.
    pub files: Vec<PathTarget>,
    /// Why some file it reads cannot be known before it runs (`cat $F`, too many names, a
    /// directory too big to look through); file rules cannot vouch for such a line.
    pub unknown_files: Option<String>,
}

/// A file a call names, resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTarget {
    /// The path, absolute.
    pub absolute: PathBuf,
    /// The path relative to the workspace root, when it is inside it.
    pub in_workspace: Option<PathBuf>,
    /// Outside the workspace and every directory file tools may touch on their own (rein's
    /// tool-output files are not outside): the call needs a permission of its own.
    pub outside: bool,
    /// Whether a shell command writes it (a `>` redirection); file tools' kind says it.
    pub write: bool,
}

/// What may happen to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the person first (refused when no one can be asked).
    Ask {
        /// Why, for the person.
        reason: String,
        /// A hook's "allow" cannot wave it (an ask rule the person wrote, an edit outside
        /// the workspace); only the person can.
        firm: bool,
    },
    /// Do not run it.
    Deny {
        /// Why, for the model and the person.
        reason: String,
    },
}

impl Decision {
    /// Ask, with why; a hook's "allow" may wave it.
    pub fn ask(reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Decision::Ask {
            reason,
            firm: false,
        }
    }

    /// Ask, with why; only the person can allow it.
    pub fn firm_ask(reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Decision::Ask { reason, firm: true }
    }

    /// Refuse, with why.
    pub fn deny(reason: impl Into<String>) -> Self {
        let reason = reason.into();
        Decision::Deny { reason }
    }
}

/// Decides whether calls run.
pub trait Policy: Send + Sync {
    /// The decision for one call.
    fn decide(&self, call: &CallView<'_>) -> Decision;
    /// Allows calls `rule` matches for the rest of the session (the person said so).
    fn allow_for_session(&self, rule: Rule);
    /// Asks before calls `rules` match, in every mode, until replaced (an empty list ends
    /// it): a command that must show its result before it is written (`/init`).
    fn ask_first(&self, _rules: Vec<Rule>) {}
    /// How the person can allow what this policy asks about when no one can be asked.
    fn how_to_allow(&self, call: &CallView<'_>) -> String;
    /// Whether a rule the person wrote (config or flags) allows `tool` to reach `host`: lets
    /// web_fetch reach that host at a private or loopback address.
    fn names_host(&self, _tool: &str, _host: &str) -> bool {
        false
    }
}

/// The permission mode with the person's rules: see `engine.rs` for the order of checks.
#[derive(Debug)]
pub struct ModePolicy {
    mode: PermissionMode,
    rules: RuleSet,
    sensitive: Vec<SourcedRule>,
    session_rules: Mutex<Vec<SourcedRule>>,
    asked: Mutex<Vec<SourcedRule>>,
}

impl ModePolicy {
    /// The policy of `mode`, with rein's default rules only.
    pub fn new(mode: PermissionMode) -> Self {
        ModePolicy::with_rules(mode, RuleSet::default())
    }

    /// The policy of `mode` with `rules`.
    pub fn with_rules(mode: PermissionMode, rules: RuleSet) -> Self {
        let sensitive = SENSITIVE_FILES
            .iter()
            .filter_map(|text| Rule::parse(text, None).ok())
            .map(|rule| SourcedRule {
                rule,
                origin: RuleOrigin::Default,
            })
            .collect();
        ModePolicy {
            mode,
            rules,
            sensitive,
            session_rules: Mutex::default(),
            asked: Mutex::default(),
        }
    }

    /// The files a search tool must not read on its own: those a deny or ask rule or a
    /// sensitive-file default names, unless an allow rule names them by path.
    pub fn read_guard(&self, workspace: PathBuf) -> rein_tools::ReadGuard {
        // Rules about reading or searching: an `edit_file(src/**)` deny keeps edits out of
        // src/, not searches (read_file reads there without asking).
        let is_path_rule = |r: &&SourcedRule| {
            matches!(r.rule.pattern, Some(Pattern::Path { .. }))
                && ["read_file", "grep", "glob"]
                    .iter()
                    .any(|tool| r.rule.names_tool(tool))
        };
        let protecting: Vec<Rule> = self
            .sensitive
            .iter()
            .chain(self.rules.deny.iter().filter(is_path_rule))
            .chain(self.rules.ask.iter().filter(is_path_rule))
            .map(|r| r.rule.clone())
            .collect();
        let allowing: Vec<Rule> = self
            .rules
            .allow
            .iter()
            .filter(is_path_rule)
            .map(|r| r.rule.clone())
            .collect();
        let workspace = std::fs::canonicalize(&workspace).unwrap_or(workspace);
        rein_tools::ReadGuard::new(move |path| {
            let inside = path.strip_prefix(&workspace).ok();
            let names = |rule: &Rule| rule.names_path(path, inside);
            protecting.iter().any(names) && !allowing.iter().any(names)
        })
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }

    /// The decision for `call` and the rule or reason behind it.
    pub fn explain(&self, call: &CallView<'_>) -> Verdict {
        let session = self.session_rules.lock();
        let asked = self.asked.lock();
        let extra = judge::Extra {
            sensitive: &self.sensitive,
            session: &session,
            asked: &asked,
        };
        judge::judge(self.mode, &self.rules, &extra, call)
    }
}

impl Policy for ModePolicy {
    fn decide(&self, call: &CallView<'_>) -> Decision {
        self.explain(call).decision
    }

    fn allow_for_session(&self, rule: Rule) {
        let mut rules = self.session_rules.lock();
        if !rules.iter().any(|r| r.rule == rule) {
            rules.push(SourcedRule {
                rule,
                origin: RuleOrigin::Session,
            });
        }
    }

    fn ask_first(&self, rules: Vec<Rule>) {
        *self.asked.lock() = rules
            .into_iter()
            .map(|rule| SourcedRule {
                rule,
                origin: RuleOrigin::Configured("the command being run".to_owned()),
            })
            .collect();
    }

    fn names_host(&self, tool: &str, host: &str) -> bool {
        self.rules.allow.iter().any(|r| {
            r.rule.names_tool(tool)
                && matches!(r.rule.pattern, Some(Pattern::Domain { .. }))
                && r.rule.names_host(host)
        })
    }

    fn how_to_allow(&self, call: &CallView<'_>) -> String {
        self.explain(call)
            .lift
            .unwrap_or_else(|| self.mode.how_to_allow(call))
    }
}
