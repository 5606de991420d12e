//! A snapshot of the workspace: every file the walk sees (`.gitignore`d trees and `.git`
//! left out), with what tells a change cheaply (size, times, inode, mode) and the object
//! holding its content. A scan updates the snapshot in place and returns what it changed:
//! a file whose stamp is unchanged is neither read nor copied nor allocated for, which is
//! what keeps a turn's checkpoint fast on a large tree.

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::io;
use std::path::Path;
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::objects::Objects;

/// A file whose stamp was taken less than this before the scan may change again within the
/// same timestamp tick: it is read again by the next scan (git's "racily clean" rule).
const RACY_WINDOW_NS: i64 = 2_000_000_000;

pub use super::walk::MAX_FILES;

/// What a file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    /// A regular file; its object holds its bytes.
    File,
    /// A symbolic link; its object holds the link's target.
    Link,
}

/// Why a file's content was not saved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "reason")]
pub enum Unsaved {
    /// Larger than `checkpoint_max_file_bytes`.
    TooLarge {
        /// The limit, in bytes.
        limit: u64,
    },
    /// Writing its copy failed (a full disk).
    WriteFailed {
        /// The error.
        error: String,
    },
    /// Its name is not UTF-8.
    BadName,
}

impl std::fmt::Display for Unsaved {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unsaved::TooLarge { limit } => {
                write!(f, "larger than checkpoint_max_file_bytes ({limit} bytes)")
            }
            Unsaved::WriteFailed { error } => write!(f, "its copy could not be saved: {error}"),
            Unsaved::BadName => f.write_str("its name is not UTF-8"),
        }
    }
}

/// One file as a snapshot saw it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    /// Regular file or link.
    pub kind: FileKind,
    /// Permission bits.
    pub mode: u32,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i64,
    /// Status change time, nanoseconds since the epoch.
    pub ctime: i64,
    /// Inode number.
    pub ino: u64,
    /// The object holding the content (its SHA-256), when saved.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub blob: Option<String>,
    /// Why the content was not saved, when it was not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unsaved: Option<Unsaved>,
}

impl FileState {
    /// Whether two states hold the same thing (content, kind and mode), whatever the times.
    /// Unsaved contents compare by size and modification time, the best that is known.
    pub fn same_content(&self, other: &FileState) -> bool {
        if self.kind != other.kind || self.mode != other.mode {
            return false;
        }
        match (&self.blob, &other.blob) {
            (Some(a), Some(b)) => a == b,
            _ => self.size == other.size && self.mtime == other.mtime,
        }
    }

    fn stamp_matches(&self, other: &FileState) -> bool {
        self.kind == other.kind
            && self.mode == other.mode
            && self.size == other.size
            && self.mtime == other.mtime
            && self.ctime == other.ctime
            && self.ino == other.ino
    }
}

/// An entry the walk left out because of an ignore file, as far as its stamp tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct IgnoredStamp {
    /// Modification time, nanoseconds since the epoch.
    pub mtime: i64,
    /// Whether it is a directory.
    pub dir: bool,
}

/// The workspace as the last scan saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// When the last scan started, nanoseconds since the epoch.
    pub taken: i64,
    /// Files by path relative to the workspace, `/`-separated.
    pub files: HashMap<String, FileState>,
    /// Ignored entries next to walked ones (an ignored tree is one entry).
    #[serde(default)]
    pub ignored: BTreeMap<String, IgnoredStamp>,
    /// The directories walked (the workspace itself aside), so a rewind knows which ones a
    /// turn created; `None` in a snapshot saved before rein kept them (unknown until the
    /// next scan, which reports none as created or removed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirs: Option<BTreeSet<String>>,
}

/// What one scan changed in a [`Tree`]: each path with its state before and after (absent:
/// not there). Only what differs in any way (stamps included) is listed.
#[derive(Debug, Default)]
pub(crate) struct Delta {
    /// When the scan started.
    pub(crate) taken: i64,
    /// Files that appeared, vanished or changed.
    pub(crate) files: Vec<(String, Option<FileState>, Option<FileState>)>,
    /// Ignored entries that appeared, vanished or changed.
    pub(crate) ignored: Vec<(String, Option<IgnoredStamp>, Option<IgnoredStamp>)>,
    /// Directories that appeared (`true`) or vanished (`false`).
    pub(crate) dirs: Vec<(String, bool)>,
    /// The snapshot did not know its directories before this scan: the saved one must be
    /// written whole to hold them.
    pub(crate) dirs_learned: bool,
}

impl Delta {
    /// Whether the scan found the tree as it was (its time aside).
    pub(crate) fn is_empty(&self) -> bool {
        self.files.is_empty()
            && self.ignored.is_empty()
            && self.dirs.is_empty()
            && !self.dirs_learned
    }
}

/// What a scan could not do, for the person to hear.
#[derive(Debug, Default)]
pub(crate) struct ScanNotes {
    pub(crate) write_errors: Vec<(String, String)>,
}

