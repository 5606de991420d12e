//! Tracking the directory a command ends in, so that `cd` persists between calls.
//!
//! The command is not parsed for `cd`: bash itself writes `pwd -P` to a file when it exits
//! (an EXIT trap, which also runs on `exit 3` and `set -e` failures), and once more after
//! the command in case the command replaced the trap. The command is passed as an argument
//! and run with `eval`, never spliced into the wrapper's text, so no quoting in it can break
//! the wrapper. The wrapper's own lines run with stderr sent to /dev/null, so `set -x` in
//! the command does not trace them.

use std::ffi::OsString;
use std::io;
use std::os::unix::ffi::OsStringExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// The script bash runs: `$1` is the file for the final directory, `$2` the command.
pub(crate) const WRAPPER_SCRIPT: &str = r#"__rein_cwd_file=$1
__rein_command=$2
shift 2
__rein_save_cwd() { builtin pwd -P >| "$__rein_cwd_file"; }
trap '{ __rein_save_cwd; } 2>/dev/null' EXIT
eval "$__rein_command"
{ __rein_status=$?; __rein_save_cwd; exit "$__rein_status"; } 2>/dev/null
"#;

static NEXT_FILE_NUMBER: AtomicU64 = AtomicU64::new(0);

/// The file one command's final directory is written to; removed when dropped.
#[derive(Debug)]
pub(crate) struct CwdFile {
    path: PathBuf,
}

impl CwdFile {
    /// A fresh file name in `dir` (created if needed); the file itself is made by bash.
    pub(crate) fn create(dir: &Path) -> io::Result<CwdFile> {
        std::fs::create_dir_all(dir)?;
        let number = NEXT_FILE_NUMBER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(".bash-cwd-{}-{number}", std::process::id()));
        match std::fs::remove_file(&path) {
            Err(err) if err.kind() != io::ErrorKind::NotFound => return Err(err),
            Ok(()) | Err(_) => {}
        }
        Ok(CwdFile { path })
    }

    /// Where bash writes the directory.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The directory bash ended in, if it wrote one (not after `exec`, a kill, or a deleted
    /// directory).
    pub(crate) fn read(&self) -> Option<PathBuf> {
        let mut bytes = std::fs::read(&self.path).ok()?;
        if bytes.last() == Some(&b'\n') {
            bytes.pop();
        }
        if bytes.is_empty() {
            return None;
        }
        Some(PathBuf::from(OsString::from_vec(bytes)))
    }
}

impl Drop for CwdFile {
    fn drop(&mut self) {
        // Nothing to do if bash never wrote it.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// What the final directory means for the tracked current directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CwdChange {
    /// Still the same directory.
    Same,
    /// Moved to this directory, inside the workspace (written under the configured root).
    Moved(PathBuf),
    /// Ended outside the workspace, here; the current directory is kept.
    Outside(PathBuf),
}

/// Judges `final_dir` (physical, from `pwd -P`) against the workspace and the old directory.
pub(crate) fn judge(final_dir: &Path, root: &Path, root_physical: &Path, old: &Path) -> CwdChange {
    let Ok(below_root) = final_dir.strip_prefix(root_physical) else {
        return CwdChange::Outside(final_dir.to_path_buf());
    };
    let old_physical = std::fs::canonicalize(old).unwrap_or_else(|_| old.to_path_buf());
    if old_physical == final_dir {
        return CwdChange::Same;
    }
    let new = if below_root.as_os_str().is_empty() {
        root.to_path_buf()
    } else {
        root.join(below_root)
    };
    CwdChange::Moved(new)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn judging_the_final_directory() {
        let root = Path::new("/ws");
        assert_eq!(
            judge(
                Path::new("/ws/a/b"),
                root,
                root,
                Path::new("/nonexistent-old")
            ),
            CwdChange::Moved("/ws/a/b".into())
        );
        assert_eq!(
            judge(Path::new("/ws"), root, root, Path::new("/nonexistent-old")),
            CwdChange::Moved("/ws".into())
        );
        assert_eq!(
            judge(Path::new("/wsx"), root, root, Path::new("/ws")),
            CwdChange::Outside("/wsx".into())
        );
        assert_eq!(
            judge(Path::new("/tmp"), root, root, Path::new("/ws")),
            CwdChange::Outside("/tmp".into())
        );
    }
}
