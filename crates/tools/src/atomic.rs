//! Atomic file replacement shared by write_file and edit_file: the new content goes to a
//! temporary file in the same directory (same file system, so the rename is atomic), takes the
//! permissions of the file it replaces, is flushed to disk, then renamed over the target.
//! A crash leaves either the old file or the new one, never half of each. (The directory is
//! not synced after the rename: that would make the new version durable, not the replacement
//! more atomic, and costs a journal commit per edit.)

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces (or creates) `path` with `bytes` atomically. A replaced file keeps its permissions;
/// a new one gets the usual mode for new files (0666 minus the umask).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no parent"))?;
    let name = path
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "path has no file name"))?;
    let permissions = match fs::metadata(path) {
        Ok(meta) => Some(meta.permissions()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    // The temporary file is created with the mode it will end with (at most: the umask may
    // take bits away until set_permissions puts them back), so the new content of a private
    // file is never readable by others while it is being written.
    let mode = permissions
        .as_ref()
        .map_or(NEW_FILE_MODE, |p| p.mode() & 0o7777);
    let (temp_path, file) = create_temp(dir, &name.to_string_lossy(), mode)?;
    let result = fill_and_rename(file, &temp_path, path, bytes, permissions);
    if result.is_err() {
        // Best effort: the temporary file is ours and useless now.
        let _ = fs::remove_file(&temp_path);
    }
    result
}

fn fill_and_rename(
    mut file: File,
    temp_path: &Path,
    path: &Path,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<()> {
    file.write_all(bytes)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.sync_all()?;
    drop(file);
    fs::rename(temp_path, path)
}

/// The mode asked for a new file; the process umask takes its bits away, as for any new file.
const NEW_FILE_MODE: u32 = 0o666;

fn create_temp(dir: &Path, name: &str, mode: u32) -> io::Result<(PathBuf, File)> {
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let temp_path = dir.join(format!(".{name}.rein-{}-{n}.tmp", std::process::id()));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temp_path)
        {
            Ok(file) => return Ok((temp_path, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_files_new_content_is_never_readable_by_others() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let (temp_path, _file) = create_temp(dir.path(), "secrets.env", 0o600)?;
        assert_eq!(fs::metadata(&temp_path)?.permissions().mode() & 0o077, 0);
        Ok(())
    }

    #[test]
    fn replaces_content_keeps_mode_and_leaves_no_temp_file() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("script.sh");
        fs::write(&path, "old")?;
        fs::set_permissions(&path, Permissions::from_mode(0o751))?;
        write_atomic(&path, b"new")?;
        assert_eq!(fs::read_to_string(&path)?, "new");
        assert_eq!(fs::metadata(&path)?.permissions().mode() & 0o777, 0o751);
        assert_eq!(fs::read_dir(dir.path())?.count(), 1);
        Ok(())
    }

    #[test]
    fn creates_a_new_file() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("new.txt");
        write_atomic(&path, b"hello")?;
        assert_eq!(fs::read_to_string(&path)?, "hello");
        Ok(())
    }

    #[test]
    fn failure_leaves_the_old_file_and_no_temp_file() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let target = dir.path().join("target");
        fs::create_dir(&target)?;
        fs::write(target.join("inside"), "x")?;
        // Renaming a file over a non-empty directory fails.
        assert!(write_atomic(&target, b"new").is_err());
        assert!(target.is_dir());
        assert_eq!(fs::read_dir(dir.path())?.count(), 1);
        Ok(())
    }
}
