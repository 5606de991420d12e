//! Putting files back: the plan (what a rewind would write, and what it must not), and its
//! application through a journal, so that rein stopped half-way (kill -9, a power cut)
//! leaves a workspace the next start completes rather than a half-restored one.

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::CheckpointError;
use super::log::{self, Record, UnsavedChange};
use super::objects::Objects;
use super::tree::{FileKind, FileState};

/// What a rewind restores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RewindScope {
    /// The files only.
    Code,
    /// The conversation only.
    Conversation,
    /// Both.
    Both,
}

impl RewindScope {
    /// Whether files are restored.
    pub fn code(self) -> bool {
        matches!(self, RewindScope::Code | RewindScope::Both)
    }

    /// Whether the conversation is cut back.
    pub fn conversation(self) -> bool {
        matches!(self, RewindScope::Conversation | RewindScope::Both)
    }
}

/// One file a rewind writes back (or deletes).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Restore {
    /// The path, relative to the workspace.
    pub path: String,
    /// What it becomes (absent: it is deleted).
    pub target: Option<FileState>,
    /// What it is now (absent: it does not exist).
    pub current: Option<FileState>,
    /// Someone changed it after rein last did: overwriting it would lose their work.
    pub changed_since: bool,
}

/// What a rewind would do.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RewindPlan {
    /// The point: before this turn (from 1).
    pub to_turn: u32,
    /// What is restored.
    pub scope: RewindScope,
    /// Lines of the session file the conversation keeps.
    pub line: u64,
    /// The files to write back or delete.
    pub restores: Vec<Restore>,
    /// Changes that cannot be undone (their earlier content was not saved).
    pub unsaved: Vec<UnsavedChange>,
    /// Ignored entries the turns touched: never saved, not restored.
    pub ignored: Vec<String>,
    /// Directories the turns created (they did not exist before the first of them), deepest
    /// first: each is removed if it is empty once the files are restored.
    pub created_dirs: Vec<String>,
}

impl RewindPlan {
    /// The files changed by someone else since rein last wrote them.
    pub fn changed_since(&self) -> Vec<&str> {
        self.restores
            .iter()
            .filter(|r| r.changed_since)
            .map(|r| r.path.as_str())
            .collect()
    }
}

/// What a rewind did.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Applied {
    /// The files written back or deleted.
    pub restores: Vec<Restore>,
    /// The directories removed (the turns created them, and they were left empty), deepest
    /// first.
    pub removed_dirs: Vec<String>,
}

/// What to do with files someone else changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnChanged {
    /// Refuse the whole rewind (headless).
    Refuse,
    /// Restore them too (the person said so).
    Overwrite,
    /// Leave them as they are (the person said so).
    Keep,
}

/// The rewind in progress, written before any file is touched.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Journal {
    pub(crate) session: String,
    pub(crate) workspace: PathBuf,
    /// The log of the session's checkpoints.
    pub(crate) log: PathBuf,
    pub(crate) record: Record,
    /// The session line to cut the conversation back to, when it is.
    pub(crate) conversation_line: Option<u64>,
    pub(crate) files: Vec<(String, Option<FileState>)>,
    /// Directories to remove when empty, after the files (deepest first).
    #[serde(default)]
    pub(crate) created_dirs: Vec<String>,
}

/// The journal of a session's rewind.
pub(crate) fn journal_path(checkpoints: &Path, session: &str) -> PathBuf {
    checkpoints.join("journals").join(format!("{session}.json"))
}

/// The name prefix of a journal being written: one a killed rein left behind (unlocked) is
/// removed by the next start.
pub(crate) const PARTIAL_JOURNAL_PREFIX: &str = ".journal-";

/// Writes the journal durably and returns it open and locked (the lock tells a concurrent
/// start that this rewind is alive). The file is locked from before its first byte, so a
/// start never takes the partial file of a live rewind for a dead one's.
pub(crate) fn write_journal(path: &Path, journal: &Journal) -> io::Result<File> {
    let dir = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(dir)?;
    let mut temp = tempfile::Builder::new()
        .prefix(PARTIAL_JOURNAL_PREFIX)
        .tempfile_in(dir)?;
    temp.as_file().lock()?;
    temp.write_all(&serde_json::to_vec(journal).map_err(io::Error::other)?)?;
    temp.as_file().sync_all()?;
    let file = temp.persist(path).map_err(|e| e.error)?;
    File::open(dir)?.sync_all()?;
    file.lock()?;
    Ok(file)
}

