//! Checkpoints: the workspace as it was before each turn, so a turn can be taken back.
//!
//! Before every turn the agent scans the workspace ([`tree::scan`]: every file the ignore
//! files do not exclude, `.git` never) and saves the content of each file that changed since
//! the last scan in a content-addressed store under `$REIN_HOME/checkpoints/objects` (never
//! in the project's `.git`: no commits, no refs, nothing the person would see). After the
//! turn it scans again; what differs is what the turn changed, whichever tool did it (edits,
//! commands, MCP tools, sub-agents). Each session has a log of its turns and their changes
//! (`sessions/<id>/log.jsonl`) and the last snapshot (`tree.json`, and what later scans
//! changed in it appended to `tree-changes.jsonl`), which makes the next scan incremental
//! (size, times, inode and mode tell a file unchanged without reading it) and lets a turn
//! cut short by a crash be finished on the next start. The snapshot stays in memory
//! between turns: only the first checkpoint of a process reads it from disk.
//!
//! A rewind restores the point before a turn: each file the later turns changed gets the
//! content it had before the first of them, unless someone else changed it since rein's turn
//! did (then the front-end asks, or a headless run refuses). It goes through a journal, so a
//! rewind stopped half-way is completed by the next start of rein.
//!
//! Nothing here prints; what the person should hear comes back as values.

mod log;
mod objects;
mod prune;
mod restore;
mod rewind;
mod saved;
mod tree;
mod walk;

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub use log::{Change, TurnRecord, UnsavedChange};
pub use restore::{Applied, OnChanged, Restore, RewindPlan, RewindScope};
pub use tree::{FileKind, FileState, MAX_FILES, Tree, Unsaved};

use log::Record;
use objects::Objects;
use restore::Journal;
use saved::SavedTree;
use tree::Delta;

/// Files larger than this are not saved unless configured otherwise.
pub const DEFAULT_MAX_FILE_BYTES: u64 = 10 * 1024 * 1024;
/// Checkpoints older than this many days are pruned unless configured otherwise.
pub const DEFAULT_KEEP_DAYS: u32 = 30;
/// The store is pruned down to this many bytes unless configured otherwise.
pub const DEFAULT_MAX_BYTES: u64 = 2 * 1024 * 1024 * 1024;

/// How checkpoints are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckpointSettings {
    /// Files larger than this are not saved (`checkpoint_max_file_bytes`).
    pub max_file_bytes: u64,
    /// Sessions' checkpoints older than this are pruned (`checkpoint_keep_days`).
    pub keep_days: u32,
    /// The store is pruned, oldest sessions first, down to this (`checkpoint_max_bytes`).
    pub max_bytes: u64,
}

impl Default for CheckpointSettings {
    fn default() -> Self {
        CheckpointSettings {
            max_file_bytes: DEFAULT_MAX_FILE_BYTES,
            keep_days: DEFAULT_KEEP_DAYS,
            max_bytes: DEFAULT_MAX_BYTES,
        }
    }
}

/// Why checkpoints could not be read or a rewind could not be done.
#[derive(Debug, thiserror::Error)]
pub enum CheckpointError {
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The error.
        source: io::Error,
    },
    /// The session file could not be written.
    #[error(transparent)]
    Session(#[from] crate::session::SessionError),
    /// There is no such turn.
    #[error("no turn {turn}: the session has {turns} turn(s) with checkpoints (see --list)")]
    NoSuchTurn {
        /// The turn asked for.
        turn: u32,
        /// How many there are.
        turns: usize,
    },
    /// Files someone else changed since rein's turn did; nothing was changed.
    #[error(
        "refusing to rewind: changed since rein last wrote {}: {}; nothing was changed",
        if .0.len() == 1 { "it" } else { "them" },
        .0.join(", ")
    )]
    ChangedSince(Vec<String>),
    /// Something in the store is not as rein writes it.
    #[error("the checkpoints are damaged: {0}")]
    Corrupt(String),
}

/// The checkpoints of one session in one workspace.
#[derive(Debug)]
pub struct Checkpoints {
    rein_home: PathBuf,
    workspace: PathBuf,
    session: String,
    /// `$REIN_HOME/checkpoints`.
    root: PathBuf,
    objects: Objects,
    settings: CheckpointSettings,
    /// The last snapshot, once read or taken.
    tree: Option<Tree>,
    /// What the session directory holds of `tree`.
    saved: SavedTree,
    /// The number the next turn gets, once known (the log need not be read every turn).
    next_turn: Option<u32>,
    /// The turn running, between [`Checkpoints::before_turn`] and [`Checkpoints::after_turn`].
    running: Option<u32>,
}

