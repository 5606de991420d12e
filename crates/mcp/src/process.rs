//! A stdio server's process: started in a process group of its own (so the terminal's
//! Ctrl+C does not reach it, and stopping it stops everything it started), its stderr
//! appended to a log file under rein's home (never the terminal), and stopped with its whole
//! group: politely when rein shuts it down, at once when it is dropped.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use rein_tools::sandbox::Sandbox;
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// How long a server gets to exit after SIGTERM before its group is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(500);

/// What a stdio server is started with.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    pub(crate) command: &'a str,
    pub(crate) args: &'a [String],
    pub(crate) env: &'a [(String, String)],
    pub(crate) cwd: &'a Path,
    /// rein's variables the server must not inherit (its secrets).
    pub(crate) env_remove: &'a [String],
    pub(crate) log: &'a Path,
    /// The OS sandbox it runs in, if any.
    pub(crate) sandbox: Option<&'a Sandbox>,
}

/// A running server process; dropping it kills its group.
#[derive(Debug)]
pub(crate) struct ServerProcess {
    child: Child,
    /// The process group, which is the server's pid; `None` once stopped.
    group: Option<Pid>,
}

impl ServerProcess {
    /// Starts the server; gives its stdout and stdin, the transport's two ends.
    pub(crate) fn spawn(launch: &Launch<'_>) -> std::io::Result<(Self, ChildStdout, ChildStdin)> {
        let mut log = OpenOptions::new()
            .create(true)
            .append(true)
            .open(launch.log)
            .map_err(|e| {
                std::io::Error::new(
                    e.kind(),
                    format!("cannot open its log {}: {e}", launch.log.display()),
                )
            })?;
        // One line per start, so a restart is visible in the log.
        let _ = writeln!(
            log,
            "--- rein starts `{}` ---",
            std::iter::once(launch.command)
                .chain(launch.args.iter().map(String::as_str))
                .collect::<Vec<_>>()
                .join(" ")
        );
        let mut command = Command::new(launch.command);
        command.args(launch.args).current_dir(launch.cwd);
        // Before the pipes: on macOS the command is rebuilt around sandbox-exec.
        if let Some(sandbox) = launch.sandbox {
            sandbox.apply(&mut command).map_err(|e| {
                std::io::Error::other(format!("cannot put it in the OS sandbox: {e}"))
            })?;
        }
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::from(log))
            .process_group(0)
            .kill_on_drop(true);
        for name in launch.env_remove {
            command.env_remove(name);
        }
        command.envs(launch.env.iter().map(|(k, v)| (k, v)));
        let mut child = command.spawn().map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot start `{}`: {e}", launch.command))
        })?;
        let group = child
            .id()
            .and_then(|id| Pid::from_raw(i32::try_from(id).ok()?));
        let (Some(stdout), Some(stdin)) = (child.stdout.take(), child.stdin.take()) else {
            return Err(std::io::Error::other("the server's stdio was not piped"));
        };
        Ok((ServerProcess { child, group }, stdout, stdin))
    }

    /// How the server ended, if it has (waits a moment: a server that fails at start is
    /// usually exiting as its pipe closes).
    pub(crate) async fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        tokio::time::timeout(Duration::from_millis(200), self.child.wait())
            .await
            .ok()?
            .ok()
    }

    /// Stops the server's group: SIGTERM, then SIGKILL after [`STOP_GRACE`].
    pub(crate) async fn stop(&mut self) {
        let Some(group) = self.group else {
            return;
        };
        let _ = kill_process_group(group, Signal::TERM);
        if tokio::time::timeout(STOP_GRACE, self.child.wait())
            .await
            .is_err()
        {
            let _ = kill_process_group(group, Signal::KILL);
            let _ = self.child.wait().await;
        } else {
            // The leader is gone; what it started may not be.
            let _ = kill_process_group(group, Signal::KILL);
        }
        self.group = None;
    }

    /// Kills the server's group now, without waiting (exit paths that cannot wait).
    pub(crate) fn kill_now(&mut self) {
        if let Some(group) = self.group.take() {
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// The last line the server wrote to its log, if any: usually why it stopped.
pub(crate) fn last_log_line(log: &Path) -> Option<String> {
    let text = std::fs::read_to_string(log).ok()?;
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    (!line.starts_with("--- rein starts")).then(|| line.trim().chars().take(300).collect())
}

/// The log file of server `name` under `dir`.
pub(crate) fn log_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{}.log", crate::naming::sanitize(name)))
}
