//! Pruning: sessions' checkpoints older than `checkpoint_keep_days` go, then the oldest
//! others while the store is over `checkpoint_max_bytes`, then every object no remaining
//! session (or unfinished rewind) refers to. A scan holds the store's lock shared until its
//! snapshot is saved; pruning takes it exclusively, or waits for another start to do it.

use std::collections::HashSet;
use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use super::CheckpointSettings;
use super::log::{self, Record};
use super::tree::FileState;

/// Pruning runs at most this often (it reads every object's size).
const PRUNE_EVERY: Duration = Duration::from_secs(3600);

fn lock_file(root: &Path) -> io::Result<File> {
    fs::create_dir_all(root)?;
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(root.join("gc.lock"))
}

/// The store's lock, shared: held while a scan's objects are not yet in a saved snapshot.
pub(crate) fn shared_lock(root: &Path) -> io::Result<File> {
    let file = lock_file(root)?;
    file.lock_shared()?;
    Ok(file)
}

/// Prunes the store under `root`, never the checkpoints of `current`.
pub(crate) fn prune(root: &Path, current: &str, settings: &CheckpointSettings) -> Vec<String> {
    let stamp = root.join("last-prune");
    let recent = fs::metadata(&stamp)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| SystemTime::now().duration_since(t).ok())
        .is_some_and(|age| age < PRUNE_EVERY);
    if recent {
        return Vec::new();
    }
    match prune_now(root, current, settings) {
        Ok(()) => {
            let _ = fs::write(&stamp, b"");
            Vec::new()
        }
        Err(e) => vec![format!("old checkpoints could not be pruned: {e}")],
    }
}

/// Prunes without looking at when it last did.
pub(crate) fn prune_now(
    root: &Path,
    current: &str,
    settings: &CheckpointSettings,
) -> io::Result<()> {
    let lock = lock_file(root)?;
    if lock.try_lock().is_err() {
        // Another rein is scanning or pruning: the next start prunes.
        return Ok(());
    }
    let sessions_dir = root.join("sessions");
    let keep = Duration::from_secs(u64::from(settings.keep_days) * 86_400);
    let mut sessions: Vec<(SystemTime, PathBuf)> = Vec::new();
    for entry in fs::read_dir(&sessions_dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if entry.file_name() == current {
            continue;
        }
        let modified = fs::metadata(path.join("log.jsonl"))
            .or_else(|_| entry.metadata())
            .and_then(|m| m.modified())
            .unwrap_or(SystemTime::UNIX_EPOCH);
        let old = SystemTime::now()
            .duration_since(modified)
            .is_ok_and(|age| age > keep);
        if old {
            fs::remove_dir_all(&path)?;
        } else {
            sessions.push((modified, path));
        }
    }
    sessions.sort();
    let objects = root.join("objects");
    sweep(root, &objects)?;
    let mut oldest = sessions.into_iter();
    while size_of(&objects)? > settings.max_bytes {
        let Some((_, path)) = oldest.next() else {
            break;
        };
        fs::remove_dir_all(&path)?;
        sweep(root, &objects)?;
    }
    Ok(())
}

/// Removes every object nothing refers to.
fn sweep(root: &Path, objects: &Path) -> io::Result<()> {
    let referenced = referenced(root);
    for dir in fs::read_dir(objects).into_iter().flatten().flatten() {
        for object in fs::read_dir(dir.path()).into_iter().flatten().flatten() {
            let hash = format!(
                "{}{}",
                dir.file_name().to_string_lossy(),
                object.file_name().to_string_lossy()
            );
            if !referenced.contains(&hash) {
                fs::remove_file(object.path())?;
            }
        }
    }
    Ok(())
}

/// The objects the sessions' logs and snapshots, and unfinished rewinds, refer to.
fn referenced(root: &Path) -> HashSet<String> {
    let mut set = HashSet::new();
    let mut add = |state: Option<&FileState>| {
        if let Some(blob) = state.and_then(|s| s.blob.clone()) {
            set.insert(blob);
        }
    };
    for entry in fs::read_dir(root.join("sessions"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let dir = entry.path();
        for record in log::read(&dir.join("log.jsonl")).unwrap_or_default() {
            if let Record::Changes { changes, .. } = record {
                for change in &changes {
                    add(change.before.as_ref());
                    add(change.after.as_ref());
                }
            }
        }
        if let Some((tree, _)) = super::saved::SavedTree::read(&dir) {
            for state in tree.files.values() {
                add(Some(state));
            }
        }
    }
    for entry in fs::read_dir(root.join("journals"))
        .into_iter()
        .flatten()
        .flatten()
    {
        let journal: Option<super::restore::Journal> = fs::read(entry.path())
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok());
        for (_, state) in journal.map(|j| j.files).unwrap_or_default() {
            add(state.as_ref());
        }
    }
    set
}

fn size_of(objects: &Path) -> io::Result<u64> {
    let mut total = 0;
    for dir in fs::read_dir(objects).into_iter().flatten().flatten() {
        for object in fs::read_dir(dir.path())?.flatten() {
            total += object.metadata().map(|m| m.len()).unwrap_or(0);
        }
    }
    Ok(total)
}
