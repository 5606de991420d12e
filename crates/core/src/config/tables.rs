//! The tables of a config file: `[permissions]` (allow, ask and deny lists of rules),
//! `[[hooks.EVENT]]` (commands run at points of a session) and `[secrets]` (variables that
//! may reach commands). Unlike flat settings, a later layer adds to them: rules and hooks
//! accumulate, and nothing a lower layer denies can be taken back.

use std::time::Duration;

use serde::{Deserialize, Deserializer, Serialize};
use strum::{Display, EnumString, IntoStaticStr, VariantArray};
use toml::Value;

use super::Source;
use super::de::{self, TableError};
use crate::permissions::Rule;

/// How long a hook may run unless its entry says otherwise.
pub const DEFAULT_HOOK_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest a hook may be given.
const MAX_HOOK_TIMEOUT: Duration = Duration::from_secs(3600);

/// A rule as configured, with where it came from. Its text is kept: it is parsed with the
/// home directory once every layer is read (`~/` in path rules).
#[derive(Debug, Clone, PartialEq)]
pub struct ConfiguredRule {
    /// The rule as written.
    pub text: String,
    /// The file or flag that gave it.
    pub source: Source,
}

/// The three lists of rules.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RuleLists {
    /// Calls that run without asking.
    pub allow: Vec<ConfiguredRule>,
    /// Calls that ask first (refused when no one can be asked).
    pub ask: Vec<ConfiguredRule>,
    /// Calls that never run.
    pub deny: Vec<ConfiguredRule>,
}

/// When a hook runs; its name (Claude Code's) is the one in config files and in the JSON a
/// hook reads. `HookEvent::VARIANTS` lists every event, in the order of a session.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, IntoStaticStr, Display, EnumString, VariantArray,
)]
pub enum HookEvent {
    /// A session starts (or is resumed).
    SessionStart,
    /// The person sent a request, before the model sees it.
    UserPromptSubmit,
    /// A tool call passed its argument check, before the permission decision.
    PreToolUse,
    /// A tool call finished.
    PostToolUse,
    /// The model answered without calling a tool: the turn is about to end.
    Stop,
    /// A sub-agent finished.
    SubagentStop,
    /// The conversation is about to be compacted.
    PreCompact,
    /// The session ends.
    SessionEnd,
}

/// One configured hook.
#[derive(Debug, Clone, PartialEq)]
pub struct HookCommand {
    /// When it runs.
    pub event: HookEvent,
    /// The shell command (run with `bash -c` in the workspace).
    pub command: String,
    /// A regular expression over the tool name (tool events only; Claude Code's names match
    /// as aliases); `None` matches every tool.
    pub matcher: Option<String>,
    /// How long it may run before it is stopped.
    pub timeout: Duration,
    /// The file that configured it: a project's hooks run only once the project is trusted.
    pub source: Source,
}

/// A variable a settings file sets for commands and hooks (Claude Code's `env`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnvEntry {
    /// The variable.
    pub name: String,
    /// Its value.
    pub value: String,
    /// The file that set it: a project's apply only once the project is trusted.
    pub source: Source,
}

/// A key of a table (`sandbox.mode`) as a file set it, for `rein config --show`.
#[derive(Debug, Clone, PartialEq)]
pub struct TableValue {
    /// The key's path: `sandbox.mode`, `pricing."my-model"`.
    pub key: String,
    /// Its value as written (TOML).
    pub value: String,
    /// The file that set it.
    pub source: Source,
}

/// What a file set in a table that does not apply (a project loosening what only the person
/// may, or an untrusted project), for `rein config --show`.
#[derive(Debug, Clone, PartialEq)]
pub struct LeftOut {
    /// The key's path: `sandbox.mode`.
    pub key: String,
    /// What was left out, as written (`mode = "off"`, `writable "/etc"`).
    pub written: String,
    /// The file that set it.
    pub source: Source,
    /// Why it does not apply.
    pub reason: String,
    /// Whether the file's whole value for the key is left out (else only the part written).
    pub whole: bool,
}

impl LeftOut {
    /// The warning that names it: `sandbox.mode = "off" in FILE is left out: why`.
    pub fn warning(&self) -> String {
        let table = self.key.split('.').next().unwrap_or_default();
        let Self {
            written,
            source,
            reason,
            ..
        } = self;
        format!("{table}.{written} in {source} is left out: {reason}")
    }
}

