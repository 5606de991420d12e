//! Walking the workspace: every file and link the ignore files leave in (`.git` never),
//! with its stamp, and the entries they leave out.
//!
//! Two passes: ripgrep's `ignore` walker decides what the ignore files leave in (on several
//! threads), then each directory it walked is listed once more, and the stamp of each file
//! is taken relative to that open directory (no lookup of the whole path per file, the
//! largest cost of a scan) while the entries the walker did not yield are the ignored ones.

use std::collections::{BTreeMap, HashSet};
use std::fs::{DirEntry, Metadata};
use std::io;
use std::path::{Path, PathBuf};

use super::tree::{IgnoredStamp, nanos};

/// A workspace with more files than this (a home directory, say) gets no checkpoints: a
/// copy of it all would cost more than a rewind is worth.
pub const MAX_FILES: usize = 100_000;

/// What a walk of the workspace found: directories, and files and links.
#[derive(Default)]
pub(crate) struct Walked {
    pub(crate) dirs: Vec<PathBuf>,
    pub(crate) files: Vec<PathBuf>,
}

/// One walking thread's finds, handed over when the thread is done with them.
struct Gathered<'a> {
    mine: Walked,
    into: &'a parking_lot::Mutex<Walked>,
}

impl Drop for Gathered<'_> {
    fn drop(&mut self) {
        let mut all = self.into.lock();
        all.dirs.append(&mut self.mine.dirs);
        all.files.append(&mut self.mine.files);
    }
}

/// Walks `root` on several threads, `.git` and what the ignore files exclude left out.
pub(crate) fn walk(root: &Path) -> io::Result<Walked> {
    use ignore::WalkState;
    use parking_lot::Mutex;
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
                    mine.files.push(entry.into_path());
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
    Ok(found.into_inner())
}

/// The walked directories as keys relative to `root` (`root` itself and names that are not
/// UTF-8 left out).
pub(crate) fn dir_keys(root: &Path, walked: &Walked) -> std::collections::BTreeSet<String> {
    walked
        .dirs
        .iter()
        .filter_map(|dir| dir.strip_prefix(root).ok().and_then(Path::to_str))
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Lists each walked directory: calls `on_file` with the key and stamp of each file the
/// walk yielded (files whose path is not UTF-8 aside) and still there, and returns the
/// entries it did not yield, the ignored ones (`.git` is not counted).
pub(crate) fn visit<'w>(
    root: &Path,
    walked: &'w Walked,
    mut on_file: impl FnMut(&'w str, &DirEntry, &Metadata),
) -> BTreeMap<String, IgnoredStamp> {
    let keys = |paths: &'w [PathBuf]| -> HashSet<&'w str> {
        paths
            .iter()
            .filter_map(|path| path.strip_prefix(root).ok().and_then(Path::to_str))
            .collect()
    };
    let (files, dirs) = (keys(&walked.files), keys(&walked.dirs));
    let mut ignored = BTreeMap::new();
    // One buffer for every key looked up: no allocation per entry.
    let mut key = String::new();
    for dir in &walked.dirs {
        let Some(prefix) = dir.strip_prefix(root).ok().and_then(Path::to_str) else {
            continue;
        };
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            if name == ".git" {
                continue;
            }
            // A name that is not UTF-8 is the walk's alone (its lossy key, its whole path).
            let Some(name) = name.to_str() else {
                continue;
            };
            key.clear();
            if !prefix.is_empty() {
                key.push_str(prefix);
                key.push('/');
            }
            key.push_str(name);
            if let Some(&walked_key) = files.get(key.as_str()) {
                // Relative to the open directory: one stat, no path lookup.
                if let Ok(metadata) = entry.metadata()
                    && (metadata.is_file() || metadata.is_symlink())
                {
                    on_file(walked_key, &entry, &metadata);
                }
                continue;
            }
            if dirs.contains(key.as_str()) {
                continue;
            }
            let Ok(metadata) = entry.metadata() else {
                continue;
            };
            ignored.insert(
                key.clone(),
                IgnoredStamp {
                    mtime: metadata.modified().map(nanos).unwrap_or_default(),
                    dir: metadata.is_dir(),
                },
            );
        }
    }
    ignored
}
