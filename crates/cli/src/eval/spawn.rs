//! Runs one step of an attempt (setup, the agent, validation) as its own process group,
//! under a time limit, so a step that hangs or leaves children behind is stopped whole.

use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use rustix::process::{Pid, Signal};
use tokio::io::AsyncReadExt;
use tokio::process::Command;

/// How long a step asked to stop (SIGTERM) has before its group is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_secs(5);

/// How a step ended.
#[derive(Debug)]
pub(crate) struct Finished {
    /// `None` when it was stopped at its time limit.
    pub(crate) status: Option<ExitStatus>,
    /// What it printed on stdout (when captured).
    pub(crate) stdout: Vec<u8>,
}

/// The process groups an attempt started; every one is killed when the attempt ends (a
/// setup may start a server for the agent, so groups live until then, not past it).
#[derive(Debug, Default)]
pub(crate) struct Groups(Vec<Pid>);

impl Groups {
    /// Kills every group still alive.
    pub(crate) fn kill_all(&mut self) {
        for group in self.0.drain(..) {
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        }
    }
}

impl Drop for Groups {
    fn drop(&mut self) {
        self.kill_all();
    }
}

/// What a step's stdout is for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stdout {
    /// Kept for the caller (the agent's JSON report).
    Capture,
    /// Written to the log with stderr.
    Log,
}

/// Runs `command` in `dir` as a new process group, its output to `log`, for at most `limit`;
/// at the limit the group gets SIGTERM, then SIGKILL after [`STOP_GRACE`].
pub(crate) async fn run_step(
    mut command: Command,
    log: &Path,
    stdout: Stdout,
    limit: Duration,
    groups: &mut Groups,
) -> std::io::Result<Finished> {
    let log_file = std::fs::File::create(log)?;
    let out = match stdout {
        Stdout::Capture => Stdio::piped(),
        Stdout::Log => Stdio::from(log_file.try_clone()?),
    };
    command
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(Stdio::from(log_file))
        .process_group(0)
        .kill_on_drop(true);
    die_with_parent(&mut command);
    let mut child = command.spawn()?;
    let Some(pid) = child.id().and_then(|id| Pid::from_raw(id as i32)) else {
        return Err(std::io::Error::other(
            "the step exited before it could be watched",
        ));
    };
    groups.0.push(pid);
    let mut captured = Vec::new();
    let mut pipe = child.stdout.take();
    let read = async {
        if let Some(pipe) = pipe.as_mut() {
            let _ = pipe.read_to_end(&mut captured).await;
        }
    };
    let waited = tokio::time::timeout(limit, async {
        read.await;
        child.wait().await
    })
    .await;
    let status = match waited {
        Ok(status) => Some(status?),
        Err(_elapsed) => {
            let _ = rustix::process::kill_process_group(pid, Signal::TERM);
            if tokio::time::timeout(STOP_GRACE, child.wait())
                .await
                .is_err()
            {
                let _ = rustix::process::kill_process_group(pid, Signal::KILL);
                let _ = child.wait().await;
            }
            None
        }
    };
    Ok(Finished {
        status,
        stdout: captured,
    })
}

/// A step is told to stop (SIGTERM) when `rein eval` itself dies, even by SIGKILL: nothing an
/// evaluation starts outlives it.
fn die_with_parent(command: &mut Command) {
    #[expect(
        unsafe_code,
        reason = "pre_exec runs between fork and exec; the closure only makes one \
                  async-signal-safe prctl call"
    )]
    unsafe {
        command.pre_exec(|| {
            rustix::process::set_parent_process_death_signal(Some(Signal::TERM))
                .map_err(std::io::Error::from)
        });
    }
}
