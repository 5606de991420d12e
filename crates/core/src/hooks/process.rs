//! Running one hook: `bash -c COMMAND` in the workspace, its JSON on stdin, stdout and stderr
//! captured up to a cap, in a process group of its own that is stopped whole at the timeout.
//!
//! The process is started through `rein_tools::bash::spawn_tracked`: forked through the
//! reaper, marked, and tracked with rein's commands, so that it is stopped with them (and
//! when rein exits), and stopped with its group if the hook is abandoned (the turn
//! cancelled). What a hook leaves running after it exits stays tracked and ends with rein.

use std::ffi::OsStr;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use rein_tools::bash::{BashCommand, ProcessTracker, TrackedChild, spawn_tracked};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::time::Instant;

use super::reply::Ended;

/// Bytes of stdout, and of stderr, kept from one hook; the rest is read and dropped.
pub const HOOK_OUTPUT_CAP_BYTES: usize = 64 * 1024;
/// After the hook exits, how long its pipes may stay quiet before rein stops reading them (a
/// process it left running may hold them open).
const AFTER_EXIT_IDLE: Duration = Duration::from_millis(50);
/// After the hook exits, the longest rein reads what is still coming.
const AFTER_EXIT_MAX: Duration = Duration::from_millis(500);
const READ_CHUNK_BYTES: usize = 8 * 1024;

/// One hook to run.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    /// The shell command.
    pub(crate) command: &'a str,
    /// Where it runs.
    pub(crate) cwd: &'a Path,
    /// Its stdin.
    pub(crate) input: &'a [u8],
    /// How long it may run.
    pub(crate) timeout: Duration,
    /// Variables of rein's environment it does not get.
    pub(crate) removed_env: &'a [String],
    /// Variables set for it.
    pub(crate) env: &'a [(&'a str, &'a OsStr)],
    /// Where its processes are tracked.
    pub(crate) processes: &'a ProcessTracker,
    /// The OS sandbox it runs in, if any.
    pub(crate) sandbox: Option<&'a rein_tools::sandbox::Sandbox>,
}

/// What one run of a hook gave.
#[derive(Debug)]
pub(crate) struct Output {
    pub(crate) ended: Ended,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs the hook to its end or its timeout.
pub(crate) async fn run(launch: &Launch<'_>) -> Output {
    let built = BashCommand {
        script: launch.command,
        args: &[],
        cwd: launch.cwd,
        sandbox: launch.sandbox,
        stdio: [Stdio::piped(), Stdio::piped(), Stdio::piped()],
        env_remove: launch.removed_env,
    }
    .build();
    let started = built.and_then(|mut command| {
        command.envs(launch.env.iter().copied());
        spawn_tracked(&mut command, launch.processes)
        // The command, holding our copies of the pipes' write ends, is dropped here.
    });
    let mut child = match started {
        Ok(child) => child,
        Err(error) => {
            return Output {
                ended: Ended::NotStarted(error.to_string()),
                stdout: String::new(),
                stderr: String::new(),
            };
        }
    };
    if let Some(mut stdin) = child.take_stdin() {
        let input = launch.input.to_vec();
        // On its own task: a hook that never reads stdin must not hold rein up, and one that
        // exits early only breaks the pipe.
        tokio::spawn(async move {
            let _ = stdin.write_all(&input).await;
        });
    }
    let mut stdout = Capture::new(child.take_stdout());
    let mut stderr = Capture::new(child.take_stderr());
    let ended = wait(&mut child, launch.timeout, &mut stdout, &mut stderr).await;
    drain(&mut stdout, &mut stderr).await;
    Output {
        ended,
        stdout: stdout.text(),
        stderr: stderr.text(),
    }
}

/// Reads both pipes until the hook exits or its time is up (then its group is stopped).
async fn wait<O, E>(
    child: &mut TrackedChild,
    timeout: Duration,
    stdout: &mut Capture<O>,
    stderr: &mut Capture<E>,
) -> Ended
where
    O: AsyncRead + Unpin,
    E: AsyncRead + Unpin,
{
    let deadline = tokio::time::sleep(timeout);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            () = stdout.read_some(), if stdout.is_open() => {}
            () = stderr.read_some(), if stderr.is_open() => {}
            status = child.wait() => {
                return match status {
                    Ok(status) => status.code().map_or(Ended::Signalled, Ended::Exited),
                    Err(error) => Ended::NotStarted(format!("rein lost track of it: {error}")),
                };
            }
            () = &mut deadline => {
                child.stop().await;
                return Ended::TimedOut(timeout);
            }
        }
    }
}

/// Reads what is still in the pipes: until both end, stay quiet a moment, or a short while
/// has passed.
async fn drain<O, E>(stdout: &mut Capture<O>, stderr: &mut Capture<E>)
where
    O: AsyncRead + Unpin,
    E: AsyncRead + Unpin,
{
    let give_up = Instant::now() + AFTER_EXIT_MAX;
    while stdout.is_open() || stderr.is_open() {
        let until = (Instant::now() + AFTER_EXIT_IDLE).min(give_up);
        let read = async {
            tokio::select! {
                () = stdout.read_some(), if stdout.is_open() => {}
                () = stderr.read_some(), if stderr.is_open() => {}
            }
        };
        if tokio::time::timeout_at(until, read).await.is_err() {
            break;
        }
    }
}

/// One pipe, read into a capped buffer.
struct Capture<R> {
    pipe: Option<R>,
    kept: Vec<u8>,
    /// Bytes read past the cap.
    dropped: u64,
    buf: Box<[u8]>,
}

impl<R: AsyncRead + Unpin> Capture<R> {
    fn new(pipe: Option<R>) -> Self {
        Capture {
            pipe,
            kept: Vec::new(),
            dropped: 0,
            buf: vec![0; READ_CHUNK_BYTES].into_boxed_slice(),
        }
    }

    fn is_open(&self) -> bool {
        self.pipe.is_some()
    }

    /// Reads one chunk. Cancel-safe: a read that did not complete took nothing.
    async fn read_some(&mut self) {
        let Some(pipe) = self.pipe.as_mut() else {
            return;
        };
        match pipe.read(&mut self.buf).await {
            Ok(0) | Err(_) => self.pipe = None,
            Ok(n) => {
                let room = HOOK_OUTPUT_CAP_BYTES.saturating_sub(self.kept.len());
                let keep = n.min(room);
                self.kept.extend_from_slice(&self.buf[..keep]);
                self.dropped += (n - keep) as u64;
            }
        }
    }

    fn text(&self) -> String {
        let mut text = String::from_utf8_lossy(&self.kept).into_owned();
        if self.dropped > 0 {
            text.push_str(&format!(
                "\n…({} more bytes not kept: hook output is capped at {} KiB)",
                self.dropped,
                HOOK_OUTPUT_CAP_BYTES / 1024
            ));
        }
        text
    }
}
