//! Running one command: spawning bash in its own session, reading its output, and stopping
//! it (the whole process group) on timeout or cancellation.
//!
//! stdout and stderr share one pipe, as with `2>&1`: the kernel keeps the order in which the
//! writes happened, which two pipes read concurrently cannot guarantee.

use std::ffi::OsStr;
use std::io;
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::child::{BashCommand, spawn_marked};
use super::cwd::WRAPPER_SCRIPT;
use super::output::{CappedOutput, OUTPUT_HEAD_BYTES};
use super::procs::{self, CommandId};
use super::reaper;
use super::spool::{Spool, SpoolSpec, Spooled};
use super::tracker::{EXIT_POLL_INTERVAL, KILL_GRACE, ProcessTracker, Termination};
use crate::Progress;
use crate::sandbox::Sandbox;

/// Set for every command so that nothing waits for a person or paints colours.
const CHILD_ENV: [(&str, &str); 9] = [
    ("NO_COLOR", "1"),
    ("TERM", "dumb"),
    ("PAGER", "cat"),
    ("GIT_PAGER", "cat"),
    ("GIT_EDITOR", "true"),
    ("EDITOR", "true"),
    ("VISUAL", "true"),
    ("GIT_TERMINAL_PROMPT", "0"),
    // Python buffers stdout into a pipe; a timeout would lose what a script printed.
    ("PYTHONUNBUFFERED", "1"),
];

/// After bash exits, how long to wait for more output from processes it left behind before
/// returning without them.
const AFTER_EXIT_IDLE: Duration = Duration::from_millis(100);
/// After bash exits, the longest time spent reading what its leftovers still print.
const AFTER_EXIT_MAX: Duration = Duration::from_secs(1);
/// After a kill, how long to read what is still buffered.
const AFTER_KILL_IDLE: Duration = Duration::from_millis(50);
/// How long processes that are exiting get before they count as left running.
const EXITING_SETTLE: Duration = Duration::from_millis(100);
const READ_CHUNK_BYTES: usize = 64 * 1024;

/// What to run.
#[derive(Debug)]
pub(crate) struct RunSpec<'a> {
    /// The command, as the model wrote it.
    pub(crate) command: &'a str,
    /// The directory to run it in.
    pub(crate) cwd: &'a Path,
    /// Where bash writes its final directory.
    pub(crate) cwd_file: &'a Path,
    /// When to stop it.
    pub(crate) timeout: Duration,
    /// Where its output is saved once it is too big to show whole.
    pub(crate) spool: SpoolSpec,
    /// Variables kept from it (secrets).
    pub(crate) env_remove: &'a [String],
    /// Variables it gets besides rein's environment.
    pub(crate) env_set: &'a [(String, String)],
    /// The OS sandbox it runs in, if any.
    pub(crate) sandbox: Option<&'a Sandbox>,
    /// Whether git must ignore repository config that runs programs ([`GIT_GUARD`]).
    pub(crate) git_guard: bool,
}

/// Git settings forced, through `GIT_CONFIG_*`, on a command line proved read-only: git
/// finds no bare repository it was not pointed at, and runs no file-system monitor or hook
/// a repository's config names.
const GIT_GUARD: [(&str, &str); 3] = [
    ("safe.bareRepository", "explicit"),
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
];

/// Why the command stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// bash exited by itself.
    Exited,
    /// The timeout passed; the group was killed.
    TimedOut,
    /// The call was cancelled; the group was killed.
    Cancelled,
}

/// Processes the command left running after bash exited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Leftovers {
    /// None.
    None,
    /// Some, in this process group, still tracked.
    Running {
        /// The process group.
        pgid: u32,
    },
}

