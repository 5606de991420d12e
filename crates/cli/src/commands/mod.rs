//! Sub-commands for people: `rein trust`, `rein explain-permission`, `rein sandbox`,
//! `rein mcp list|add|remove|login|logout`.

mod config;
mod explain;
mod mcp;
mod mcp_auth;
mod mcp_edit;
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
        Command::Mcp {
            command:
                McpCommand::Add {
                    name,
                    url,
                    scope,
                    env,
                    header,
                    command,
                },
        } => mcp_edit::add(name, url.as_deref(), *scope, env, header, command),
        Command::Mcp {
            command: McpCommand::Remove { name, scope },
        } => mcp_edit::remove(name, *scope),
        Command::Mcp {
            command: McpCommand::Login { name, timeout },
        } => mcp_auth::login(args, name, std::time::Duration::from_secs(*timeout)).await,
        Command::Mcp {
            command: McpCommand::Logout { name },
        } => mcp_auth::logout(args, name),
        Command::Trust { dir, revoke, list } => trust::run(dir.as_deref(), *revoke, *list),
        Command::ExplainPermission { call } => explain::run(args, call),
        Command::Config { show: _ } => config::show(args),
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
