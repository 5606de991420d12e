//! Atomic file replacement shared by write_file and edit_file: the new content goes to a
//! temporary file in the same directory (same file system, so the rename is atomic), takes the
//! permissions of the file it replaces, is flushed to disk, then renamed over the target.
//! A crash leaves either the old file or the new one, never half of each. (The directory is
//! not synced after the rename: that would make the new version durable, not the replacement
//! more atomic, and costs a journal commit per edit.)

use std::ffi::{OsStr, OsString};
use std::fs::{File, Permissions};
use std::io::{self, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use rustix::fs::{Mode, OFlags};
use rustix::io::Errno;

use crate::beneath::ParentDir;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Replaces (or creates) the file `dir` names with `bytes` atomically. The temporary file, the
/// rename and the clean-up all go through the directory's descriptor, so they happen in the
/// directory that was checked even if a link is swapped in on the way to it. A replaced file
/// keeps `permissions` (those of the file being replaced); a new one gets the usual mode for
/// new files (0666 minus the umask). Returns the new file's modification time.
pub(crate) fn write_atomic(
    dir: &ParentDir,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<Option<SystemTime>> {
    // The temporary file is created with the mode it will end with (at most: the umask may
    // take bits away until set_permissions puts them back), so the new content of a private
    // file is never readable by others while it is being written.
    let mode = permissions
        .as_ref()
        .map_or(NEW_FILE_MODE, |p| p.mode() & 0o7777);
    let (temp_name, file) = create_temp(dir, mode)?;
    let result = fill_and_rename(file, dir, &temp_name, bytes, permissions);
    if result.is_err() {
        // Best effort: the temporary file is ours and useless now.
        let _ = dir.remove(&temp_name);
    }
    result
}

fn fill_and_rename(
    mut file: File,
    dir: &ParentDir,
    temp_name: &OsStr,
    bytes: &[u8],
    permissions: Option<Permissions>,
) -> io::Result<Option<SystemTime>> {
    file.write_all(bytes)?;
    if let Some(permissions) = permissions {
        file.set_permissions(permissions)?;
    }
    file.sync_all()?;
    // A rename keeps the modification time: this is the new file's.
    let mtime = file.metadata()?.modified().ok();
    drop(file);
    rustix::fs::renameat(dir.fd(), temp_name, dir.fd(), dir.name())?;
    Ok(mtime)
}

/// The mode asked for a new file; the process umask takes its bits away, as for any new file.
const NEW_FILE_MODE: u32 = 0o666;

fn create_temp(dir: &ParentDir, mode: u32) -> io::Result<(OsString, File)> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    loop {
        let n = TEMP_COUNTER.fetch_add(1, Ordering::Relaxed);
        let mut name = OsString::from(".");
        name.push(dir.name());
        name.push(format!(".rein-{}-{n}.tmp", std::process::id()));
        if name.as_bytes().len() > MAX_NAME_BYTES {
            // Long names would fail with ENAMETOOLONG: the temporary name need not say whose.
            name = OsString::from(format!(".rein-{}-{n}.tmp", std::process::id()));
        }
        match rustix::fs::openat(dir.fd(), &name, flags, Mode::from_bits_truncate(mode)) {
            Ok(fd) => return Ok((name, File::from(fd))),
            Err(Errno::EXIST) => {}
            Err(err) => return Err(err.into()),
        }
    }
}

/// The longest file name most file systems take.
const MAX_NAME_BYTES: usize = 255;

#[cfg(test)]
mod tests {
    use std::fs;
    use std::path::Path;

    use super::*;
    use crate::beneath::Confined;
    use crate::{ToolConfig, ToolContext};

    /// The parent directory of `path`, opened as the tools open it.
    fn parent_of(path: &Path) -> io::Result<ParentDir> {
        let root = path.parent().unwrap_or(path);
        let ctx = ToolContext::new(ToolConfig::new(root, root.join("offload")));
        Confined::new(&ctx, path)?.parent()
    }

    fn names(dir: &Path) -> io::Result<Vec<String>> {
        let mut names: Vec<String> = fs::read_dir(dir)?
            .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
            .collect::<Result<_, _>>()?;
        names.sort();
        Ok(names)
    }

    #[test]
    fn a_private_files_new_content_is_never_readable_by_others() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let parent = parent_of(&base.join("secrets.env"))?;
        let (temp_name, _file) = create_temp(&parent, 0o600)?;
        let meta = fs::metadata(base.join(temp_name))?;
        assert_eq!(meta.permissions().mode() & 0o077, 0);
        Ok(())
    }

    #[test]
    fn replaces_content_keeps_mode_and_leaves_no_temp_file() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let path = base.join("script.sh");
        fs::write(&path, "old")?;
        fs::set_permissions(&path, Permissions::from_mode(0o751))?;
        let mtime = write_atomic(
            &parent_of(&path)?,
            b"new",
            Some(Permissions::from_mode(0o751)),
        )?;
        assert_eq!(fs::read_to_string(&path)?, "new");
        assert_eq!(fs::metadata(&path)?.permissions().mode() & 0o777, 0o751);
        assert_eq!(mtime, fs::metadata(&path)?.modified().ok());
        assert_eq!(names(&base)?, ["script.sh"]);
        Ok(())
    }

    #[test]
    fn creates_a_new_file() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let path = base.join("new.txt");
        write_atomic(&parent_of(&path)?, b"hello", None)?;
        assert_eq!(fs::read_to_string(&path)?, "hello");
        Ok(())
    }

    #[test]
    fn a_name_too_long_to_prefix_still_gets_a_temporary_file() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let path = base.join("n".repeat(250));
        write_atomic(&parent_of(&path)?, b"long", None)?;
        assert_eq!(fs::read_to_string(&path)?, "long");
        assert_eq!(names(&base)?.len(), 1);
        Ok(())
    }

    #[test]
    fn failure_leaves_the_old_file_and_no_temp_file() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let target = base.join("target");
        fs::create_dir(&target)?;
        fs::write(target.join("inside"), "x")?;
        // Renaming a file over a non-empty directory fails.
        assert!(write_atomic(&parent_of(&target)?, b"new", None).is_err());
        assert!(target.is_dir());
        assert_eq!(names(&base)?, ["target"]);
        Ok(())
    }
}
