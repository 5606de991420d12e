//! A session's checkpoint log: one JSON line per record, appended, under
//! `$REIN_HOME/checkpoints/sessions/<id>/log.jsonl` (the last snapshot is beside it, see
//! `saved`). A line cut off by a crash is skipped when read.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::tree::{Delta, FileState};

/// One file a turn created, changed or deleted, with its state before and after.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// The path, relative to the workspace.
    pub path: String,
    /// Before the turn (absent: the turn created it).
    pub before: Option<FileState>,
    /// After the turn (absent: the turn deleted it).
    pub after: Option<FileState>,
}

/// A change a rewind cannot undo, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsavedChange {
    /// The path, relative to the workspace.
    pub path: String,
    /// Why its earlier content is not saved.
    pub reason: String,
}

/// A line of the log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub(crate) enum Record {
    /// A turn started; the snapshot before it is the saved tree until it ends.
    Turn {
        turn: u32,
        /// Lines of the session file before the turn's prompt.
        line: u64,
        prompt: String,
        at: String,
    },
    /// What the turn changed.
    Changes {
        turn: u32,
        changes: Vec<Change>,
        unsaved: Vec<UnsavedChange>,
        /// Ignored entries (not saved) that appeared, vanished or changed.
        ignored: Vec<String>,
        /// Directories the turn created (a rewind removes those left empty).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        created_dirs: Vec<String>,
        /// Directories the turn removed (they existed before it).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        removed_dirs: Vec<String>,
    },
    /// A rewind to the point before `to_turn`.
    Rewound {
        id: String,
        to_turn: u32,
        code: bool,
        conversation: bool,
    },
}

/// One turn of a session as the checkpoint log has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnRecord {
    /// From 1.
    pub number: u32,
    /// Lines of the session file before the turn's prompt.
    pub line: u64,
    /// The person's prompt.
    pub prompt: String,
    /// When it started (RFC 3339, UTC).
    pub at: String,
    /// What it changed; `None` while it runs (or if rein stopped before it could tell).
    pub changes: Option<Vec<Change>>,
    /// Changes that cannot be undone.
    pub unsaved: Vec<UnsavedChange>,
    /// Ignored entries it touched (never saved).
    pub ignored: Vec<String>,
    /// Directories it created.
    pub created_dirs: Vec<String>,
    /// Directories it removed.
    pub removed_dirs: Vec<String>,
    /// A code rewind already undid its changes.
    pub code_reverted: bool,
}

impl TurnRecord {
    /// The paths it changed.
    pub fn files(&self) -> Vec<&str> {
        let mut files: Vec<&str> = self
            .changes
            .iter()
            .flatten()
            .map(|c| c.path.as_str())
            .chain(self.unsaved.iter().map(|u| u.path.as_str()))
            .collect();
        files.sort_unstable();
        files.dedup();
        files
    }
}

/// Reads the records of `path` (none if it does not exist).
pub(crate) fn read(path: &Path) -> io::Result<Vec<Record>> {
    let text = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(e),
    };
    Ok(text
        .split(|&b| b == b'\n')
        .filter_map(|line| serde_json::from_slice(line).ok())
        .collect())
}

/// The turns the records leave, in order.
pub(crate) fn turns(records: &[Record]) -> Vec<TurnRecord> {
    let mut turns: Vec<TurnRecord> = Vec::new();
    for record in records {
        match record {
            Record::Turn {
                turn,
                line,
                prompt,
                at,
            } => {
                turns.truncate(turn.saturating_sub(1) as usize);
                turns.push(TurnRecord {
                    number: *turn,
                    line: *line,
                    prompt: prompt.clone(),
                    at: at.clone(),
                    changes: None,
                    unsaved: Vec::new(),
                    ignored: Vec::new(),
                    created_dirs: Vec::new(),
                    removed_dirs: Vec::new(),
                    code_reverted: false,
                });
            }
            Record::Changes {
                turn,
                changes,
                unsaved,
                ignored,
                created_dirs,
                removed_dirs,
            } => {
                if let Some(t) = turns.iter_mut().find(|t| t.number == *turn) {
                    t.changes = Some(changes.clone());
                    t.unsaved.clone_from(unsaved);
                    t.ignored.clone_from(ignored);
                    t.created_dirs.clone_from(created_dirs);
                    t.removed_dirs.clone_from(removed_dirs);
                }
            }
            Record::Rewound {
                to_turn,
                code,
                conversation,
                ..
            } => {
                if *code {
                    for t in turns.iter_mut().filter(|t| t.number >= *to_turn) {
                        t.code_reverted = true;
                    }
                }
                if *conversation {
                    turns.truncate(to_turn.saturating_sub(1) as usize);
                }
            }
        }
    }
    turns
}

/// Appends one record as one write.
pub(crate) fn append(path: &Path, record: &Record) -> io::Result<()> {
    let mut line = serde_json::to_vec(record).map_err(io::Error::other)?;
    line.push(b'\n');
    let mut file = OpenOptions::new().create(true).append(true).open(path)?;
    file.write_all(&line)
}

/// What a turn changed, from the scan after it (`delta`, against the scan before it):
/// files whose content, kind or mode differ (a new stamp alone is no change), those whose
/// earlier content was not saved apart, and the ignored entries touched. Sorted by path.
pub(crate) fn changes(delta: &Delta) -> (Vec<Change>, Vec<UnsavedChange>, Vec<String>) {
    let mut changes = Vec::new();
    let mut unsaved = Vec::new();
    for (path, before, after) in &delta.files {
        let changed = match (before, after) {
            (Some(b), Some(a)) => !b.same_content(a),
            (None, None) => false,
            _ => true,
        };
        if !changed {
            continue;
        }
        match before.as_ref().and_then(|b| b.unsaved.as_ref()) {
            Some(reason) => unsaved.push(UnsavedChange {
                path: path.clone(),
                reason: reason.to_string(),
            }),
            None => changes.push(Change {
                path: path.clone(),
                before: before.clone(),
                after: after.clone(),
            }),
        }
    }
    changes.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    unsaved.sort_unstable_by(|a, b| a.path.cmp(&b.path));
    let mut ignored: Vec<String> = delta.ignored.iter().map(|(p, _, _)| p.clone()).collect();
    ignored.sort_unstable();
    (changes, unsaved, ignored)
}

/// The directories a turn created and those it removed, from the scan after it. Sorted.
pub(crate) fn dir_changes(delta: &Delta) -> (Vec<String>, Vec<String>) {
    let (mut created, mut removed) = (Vec::new(), Vec::new());
    for (path, present) in &delta.dirs {
        if *present {
            created.push(path.clone());
        } else {
            removed.push(path.clone());
        }
    }
    created.sort_unstable();
    removed.sort_unstable();
    (created, removed)
}
