//! A stdio server's process: started in a process group of its own (so the terminal's
//! Ctrl+C does not reach it, and stopping it stops everything it started), its stderr
//! appended to a log file under rein's home (never the terminal), and stopped with its whole
//! group: politely when rein shuts it down, at once when it is dropped.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rein_tools::sandbox::Sandbox;
use rustix::process::{Pid, Signal, kill_process_group};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout, Command};

/// How long a server gets to exit after SIGTERM before its group is killed.
pub(crate) const STOP_GRACE: Duration = Duration::from_millis(500);
/// How much of a server's stderr one start of it writes to its log; past that, a note
/// says the rest was left out.
pub(crate) const LOG_CAP_BYTES: u64 = 1024 * 1024;
/// How long a server that failed its handshake is given to be seen exiting.
const EXIT_WAIT: Duration = Duration::from_millis(200);
/// How much of the end of a log is read for its last line.
const LOG_TAIL_BYTES: u64 = 8 * 1024;

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
    group: Group,
    /// Copies its stderr to its log; ends when the last writer of the pipe is gone.
    logging: tokio::task::JoinHandle<()>,
}

/// A server's process group, shared between its [`ServerProcess`] and whoever must be able
/// to kill it while the process is out of reach (inside a handshake still under way); empty
/// once the group is stopped, so a recycled id is never signalled.
#[derive(Debug, Clone, Default)]
pub(crate) struct Group(Arc<Mutex<Option<Pid>>>);

impl Group {
    fn take(&self) -> Option<Pid> {
        self.0.lock().take()
    }

    fn get(&self) -> Option<Pid> {
        *self.0.lock()
    }

    /// Kills the whole group now, if it was not stopped already.
    pub(crate) fn kill_now(&self) {
        if let Some(group) = self.take() {
            let _ = kill_process_group(group, Signal::KILL);
        }
    }
}

impl ServerProcess {
    /// Starts the server; gives its stdout and stdin, the transport's two ends.
    pub(crate) fn spawn(launch: &Launch<'_>) -> std::io::Result<(Self, ChildStdout, ChildStdin)> {
        let mut log = open_log(launch.log).map_err(|e| {
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
        if !launch.cwd.is_dir() {
            let error = format!(
                "its working directory {} does not exist (or is not a directory)",
                launch.cwd.display()
            );
            let _ = writeln!(log, "rein: {error}");
            return Err(std::io::Error::new(std::io::ErrorKind::NotFound, error));
        }
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
            .stderr(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        for name in launch.env_remove {
            command.env_remove(name);
        }
        command.envs(launch.env.iter().map(|(k, v)| (k, v)));
        let mut child = command.spawn().map_err(|e| {
            std::io::Error::new(e.kind(), format!("cannot start `{}`: {e}", launch.command))
        })?;
        let group = Group(Arc::new(Mutex::new(
            child
                .id()
                .and_then(|id| Pid::from_raw(i32::try_from(id).ok()?)),
        )));
        let (Some(stdout), Some(stdin), Some(stderr)) =
            (child.stdout.take(), child.stdin.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other("the server's stdio was not piped"));
        };
        let logging = tokio::spawn(copy_capped(stderr, log, LOG_CAP_BYTES));
        Ok((
            ServerProcess {
                child,
                group,
                logging,
            },
            stdout,
            stdin,
        ))
    }

    /// Its process group, to kill from outside.
    pub(crate) fn group(&self) -> Group {
        self.group.clone()
    }

    /// How the server ended, if it has (waits a moment: a server that fails at start is
    /// usually exiting as its pipe closes).
    pub(crate) async fn exit_status(&mut self) -> Option<std::process::ExitStatus> {
        let ended = tokio::time::timeout(EXIT_WAIT, async {
            let status = self.child.wait().await.ok();
            // What it said last, in the log before anyone reads it (unless something it
            // started still holds its stderr).
            let _ = tokio::time::timeout(EXIT_WAIT, &mut self.logging).await;
            status
        });
        ended.await.ok().flatten()
    }

    /// How the server ended, if it has ended by now (without waiting).
    pub(crate) fn exited(&mut self) -> Option<std::process::ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Stops the server's group: SIGTERM, then SIGKILL after [`STOP_GRACE`].
    pub(crate) async fn stop(&mut self) {
        let Some(group) = self.group.get() else {
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
        self.group.take();
    }

    /// Kills the server's group now, without waiting (exit paths that cannot wait).
    pub(crate) fn kill_now(&mut self) {
        self.group.kill_now();
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        self.kill_now();
    }
}

/// Opens a server's log to append to; a log already past [`LOG_CAP_BYTES`] is moved to
/// `<name>.log.1` first (replacing the one before), so logs stay small over many sessions.
fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    if std::fs::metadata(path).is_ok_and(|m| m.len() > LOG_CAP_BYTES) {
        let mut old = path.as_os_str().to_owned();
        old.push(".1");
        let _ = std::fs::rename(path, PathBuf::from(old));
    }
    OpenOptions::new().create(true).append(true).open(path)
}

/// Copies `from` to `log` until it ends, at most `cap` bytes; past the cap one note says
/// so, and the rest is read and dropped (a server blocked on a full pipe would hang).
async fn copy_capped(mut from: ChildStderr, log: std::fs::File, cap: u64) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut log = tokio::fs::File::from_std(log);
    let mut written: u64 = 0;
    let mut capped = false;
    let mut buf = vec![0u8; 8192];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if capped {
            continue;
        }
        let room = usize::try_from(cap.saturating_sub(written)).unwrap_or(usize::MAX);
        let take = n.min(room);
        if log.write_all(&buf[..take]).await.is_err() {
            capped = true;
            continue;
        }
        written += take as u64;
        if take < n {
            capped = true;
            let note = format!(
                "\n--- rein: this log reached {} KiB for this start of the server; the rest \
                 of its stderr is left out ---\n",
                cap / 1024
            );
            let _ = log.write_all(note.as_bytes()).await;
        }
        let _ = log.flush().await;
    }
    let _ = log.flush().await;
}

