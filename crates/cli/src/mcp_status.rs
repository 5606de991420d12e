//! What `rein mcp list` and the REPL's `/mcp` show of the MCP servers: for each, its
//! state, its tool count, whether it runs sandboxed, the last error, and its log file.

use rein_core::face::{ServerState, ServerStatus};
use rein_core::mcp::{SkipReason, SkippedServer};
use serde_json::{Value, json};

use crate::render::{Style, neutralize};

/// What is said when no server is configured (or every one was left out).
pub(crate) const NO_SERVERS: &str = "No MCP servers to start here: configure them as \
     [mcp_servers.NAME] in config.toml or in the project's .mcp.json (see docs/mcp.md).";

/// One line per server of an untrusted project, which waits for `rein trust`.
pub(crate) fn awaiting_trust_lines(names: &[String], s: Style) -> Vec<String> {
    let width = names.iter().map(String::len).max().unwrap_or(0);
    names
        .iter()
        .map(|name| {
            format!(
                "{}  {}  {}",
                s.bold(&format!("{:width$}", neutralize(name))),
                s.warn("untrusted"),
                "not started: this project's servers wait for `rein trust` (run it in the project)"
            )
        })
        .collect()
}

/// `rein mcp list --output-format json`: every configured server, started or not, with its
/// transport, state (the words of the text form, plus `disabled` and `untrusted`), error,
/// tools and prompts; and the warnings of the text form.
pub(crate) fn servers_json(
    statuses: &[ServerStatus],
    skipped: &[SkippedServer],
    warnings: &[String],
) -> Value {
    let mut servers: Vec<Value> = statuses
        .iter()
        .map(|status| {
            // "needs login: run `rein mcp login NAME`": the state says the first half.
            let error = status
                .last_error
                .as_deref()
                .map(|error| match status.state {
                    ServerState::NeedsLogin => error.strip_prefix("needs login: ").unwrap_or(error),
                    ServerState::Starting
                    | ServerState::TimedOut
                    | ServerState::Ready
                    | ServerState::Exited
                    | ServerState::Failed => error,
                });
            json!({
                "name": status.name,
                "transport": <&str>::from(status.transport),
                "state": <&str>::from(&status.state),
                "error": error,
                "tools": status.tool_names,
                "prompts": status.prompts,
                "not_offered": status.left_out.iter()
                    .map(|(tool, why)| json!({ "tool": tool, "why": why }))
                    .collect::<Vec<_>>(),
                "sandboxed": status.sandboxed,
                "log": status.log.as_ref().map(|log| log.display().to_string()),
            })
        })
        .collect();
    servers.extend(skipped.iter().map(|server| {
        let (state, error) = match &server.why {
            SkipReason::Disabled => ("disabled", None),
            SkipReason::Untrusted => (
                "untrusted",
                Some("not started: this project's servers wait for `rein trust` (run it in the project)".to_owned()),
            ),
            SkipReason::UnsetVariables(names) => (
                "failed",
                Some(format!(
                    "not started: it names variable{} {} that {} not set",
                    if names.len() == 1 { "" } else { "s" },
                    names.join(", "),
                    if names.len() == 1 { "is" } else { "are" },
                )),
            ),
        };
        json!({
            "name": server.name,
            "transport": <&str>::from(server.transport),
            "state": state,
            "error": error,
            "tools": [],
            "prompts": [],
            "not_offered": [],
            "sandboxed": false,
            "log": null,
        })
    }));
    json!({ "servers": servers, "warnings": warnings })
}

/// One line per server, and one for its log file below it (stdio servers).
pub(crate) fn server_lines(statuses: &[ServerStatus], s: Style) -> Vec<String> {
    let width = statuses.iter().map(|st| st.name.len()).max().unwrap_or(0);
    let state_width = statuses
        .iter()
        .map(|st| <&str>::from(&st.state).len())
        .max()
        .unwrap_or(0)
        .max("timed out".len());
    let mut lines = Vec::new();
    for status in statuses {
        let name = format!("{:width$}", neutralize(&status.name));
        let state = format!("{:state_width$}", <&str>::from(&status.state));
        let state = match status.state {
            ServerState::Ready => s.accent(&state),
            ServerState::Starting
            | ServerState::TimedOut
            | ServerState::Exited
            | ServerState::NeedsLogin => s.warn(&state),
            ServerState::Failed => s.error(&state),
        };
        let mut line = format!("{}  {state}", s.bold(&name));
        match status.state {
            ServerState::Ready => line.push_str(&format!(
                "  {} tool{}",
                status.tools,
                if status.tools == 1 { "" } else { "s" }
            )),
            ServerState::Starting
            | ServerState::TimedOut
            | ServerState::Exited
            | ServerState::NeedsLogin
            | ServerState::Failed => {}
        }
        if status.sandboxed {
            line.push_str(&format!("  {}", s.dim("sandboxed")));
        }
        if let Some(error) = &status.last_error
            && status.state == ServerState::NeedsLogin
        {
            // "needs login: run `rein mcp login NAME`": the state says the first half.
            let what = error.strip_prefix("needs login: ").unwrap_or(error);
            line.push_str(&format!("  {}", s.warn(&neutralize(what))));
        } else if let Some(error) = &status.last_error {
            line.push_str(&format!(
                "  {}",
                s.error(&format!("error: {}", neutralize(error)))
            ));
        }
        lines.push(line.trim_end().to_owned());
        for (tool, why) in &status.left_out {
            let note = format!("not offered: {}: {}", neutralize(tool), neutralize(why));
            lines.push(format!("{:width$}  {}", "", s.warn(&note)));
        }
        if let Some(log) = &status.log {
            let log = format!("log: {}", neutralize(&log.display().to_string()));
            lines.push(format!("{:width$}  {}", "", s.dim(&log)));
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use rein_core::face::Transport;

    use super::*;

    #[test]
    fn each_server_with_its_state_tools_error_and_log() {
        let statuses = [
            ServerStatus {
                name: "fs".into(),
                transport: Transport::Stdio,
                state: ServerState::Ready,
                tools: 4,
                tool_names: Vec::new(),
                prompts: Vec::new(),
                left_out: vec![(
                    "research".into(),
                    "it requires MCP tasks (execution.taskSupport = \"required\"), which rein does not run yet".into(),
                )],
                last_error: None,
                log: Some(PathBuf::from("/h/.rein/mcp-logs/fs.log")),
                sandboxed: true,
            },
            ServerStatus {
                name: "github".into(),
                transport: Transport::Stdio,
                tool_names: Vec::new(),
                prompts: Vec::new(),
                state: ServerState::Failed,
                tools: 0,
                left_out: Vec::new(),
                last_error: Some("cannot start `gh-mcp`: No such file\x1b[2J".into()),
                log: Some(PathBuf::from("/h/.rein/mcp-logs/github.log")),
                sandboxed: false,
            },
            ServerStatus {
                name: "slow".into(),
                transport: Transport::Stdio,
                tool_names: Vec::new(),
                prompts: Vec::new(),
                state: ServerState::TimedOut,
                tools: 0,
                left_out: Vec::new(),
                last_error: Some("it did not finish starting within 10 s".into()),
                log: None,
                sandboxed: false,
            },
            ServerStatus {
                name: "web".into(),
                transport: Transport::Http,
                tool_names: Vec::new(),
                prompts: Vec::new(),
                state: ServerState::Ready,
                tools: 1,
                left_out: Vec::new(),
                last_error: None,
                log: None,
                sandboxed: false,
            },
        ];
        insta::assert_snapshot!(server_lines(&statuses, Style::plain()).join("\n"));
    }
}
