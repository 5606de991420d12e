//! Sub-commands for people: `rein trust`, `rein explain-permission`, `rein sandbox`,
//! `rein mcp list`.

mod explain;
mod mcp;
pub(crate) mod rewind;
mod sandbox;
pub(crate) mod sessions;
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
        Command::Sessions { all } => sessions::run(args, *all),
        Command::Rewind {
            session,
            list,
            to,
            code,
            conversation,
            both: _,
        } => {
            let scope = match (code, conversation) {
                (true, _) => rein_core::checkpoint::RewindScope::Code,
                (_, true) => rein_core::checkpoint::RewindScope::Conversation,
                _ => rein_core::checkpoint::RewindScope::Both,
            };
            rewind::run(
                args,
                session.as_deref(),
                if *list { None } else { *to },
                scope,
            )
        }
        Command::Eval(eval) => crate::eval::run(args, eval).await,
        Command::Acp => Box::pin(crate::acp::run(args)).await,
    }
}
