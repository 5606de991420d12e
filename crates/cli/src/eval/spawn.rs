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

/// The process groups an attempt started, with when each leader started; every one is killed
/// when the attempt ends (a setup may start a server for the agent, so groups live until then,
/// not past it).
#[derive(Debug, Default)]
pub(crate) struct Groups(Vec<(Pid, Option<u64>)>);

impl Groups {
    /// Kills every group still alive; not a group whose number another program has taken since
    /// (its leader started at another time), as a long attempt on a busy machine may see.
    pub(crate) fn kill_all(&mut self) {
        for (group, started) in self.0.drain(..) {
            let owner = start_ticks(group);
            if owner.is_some() && owner != started {
                continue;
            }
            let _ = rustix::process::kill_process_group(group, Signal::KILL);
        }
    }
}

/// When process `pid` started, in clock ticks since boot (`/proc/PID/stat`, field 22).
fn start_ticks(pid: Pid) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{}/stat", pid.as_raw_nonzero())).ok()?;
    // The command name, in parentheses, may hold spaces: count fields after it.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(19)?.parse().ok()
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
    groups.0.push((pid, start_ticks(pid)));
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::{CommandExt, ExitStatusExt};

    fn group_leader() -> (std::process::Child, Pid) {
        let child = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = Pid::from_raw(child.id() as i32).unwrap();
        (child, pid)
    }

    /// Whether `child` was killed (it would otherwise sleep on).
    fn killed(child: &mut std::process::Child) -> bool {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if child.try_wait().unwrap().is_some() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = child.kill();
        let _ = child.wait();
        false
    }

    #[test]
    fn a_step_s_group_is_killed_but_not_a_group_that_took_its_number() {
        let (mut ours, pid) = group_leader();
        let mut groups = Groups::default();
        groups.0.push((pid, start_ticks(pid)));
        groups.kill_all();
        assert!(killed(&mut ours));

        let (mut other, pid) = group_leader();
        let earlier = start_ticks(pid).unwrap().saturating_sub(1);
        groups.0.push((pid, Some(earlier)));
        groups.kill_all();
        // Had kill_all sent SIGKILL, that would be the signal it died of, not ours.
        rustix::process::kill_process(pid, Signal::TERM).unwrap();
        let status = other.wait().unwrap();
        assert_eq!(status.signal(), Some(Signal::TERM.as_raw()));
    }
}
