//! Background commands: `bash { run_in_background: true }` starts a command and returns at
//! once with an id (`bg1`, `bg2`, …); `bash_output` reads what it printed since the last look
//! and whether it finished; `kill_shell` stops its whole process group.
//!
//! - A command starts the way every command starts (`process::launch`: own session, marker,
//!   reaper, tracker), so whatever confines commands confines these too.
//! - Its stdout and stderr go through a pipe to a file in the offload directory (the
//!   session's tool-output directory), which the model may also read or grep. A thread of its
//!   own copies them, so the command never waits on rein's runtime, and stops saving at
//!   `tool_output_file_max_bytes` (the file then says how much more was printed): a chatty
//!   server cannot fill the disk.
//! - At most [`MAX_RUNNING`] run at once. Only the `timeout` the model gives applies.
//! - When it finishes, what it left running in its process group is stopped, and a notice
//!   (id, exit code, last lines, the file) waits for the agent to send with its next request.
//! - They are stopped with their groups when the session ends ([`BackgroundShells::stop_all`],
//!   or when the last handle is dropped), but not when a turn is cancelled. If rein itself is
//!   killed, a watchdog in each group, reading a pipe only rein holds open, sees the pipe end
//!   and stops the group: nothing is left behind even after SIGKILL.

use std::collections::BTreeMap;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};
use std::process::ExitStatus;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::cwd::WRAPPER_SCRIPT;
use super::process::{Launch, launch};
use super::procs::CommandId;
use super::reaper;
use super::tracker::{ProcessTracker, Termination};
use crate::offload;

#[path = "background_output.rs"]
mod output;
use output::{last_lines, read_from, save_output};

/// Background commands that may run at once.
pub const MAX_RUNNING: usize = 8;
/// Lines of the output's end a finish notice carries.
const NOTICE_LINES: usize = 5;
/// The most of the output's end read for a notice.
const NOTICE_TAIL_BYTES: u64 = 2048;

/// Runs before the command's own wrapper. fd 0 is a pipe only rein holds open: a watchdog,
/// double-forked so that the command's `wait` never waits for it, reads it; when it ends (rein
/// exited, was killed, or the command finished) it stops the whole group, itself included.
/// The command gets /dev/null as its input.
const WATCHDOG: &str = "exec 3<&0 0</dev/null
( { cat <&3; trap '' TERM; kill -TERM 0; sleep 1; kill -KILL 0; } >/dev/null 2>&1 & ) 2>/dev/null
exec 3<&-
";

/// The background commands of an agent (and its sub-agents). Cheap to clone: clones share
/// Why a background command could not be read or stopped; said to the model as it is.
#[derive(Debug, thiserror::Error)]
pub enum BackgroundError {
    /// No command has this id (the message lists the ids there are).
    #[error("{0}")]
    Unknown(String),
    /// Its output file could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The output file.
        path: PathBuf,
        /// What reading it said.
        source: io::Error,
    },
    /// It was forgotten while being stopped.
    #[error("{0} vanished while being stopped")]
    Vanished(String),
}

/// the commands.
#[derive(Debug, Clone, Default)]
pub struct BackgroundShells {
    inner: Arc<Inner>,
}

#[derive(Debug, Default)]
struct Inner {
    state: Mutex<State>,
    /// Their process groups: apart from the other commands', so that cancelling a turn does
    /// not stop them.
    tracker: ProcessTracker,
}

#[derive(Debug, Default)]
struct State {
    started: u32,
    shells: BTreeMap<String, Shell>,
}

#[derive(Debug)]
struct Shell {
    command: String,
    output: PathBuf,
    started: Instant,
    id: CommandId,
    /// Where the next `bash_output` reads from.
    read_to: u64,
    end: Option<End>,
    /// The model knows it ended (it was told, it looked, or it stopped it).
    told: bool,
}

/// How a background command ended.
#[derive(Debug, Clone)]
struct End {
    status: Option<ExitStatus>,
    after: Duration,
    timed_out: bool,
    killed: bool,
    /// What the sandbox's watch removed that the command created (`.git/commondir`).
    removed: Vec<String>,
}

/// What `start` needs to know.
pub(crate) struct StartSpec<'a> {
    pub(crate) command: &'a str,
    pub(crate) cwd: &'a Path,
    pub(crate) env_remove: &'a [String],
    pub(crate) env_set: &'a [(String, String)],
    pub(crate) git_guard: bool,
    /// The OS sandbox it runs in, if any.
    pub(crate) sandbox: Option<&'a crate::sandbox::Sandbox>,
    pub(crate) offload_dir: &'a Path,
    /// The most bytes of output saved.
    pub(crate) cap_bytes: u64,
    pub(crate) timeout: Option<Duration>,
    /// Masks the secrets in the output before it reaches the file.
    pub(crate) mask: Option<Box<dyn crate::mask::MaskStream>>,
}

/// What `bash_output` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutputRead {
    /// The output from `from` on (at most the asked size, cut at a character boundary).
    pub text: String,
    /// Where it started.
    pub from: u64,
    /// Where the next read starts.
    pub next: u64,
    /// The output's size now.
    pub size: u64,
    /// How it stands: `running`, or how it ended.
    pub status: String,
    /// Whether it has ended.
    pub finished: bool,
    /// The file holding all of it.
    pub file: PathBuf,
}

