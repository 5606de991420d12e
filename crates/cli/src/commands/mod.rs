//! Sub-commands for people: `rein trust`, `rein explain-permission`, `rein sandbox`,
//! `rein mcp list`.

mod explain;
mod mcp;
mod sandbox;
mod trust;

use crate::args::{Args, Command, McpCommand};
use crate::exit::Exit;

/// Runs a sub-command.
pub(crate) async fn run(args: &Args, command: &Command) -> Exit {
    match command {
        Command::Mcp {
            command: McpCommand::List,
        } => mcp::list(args).await,
        Command::Trust { dir, revoke, list } => trust::run(dir.as_deref(), *revoke, *list),
        Command::ExplainPermission { call } => explain::run(args, call),
        Command::Sandbox { explain, command } => sandbox::run(args, *explain, command).await,
        Command::Eval(eval) => crate::eval::run(args, eval).await,
    }
}