/// The last line the server wrote to its log, if any: usually why it stopped. Only the end
/// of the file is read, and bytes that are not UTF-8 do not hide the line.
pub(crate) fn last_log_line(log: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(log).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(LOG_TAIL_BYTES)))
        .ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let text = String::from_utf8_lossy(&tail);
    let line = text.lines().rev().find(|l| !l.trim().is_empty())?;
    (!line.starts_with("--- rein starts")).then(|| line.trim().chars().take(300).collect())
}

/// The log file of server `name` under `dir`: its name when that makes a plain file name,
/// else the sanitised name with a hash of the real one (`a.b` and `a_b` must not share one).
pub(crate) fn log_path(dir: &Path, name: &str) -> PathBuf {
    let clean = crate::naming::sanitize(name);
    if clean == name {
        dir.join(format!("{clean}.log"))
    } else {
        dir.join(format!("{clean}-{:08x}.log", fnv1a(name)))
    }
}

/// FNV-1a, 32 bits: a hash that stays the same from one rein version to the next.
fn fnv1a(text: &str) -> u32 {
    text.bytes().fold(0x811c_9dc5, |hash, byte| {
        (hash ^ u32::from(byte)).wrapping_mul(0x0100_0193)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_sanitise_alike_get_their_own_logs() {
        let dir = Path::new("/logs");
        assert_eq!(log_path(dir, "fake"), dir.join("fake.log"));
        assert_eq!(log_path(dir, "a-b_c"), dir.join("a-b_c.log"));
        let dotted = log_path(dir, "a.b");
        assert_ne!(dotted, log_path(dir, "a_b"));
        assert_ne!(dotted, log_path(dir, "a/b"));
        assert!(dotted.to_string_lossy().starts_with("/logs/a_b-"));
        assert_eq!(dotted, log_path(dir, "a.b"), "stable");
    }

    #[test]
    fn the_last_line_survives_bytes_that_are_not_utf8_and_a_long_log() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.log");
        let mut text = b"--- rein starts `s` ---\n".to_vec();
        text.extend(std::iter::repeat_n(b'x', 3 * 1024 * 1024));
        text.extend(b"\n\xff\xfe garbage\nError: port 3000 in use\n\n");
        std::fs::write(&log, &text).unwrap();
        assert_eq!(
            last_log_line(&log).as_deref(),
            Some("Error: port 3000 in use")
        );
        std::fs::write(&log, "--- rein starts `s` ---\n").unwrap();
        assert_eq!(last_log_line(&log), None);
    }

    #[tokio::test]
    async fn stderr_past_the_cap_is_left_out_with_a_note() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.log");
        let mut child = Command::new("sh")
            .args(["-c", "head -c 50000 /dev/zero | tr '\\0' y >&2; echo done"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        copy_capped(stderr, open_log(&log).unwrap(), 10_000).await;
        let _ = child.wait().await;
        let text = std::fs::read_to_string(&log).unwrap();
        assert_eq!(text.matches('y').count(), 10_000);
        assert!(
            text.contains("the rest of its stderr is left out"),
            "{text}"
        );
        assert!(text.len() < 10_300);
    }

    #[test]
    fn a_log_past_the_cap_is_rotated_at_start() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("s.log");
        std::fs::write(
            &log,
            vec![b'x'; usize::try_from(LOG_CAP_BYTES).unwrap() + 1],
        )
        .unwrap();
        drop(open_log(&log).unwrap());
        assert_eq!(std::fs::metadata(&log).unwrap().len(), 0);
        assert!(dir.path().join("s.log.1").exists());
    }
}
