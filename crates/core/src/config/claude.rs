//! Claude Code's settings files: the project's `.claude/settings.json` and
//! `.claude/settings.local.json`, and (when `import_claude_settings = true`) the person's
//! `~/.claude/settings.json`. Each is turned into the TOML tables rein's own files hold and
//! read by the same code, so a team's rules behave exactly as their TOML equivalent, under
//! the same trust (a project's allow rules, hooks and `env` apply once it is trusted).
//!
//! Read: `permissions.allow`, `.ask`, `.deny` (Claude Code's tool names are rein's aliases),
//! `permissions.defaultMode` (the REPL's mode, as `[repl] permission_mode`), `hooks` (Claude
//! Code's `{matcher, hooks: [{type: "command", command, timeout}]}` shape) and `env` (values
//! passed to commands and hooks; names that look secret are refused). Any other key gets one
//! warning naming it.

use std::path::Path;

use serde_json::{Map, Value as Json};
use toml::{Table, Value};

use super::file::read_if_exists;
use super::layer::Layer;
use super::tables::read_table;
use super::{ConfigError, Source};

/// The project's Claude Code settings files, relative to its root, in the order they stack.
pub const CLAUDE_PROJECT_FILES: [&str; 2] =
    [".claude/settings.json", ".claude/settings.local.json"];

/// Keys rein passes over without a warning: they say nothing about behaviour.
const SILENT_KEYS: [&str; 1] = ["$schema"];