/// What happened.
#[derive(Debug)]
pub(crate) struct RunOutcome {
    /// stdout and stderr, interleaved: the start and the end.
    pub(crate) output: CappedOutput,
    /// All of it, in a file, when it was big.
    pub(crate) spooled: Spooled,
    /// Why it stopped.
    pub(crate) stop: Stop,
    /// bash's exit status, when it was reaped.
    pub(crate) status: Option<ExitStatus>,
    /// Background processes still running.
    pub(crate) leftovers: Leftovers,
    /// What the sandbox's proxy refused it.
    pub(crate) net: crate::sandbox::NetUse,
    /// Lines printed in all.
    pub(crate) lines: u64,
}

/// Characters of the latest line a progress report carries.
const PROGRESS_LINE_CHARS: usize = 200;
/// Lines of the output's end a progress report carries.
const PROGRESS_TAIL_LINES: usize = 5;
/// How often a running command's progress is reported at most.
const PROGRESS_EVERY: Duration = Duration::from_millis(250);

/// Runs the command to completion, timeout or cancellation, reporting its output's progress
/// through `report` (at most every [`PROGRESS_EVERY`]).
pub(crate) async fn run(
    spec: RunSpec<'_>,
    cancel: &CancellationToken,
    tracker: &ProcessTracker,
    report: Option<&(dyn Fn(Progress) + Send + Sync)>,
) -> io::Result<RunOutcome> {
    let (reader, writer) = io::pipe()?;
    let (mut child, id, net) = launch(
        Launch {
            script: WRAPPER_SCRIPT,
            command: spec.command,
            cwd: spec.cwd,
            cwd_file: spec.cwd_file,
            env_remove: spec.env_remove,
            env_set: spec.env_set,
            git_guard: spec.git_guard,
            sandbox: spec.sandbox,
            stdin: Stdio::null(),
            stdout: writer.try_clone()?.into(),
            stderr: writer.into(),
        },
        tracker,
    )?;
    let pgid = id.pgid;
    let mut guard = AbandonGuard { id, armed: true };
    let mut spool_spec = spec.spool;
    // The spool starts with what memory holds: the threshold must be within the head.
    spool_spec.threshold_bytes = spool_spec.threshold_bytes.min(OUTPUT_HEAD_BYTES as u64);
    let mut reader = OutputReader::new(
        pipe::Receiver::from_owned_fd(OwnedFd::from(reader))?,
        Spool::new(spool_spec),
    );

    let deadline = tokio::time::sleep(spec.timeout);
    tokio::pin!(deadline);
    let mut status = None;
    // Reported on a clock, not on reads: output that stops (a command printing a line, then
    // working) is shown within one period.
    let mut every = tokio::time::interval(PROGRESS_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut reported_bytes = 0;
    let stop = loop {
        tokio::select! {
            () = cancel.cancelled() => break Stop::Cancelled,
            () = &mut deadline => break Stop::TimedOut,
            _ = reader.read_chunk(), if !reader.eof => {}
            _ = every.tick(), if report.is_some() => {
                if let Some(report) = report
                    && reader.bytes != reported_bytes
                {
                    reported_bytes = reader.bytes;
                    report(reader.progress());
                }
            }
            exit = child.wait() => {
                status = Some(exit?);
                break Stop::Exited;
            }
        }
    };

    if stop == Stop::Exited {
        reader
            .read_while_flowing(AFTER_EXIT_IDLE, AFTER_EXIT_MAX)
            .await;
    } else {
        status = stop_group(id, &mut child, &mut reader).await;
        reader
            .read_while_flowing(AFTER_KILL_IDLE, AFTER_EXIT_MAX)
            .await;
    }

    if status.is_some() {
        reaper::reaped_by_tokio(pgid);
    }
    // What bash orphaned on exit is rein's now: note it while it is alive.
    reaper::reap_adopted();
    let leftovers = if still_running(id).await {
        Leftovers::Running { pgid }
    } else {
        tracker.forget(id);
        Leftovers::None
    };
    guard.armed = false;
    let lines = reader.lines;
    let (output, spooled) = reader.finish();
    Ok(RunOutcome {
        lines,
        output,
        spooled,
        stop,
        status,
        leftovers,
        net,
    })
}

/// How to start bash for a command: the script it runs (the command is its `$2`) and where
/// its standard streams go.
#[derive(Debug)]
pub(crate) struct Launch<'a> {
    /// The script `bash -c` runs: `$1` is the file for the final directory, `$2` the command.
    pub(crate) script: &'a str,
    pub(crate) command: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) cwd_file: &'a Path,
    pub(crate) env_remove: &'a [String],
    /// Variables it gets besides rein's environment.
    pub(crate) env_set: &'a [(String, String)],
    /// Whether git must ignore repository config that runs programs ([`GIT_GUARD`]).
    pub(crate) git_guard: bool,
    /// The OS sandbox it runs in, if any.
    pub(crate) sandbox: Option<&'a Sandbox>,
    pub(crate) stdin: Stdio,
    pub(crate) stdout: Stdio,
    pub(crate) stderr: Stdio,
}