impl Checkpoints {
    /// The checkpoints of `session` in `workspace`. Finishes a turn a crash cut short, and
    /// prunes old checkpoints; what it could not do comes back as warnings.
    pub fn open(
        rein_home: &Path,
        session: &str,
        workspace: &Path,
        settings: CheckpointSettings,
    ) -> (Self, Vec<String>) {
        let root = rein_home.join("checkpoints");
        let mut checkpoints = Checkpoints {
            rein_home: rein_home.to_path_buf(),
            workspace: workspace.to_path_buf(),
            session: session.to_owned(),
            objects: Objects::new(root.join("objects")),
            root,
            settings,
            tree: None,
            saved: SavedTree::default(),
            next_turn: None,
            running: None,
        };
        let mut warnings = prune::prune(&checkpoints.root, session, &settings);
        warnings.extend(checkpoints.finish_interrupted_turn());
        (checkpoints, warnings)
    }

    fn dir(&self) -> PathBuf {
        self.root.join("sessions").join(&self.session)
    }

    fn log_path(&self) -> PathBuf {
        self.dir().join("log.jsonl")
    }

    /// The session's turns that have checkpoints, in order.
    pub fn turns(&self) -> Result<Vec<TurnRecord>, CheckpointError> {
        let path = self.log_path();
        log::read(&path)
            .map(|records| log::turns(&records))
            .map_err(|source| CheckpointError::Io { path, source })
    }

    /// Takes the checkpoint before a turn; `line` is how many lines the session file holds
    /// before the turn's prompt. A failure is a warning: the turn goes on without one.
    pub fn before_turn(&mut self, prompt: &str, line: u64) -> Vec<String> {
        let mut warnings = Vec::new();
        let turn = match self.next_turn {
            Some(turn) => turn,
            None => match self.turns() {
                Ok(turns) => u32::try_from(turns.len()).unwrap_or(u32::MAX - 1) + 1,
                Err(e) => return vec![format!("no checkpoint for this turn: {e}")],
            },
        };
        let (delta, _lock) = match self.snapshot(&mut warnings) {
            Ok(scanned) => scanned,
            Err(e) => {
                warnings.push(format!("no checkpoint for this turn: {e}"));
                return warnings;
            }
        };
        // The changes since the last turn are not this turn's: the snapshot takes them in.
        let saved = std::fs::create_dir_all(self.dir())
            .and_then(|()| self.save_tree(&delta))
            .and_then(|()| {
                log::append(
                    &self.log_path(),
                    &Record::Turn {
                        turn,
                        line,
                        prompt: prompt.to_owned(),
                        at: crate::session::time::UtcTime::from_system(SystemTime::now()).rfc3339(),
                    },
                )
            });
        match saved {
            Ok(()) => {
                self.running = Some(turn);
                self.next_turn = Some(turn.saturating_add(1));
            }
            Err(e) => {
                // A record half-written may count as a turn when read.
                self.next_turn = None;
                warnings.push(format!(
                    "no checkpoint for this turn (it cannot be rewound): {e}"
                ));
            }
        }
        warnings
    }

    /// Records what the running turn changed.
    pub fn after_turn(&mut self) -> Vec<String> {
        let Some(turn) = self.running.take() else {
            return Vec::new();
        };
        let mut warnings = Vec::new();
        match self.snapshot(&mut warnings) {
            Ok((delta, _lock)) => {
                if let Err(e) = self.record_changes(turn, &delta) {
                    warnings.push(format!("the changes of this turn were not recorded: {e}"));
                }
            }
            Err(e) => warnings.push(format!("the changes of this turn were not recorded: {e}")),
        }
        warnings
    }

    /// Logs the turn's changes, then saves the snapshot after it: in that order, so a crash
    /// between the two leaves the turn unfinished on disk, to be finished on the next start.
    fn record_changes(&mut self, turn: u32, delta: &Delta) -> io::Result<()> {
        let (changes, unsaved, ignored) = log::changes(delta);
        let (created_dirs, removed_dirs) = log::dir_changes(delta);
        let logged = log::append(
            &self.log_path(),
            &Record::Changes {
                turn,
                changes,
                unsaved,
                ignored,
                created_dirs,
                removed_dirs,
            },
        );
        match logged {
            Ok(()) => self.save_tree(delta),
            Err(e) => {
                self.saved.mark_stale();
                Err(e)
            }
        }
    }

    /// Brings the saved snapshot up to the one in memory, which `delta` changed.
    fn save_tree(&mut self, delta: &Delta) -> io::Result<()> {
        let dir = self.dir();
        match &self.tree {
            Some(tree) => self.saved.save(&dir, tree, delta),
            None => Ok(()),
        }
    }