/// The tables whose keys `rein config --show` lists with their file (rules, hooks and MCP
/// servers are listed whole, each with its own).
const SHOWN_TABLES: [&str; 5] = ["sandbox", "repl", "tool_search", "pricing", "secrets"];

/// What the tables of one layer hold.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Tables {
    pub(crate) rules: RuleLists,
    pub(crate) hooks: Vec<HookCommand>,
    pub(crate) pass_env: Vec<String>,
    pub(crate) mcp_servers: Vec<super::McpServerEntry>,
    /// Servers a later layer replaced with a same-named one, kept for when that layer is an
    /// untrusted project's (its server does not start, the one it replaced does).
    pub(crate) mcp_replaced: Vec<super::McpServerEntry>,
    pub(crate) sandbox: super::sandbox::SandboxSettings,
    pub(crate) repl: super::repl::ReplSettings,
    /// `[tool_search]`, a later layer's keys over an earlier one's.
    pub(crate) tool_search: super::ToolSearchSettings,
    /// `[pricing."MODEL"]`, by model name.
    pub(crate) pricing: std::collections::BTreeMap<String, super::spend::PriceEntry>,
    /// Variables for commands and hooks (a Claude Code settings file's `env`).
    pub(crate) env: Vec<EnvEntry>,
    /// What a Claude Code settings file held that rein does not apply, one line each.
    pub(crate) claude_ignored: Vec<String>,
    /// The keys of [`SHOWN_TABLES`] each file set, in layer order.
    pub(crate) values: Vec<TableValue>,
}

impl Tables {
    /// Adds what `above` holds after what this layer holds.
    pub(crate) fn stack(&mut self, above: Tables) {
        self.rules.allow.extend(above.rules.allow);
        self.rules.ask.extend(above.rules.ask);
        self.rules.deny.extend(above.rules.deny);
        self.hooks.extend(above.hooks);
        self.mcp_replaced.extend(above.mcp_replaced);
        for server in above.mcp_servers {
            if let Some(at) = self.mcp_servers.iter().position(|s| s.name == server.name) {
                self.mcp_replaced.push(self.mcp_servers.remove(at));
            }
            self.mcp_servers.push(server);
        }
        self.sandbox.stack(above.sandbox);
        self.repl.stack(above.repl);
        self.tool_search.stack(above.tool_search);
        self.values.extend(above.values);
        self.pricing.extend(above.pricing);
        for entry in above.env {
            self.env.retain(|e| e.name != entry.name);
            self.env.push(entry);
        }
        self.claude_ignored.extend(above.claude_ignored);
        for name in above.pass_env {
            if !self.pass_env.contains(&name) {
                self.pass_env.push(name);
            }
        }
    }
}

/// The table names a config file may hold besides flat settings.
pub(crate) const TABLE_KEYS: [&str; 8] = [
    "permissions",
    "hooks",
    "secrets",
    "mcp_servers",
    "sandbox",
    "repl",
    "pricing",
    "tool_search",
];

/// `[permissions]`: the three lists of rules, each checked as it is read.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PermissionsTable {
    /// Calls that run without asking.
    #[serde(default, deserialize_with = "rules")]
    allow: Vec<String>,
    /// Calls that ask first.
    #[serde(default, deserialize_with = "rules")]
    ask: Vec<String>,
    /// Calls that never run.
    #[serde(default, deserialize_with = "rules")]
    deny: Vec<String>,
}

/// `[secrets]`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SecretsTable {
    /// Variables passed to commands and hooks although their names look secret.
    #[serde(default, deserialize_with = "de::strings")]
    pass_env: Vec<String>,
}

/// One `[[hooks.EVENT]]` entry.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HookEntry {
    /// The shell command.
    #[serde(default, deserialize_with = "hook_command")]
    command: Option<String>,
    /// A regular expression over the tool name, or `*`.
    #[serde(default, deserialize_with = "matcher")]
    matcher: Option<String>,
    /// Whole seconds it may run.
    #[serde(default, deserialize_with = "hook_timeout")]
    timeout: Option<Duration>,
}

