//! Files in the offload directory: one per tool result too big for the model's budget (a
//! command's output is written as it arrives), named by tool, time and process, readable by
//! the person only (outputs hold secrets as often as anything), and capped in size.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

static OFFLOAD_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Mode of offload files: the person's own.
const OFFLOAD_FILE_MODE: u32 = 0o600;

/// Creates a new, empty offload file for a result of `tool` in `dir` (made if missing).
pub(crate) fn create(dir: &Path, tool: &str) -> io::Result<(PathBuf, File)> {
    std::fs::create_dir_all(dir)?;
    let millis = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let safe_tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    loop {
        let n = OFFLOAD_COUNTER.fetch_add(1, Ordering::Relaxed);
        let path = dir.join(format!(
            "{safe_tool}-{millis}-{}-{n}.txt",
            std::process::id()
        ));
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(OFFLOAD_FILE_MODE)
            .open(&path)
        {
            Ok(file) => return Ok((path, file)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => {}
            Err(err) => return Err(err),
        }
    }
}

/// The line that ends a file cut at `cap_bytes`, with `more_bytes` not saved after it.
pub(crate) fn cap_note(cap_bytes: u64, more_bytes: u64) -> String {
    format!(
        "\n[rein stopped saving here: the output reached the {} limit for a saved tool result \
         (the tool_output_file_max_bytes setting); the {more_bytes} bytes that followed are not saved.]\n",
        size(cap_bytes)
    )
}

/// A size in binary units, as the limits are set: `64 MiB`, `512 KiB`, `100 bytes`.
pub(crate) fn size(bytes: u64) -> String {
    const KIB: u64 = 1024;
    const MIB: u64 = 1024 * KIB;
    const GIB: u64 = 1024 * MIB;
    match bytes {
        b if b >= GIB && b % GIB == 0 => format!("{} GiB", b / GIB),
        b if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b >= KIB && b % KIB == 0 => format!("{} KiB", b / KIB),
        b if b >= MIB => format!("{:.1} MiB", b as f64 / MIB as f64),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn files_are_new_private_and_named_by_tool() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let (a, _) = create(&dir.path().join("out"), "mcp__x/y")?;
        let (b, _) = create(&dir.path().join("out"), "mcp__x/y")?;
        assert_ne!(a, b);
        let name = a.file_name().map(|n| n.to_string_lossy().into_owned());
        assert!(name.is_some_and(|n| n.starts_with("mcp__x_y-")));
        assert_eq!(std::fs::metadata(&a)?.permissions().mode() & 0o777, 0o600);
        Ok(())
    }

    #[test]
    fn sizes() {
        assert_eq!(size(64 * 1024 * 1024), "64 MiB");
        assert_eq!(size(512 * 1024), "512 KiB");
        assert_eq!(size(100), "100 bytes");
        assert_eq!(size(3 * 1024 * 1024 + 1), "3.0 MiB");
    }
}