/// Scans `root` into `tree`: files whose stamps are unchanged keep their objects, the
/// others are saved in `objects` (files over `max_file_bytes` are not). Returns what
/// changed. On an error `tree` is left as it was.
pub(crate) fn scan(
    root: &Path,
    tree: &mut Tree,
    objects: &Objects,
    max_file_bytes: u64,
) -> io::Result<(Delta, ScanNotes)> {
    let taken = nanos(SystemTime::now());
    let walked = super::walk::walk(root)?;
    let previous_taken = std::mem::replace(&mut tree.taken, taken);
    let known = tree.files.len();
    let mut hits = 0;
    // Files seen (borrowed keys), and those whose content must be read: all that is kept
    // of an unchanged file is a pointer to its key.
    let mut visited: Vec<&str> = Vec::with_capacity(known);
    let mut to_read: Vec<(String, std::path::PathBuf, FileState)> = Vec::new();
    let ignored = super::walk::visit(root, &walked, |key, entry, metadata| {
        visited.push(key);
        let state = stamp(metadata);
        if let Some(old) = tree.files.get(key) {
            hits += 1;
            if old.stamp_matches(&state)
                && old.mtime < previous_taken - RACY_WINDOW_NS
                && old.unsaved.is_none()
            {
                return;
            }
        }
        to_read.push((key.to_owned(), entry.path(), state));
    });
    // Paths that are not UTF-8: stamped by path, never saved, kept under a lossy key.
    let mut bad_names = Vec::new();
    for path in &walked.files {
        let Some(rel) = path
            .strip_prefix(root)
            .ok()
            .filter(|rel| rel.to_str().is_none())
        else {
            continue;
        };
        let Ok(metadata) = std::fs::symlink_metadata(path) else {
            continue;
        };
        let mut state = stamp(&metadata);
        state.unsaved = Some(Unsaved::BadName);
        let key = rel.to_string_lossy().into_owned();
        if tree.files.contains_key(&key) {
            hits += 1;
        }
        bad_names.push(key.clone());
        to_read.push((key, path.clone(), state));
    }
    let mut delta = Delta {
        taken,
        ..Delta::default()
    };
    let mut notes = ScanNotes::default();
    let mut gone = Vec::new();
    for (key, path, mut state) in to_read {
        if state.unsaved.is_none()
            && !save(&path, &key, &mut state, objects, max_file_bytes, &mut notes)
        {
            // Gone between the walk and the read: it is not part of this snapshot.
            gone.push(key);
            continue;
        }
        match tree.files.get_mut(&key) {
            Some(old) if *old == state => {}
            Some(old) => {
                let before = std::mem::replace(old, state.clone());
                delta.files.push((key, Some(before), Some(state)));
            }
            None => {
                tree.files.insert(key.clone(), state.clone());
                delta.files.push((key, None, Some(state)));
            }
        }
    }
    if hits < known || !gone.is_empty() {
        let mut seen: HashSet<&str> = visited.into_iter().collect();
        seen.extend(bad_names.iter().map(String::as_str));
        for key in &gone {
            seen.remove(key.as_str());
        }
        remove_vanished(&seen, &mut tree.files, &mut delta);
    }
    for (key, stamp) in &ignored {
        let old = tree.ignored.get(key);
        if old != Some(stamp) {
            delta
                .ignored
                .push((key.clone(), old.cloned(), Some(stamp.clone())));
        }
    }
    for (key, stamp) in &tree.ignored {
        if !ignored.contains_key(key) {
            delta.ignored.push((key.clone(), Some(stamp.clone()), None));
        }
    }
    tree.ignored = ignored;
    let dirs = super::walk::dir_keys(root, &walked);
    match &tree.dirs {
        Some(old) => {
            delta
                .dirs
                .extend(dirs.difference(old).map(|d| (d.clone(), true)));
            delta
                .dirs
                .extend(old.difference(&dirs).map(|d| (d.clone(), false)));
        }
        None => delta.dirs_learned = true,
    }
    tree.dirs = Some(dirs);
    Ok((delta, notes))
}

/// Saves the content of the file at `path` into `state` (its object, or why not); false
/// when the file is gone.
fn save(
    path: &Path,
    key: &str,
    state: &mut FileState,
    objects: &Objects,
    max_file_bytes: u64,
    notes: &mut ScanNotes,
) -> bool {
    if state.kind == FileKind::File && state.size > max_file_bytes {
        state.unsaved = Some(Unsaved::TooLarge {
            limit: max_file_bytes,
        });
        return true;
    }
    let saved = match state.kind {
        FileKind::File => objects.put_file(path),
        FileKind::Link => std::fs::read_link(path)
            .and_then(|target| objects.put_bytes(target.as_os_str().as_encoded_bytes())),
    };
    match saved {
        Ok(blob) => state.blob = Some(blob),
        Err(e) if e.kind() == io::ErrorKind::NotFound => return false,
        Err(e) => {
            notes.write_errors.push((key.to_owned(), e.to_string()));
            state.unsaved = Some(Unsaved::WriteFailed {
                error: e.to_string(),
            });
        }
    }
    true
}

/// Drops from `files` those this scan did not see (rare: only when some vanished).
fn remove_vanished(
    seen: &HashSet<&str>,
    files: &mut HashMap<String, FileState>,
    delta: &mut Delta,
) {
    files.retain(|key, state| {
        let keep = seen.contains(key.as_str());
        if !keep {
            delta.files.push((key.clone(), Some(state.clone()), None));
        }
        keep
    });
}

pub(crate) fn stamp(metadata: &std::fs::Metadata) -> FileState {
    use std::os::unix::fs::MetadataExt;
    let kind = if metadata.file_type().is_symlink() {
        FileKind::Link
    } else {
        FileKind::File
    };
    FileState {
        kind,
        mode: metadata.mode() & 0o7777,
        size: metadata.len(),
        mtime: metadata.mtime().saturating_mul(1_000_000_000) + metadata.mtime_nsec(),
        ctime: metadata.ctime().saturating_mul(1_000_000_000) + metadata.ctime_nsec(),
        ino: metadata.ino(),
        blob: None,
        unsaved: None,
    }
}

/// Nanoseconds since the epoch (times in i64 nanoseconds reach the year 2262).
pub(crate) fn nanos(time: SystemTime) -> i64 {
    time.duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX))
}
