//! `rein explain-permission 'tool(argument)'`: what would happen to such a call here, and
//! which rule or reason decides, for people debugging their configuration.

use crate::args::Args;
use crate::exit::Exit;
use crate::render;

/// Runs `rein explain-permission`.
pub(crate) fn run(_args: &Args, call: &str) -> Exit {
    render::error(&format!(
        "explain-permission: not built yet (asked about {call})"
    ));
    Exit::Runtime
}
