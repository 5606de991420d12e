//! Sub-commands for people: `rein trust`, `rein explain-permission`.

mod explain;
mod trust;

use crate::args::{Args, Command};
use crate::exit::Exit;

/// Runs a sub-command.
pub(crate) fn run(args: &Args, command: &Command) -> Exit {
    match command {
        Command::Trust { dir, revoke, list } => trust::run(dir.as_deref(), *revoke, *list),
        Command::ExplainPermission { call } => explain::run(args, call),
    }
}