    /// A turn whose end rein never recorded (it was stopped): its changes are those between
    /// the snapshot before it and the workspace now.
    fn finish_interrupted_turn(&mut self) -> Vec<String> {
        let Ok(turns) = self.turns() else {
            return Vec::new();
        };
        let Some(last) = turns.last().filter(|t| t.changes.is_none()) else {
            return Vec::new();
        };
        self.running = Some(last.number);
        self.after_turn()
    }

    /// The snapshot in memory, read from disk the first time.
    fn load_tree(&mut self) -> &mut Tree {
        let dir = self.dir();
        let saved = &mut self.saved;
        self.tree
            .get_or_insert_with(|| match SavedTree::read(&dir) {
                Some((tree, on_disk)) => {
                    *saved = on_disk;
                    tree
                }
                None => {
                    *saved = SavedTree::default();
                    Tree::default()
                }
            })
    }

    /// Scans the workspace into the snapshot in memory and returns what changed, holding
    /// the store's shared lock so a prune in another rein cannot remove an object this scan
    /// relies on. The lock comes back with the changes: it must be held until they are saved.
    fn snapshot(&mut self, warnings: &mut Vec<String>) -> io::Result<(Delta, std::fs::File)> {
        std::fs::create_dir_all(self.objects.dir())?;
        let lock = prune::shared_lock(&self.root)?;
        let workspace = self.workspace.clone();
        let (objects, max_file_bytes) = (self.objects.clone(), self.settings.max_file_bytes);
        let tree = self.load_tree();
        let (delta, notes) = tree::scan(&workspace, tree, &objects, max_file_bytes)?;
        if let Some((path, error)) = notes.write_errors.first() {
            warnings.push(format!(
                "the checkpoint could not save {} file(s) (first: {path}: {error}); a rewind \
                 cannot restore them",
                notes.write_errors.len()
            ));
        }
        Ok((delta, lock))
    }
}

/// Completes the rewinds a stopped rein left half-done (their journals), for any workspace;
/// returns what it did or could not do, for the person to hear.
pub fn recover(rein_home: &Path) -> Vec<String> {
    let dir = rein_home.join("checkpoints").join("journals");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut notes = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(restore::PARTIAL_JOURNAL_PREFIX)
        {
            remove_partial_journal(&path);
            continue;
        }
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let Ok(file) = std::fs::File::open(&path) else {
            continue;
        };
        // A rewind still running elsewhere holds its journal's lock.
        if file.try_lock().is_err() {
            continue;
        }
        let journal: Journal = match std::fs::read(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
        {
            Some(journal) => journal,
            None => continue,
        };
        let objects = Objects::new(rein_home.join("checkpoints").join("objects"));
        let done =
            restore::apply_files(&journal.workspace, &objects, &journal.files).and_then(|()| {
                let _removed =
                    restore::remove_empty_dirs(&journal.workspace, &journal.created_dirs);
                restore::finish_journal(rein_home, &path, &journal, None)
            });
        match done {
            Ok(()) => notes.push(format!(
                "completed a rewind of session {} that was interrupted ({} file(s) in {})",
                journal.session,
                journal.files.len(),
                journal.workspace.display()
            )),
            Err(e) => notes.push(format!(
                "an interrupted rewind of session {} could not be completed yet: {e}",
                journal.session
            )),
        }
    }
    notes
}

/// Removes a journal a killed rein was still writing (nothing of its rewind was applied);
/// one still locked belongs to a live rewind and stays.
fn remove_partial_journal(path: &Path) {
    let Ok(file) = std::fs::File::open(path) else {
        return;
    };
    if file.try_lock().is_ok() {
        // Best effort: a file left is only a few bytes, and the next start tries again.
        let _ = std::fs::remove_file(path);
    }
}

/// Gives a fork the checkpoints of its parent (the same workspace, the same turns), up to
/// the point before `to_turn` when the fork starts there.
pub fn copy_for_fork(
    rein_home: &Path,
    parent: &str,
    child: &str,
    to_turn: Option<u32>,
) -> io::Result<()> {
    let sessions = rein_home.join("checkpoints").join("sessions");
    let from = sessions.join(parent);
    let to = sessions.join(child);
    if !from.is_dir() {
        return Ok(());
    }
    std::fs::create_dir_all(&to)?;
    match std::fs::copy(from.join("log.jsonl"), to.join("log.jsonl")) {
        Ok(_) => {}
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    // The snapshot as one whole file: the parent's lines may be folded meanwhile.
    if let Some((tree, _)) = SavedTree::read(&from) {
        saved::write_whole(&to, &tree)?;
    }
    if let Some(to_turn) = to_turn {
        log::append(
            &to.join("log.jsonl"),
            &Record::Rewound {
                id: format!("fork-{child}"),
                to_turn,
                code: false,
                conversation: true,
            },
        )?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
