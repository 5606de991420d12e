//! `rein sandbox -- CMD`: runs a command in the sandbox rein's commands would get here (same
//! flags, same configuration), so people can test their settings; `rein sandbox --explain`
//! says what this machine enforces.

use std::ffi::OsString;
use std::os::unix::process::ExitStatusExt;

use rein_core::face::{Enforcement, SandboxPolicy};
use rein_core::face::{ProcessTracker, spawn_tracked};

use crate::args::Args;
use crate::exit::Exit;
use crate::render;
use crate::setup;

/// Runs `rein sandbox`.
pub(crate) async fn run(args: &Args, explain: bool, command: &[OsString]) -> Exit {
    let builder = match setup::configured_builder(args) {
        Ok(builder) => builder,
        Err(error) => return error.report(),
    };
    let sandbox = builder.sandbox();
    if explain {
        let mut text = sandbox.describe();
        if sandbox.is_enforced() {
            text.push_str(&git_lines(sandbox.policy()));
        }
        text.push_str(match sandbox.enforcement() {
            Enforcement::Enforced => "permission mode auto: available",
            Enforcement::Off => "permission mode auto: unavailable while the sandbox is off",
            Enforcement::Unavailable(_) => {
                "permission mode auto: unavailable (it needs the sandbox enforced)"
            }
        });
        render::stdout_line(&text);
        return Exit::Done;
    }
    let Some((program, rest)) = command.split_first() else {
        render::error("rein sandbox: give the command after `--`, e.g. rein sandbox -- touch ~/x");
        return Exit::Usage;
    };
    match sandbox.enforcement() {
        Enforcement::Enforced => {}
        Enforcement::Off => render::notice("rein: the sandbox is off; running the command as is"),
        Enforcement::Unavailable(why) => {
            render::error(&format!(
                "the sandbox cannot be enforced here ({why}); the command was not run"
            ));
            return Exit::Runtime;
        }
    }
    let mut child = tokio::process::Command::new(program);
    child.args(rest);
    if let Err(err) = sandbox.apply(&mut child) {
        render::error(&format!("cannot put the sandbox on the command: {err}"));
        return Exit::Runtime;
    }
    let plants = sandbox.policy().watch();
    let tracker = ProcessTracker::new();
    let mut running = match spawn_tracked(&mut child, &tracker) {
        Ok(running) => running,
        Err(err) => {
            render::error(&format!("cannot run {}: {err}", program.to_string_lossy()));
            return Exit::Runtime;
        }
    };
    let status = tokio::select! {
        status = running.wait() => status,
        _ = tokio::signal::ctrl_c() => {
            running.stop().await;
            return Exit::Interrupted;
        }
    };
    tracker.kill_all().await;
    for removed in plants.sweep() {
        render::notice(&removed);
    }
    match status {
        Ok(status) => match (status.code(), status.signal()) {
            (Some(code), _) => Exit::Child(u8::try_from(code).unwrap_or(1)),
            (None, Some(signal)) => Exit::Child(u8::try_from(128 + signal).unwrap_or(1)),
            (None, None) => Exit::Runtime,
        },
        Err(err) => {
            render::error(&format!("lost the command: {err}"));
            Exit::Runtime
        }
    }
}

/// What `--explain` adds about git: the directories kept in place, and what rein removes
/// after a command that creates it.
fn git_lines(policy: &SandboxPolicy) -> String {
    let mut out = String::new();
    if !policy.pinned.is_empty() {
        out.push_str("  kept in place (cannot be renamed or replaced):\n");
        for dir in &policy.pinned {
            out.push_str(&format!("    {}\n", dir.display()));
        }
    }
    let absent: Vec<_> = policy
        .watched
        .iter()
        .filter(|p| p.symlink_metadata().is_err())
        .collect();
    if !absent.is_empty() {
        out.push_str("  absent, and removed after a command that creates them:\n");
        for path in absent {
            out.push_str(&format!("    {}\n", path.display()));
        }
    }
    out
}
