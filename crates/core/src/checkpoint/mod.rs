//! Checkpoints: the workspace as it was before each turn, so a turn can be taken back.
//!
//! Before every turn the agent scans the workspace ([`tree::scan`]: every file the ignore
//! files do not exclude, `.git` never) and saves the content of each file that changed since
//! the last scan in a content-addressed store under `$REIN_HOME/checkpoints/objects` (never
//! in the project's `.git`: no commits, no refs, nothing the person would see). After the
//! turn it scans again; what differs is what the turn changed, whichever tool did it (edits,
//! commands, MCP tools, sub-agents). Each session has a log of its turns and their changes
//! (`sessions/<id>/log.jsonl`) and the last snapshot (`tree.json`), which makes the next
//! scan incremental (size, times, inode and mode tell a file unchanged without reading it)
//! and lets a turn cut short by a crash be finished on the next start.
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
mod tree;

use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

pub use log::{Change, TurnRecord, UnsavedChange};
pub use restore::{OnChanged, Restore, RewindPlan, RewindScope};
pub use tree::{FileKind, FileState, MAX_FILES, Tree, Unsaved};

use log::Record;
use objects::Objects;
use restore::Journal;

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

    fn tree_path(&self) -> PathBuf {
        self.dir().join("tree.json")
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
        let turn = match self.turns() {
            Ok(turns) => u32::try_from(turns.len()).unwrap_or(u32::MAX - 1) + 1,
            Err(e) => return vec![format!("no checkpoint for this turn: {e}")],
        };
        let (tree, _lock) = match self.snapshot(&mut warnings) {
            Ok(scanned) => scanned,
            Err(e) => {
                warnings.push(format!("no checkpoint for this turn: {e}"));
                return warnings;
            }
        };
        let saved = std::fs::create_dir_all(self.dir())
            .and_then(|()| log::write_tree(&self.tree_path(), &tree))
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
        self.tree = Some(tree);
        match saved {
            Ok(()) => self.running = Some(turn),
            Err(e) => warnings.push(format!(
                "no checkpoint for this turn (it cannot be rewound): {e}"
            )),
        }
        warnings
    }

    /// Records what the running turn changed.
    pub fn after_turn(&mut self) -> Vec<String> {
        let Some(turn) = self.running.take() else {
            return Vec::new();
        };
        let mut warnings = Vec::new();
        let before = self.tree.clone().unwrap_or_default();
        match self.snapshot(&mut warnings) {
            Ok((after, _lock)) => {
                if let Err(e) = self.record_changes(turn, &before, &after) {
                    warnings.push(format!("the changes of this turn were not recorded: {e}"));
                }
                self.tree = Some(after);
            }
            Err(e) => warnings.push(format!("the changes of this turn were not recorded: {e}")),
        }
        warnings
    }

    fn record_changes(&self, turn: u32, before: &Tree, after: &Tree) -> io::Result<()> {
        let (changes, unsaved, ignored) = log::diff(before, after);
        log::append(
            &self.log_path(),
            &Record::Changes {
                turn,
                changes,
                unsaved,
                ignored,
            },
        )?;
        log::write_tree(&self.tree_path(), after)
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
        self.tree = log::read_tree(&self.tree_path());
        self.after_turn()
    }

    /// Scans the workspace against the last snapshot, holding the store's shared lock so a
    /// prune in another rein cannot remove an object this scan relies on.
    /// The lock comes back with the tree: it must be held until the tree is saved.
    fn snapshot(&mut self, warnings: &mut Vec<String>) -> io::Result<(Tree, std::fs::File)> {
        std::fs::create_dir_all(self.objects.dir())?;
        let lock = prune::shared_lock(&self.root)?;
        if self.tree.is_none() {
            self.tree = log::read_tree(&self.tree_path());
        }
        let (tree, notes) = tree::scan(
            &self.workspace,
            self.tree.as_ref(),
            &self.objects,
            self.settings.max_file_bytes,
        )?;
        if let Some((path, error)) = notes.write_errors.first() {
            warnings.push(format!(
                "the checkpoint could not save {} file(s) (first: {path}: {error}); a rewind \
                 cannot restore them",
                notes.write_errors.len()
            ));
        }
        Ok((tree, lock))
    }

    /// What rewinding to the point before turn `to_turn` would do, against the workspace now.
    pub fn plan(
        &mut self,
        to_turn: u32,
        scope: RewindScope,
    ) -> Result<RewindPlan, CheckpointError> {
        let turns = self.turns()?;
        let Some(first) = turns.iter().find(|t| t.number == to_turn) else {
            return Err(CheckpointError::NoSuchTurn {
                turn: to_turn,
                turns: turns.len(),
            });
        };
        let mut plan = RewindPlan {
            to_turn,
            scope,
            line: first.line,
            restores: Vec::new(),
            unsaved: Vec::new(),
            ignored: Vec::new(),
        };
        if !scope.code() {
            return Ok(plan);
        }
        let mut warnings = Vec::new();
        let (now, _lock) = self
            .snapshot(&mut warnings)
            .map_err(|source| CheckpointError::Io {
                path: self.workspace.clone(),
                source,
            })?;
        // Per path: the state before the first of these turns that changed it, and the
        // state after the last one (what rein left there).
        let mut targets: std::collections::BTreeMap<
            String,
            (Option<FileState>, Option<FileState>),
        > = std::collections::BTreeMap::new();
        for turn in turns
            .iter()
            .filter(|t| t.number >= to_turn && !t.code_reverted)
        {
            for change in turn.changes.iter().flatten() {
                targets
                    .entry(change.path.clone())
                    .and_modify(|(_, after)| after.clone_from(&change.after))
                    .or_insert_with(|| (change.before.clone(), change.after.clone()));
            }
            plan.unsaved.extend(turn.unsaved.iter().cloned());
            plan.ignored.extend(turn.ignored.iter().cloned());
        }
        plan.ignored.sort();
        plan.ignored.dedup();
        for (path, (target, left)) in targets {
            let current = now.files.get(&path).cloned();
            if same(current.as_ref(), target.as_ref()) {
                continue;
            }
            let changed_since = !same(current.as_ref(), left.as_ref());
            plan.restores.push(Restore {
                path,
                target,
                current,
                changed_since,
            });
        }
        self.tree = Some(now);
        Ok(plan)
    }

    /// The change a restore makes, as a unified diff (what is there now → what it gets).
    pub fn diff(&self, restore: &Restore) -> String {
        let now = match &restore.current {
            Some(_) => std::fs::read(self.workspace.join(&restore.path)).unwrap_or_default(),
            None => Vec::new(),
        };
        let then = restore
            .target
            .as_ref()
            .and_then(|t| self.content(t))
            .unwrap_or_default();
        match (std::str::from_utf8(&now), std::str::from_utf8(&then)) {
            (Ok(now), Ok(then)) => similar::TextDiff::from_lines(now, then)
                .unified_diff()
                .context_radius(3)
                .header(&restore.path, &restore.path)
                .to_string(),
            _ => format!("--- {0}\n+++ {0}\n(binary content)\n", restore.path),
        }
    }

    /// The saved bytes of a file state (to show a diff).
    pub fn content(&self, state: &FileState) -> Option<Vec<u8>> {
        state
            .blob
            .as_deref()
            .and_then(|b| self.objects.read(b).ok())
    }

    /// Carries out `plan`: files first (through the journal), then the conversation (in
    /// `session` when given, else in the session file opened here), then the log. Returns
    /// the restores done.
    pub fn apply(
        &mut self,
        plan: &RewindPlan,
        on_changed: OnChanged,
        session: Option<&mut crate::session::Session>,
    ) -> Result<Vec<Restore>, CheckpointError> {
        let changed = plan.changed_since();
        if on_changed == OnChanged::Refuse && !changed.is_empty() {
            return Err(CheckpointError::ChangedSince(
                changed.into_iter().map(str::to_owned).collect(),
            ));
        }
        let restores: Vec<Restore> = plan
            .restores
            .iter()
            .filter(|r| !(r.changed_since && on_changed == OnChanged::Keep))
            .cloned()
            .collect();
        // Every object must be there before anything is touched.
        for restore in &restores {
            if let Some(target) = &restore.target
                && self.content(target).is_none()
            {
                return Err(CheckpointError::Corrupt(format!(
                    "the saved content of {} is missing",
                    restore.path
                )));
            }
        }
        let journal = Journal {
            session: self.session.clone(),
            workspace: self.workspace.clone(),
            log: self.log_path(),
            record: Record::Rewound {
                id: format!("{:016x}", fastrand::u64(..)),
                to_turn: plan.to_turn,
                code: plan.scope.code(),
                conversation: plan.scope.conversation(),
            },
            conversation_line: plan.scope.conversation().then_some(plan.line),
            files: restores
                .iter()
                .map(|r| (r.path.clone(), r.target.clone()))
                .collect(),
        };
        let journal_path = restore::journal_path(&self.root, &self.session);
        let io_err = |source| CheckpointError::Io {
            path: journal_path.clone(),
            source,
        };
        let _held = restore::write_journal(&journal_path, &journal).map_err(io_err)?;
        restore::apply_files(&self.workspace, &self.objects, &journal.files)?;
        restore::finish_journal(&self.rein_home, &journal_path, &journal, session)?;
        // The next scan reads what was written.
        self.tree = None;
        Ok(restores)
    }
}

fn same(a: Option<&FileState>, b: Option<&FileState>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.same_content(b),
        _ => false,
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
        let done = restore::apply_files(&journal.workspace, &objects, &journal.files)
            .and_then(|()| restore::finish_journal(rein_home, &path, &journal, None));
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
    for name in ["log.jsonl", "tree.json"] {
        match std::fs::copy(from.join(name), to.join(name)) {
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
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
