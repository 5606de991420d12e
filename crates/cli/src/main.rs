//! The `rein` binary: parses the command line and hands over to the REPL, or the one-shot,
//! headless or demo runner. Only this crate touches the terminal.

mod acp;
mod args;
mod commands;
mod conversation;
mod demo;
mod eval;
mod exit;
mod input;
mod interrupt;
mod log;
mod mcp_status;
mod no_key;
mod render;
mod repl;
mod report;
mod run;
mod setup;

use std::process::ExitCode;

use clap::{CommandFactory, FromArgMatches};

use crate::exit::Exit;

/// The command line, read. clap's description of it is left in place rather than freed:
/// freeing it cost as much again as a third of the parse (about 90 K instructions) at every
/// start, for memory the process keeps anyway.
fn parse_args() -> Result<args::Args, clap::Error> {
    let command: &'static mut clap::Command = Box::leak(Box::new(args::Args::command()));
    let mut matches = command.try_get_matches_from_mut(std::env::args_os())?;
    args::Args::from_arg_matches_mut(&mut matches).map_err(|err| err.format(command))
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(err) => {
            // --help and --version print to stdout and succeed; real mistakes exit 2.
            let _ = err.print();
            return if err.use_stderr() {
                Exit::Usage.into()
            } else {
                ExitCode::SUCCESS
            };
        }
    };
    render::set_color_choice(args.color);
    // First, so that what follows can log: REIN_LOG=debug writes under rein's home.
    let home = std::env::home_dir();
    let rein_home =
        rein_core::config::default_rein_home(&|var| std::env::var(var).ok(), home.as_deref());
    if let Some(warning) = log::install(rein_home.as_deref()) {
        render::warning(&warning);
    }
    // Before any command runs: commands cannot read rein's environment (the API key) ...
    rein_core::face::hide_from_commands();
    // ... and orphans of rein's commands become rein's to reap and stop.
    rein_core::face::adopt_orphans();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            render::error(&format!("cannot start the async runtime: {err}"));
            return Exit::Runtime.into();
        }
    };
    let exit = runtime.block_on(run::run(args));
    // Tool tasks still winding down must not hold the process open.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    exit.into()
}
