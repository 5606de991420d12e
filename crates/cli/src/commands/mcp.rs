//! `rein mcp list`: starts the configured MCP servers as a session would, waits for each up
//! to its `startup_timeout`, shows what came of it, and stops them.

use rein_core::mcp;
use rein_mcp::{McpHub, McpSetup, ServerState};
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::exit::Exit;
use crate::render;
use crate::setup::{self, SetupError, process_env};

/// Runs `rein mcp list`.
pub(crate) async fn list(args: &Args) -> Exit {
    let (config, cwd) = match setup::configuration(args) {
        Ok(found) => found,
        Err(SetupError::Usage(message)) => {
            render::notice(&message);
            return Exit::Usage;
        }
        Err(SetupError::Runtime(message)) => {
            render::error(&message);
            return Exit::Runtime;
        }
    };
    let plan = mcp::plan(&config, &process_env);
    for warning in &plan.warnings {
        render::notice(&format!("rein: warning: {warning}"));
    }
    if plan.servers.is_empty() {
        render::stdout_line(
            "No MCP servers to start here: configure them as [mcp_servers.NAME] in config.toml \
             or in the project's .mcp.json (see docs/mcp.md).",
        );
        return Exit::Done;
    }
    let hub = McpHub::start(McpSetup {
        servers: plan.servers,
        cwd,
        log_dir: config.rein_home.join(mcp::MCP_LOG_DIR),
        // As in a session: rein's secret-looking variables stay out of the servers'.
        env_remove: std::env::vars_os()
            .filter_map(|(name, _)| name.into_string().ok())
            .filter(|name| rein_core::secrets::looks_secret(name))
            .collect(),
    });
    hub.wait_started(&CancellationToken::new()).await;
    let statuses = hub.statuses();
    let width = statuses.iter().map(|s| s.name.len()).max().unwrap_or(0);
    for status in &statuses {
        let tools = match status.state {
            ServerState::Ready => format!(
                "{} tool{}",
                status.tools,
                if status.tools == 1 { "" } else { "s" }
            ),
            ServerState::Starting | ServerState::Exited | ServerState::Failed => String::new(),
        };
        let mut line = format!(
            "{:width$}  {:8}  {tools}",
            status.name,
            status.state.as_str()
        );
        if let Some(error) = &status.last_error {
            line.push_str(&format!("  error: {error}"));
        }
        render::stdout_line(line.trim_end());
        if let Some(log) = &status.log {
            render::stdout_line(&format!("{:width$}  log: {}", "", log.display()));
        }
    }
    hub.shutdown().await;
    if statuses.iter().all(|s| s.state == ServerState::Ready) {
        Exit::Done
    } else {
        Exit::Runtime
    }
}