/// Starts bash the one way every command starts (the bash tool's, in the foreground or in the
/// background): its own session and process group, an environment in which nothing waits for
/// a person, rein's marker, forked through the reaper and registered with `tracker`. It dies
/// with rein, even when rein is killed with SIGKILL (`watchdog.rs`).
pub(crate) fn launch(
    spec: Launch<'_>,
    tracker: &ProcessTracker,
) -> io::Result<(tokio::process::Child, CommandId, crate::sandbox::NetUse)> {
    let (mut command, net) = BashCommand {
        script: spec.script,
        args: &[
            OsStr::new("bash"),
            spec.cwd_file.as_os_str(),
            OsStr::new(spec.command),
        ],
        cwd: spec.cwd,
        sandbox: spec.sandbox,
        stdio: [spec.stdin, spec.stdout, spec.stderr],
        env_remove: spec.env_remove,
    }
    .build_watched()?;
    command.envs(spec.env_set.iter().map(|(k, v)| (k, v)));
    command.envs(CHILD_ENV);
    if spec.git_guard {
        guard_git(&mut command);
    }
    let (child, id) = spawn_marked(&mut command, tracker)?;
    // The command holds our copies of the pipes' write ends: drop it, or they never end.
    drop(command);
    Ok((child, id, net))
}

