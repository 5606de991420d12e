//! `rein mcp list`: starts the configured MCP servers as a session would (the same
//! configuration, trust, secrets and sandbox), waits for each up to its `startup_timeout`,
//! shows what came of it, and stops them.

use rein_core::face::ServerState;
use tokio_util::sync::CancellationToken;

use crate::args::{Args, OutputFormat};
use crate::exit::Exit;
use crate::mcp_status::{self, NO_SERVERS};
use crate::render::{self, Style};
use crate::setup::{self, SetupError};

/// Runs `rein mcp list`.
pub(crate) async fn list(args: &Args) -> Exit {
    let json = args.output_format.unwrap_or(OutputFormat::Text) != OutputFormat::Text;
    // In JSON, the error is the document too: a script reads stdout.
    let say_error = |message: &str| {
        if json {
            render::stdout_line(&serde_json::json!({ "error": message }).to_string());
        }
    };
    let builder = match setup::configured_builder(args) {
        Ok(builder) => builder.start_mcp(),
        Err(SetupError::Usage(message)) => {
            say_error(&message);
            render::notice(&message);
            return Exit::Usage;
        }
        Err(SetupError::Runtime(message)) => {
            say_error(&message);
            render::error(&message);
            return Exit::Runtime;
        }
    };
    let warnings = builder.mcp_warnings();
    for warning in &warnings {
        render::notice(&format!("rein: warning: {warning}"));
    }
    let statuses = match builder.started_mcp().cloned() {
        Some(hub) => {
            hub.wait_started(&CancellationToken::new()).await;
            let statuses = hub.statuses();
            hub.shutdown().await;
            statuses
        }
        None => Vec::new(),
    };
    if json {
        let document = mcp_status::servers_json(&statuses, builder.mcp_skipped(), &warnings);
        render::stdout_line(&document.to_string());
    } else {
        let awaiting =
            mcp_status::awaiting_trust_lines(builder.mcp_awaiting_trust(), Style::for_stdout());
        if statuses.is_empty() && awaiting.is_empty() {
            render::stdout_line(NO_SERVERS);
        }
        for line in mcp_status::server_lines(&statuses, Style::for_stdout())
            .iter()
            .chain(&awaiting)
        {
            render::stdout_line(line);
        }
    }
    if statuses.iter().all(|s| s.state == ServerState::Ready) {
        Exit::Done
    } else {
        Exit::Runtime
    }
}
