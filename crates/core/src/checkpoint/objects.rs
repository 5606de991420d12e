//! The content-addressed store: each distinct content once, named by its SHA-256, under
//! `$REIN_HOME/checkpoints/objects/ab/cdef…`. Unchanged files cost nothing in a new
//! checkpoint, and identical files in many sessions are one object.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// The object directory.
#[derive(Debug, Clone)]
pub(crate) struct Objects {
    dir: PathBuf,
}

impl Objects {
    /// The store in `dir`.
    pub(crate) fn new(dir: PathBuf) -> Self {
        Objects { dir }
    }

    /// The directory.
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Saves a file's bytes; returns their hash.
    pub(crate) fn put_file(&self, path: &Path) -> io::Result<String> {
        let bytes = fs::read(path)?;
        self.put_bytes(&bytes)
    }

    /// Saves `bytes` unless an object holds them already; returns their hash. An object
    /// appears whole or not at all (a temporary file renamed into place).
    pub(crate) fn put_bytes(&self, bytes: &[u8]) -> io::Result<String> {
        let hash = hex(&Sha256::digest(bytes));
        let path = self.path(&hash);
        if path.exists() {
            return Ok(hash);
        }
        let parent = path.parent().unwrap_or(&self.dir);
        fs::create_dir_all(parent)?;
        let mut temp = tempfile::NamedTempFile::new_in(parent)?;
        temp.write_all(bytes)?;
        temp.persist(&path).map_err(|e| e.error)?;
        Ok(hash)
    }

    /// The bytes of object `hash`.
    pub(crate) fn read(&self, hash: &str) -> io::Result<Vec<u8>> {
        fs::read(self.path(hash))
    }

    /// Where object `hash` lives.
    pub(crate) fn path(&self, hash: &str) -> PathBuf {
        let (head, tail) = hash.split_at(hash.len().min(2));
        self.dir.join(head).join(tail)
    }
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        let _ = write!(out, "{byte:02x}");
    }
    out
}