/// Reads one settings file as a layer; a missing file is `Ok(None)`. What rein does not
/// support is named in the layer's `claude_ignored`.
pub(crate) fn read_claude_settings(
    path: &Path,
    source: Source,
) -> Result<Option<Layer>, ConfigError> {
    let Some(text) = read_if_exists(path)? else {
        return Ok(None);
    };
    let invalid = |reason: String| ConfigError::invalid("settings", path.display(), reason);
    let json: Json = serde_json::from_str(&text).map_err(|e| ConfigError::Syntax {
        format: "JSON",
        path: path.to_path_buf(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Json::Object(top) = json else {
        return Err(invalid("expected a JSON object".to_owned()));
    };
    let mut layer = Layer::default();
    let mut unsupported = Vec::new();
    for (key, value) in &top {
        match key.as_str() {
            "permissions" => {
                let (permissions, repl) = permissions(value, &mut unsupported).map_err(invalid)?;
                read_table(
                    &mut layer.tables,
                    "permissions",
                    &Value::Table(permissions),
                    &source,
                )
                .map_err(|e| invalid(e.message))?;
                if let Some(repl) = repl {
                    read_table(&mut layer.tables, "repl", &Value::Table(repl), &source)
                        .map_err(|e| invalid(e.message))?;
                }
            }
            "hooks" => {
                let hooks = hooks(value, &mut unsupported).map_err(invalid)?;
                read_table(&mut layer.tables, "hooks", &Value::Table(hooks), &source)
                    .map_err(|e| invalid(e.message))?;
            }
            "env" => env(&mut layer, value, path, &source).map_err(invalid)?,
            key if SILENT_KEYS.contains(&key) => {}
            other => unsupported.push(other.to_owned()),
        }
    }
    for key in unsupported {
        layer.tables.claude_ignored.push(format!(
            "{}: \"{key}\" is not supported by rein and was ignored",
            path.display()
        ));
    }
    Ok(Some(layer))
}

/// `permissions` as a `[permissions]` table, and `defaultMode` as a `[repl]` one.
fn permissions(
    value: &Json,
    unsupported: &mut Vec<String>,
) -> Result<(Table, Option<Table>), String> {
    let object = object(value, "permissions")?;
    let mut table = Table::new();
    let mut repl = None;
    for (key, value) in object {
        match key.as_str() {
            "allow" | "ask" | "deny" => {
                table.insert(key.clone(), to_toml(value));
            }
            "defaultMode" => {
                let mode = value
                    .as_str()
                    .ok_or_else(|| "permissions.defaultMode: expected a string".to_owned())?;
                let rein = match mode {
                    "default" => "default",
                    "acceptEdits" => "accept-edits",
                    "plan" => "plan",
                    "bypassPermissions" => "yolo",
                    other => {
                        return Err(format!(
                            "permissions.defaultMode \"{other}\" is not one of default, \
                             acceptEdits, plan, bypassPermissions"
                        ));
                    }
                };
                let mut mode_table = Table::new();
                mode_table.insert("permission_mode".to_owned(), Value::String(rein.to_owned()));
                repl = Some(mode_table);
            }
            other => unsupported.push(format!("permissions.{other}")),
        }
    }
    Ok((table, repl))
}

/// Claude Code's hooks (`{"PreToolUse": [{"matcher": "Bash", "hooks": [{"type":
/// "command", "command": "...", "timeout": 30}]}]}`) as `[[hooks.EVENT]]` entries.
fn hooks(value: &Json, unsupported: &mut Vec<String>) -> Result<Table, String> {
    let mut table = Table::new();
    for (event, groups) in object(value, "hooks")? {
        let groups = groups
            .as_array()
            .ok_or_else(|| format!("hooks.{event}: expected a list of matcher groups"))?;
        let mut entries = Vec::new();
        for group in groups {
            let group = object(group, &format!("hooks.{event}[]"))?;
            let matcher = group
                .get("matcher")
                .and_then(Json::as_str)
                .filter(|m| !m.is_empty());
            let commands = group
                .get("hooks")
                .and_then(Json::as_array)
                .ok_or_else(|| format!("hooks.{event}: a group has no \"hooks\" list"))?;
            for hook in commands {
                let hook = object(hook, &format!("hooks.{event}[].hooks[]"))?;
                match hook.get("type").and_then(Json::as_str) {
                    Some("command") | None => {}
                    Some(other) => {
                        unsupported.push(format!("hooks.{event} of type \"{other}\""));
                        continue;
                    }
                }
                let mut entry = Table::new();
                if let Some(command) = hook.get("command") {
                    entry.insert("command".to_owned(), to_toml(command));
                }
                if let Some(timeout) = hook.get("timeout") {
                    entry.insert("timeout".to_owned(), to_toml(timeout));
                }
                if let Some(matcher) = matcher {
                    entry.insert("matcher".to_owned(), Value::String(matcher.to_owned()));
                }
                entries.push(Value::Table(entry));
            }
        }
        table.insert(event.clone(), Value::Array(entries));
    }
    Ok(table)
}

/// `env`: variables for commands and hooks. Values must be text; a name that looks secret
/// is refused (secrets belong in the environment or a `.env` file, where rein masks them).
fn env(layer: &mut Layer, value: &Json, path: &Path, source: &Source) -> Result<(), String> {
    for (name, value) in object(value, "env")? {
        let text = match value {
            Json::String(text) => text.clone(),
            Json::Number(n) => n.to_string(),
            Json::Bool(b) => b.to_string(),
            other => return Err(format!("env.{name}: expected a string, found {other}")),
        };
        if crate::secrets::looks_secret(name) {
            layer.tables.claude_ignored.push(format!(
                "{}: env.{name} was ignored: its name says it holds a secret, and secrets do \
                 not belong in settings files (set it in the environment or a .env file)",
                path.display()
            ));
            continue;
        }
        layer.tables.env.push(super::tables::EnvEntry {
            name: name.clone(),
            value: text,
            source: source.clone(),
        });
    }
    Ok(())
}

fn object<'a>(value: &'a Json, at: &str) -> Result<&'a Map<String, Json>, String> {
    value
        .as_object()
        .ok_or_else(|| format!("{at}: expected a JSON object"))
}

/// A JSON value as the TOML value the table readers check (`null` becomes an empty string,
/// which they refuse with a message).
fn to_toml(value: &Json) -> Value {
    match value {
        Json::Null => Value::String(String::new()),
        Json::Bool(b) => Value::Boolean(*b),
        Json::Number(n) => n
            .as_i64()
            .map(Value::Integer)
            .or_else(|| n.as_f64().map(Value::Float))
            .unwrap_or(Value::Integer(0)),
        Json::String(s) => Value::String(s.clone()),
        Json::Array(items) => Value::Array(items.iter().map(to_toml).collect()),
        Json::Object(map) => {
            Value::Table(map.iter().map(|(k, v)| (k.clone(), to_toml(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::config::HookEvent;

    fn read(text: &str) -> Result<Layer, ConfigError> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("settings.json");
        std::fs::write(&path, text).unwrap();
        read_claude_settings(
            &path,
            Source::ProjectFile(PathBuf::from("/p/.claude/settings.json")),
        )
        .map(Option::unwrap)
    }

    #[test]
    fn rules_mode_hooks_and_env_read_as_their_toml() {
        let layer = read(
            r#"{"$schema": "x", "permissions": {"allow": ["Bash(npm test:*)"], "deny": ["Bash(git push:*)"],
                "defaultMode": "plan"},
              "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo hi", "timeout": 5}]}]},
              "env": {"NODE_ENV": "test", "API_TOKEN": "x"},
              "model": "opus"}"#,
        )
        .unwrap();
        let tables = &layer.tables;
        assert_eq!(tables.rules.allow[0].text, "Bash(npm test:*)");
        assert_eq!(tables.rules.deny[0].text, "Bash(git push:*)");
        assert_eq!(
            tables.repl.permission_mode,
            Some(crate::permissions::PermissionMode::Plan)
        );
        assert_eq!(tables.hooks.len(), 1);
        assert_eq!(tables.hooks[0].event, HookEvent::PreToolUse);
        assert_eq!(tables.hooks[0].matcher.as_deref(), Some("Bash"));
        assert_eq!(tables.hooks[0].timeout.as_secs(), 5);
        assert_eq!(tables.env.len(), 1);
        assert_eq!(tables.env[0].name, "NODE_ENV");
        assert_eq!(
            tables.claude_ignored.len(),
            2,
            "{:?}",
            tables.claude_ignored
        );
        assert!(
            tables
                .claude_ignored
                .iter()
                .any(|w| w.contains("\"model\" is not supported"))
        );
        assert!(
            tables
                .claude_ignored
                .iter()
                .any(|w| w.contains("env.API_TOKEN"))
        );
    }

    #[test]
    fn mistakes_are_named() {
        let err = read("{\"permissions\": {\"deny\": [\"Bash(\"]}}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("permissions.deny"), "{err}");
        let err = read("{\"permissions\": {\"defaultMode\": \"wild\"}}")
            .unwrap_err()
            .to_string();
        assert!(err.contains("\"wild\""), "{err}");
        let err = read("{\"permissions\": ").unwrap_err().to_string();
        assert!(err.contains("line 1"), "{err}");
    }
}