impl BackgroundShells {
    /// No background commands yet.
    pub fn new() -> Self {
        BackgroundShells::default()
    }

    /// Starts a command; its id.
    pub(crate) fn start(&self, spec: StartSpec<'_>) -> Result<(String, PathBuf), String> {
        let running = self
            .inner
            .state
            .lock()
            .shells
            .values()
            .filter(|s| s.end.is_none())
            .count();
        if running >= MAX_RUNNING {
            return Err(format!(
                "{running} background commands are running, the most at once: wait for one \
                 (bash_output) or stop one (kill_shell) first"
            ));
        }
        let (output, file) = offload::create(spec.offload_dir, "bash-bg").map_err(|e| {
            format!(
                "cannot create the output file in {}: {e}",
                spec.offload_dir.display()
            )
        })?;
        let (watch, guard) = io::pipe().map_err(|e| format!("cannot start: {e}"))?;
        let script = format!("{WATCHDOG}{WRAPPER_SCRIPT}");
        let (printed, stdout) = io::pipe().map_err(|e| format!("cannot start: {e}"))?;
        let stderr = stdout
            .try_clone()
            .map_err(|e| format!("cannot start: {e}"))?;
        // Before the command: should it fail to start, the pipe's ends go and the copy ends.
        let copied = save_output(printed, file, spec.cap_bytes, spec.mask)
            .map_err(|e| format!("cannot start: {e}"))?;
        // What a sandboxed command must not create (`.git/commondir`) is looked at before it
        // starts: a file it writes at once would otherwise count as already there.
        let plants = spec.sandbox.map(|s| s.policy().watch());
        let (child, id, _net) = launch(
            Launch {
                script: &script,
                command: spec.command,
                cwd: spec.cwd,
                cwd_file: Path::new("/dev/null"),
                env_remove: spec.env_remove,
                env_set: spec.env_set,
                git_guard: spec.git_guard,
                sandbox: spec.sandbox,
                stdin: watch.into(),
                stdout: stdout.into(),
                stderr: stderr.into(),
            },
            &self.inner.tracker,
        )
        .map_err(|e| format!("could not start bash in {}: {e}", spec.cwd.display()))?;
        let name = {
            let mut state = self.inner.state.lock();
            state.started += 1;
            let name = format!("bg{}", state.started);
            state.shells.insert(
                name.clone(),
                Shell {
                    command: spec.command.to_owned(),
                    output: output.clone(),
                    started: Instant::now(),
                    id,
                    read_to: 0,
                    end: None,
                    told: false,
                },
            );
            name
        };
        let inner = Arc::clone(&self.inner);
        let watched = name.clone();
        let timeout = spec.timeout;
        tokio::spawn(async move {
            let (status, timed_out) = watch_child(child, id, timeout).await;
            let removed: Vec<String> = plants.iter().flat_map(|p| p.sweep()).collect();
            // The command ended: the watchdog, seeing its pipe close, stops what it left.
            drop(guard);
            // Its end is told once its output is saved whole: the pipe closes when what it
            // left is stopped (a process that escaped its group may hold it open: not long).
            let _ = tokio::time::timeout(OUTPUT_DRAIN_WAIT, copied).await;
            let mut state = inner.state.lock();
            if let Some(shell) = state.shells.get_mut(&watched) {
                match &mut shell.end {
                    Some(end) => end.removed.extend(removed),
                    None => {
                        shell.end = Some(End {
                            status,
                            after: shell.started.elapsed(),
                            timed_out,
                            killed: false,
                            removed,
                        });
                    }
                }
            }
        });
        Ok((name, output))
    }

    /// Reads what `id` printed from `offset` (default: where the last read ended), at most
    /// `max_bytes`.
    pub fn read(
        &self,
        id: &str,
        offset: Option<u64>,
        max_bytes: usize,
    ) -> Result<OutputRead, BackgroundError> {
        let mut state = self.inner.state.lock();
        let known = known_ids(&state);
        let shell = state
            .shells
            .get_mut(id)
            .ok_or_else(|| BackgroundError::Unknown(unknown(id, &known)))?;
        let from = offset.unwrap_or(shell.read_to);
        let (text, next, size) =
            read_from(&shell.output, from, max_bytes).map_err(|source| BackgroundError::Read {
                path: shell.output.clone(),
                source,
            })?;
        shell.read_to = next;
        // Seen finished, with all its output read: no notice needed any more.
        if shell.end.is_some() && next >= size {
            shell.told = true;
        }
        Ok(OutputRead {
            text,
            from,
            next,
            size,
            status: describe(shell.end.as_ref()),
            finished: shell.end.is_some(),
            file: shell.output.clone(),
        })
    }