/// Reads the table `key` of a file into `tables`; the error says what is wrong and where in
/// the table (the caller adds the file and line).
pub(crate) fn read_table(
    tables: &mut Tables,
    key: &str,
    value: &Value,
    source: &Source,
) -> Result<(), TableError> {
    let table = value
        .as_table()
        .ok_or_else(|| format!("expected a table ([{key}]), found {}", value.type_str()))?;
    let header = format!("[{key}]");
    match key {
        "permissions" => {
            let read: PermissionsTable = de::read_keys(value, key, &header)?;
            let configured = |texts: Vec<String>| {
                let source = source.clone();
                texts.into_iter().map(move |text| ConfiguredRule {
                    text,
                    source: source.clone(),
                })
            };
            tables.rules.allow.extend(configured(read.allow));
            tables.rules.ask.extend(configured(read.ask));
            tables.rules.deny.extend(configured(read.deny));
        }
        "hooks" => {
            for (event, entries) in table {
                read_hooks(&mut tables.hooks, event, entries, source)
                    .map_err(|e| e.under(event))?;
            }
        }
        "secrets" => {
            let read: SecretsTable = de::read_keys(value, key, &header)?;
            for var in read.pass_env {
                if !tables.pass_env.contains(&var) {
                    tables.pass_env.push(var);
                }
            }
        }
        "mcp_servers" => {
            super::mcp_servers::read_mcp_servers(&mut tables.mcp_servers, table, source)?;
        }
        "sandbox" => super::sandbox::read(&mut tables.sandbox, table, source)?,
        "repl" => super::repl::read(&mut tables.repl, table, source)?,
        "tool_search" => tables
            .tool_search
            .stack(de::read_keys(value, key, &header)?),
        "pricing" => super::spend::read_pricing(&mut tables.pricing, table)?,
        other => return Err(format!("unknown table [{other}]").into()),
    }
    if SHOWN_TABLES.contains(&key) {
        for (name, value) in table {
            let name = match key {
                "pricing" => format!("\"{name}\""),
                _ => name.clone(),
            };
            tables.values.push(TableValue {
                key: format!("{key}.{name}"),
                value: value.to_string(),
                source: source.clone(),
            });
        }
    }
    Ok(())
}

/// Reads the entries of `[[hooks.EVENT]]` into `hooks`.
fn read_hooks(
    hooks: &mut Vec<HookCommand>,
    event: &str,
    entries: &Value,
    source: &Source,
) -> Result<(), TableError> {
    let Ok(event) = event.parse::<HookEvent>() else {
        let events = HookEvent::VARIANTS.iter().map(<&str>::from);
        let hint = crate::suggest::closest(event, events.clone())
            .map(|near| format!("; did you mean \"{near}\"?"))
            .unwrap_or_default();
        let events = events.collect::<Vec<_>>().join(", ");
        return Err(
            format!("unknown hook event \"{event}\"; the events are: {events}{hint}").into(),
        );
    };
    let at = format!("hooks.{event}");
    let entries = entries
        .as_array()
        .ok_or_else(|| format!("{at}: expected entries written [[{at}]]"))?;
    for (index, entry) in entries.iter().enumerate() {
        let in_entry = |e: TableError| e.under(index);
        let entry: HookEntry = de::read_keys(entry, &at, &format!("[[{at}]]")).map_err(in_entry)?;
        let command = (entry.command).ok_or_else(|| format!("{at}: an entry has no command"));
        hooks.push(HookCommand {
            event,
            command: command.map_err(|e| in_entry(e.into()))?,
            matcher: entry.matcher,
            timeout: entry.timeout.unwrap_or(DEFAULT_HOOK_TIMEOUT),
            source: source.clone(),
        });
    }
    Ok(())
}

/// Rules, each parsed once to find its mistakes (it is parsed again with the home directory
/// once every layer is read).
fn rules<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    de::with(d, |v| {
        let texts = de::list(v)?;
        for text in &texts {
            Rule::parse(text, None).map_err(|e| format!(": {e}"))?;
        }
        Ok(texts)
    })
}

fn hook_command<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    de::with(d, |v| match de::text(v)? {
        text if text.trim().is_empty() => Err(" is empty".to_owned()),
        text => Ok(Some(text.to_owned())),
    })
}

fn matcher<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    de::with(d, |v| {
        let text = de::text(v)?;
        // `*` is Claude Code's "every tool", not a regex.
        if text.trim() != "*" {
            regex_lite::Regex::new(text)
                .map_err(|e| format!(" \"{text}\" is not a valid regex: {e}"))?;
        }
        Ok(Some(text.to_owned()))
    })
}

fn hook_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    de::with(d, |v| de::whole_seconds(v, MAX_HOOK_TIMEOUT).map(Some))
}
