//! Read stamps: what a file looked like when the model read it, so a write or an edit can
//! refuse to clobber changes the model has not seen.
//!
//! A file of up to [`STAMP_FULL_HASH_MAX_BYTES`] is stamped with an xxh3 hash of its whole
//! content (mtime alone can be too coarse, and touching a file without changing it should not
//! force a re-read). A bigger file is stamped with a hash of its length, its mtime and its first
//! and last [`STAMP_SAMPLE_BYTES`], so stamping or checking it never reads the whole file: any
//! ordinary write changes the mtime (nanoseconds on current file systems). Which form a stamp
//! takes depends only on the file's length, so the reader and the checker always agree.

use std::fs::{File, Metadata};
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::time::SystemTime;

use xxhash_rust::xxh3::Xxh3;

use crate::{FileStamp, ToolContext, ToolError};

/// Files up to this size are stamped by a hash of their whole content.
pub(crate) const STAMP_FULL_HASH_MAX_BYTES: u64 = 64 * 1024 * 1024;
/// Bytes hashed at each end of a bigger file.
const STAMP_SAMPLE_BYTES: usize = 64 * 1024;

/// Whether a file of `len` bytes is stamped by hashing all of it.
pub(crate) fn full_hash_applies(len: u64) -> bool {
    len <= STAMP_FULL_HASH_MAX_BYTES
}

/// Hashes a whole file as it streams past (for the full-hash form).
#[derive(Default)]
pub(crate) struct ContentHasher(Xxh3);

impl ContentHasher {
    /// Adds the next bytes of the file.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    /// The stamp of everything added so far.
    pub(crate) fn finish(&self, mtime: Option<SystemTime>) -> FileStamp {
        FileStamp {
            content_hash: self.0.digest(),
            mtime,
        }
    }
}

impl std::fmt::Debug for ContentHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ContentHasher")
    }
}

/// The stamp of a file whose whole content is in memory.
pub(crate) fn stamp_of_bytes(bytes: &[u8], mtime: Option<SystemTime>) -> FileStamp {
    let len = bytes.len() as u64;
    if full_hash_applies(len) {
        return FileStamp {
            content_hash: xxhash_rust::xxh3::xxh3_64(bytes),
            mtime,
        };
    }
    let head = &bytes[..STAMP_SAMPLE_BYTES.min(bytes.len())];
    let tail = &bytes[bytes.len().saturating_sub(STAMP_SAMPLE_BYTES)..];
    FileStamp {
        content_hash: sampled_hash(len, mtime, head, tail),
        mtime,
    }
}

/// The sampled stamp of a big file, reading only its two ends.
pub(crate) fn sampled_stamp(file: &File, meta: &Metadata) -> io::Result<FileStamp> {
    let len = meta.len();
    let mtime = meta.modified().ok();
    let sample = STAMP_SAMPLE_BYTES.min(usize::try_from(len).unwrap_or(usize::MAX));
    let mut head = vec![0; sample];
    file.read_exact_at(&mut head, 0)?;
    let mut tail = vec![0; sample];
    file.read_exact_at(&mut tail, len - sample as u64)?;
    Ok(FileStamp {
        content_hash: sampled_hash(len, mtime, &head, &tail),
        mtime,
    })
}

/// The current stamp of an open file, in the form its length calls for.
pub(crate) fn current_stamp(file: &File, meta: &Metadata) -> io::Result<FileStamp> {
    if full_hash_applies(meta.len()) {
        let bytes = read_whole(file)?;
        Ok(stamp_of_bytes(&bytes, meta.modified().ok()))
    } else {
        sampled_stamp(file, meta)
    }
}

/// The whole content of an open file, from its start whatever has been read of it before.
pub(crate) fn read_whole(mut file: &File) -> io::Result<Vec<u8>> {
    use std::io::{Read, Seek, SeekFrom};
    file.seek(SeekFrom::Start(0))?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

fn sampled_hash(len: u64, mtime: Option<SystemTime>, head: &[u8], tail: &[u8]) -> u64 {
    let mut hasher = Xxh3::new();
    hasher.update(&len.to_le_bytes());
    let nanos = mtime
        .and_then(|t| t.duration_since(SystemTime::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    hasher.update(&nanos.to_le_bytes());
    hasher.update(head);
    hasher.update(tail);
    hasher.digest()
}

/// Refuses unless the model read `path` in this session and it has not changed since.
pub(crate) fn require_fresh_read(
    ctx: &ToolContext,
    path: &Path,
    display: &str,
    current: FileStamp,
) -> Result<(), ToolError> {
    match ctx.read_stamp(path) {
        None => Err(ToolError::Model(format!(
            "{display} has not been read in this session. Read it with read_file first, so the \
             change is based on its current content."
        ))),
        Some(seen) if seen.content_hash != current.content_hash => Err(ToolError::Model(format!(
            "{display} has changed on disk since you read it. Read it again with read_file, \
             then retry with the current content."
        ))),
        Some(_) => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stamp_of_bytes_matches_streamed_hash() {
        let bytes = b"line one\nline two\n".repeat(1000);
        let mut hasher = ContentHasher::default();
        for chunk in bytes.chunks(777) {
            hasher.update(chunk);
        }
        assert_eq!(hasher.finish(None), stamp_of_bytes(&bytes, None));
    }

    #[test]
    fn sampled_stamp_of_file_matches_in_memory_form() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let path = dir.path().join("big");
        let len = usize::try_from(STAMP_FULL_HASH_MAX_BYTES).unwrap_or(usize::MAX) + 10;
        let mut bytes = vec![b'x'; len];
        bytes[len - 1] = b'\n';
        std::fs::write(&path, &bytes)?;
        let file = File::open(&path)?;
        let meta = file.metadata()?;
        assert_eq!(
            current_stamp(&file, &meta)?,
            stamp_of_bytes(&bytes, meta.modified().ok())
        );
        Ok(())
    }
}
