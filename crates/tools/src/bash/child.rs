//! Children rein starts besides the bash tool's commands (hooks today, MCP servers later),
//! held to the rules a command is held to, so that none outlives rein:
//! - a session and process group of its own, and rein's marker in its environment, so that
//!   its processes are found even when they leave the group (`procs.rs`);
//! - forked through the reaper, which must know every child rein forks or it may reap one
//!   that tokio waits for (`reaper.rs`);
//! - registered with a [`ProcessTracker`], which stops it with the other commands (turn
//!   cancelled, `kill_all`, the tracker dropped).
//!
//! A [`TrackedChild`] dropped before its process was waited for stops its whole group
//! (SIGTERM, SIGKILL after [`KILL_GRACE`]); what a child left running after it exited stays
//! tracked, like a command's background processes.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::process::{ExitStatus, Stdio};

use tokio::process::{ChildStderr, ChildStdin, ChildStdout};

use super::procs::{CommandId, MARKER_VAR, marker_value, next_serial};
use super::reaper;
use super::signals::start_new_session;
use super::tracker::{KILL_GRACE, ProcessTracker, Termination};
use crate::sandbox::Sandbox;

/// `bash -c SCRIPT ARGS...` in a directory: the shape of every command and hook rein starts.
#[derive(Debug)]
pub struct BashCommand<'a> {
    /// What `bash -c` runs.
    pub script: &'a str,
    /// Its positional parameters, from `$0`.
    pub args: &'a [&'a OsStr],
    /// Where it runs.
    pub cwd: &'a Path,
    /// The OS sandbox it runs in, if any.
    pub sandbox: Option<&'a Sandbox>,
    /// Its stdin, stdout and stderr.
    pub stdio: [Stdio; 3],
    /// Variables of rein's environment it does not get.
    pub env_remove: &'a [String],
}

impl BashCommand<'_> {
    /// The command, to start with [`spawn_tracked`]; an error when the sandbox cannot be
    /// applied.
    pub fn build(self) -> io::Result<tokio::process::Command> {
        self.build_watched().map(|(command, _)| command)
    }

    /// [`BashCommand::build`], with what rein's network proxy refuses the command gathered in
    /// the returned [`crate::sandbox::NetUse`].
    pub fn build_watched(self) -> io::Result<(tokio::process::Command, crate::sandbox::NetUse)> {
        let mut command = tokio::process::Command::new("bash");
        command
            .arg("-c")
            .arg(self.script)
            .args(self.args)
            .current_dir(self.cwd);
        // Before the pipes are set: on macOS the command is rebuilt around sandbox-exec.
        let net = match self.sandbox {
            Some(sandbox) => sandbox
                .apply_watched(&mut command)
                .map_err(io::Error::other)?,
            None => crate::sandbox::NetUse::default(),
        };
        let [stdin, stdout, stderr] = self.stdio;
        command.stdin(stdin).stdout(stdout).stderr(stderr);
        for name in self.env_remove {
            command.env_remove(name);
        }
        Ok((command, net))
    }
}

/// A child started with [`spawn_tracked`].
#[derive(Debug)]
pub struct TrackedChild {
    child: tokio::process::Child,
    id: CommandId,
    /// Set once tokio has reaped the process.
    status: Option<ExitStatus>,
}

/// Starts `command` in a new session, marked, through the reaper, and registers it with
/// `tracker`. Set its pipes (`stdin`, `stdout`, `stderr`) before: the child's are taken
/// from the result.
pub fn spawn_tracked(
    command: &mut tokio::process::Command,
    tracker: &ProcessTracker,
) -> io::Result<TrackedChild> {
    let (child, id) = spawn_marked(command, tracker)?;
    Ok(TrackedChild {
        child,
        id,
        status: None,
    })
}

/// Starts `command` in a session of its own with rein's marker (every process it starts
/// inherits it, even one that leaves the session: that is how it is found later,
/// `procs.rs`), through the reaper, and registers it with `tracker`.
pub(crate) fn spawn_marked(
    command: &mut tokio::process::Command,
    tracker: &ProcessTracker,
) -> io::Result<(tokio::process::Child, CommandId)> {
    let serial = next_serial();
    command.env(MARKER_VAR, marker_value(serial));
    start_new_session(command);
    // Dies with rein, even by SIGKILL (the watchdog gets what leaves the session).
    super::watchdog::die_with_rein(command);
    let child = reaper::spawn(command)?;
    let Some(pgid) = child.id() else {
        return Err(io::Error::other(
            "the process exited before rein could track it",
        ));
    };
    let started = super::procs::read(pgid).map_or(0, |p| p.start_ticks);
    let id = CommandId {
        pgid,
        serial,
        started,
    };
    tracker.register(id);
    Ok((child, id))
}

impl TrackedChild {
    /// The process id (also its process group and session).
    pub fn pid(&self) -> u32 {
        self.id.pgid
    }

    /// Its stdin, if piped and not taken yet.
    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    /// Its stdout, if piped and not taken yet.
    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    /// Its stderr, if piped and not taken yet.
    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// Waits for the process to exit. Cancel-safe: dropping the future loses nothing.
    pub async fn wait(&mut self) -> io::Result<ExitStatus> {
        if let Some(status) = self.status {
            return Ok(status);
        }
        let status = self.child.wait().await?;
        self.reaped(status);
        Ok(status)
    }

    /// Stops the whole group (SIGTERM, SIGKILL for what is left after [`KILL_GRACE`]) and
    /// waits for the process; its status, when it could be reaped.
    pub async fn stop(&mut self) -> Option<ExitStatus> {
        Termination::start([self.id]).end().await;
        if self.status.is_none()
            && let Ok(Ok(status)) = tokio::time::timeout(KILL_GRACE, self.child.wait()).await
        {
            self.reaped(status);
        }
        self.status
    }

    fn reaped(&mut self, status: ExitStatus) {
        self.status = Some(status);
        reaper::reaped_by_tokio(self.id.pgid);
        // What it orphaned on exit is rein's now: note it while it is alive.
        reaper::reap_adopted();
    }
}

impl Drop for TrackedChild {
    fn drop(&mut self) {
        if self.status.is_some() {
            return;
        }
        // Abandoned while running (the caller gave up on it): its whole group goes.
        let ending = Termination::start([self.id]);
        // Drop cannot wait: a short-lived thread sends SIGKILL after the grace period.
        let _ = std::thread::Builder::new()
            .name("rein-child-kill".to_owned())
            .spawn(move || {
                ending.end_blocking();
            });
    }
}