/// Whether the command still has live processes, allowing those that are exiting a moment to
/// finish: a process closes its files (so the pipe may already have ended) before it becomes
/// a zombie.
async fn still_running(id: CommandId) -> bool {
    let give_up = Instant::now() + EXITING_SETTLE;
    loop {
        if procs::alive_among(&[id]).is_empty() {
            return false;
        }
        if Instant::now() >= give_up {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// SIGTERM to the group, SIGKILL after [`KILL_GRACE`]; keeps reading output and reaps bash.
async fn stop_group(
    id: CommandId,
    child: &mut tokio::process::Child,
    reader: &mut OutputReader,
) -> Option<ExitStatus> {
    let mut ending = Termination::start([id]);
    let mut status = None;
    let mut poll = tokio::time::interval(EXIT_POLL_INTERVAL);
    loop {
        tokio::select! {
            exit = child.wait(), if status.is_none() => status = exit.ok(),
            _ = reader.read_chunk(), if !reader.eof => {}
            _ = poll.tick() => {
                if ending.is_done() {
                    break;
                }
                if ending.grace_over() {
                    ending.finish();
                    break;
                }
            }
        }
    }
    if status.is_none() {
        status = tokio::time::timeout(KILL_GRACE, child.wait())
            .await
            .ok()
            .and_then(Result::ok);
    }
    status
}

/// Reads the shared pipe into a capped buffer and, once it is big, a file.
struct OutputReader {
    pipe: pipe::Receiver,
    output: CappedOutput,
    spool: Spool,
    buf: Vec<u8>,
    eof: bool,
    /// Bytes and lines read so far.
    bytes: u64,
    lines: u64,
}

impl OutputReader {
    fn new(pipe: pipe::Receiver, spool: Spool) -> Self {
        OutputReader {
            pipe,
            output: CappedOutput::default(),
            spool,
            buf: vec![0; READ_CHUNK_BYTES],
            eof: false,
            bytes: 0,
            lines: 0,
        }
    }

    /// How much the command has printed, and its latest line.
    fn progress(&self) -> Progress {
        Progress::Output {
            bytes: self.bytes,
            lines: self.lines,
            last_line: self
                .output
                .last_lines(1, PROGRESS_LINE_CHARS)
                .trim_end()
                .to_owned(),
            tail: self
                .output
                .last_lines(PROGRESS_TAIL_LINES, PROGRESS_LINE_CHARS),
        }
    }

    /// Reads one chunk (cancel-safe: nothing is lost if the future is dropped); returns how
    /// many bytes it got.
    async fn read_chunk(&mut self) -> usize {
        match self.pipe.read(&mut self.buf).await {
            Ok(0) => {
                self.eof = true;
                0
            }
            Ok(n) => {
                let chunk = &self.buf[..n];
                // No await between the read and these: the chunk is never half-kept.
                self.spool.push(chunk, self.output.head_bytes());
                self.output.push(chunk);
                self.bytes += n as u64;
                self.lines += memchr::memchr_iter(b'\n', chunk).count() as u64;
                n
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => 0,
            // A broken pipe can only mean there is nothing more to read.
            Err(_) => {
                self.eof = true;
                0
            }
        }
    }

    /// Reads until the pipe ends, stays quiet for `idle`, or `max` has passed.
    async fn read_while_flowing(&mut self, idle: Duration, max: Duration) {
        let give_up = Instant::now() + max;
        while !self.eof && Instant::now() < give_up {
            let wait_until = (Instant::now() + idle).min(give_up);
            if tokio::time::timeout_at(wait_until, self.read_chunk())
                .await
                .is_err()
            {
                break;
            }
        }
    }

    /// The output so far, and its file closed. If processes still hold the pipe, it is
    /// drained in the background until they close it: closing it here would kill them with
    /// SIGPIPE on their next write, and leaving it unread would block them once the pipe
    /// buffer is full.
    fn finish(self) -> (CappedOutput, Spooled) {
        let OutputReader {
            mut pipe,
            output,
            spool,
            mut buf,
            eof,
            ..
        } = self;
        if !eof {
            tokio::spawn(async move {
                buf.truncate(8 * 1024);
                while let Ok(1..) = pipe.read(&mut buf).await {}
            });
        }
        (output, spool.finish())
    }
}

/// Ends the command if the call is dropped before it finishes (the agent gave up on it).
struct AbandonGuard {
    id: CommandId,
    armed: bool,
}

impl Drop for AbandonGuard {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let ending = Termination::start([self.id]);
        // Drop cannot wait: a short-lived thread sends SIGKILL after the grace period.
        let _ = std::thread::Builder::new()
            .name("rein-bash-kill".to_owned())
            .spawn(move || {
                ending.end_blocking();
            });
    }
}

/// Adds [`GIT_GUARD`] after any `GIT_CONFIG_*` settings rein's own environment holds.
fn guard_git(command: &mut tokio::process::Command) {
    let first = std::env::var("GIT_CONFIG_COUNT")
        .ok()
        .and_then(|count| count.parse::<usize>().ok())
        .unwrap_or(0);
    for (i, (key, value)) in GIT_GUARD.iter().enumerate() {
        command.env(format!("GIT_CONFIG_KEY_{}", first + i), key);
        command.env(format!("GIT_CONFIG_VALUE_{}", first + i), value);
    }
    command.env("GIT_CONFIG_COUNT", (first + GIT_GUARD.len()).to_string());
}
