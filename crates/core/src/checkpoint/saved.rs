//! The saved snapshot of a session, beside its log: `tree.json` holds a whole [`Tree`]
//! (replaced atomically), and `tree-changes.jsonl` what each later scan changed in it (one
//! line appended per scan that changed anything). Reading applies the lines to the whole
//! in order; once they outgrow a quarter of it they are folded into a new `tree.json`.
//!
//! A line applies full states (a path's state, or its absence), so applying one twice
//! changes nothing: a crash between replacing `tree.json` and removing the lines it holds
//! leaves the same snapshot. A line cut off by a crash is skipped, and each line starts on
//! a line of its own.

use std::collections::BTreeMap;
use std::fs;
use std::io::{self, Write};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::tree::{Delta, FileState, IgnoredStamp, Tree};

const WHOLE: &str = "tree.json";
const CHANGES: &str = "tree-changes.jsonl";

/// Lines are folded into `tree.json` once they exceed a quarter of it plus this.
const FOLD_SLACK_BYTES: u64 = 64 * 1024;

/// One scan's changes as a line of `tree-changes.jsonl` (written from borrowed states).
#[derive(Serialize)]
struct LineOut<'a> {
    taken: i64,
    files: BTreeMap<&'a str, Option<&'a FileState>>,
    ignored: BTreeMap<&'a str, Option<&'a IgnoredStamp>>,
    /// Directories that appeared (`true`) or vanished (`false`).
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    dirs: BTreeMap<&'a str, bool>,
}

/// One line of `tree-changes.jsonl` as read: each path's new state, `null` when gone.
#[derive(Deserialize)]
struct LineIn {
    taken: i64,
    #[serde(default)]
    files: BTreeMap<String, Option<FileState>>,
    #[serde(default)]
    ignored: BTreeMap<String, Option<IgnoredStamp>>,
    #[serde(default)]
    dirs: BTreeMap<String, bool>,
}

/// What is on disk for the tree in memory.
#[derive(Debug, Default)]
pub(crate) struct SavedTree {
    /// Whether the files on disk hold the tree in memory (its scan time aside).
    in_sync: bool,
    /// Size of `tree.json`.
    whole_bytes: u64,
    /// Size of `tree-changes.jsonl`.
    changes_bytes: u64,
}

impl SavedTree {
    /// The saved snapshot in session directory `dir`, if any and readable, with what is
    /// known of its files.
    pub(crate) fn read(dir: &Path) -> Option<(Tree, SavedTree)> {
        let whole = fs::read(dir.join(WHOLE)).ok()?;
        let mut tree: Tree = serde_json::from_slice(&whole).ok()?;
        let changes = match fs::read(dir.join(CHANGES)) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
            Err(_) => return None,
        };
        for line in changes.split(|&b| b == b'\n') {
            if let Ok(line) = serde_json::from_slice::<LineIn>(line) {
                apply(&mut tree, line);
            }
        }
        let saved = SavedTree {
            in_sync: true,
            whole_bytes: whole.len() as u64,
            changes_bytes: changes.len() as u64,
        };
        Some((tree, saved))
    }

    /// Marks the disk as behind the tree in memory: the next save writes it whole.
    pub(crate) fn mark_stale(&mut self) {
        self.in_sync = false;
    }

    /// Brings the disk up to `tree`, which `delta` (the last scan) changed: one line
    /// appended, or the whole tree written when the disk was behind or the lines are many.
    pub(crate) fn save(&mut self, dir: &Path, tree: &Tree, delta: &Delta) -> io::Result<()> {
        if self.in_sync && delta.is_empty() {
            return Ok(());
        }
        let fold = self.changes_bytes > self.whole_bytes / 4 + FOLD_SLACK_BYTES;
        // A line cannot tell directories to a snapshot that knew none: it is written whole.
        let saved = if self.in_sync && self.whole_bytes > 0 && !fold && !delta.dirs_learned {
            append(dir, delta).map(|n| self.changes_bytes += n)
        } else {
            write_whole(dir, tree).map(|n| {
                self.whole_bytes = n;
                self.changes_bytes = 0;
            })
        };
        self.in_sync = saved.is_ok();
        saved
    }
}

fn apply(tree: &mut Tree, line: LineIn) {
    tree.taken = line.taken;
    for (path, state) in line.files {
        match state {
            Some(state) => tree.files.insert(path, state),
            None => tree.files.remove(&path),
        };
    }
    for (path, stamp) in line.ignored {
        match stamp {
            Some(stamp) => tree.ignored.insert(path, stamp),
            None => tree.ignored.remove(&path),
        };
    }
    if let Some(dirs) = &mut tree.dirs {
        for (path, present) in line.dirs {
            if present {
                dirs.insert(path);
            } else {
                dirs.remove(&path);
            }
        }
    }
}

/// Appends `delta` as one line, in one write; returns the bytes written.
fn append(dir: &Path, delta: &Delta) -> io::Result<u64> {
    let line = LineOut {
        taken: delta.taken,
        files: delta
            .files
            .iter()
            .map(|(path, _, after)| (path.as_str(), after.as_ref()))
            .collect(),
        ignored: delta
            .ignored
            .iter()
            .map(|(path, _, after)| (path.as_str(), after.as_ref()))
            .collect(),
        dirs: delta
            .dirs
            .iter()
            .map(|(path, present)| (path.as_str(), *present))
            .collect(),
    };
    // The leading newline ends a line a killed rein may have left unfinished.
    let mut bytes = vec![b'\n'];
    serde_json::to_writer(&mut bytes, &line).map_err(io::Error::other)?;
    bytes.push(b'\n');
    let mut file = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(dir.join(CHANGES))?;
    file.write_all(&bytes)?;
    Ok(bytes.len() as u64)
}

/// Replaces `tree.json` with `tree` atomically, then drops the lines it now holds; returns
/// the size of `tree.json`.
pub(crate) fn write_whole(dir: &Path, tree: &Tree) -> io::Result<u64> {
    let mut temp = tempfile::NamedTempFile::new_in(dir)?;
    let mut out = io::BufWriter::new(temp.as_file_mut());
    serde_json::to_writer(&mut out, tree).map_err(io::Error::other)?;
    out.flush()?;
    drop(out);
    let bytes = temp.as_file().metadata()?.len();
    temp.persist(dir.join(WHOLE)).map_err(|e| e.error)?;
    match fs::remove_file(dir.join(CHANGES)) {
        Ok(()) => Ok(bytes),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(bytes),
        Err(e) => Err(e),
    }
}