    /// Stops `id` and its whole process group; what the model is told.
    pub async fn kill(&self, id: &str) -> Result<String, BackgroundError> {
        let command = {
            let mut state = self.inner.state.lock();
            let known = known_ids(&state);
            let shell = state
                .shells
                .get_mut(id)
                .ok_or_else(|| BackgroundError::Unknown(unknown(id, &known)))?;
            shell.told = true;
            if let Some(end) = &shell.end {
                return Ok(format!(
                    "{id} had already ended ({}); its output is in {}",
                    describe(Some(end)),
                    shell.output.display()
                ));
            }
            shell.id
        };
        Termination::start([command]).end().await;
        let mut state = self.inner.state.lock();
        let Some(shell) = state.shells.get_mut(id) else {
            return Err(BackgroundError::Vanished(id.to_owned()));
        };
        let after = shell.started.elapsed();
        let end = shell.end.get_or_insert(End {
            status: None,
            after,
            timed_out: false,
            killed: true,
            removed: Vec::new(),
        });
        end.killed = true;
        Ok(format!(
            "Stopped {id} and every process in its group; its output is in {}",
            shell.output.display()
        ))
    }

    /// Notices for the model of the commands that ended since it last heard of them (each
    /// once): id, how it ended, its last lines and the file.
    pub fn take_finish_notices(&self) -> Vec<String> {
        let mut state = self.inner.state.lock();
        let mut notices = Vec::new();
        for (name, shell) in &mut state.shells {
            let Some(end) = shell.end.clone().filter(|_| !shell.told) else {
                continue;
            };
            shell.told = true;
            let tail = last_lines(&shell.output);
            let mut notice = format!(
                "<background>{name} (`{}`) {}; output: {}",
                one_line(&shell.command),
                describe(Some(&end)),
                shell.output.display()
            );
            if !tail.is_empty() {
                notice.push_str(&format!("; last lines:\n{tail}"));
            }
            notice.push_str("</background>");
            notices.push(notice);
        }
        notices
    }

    /// How many are running now.
    pub fn running(&self) -> usize {
        self.inner
            .state
            .lock()
            .shells
            .values()
            .filter(|s| s.end.is_none())
            .count()
    }

    /// Stops every background command with its process group (the session ends). Returns
    /// how many were running.
    pub async fn stop_all(&self) -> usize {
        let stopped = self.inner.tracker.kill_all().await;
        for shell in self.inner.state.lock().shells.values_mut() {
            if shell.end.is_none() {
                shell.told = true;
                shell.end = Some(End {
                    status: None,
                    after: shell.started.elapsed(),
                    timed_out: false,
                    killed: true,
                    removed: Vec::new(),
                });
            }
        }
        stopped
    }

    /// Their process groups, for [`ProcessTracker::kill_all_blocking`] on exit paths.
    pub fn processes(&self) -> &ProcessTracker {
        &self.inner.tracker
    }
}

/// Waits for bash; stops the group when the timeout passes. Its status (when it could be
/// reaped) and whether it timed out.
async fn watch_child(
    mut child: tokio::process::Child,
    id: CommandId,
    timeout: Option<Duration>,
) -> (Option<ExitStatus>, bool) {
    let waited = match timeout {
        Some(limit) => tokio::time::timeout(limit, child.wait()).await.ok(),
        None => Some(child.wait().await),
    };
    let (status, timed_out) = match waited {
        Some(status) => (status.ok(), false),
        None => {
            Termination::start([id]).end().await;
            (child.wait().await.ok(), true)
        }
    };
    if status.is_some() {
        reaper::reaped_by_tokio(id.pgid);
    }
    reaper::reap_adopted();
    (status, timed_out)
}

/// How long a finished command's end waits for its output to be saved.
const OUTPUT_DRAIN_WAIT: Duration = Duration::from_secs(3);

/// `running`, or how it ended.
fn describe(end: Option<&End>) -> String {
    let Some(end) = end else {
        return "is running".to_owned();
    };
    let ended = describe_end(end);
    if end.removed.is_empty() {
        return ended;
    }
    format!("{ended} ({})", end.removed.join("; "))
}

fn describe_end(end: &End) -> String {
    let after = format!("after {:.1} s", end.after.as_secs_f64());
    if end.killed {
        return format!("was stopped {after}");
    }
    if end.timed_out {
        return format!("timed out and was stopped {after}");
    }
    match end.status {
        Some(status) => match (status.code(), status.signal()) {
            (Some(code), _) => format!("exited with code {code} {after}"),
            (None, Some(signal)) => format!("was killed by signal {signal} {after}"),
            (None, None) => format!("ended {after}"),
        },
        None => format!("ended {after} (its exit status is unknown)"),
    }
}

fn known_ids(state: &State) -> Vec<String> {
    state.shells.keys().cloned().collect()
}

fn unknown(id: &str, known: &[String]) -> String {
    if known.is_empty() {
        format!("there is no background command `{id}`: none has been started")
    } else {
        format!(
            "there is no background command `{id}`; the ids are {}",
            known.join(", ")
        )
    }
}

fn one_line(command: &str) -> String {
    const SHOWN_CHARS: usize = 80;
    let flat = command.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= SHOWN_CHARS {
        return flat;
    }
    let mut cut: String = flat.chars().take(SHOWN_CHARS).collect();
    cut.push('…');
    cut
}
