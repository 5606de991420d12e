//! A snapshot of the workspace: every file the walk sees (`.gitignore`d trees and `.git`
//! left out), with what tells a change cheaply (size, times, inode, mode) and the object
//! holding its content. A scan reuses the previous snapshot's object for every file whose
//! stamp is unchanged, so only changed files are read: that is what keeps a turn's
//! checkpoint fast on a large tree.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::objects::Objects;

/// A file whose stamp was taken less than this before the scan may change again within the
/// same timestamp tick: it is read again by the next scan (git's "racily clean" rule).
const RACY_WINDOW_NS: i64 = 2_000_000_000;

/// A workspace with more files than this (a home directory, say) gets no checkpoints: a
/// copy of it all would cost more than a rewind is worth.
pub const MAX_FILES: usize = 100_000;

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

/// The workspace as one scan saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Tree {
    /// When the scan started, nanoseconds since the epoch.
    pub taken: i64,
    /// Files by path relative to the workspace, `/`-separated.
    pub files: BTreeMap<String, FileState>,
    /// Ignored entries next to walked ones (an ignored tree is one entry).
    #[serde(default)]
    pub ignored: BTreeMap<String, IgnoredStamp>,
}

/// What a scan could not do, for the person to hear.
#[derive(Debug, Default)]
pub(crate) struct ScanNotes {
    pub(crate) write_errors: Vec<(String, String)>,
}

/// Scans `root`, reusing `previous`'s objects for files whose stamps are unchanged, and
/// saving the content of the others in `objects` (files over `max_file_bytes` are not).
pub(crate) fn scan(
    root: &Path,
    previous: Option<&Tree>,
    objects: &Objects,
    max_file_bytes: u64,
) -> io::Result<(Tree, ScanNotes)> {
    let taken = nanos(SystemTime::now());
    let mut tree = Tree {
        taken,
        ..Tree::default()
    };
    let mut notes = ScanNotes::default();
    let walked = walk(root)?;
    let seen: HashSet<PathBuf> = walked
        .dirs
        .iter()
        .cloned()
        .chain(walked.files.iter().map(|(path, _)| path.clone()))
        .collect();
    for (path, metadata) in &walked.files {
        let path = path.as_path();
        let Ok(rel) = path.strip_prefix(root) else {
            continue;
        };
        let Some(key) = key_of(rel) else {
            let mut state = stamp(metadata);
            state.unsaved = Some(Unsaved::BadName);
            tree.files.insert(rel.to_string_lossy().into_owned(), state);
            continue;
        };
        let mut state = stamp(metadata);
        let reusable = previous
            .and_then(|p| p.files.get(&key).map(|old| (old, p.taken)))
            .filter(|(old, taken)| {
                old.stamp_matches(&state)
                    && old.mtime < taken - RACY_WINDOW_NS
                    && old.unsaved.is_none()
            });
        if let Some((old, _)) = reusable {
            state.blob.clone_from(&old.blob);
        } else if state.kind == FileKind::File && state.size > max_file_bytes {
            state.unsaved = Some(Unsaved::TooLarge {
                limit: max_file_bytes,
            });
        } else {
            let saved = match state.kind {
                FileKind::File => objects.put_file(path),
                FileKind::Link => std::fs::read_link(path)
                    .and_then(|target| objects.put_bytes(target.as_os_str().as_encoded_bytes())),
            };
            match saved {
                Ok(blob) => state.blob = Some(blob),
                // Gone between the walk and the read: it is not part of this snapshot.
                Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
                Err(e) => {
                    notes.write_errors.push((key.clone(), e.to_string()));
                    state.unsaved = Some(Unsaved::WriteFailed {
                        error: e.to_string(),
                    });
                }
            }
        }
        tree.files.insert(key, state);
    }
    tree.ignored = ignored_entries(root, &walked.dirs, &seen);
    Ok((tree, notes))
}

/// What a walk of the workspace found: directories, and files and links with their stamps.
#[derive(Default)]
struct Walked {
    dirs: Vec<PathBuf>,
    files: Vec<(PathBuf, std::fs::Metadata)>,
}

/// One walking thread's finds, handed over when the thread is done with them.
struct Gathered<'a> {
    mine: Walked,
    into: &'a std::sync::Mutex<Walked>,
}

impl Drop for Gathered<'_> {
    fn drop(&mut self) {
        let mut all = self
            .into
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        all.dirs.append(&mut self.mine.dirs);
        all.files.append(&mut self.mine.files);
    }
}

/// Walks `root` on several threads (the stat of each file is most of a scan's time), `.git`
/// and what the ignore files exclude left out.
fn walk(root: &Path) -> io::Result<Walked> {
    use ignore::WalkState;
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

    let found = Mutex::new(Walked::default());
    let count = AtomicUsize::new(0);
    let too_many = AtomicBool::new(false);
    ignore::WalkBuilder::new(root)
        .hidden(false)
        .parents(true)
        .ignore(true)
        .git_ignore(true)
        .git_global(false)
        .git_exclude(true)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|entry| entry.file_name() != ".git")
        .build_parallel()
        .run(|| {
            let mut mine = Gathered {
                mine: Walked::default(),
                into: &found,
            };
            let (count, too_many) = (&count, &too_many);
            Box::new(move |entry| {
                let mine = &mut mine.mine;
                let Ok(entry) = entry else {
                    return WalkState::Continue;
                };
                let Some(file_type) = entry.file_type() else {
                    return WalkState::Continue;
                };
                if file_type.is_dir() {
                    mine.dirs.push(entry.into_path());
                } else if file_type.is_file() || file_type.is_symlink() {
                    if count.fetch_add(1, Ordering::Relaxed) >= MAX_FILES {
                        too_many.store(true, Ordering::Relaxed);
                        return WalkState::Quit;
                    }
                    if let Ok(metadata) = std::fs::symlink_metadata(entry.path()) {
                        mine.files.push((entry.into_path(), metadata));
                    }
                }
                WalkState::Continue
            })
        });
    if too_many.load(Ordering::Relaxed) {
        return Err(io::Error::other(format!(
            "the workspace holds more than {MAX_FILES} files (not ignored): checkpoints are \
             off for it"
        )));
    }
    Ok(found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner))
}

/// Entries of walked directories that the walk did not yield: those the ignore files leave
/// out (`.git` is not counted).
fn ignored_entries(
    root: &Path,
    dirs: &[PathBuf],
    seen: &HashSet<PathBuf>,
) -> BTreeMap<String, IgnoredStamp> {
    let mut ignored = BTreeMap::new();
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if entry.file_name() == ".git" || seen.contains(&path) {
                continue;
            }
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            if let Some(key) = path.strip_prefix(root).ok().and_then(key_of) {
                ignored.insert(
                    key,
                    IgnoredStamp {
                        mtime: metadata.modified().map(nanos).unwrap_or_default(),
                        dir: metadata.is_dir(),
                    },
                );
            }
        }
    }
    ignored
}

/// The `/`-separated key of a relative path, if it is UTF-8.
fn key_of(rel: &Path) -> Option<String> {
    let parts: Option<Vec<&str>> = rel.components().map(|c| c.as_os_str().to_str()).collect();
    parts.map(|parts| parts.join("/"))
}

fn stamp(metadata: &std::fs::Metadata) -> FileState {
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