/// Writes every file of `files` back (or deletes it). Each file is replaced atomically and
/// the whole is idempotent: running it again after a crash finishes the job.
pub(crate) fn apply_files(
    root: &Path,
    objects: &Objects,
    files: &[(String, Option<FileState>)],
) -> Result<(), CheckpointError> {
    for (key, target) in files {
        let path = safe_join(root, key)?;
        let io_err = |source| CheckpointError::Io {
            path: path.clone(),
            source,
        };
        match target {
            None => match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(io_err(e)),
            },
            Some(state) => put(&path, state, objects).map_err(io_err)?,
        }
    }
    Ok(())
}

/// Removes each directory of `dirs` (deepest first) that is empty; returns those removed.
/// A directory someone put a file in since stays, and so does one that cannot be removed
/// (a directory left behind loses nothing, and must not keep the journal from finishing).
pub(crate) fn remove_empty_dirs(root: &Path, dirs: &[String]) -> Vec<String> {
    let mut removed = Vec::new();
    for key in dirs {
        let Ok(path) = safe_join(root, key) else {
            continue;
        };
        // `remove_dir` removes only an empty directory, atomically with that check; a
        // symbolic link put in its place is not followed.
        let is_dir = fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir());
        if is_dir && fs::remove_dir(&path).is_ok() {
            removed.push(key.clone());
        }
    }
    removed
}

fn put(path: &Path, state: &FileState, objects: &Objects) -> io::Result<()> {
    let blob = state
        .blob
        .as_deref()
        .ok_or_else(|| io::Error::other("its content was not saved"))?;
    let bytes = objects.read(blob)?;
    let parent = path.parent().unwrap_or(Path::new("."));
    fs::create_dir_all(parent)?;
    match state.kind {
        FileKind::File => {
            let mut temp = tempfile::NamedTempFile::new_in(parent)?;
            // The final mode before the first byte: nobody sees the content under another.
            use std::os::unix::fs::PermissionsExt;
            temp.as_file()
                .set_permissions(fs::Permissions::from_mode(state.mode))?;
            temp.write_all(&bytes)?;
            temp.as_file().sync_data()?;
            temp.persist(path).map_err(|e| e.error)?;
        }
        FileKind::Link => {
            use std::os::unix::ffi::OsStrExt;
            let target = std::ffi::OsStr::from_bytes(&bytes);
            let temp = parent.join(format!(".rein-link-{}", fastrand::u64(..)));
            std::os::unix::fs::symlink(target, &temp)?;
            fs::rename(&temp, path)?;
        }
    }
    Ok(())
}

/// `root/key`, refusing a key that would leave `root`.
fn safe_join(root: &Path, key: &str) -> Result<PathBuf, CheckpointError> {
    let rel = Path::new(key);
    if rel.components().all(|c| matches!(c, Component::Normal(_))) {
        Ok(root.join(rel))
    } else {
        Err(CheckpointError::Corrupt(format!(
            "the path {key:?} is not inside the workspace"
        )))
    }
}

/// Completes the rest of a journal once its files are in place: the conversation cut (when
/// the session can be opened) and the log record; then removes the journal.
pub(crate) fn finish_journal(
    rein_home: &Path,
    journal_path: &Path,
    journal: &Journal,
    session: Option<&mut crate::session::Session>,
) -> Result<(), CheckpointError> {
    let Record::Rewound { id, .. } = &journal.record else {
        return Err(CheckpointError::Corrupt(
            "a journal without a rewind".into(),
        ));
    };
    if let Some(line) = journal.conversation_line {
        let store = crate::session::SessionStore::new(rein_home);
        let already = store.load(&journal.session).is_ok_and(|loaded| {
            loaded.events.iter().any(|e| {
                matches!(&e.event, crate::session::SessionEvent::Rewind { id: seen, .. } if seen == id)
            })
        });
        if !already {
            let event = crate::session::SessionEvent::Rewind {
                to_line: line,
                id: id.clone(),
            };
            match session {
                Some(session) => session.append_event(&event)?,
                None => {
                    let (mut session, _) = store.open(&journal.session)?;
                    session.append_event(&event)?;
                }
            }
        }
    }
    let logged = log::read(&journal.log)
        .map_err(|source| CheckpointError::Io {
            path: journal.log.clone(),
            source,
        })?
        .iter()
        .any(|r| matches!(r, Record::Rewound { id: seen, .. } if seen == id));
    if !logged {
        log::append(&journal.log, &journal.record).map_err(|source| CheckpointError::Io {
            path: journal.log.clone(),
            source,
        })?;
    }
    fs::remove_file(journal_path).map_err(|source| CheckpointError::Io {
        path: journal_path.to_path_buf(),
        source,
    })
}
