//! An open session: the locked file, appended to one complete line at a time.

use std::fs::{File, TryLockError};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use rein_llm::Message;

use super::SessionError;
use super::record::{LineRef, SessionEvent, SessionHeader};

/// A session open for writing. It holds an exclusive lock on its file until dropped, so no
/// other rein process (and no second open in this one) can write to it meanwhile.
#[derive(Debug)]
pub struct Session {
    file: File,
    path: PathBuf,
    header: SessionHeader,
    /// A write failed part-way: the next line starts on a fresh line, so the partial one
    /// stays a single malformed line instead of corrupting the next record.
    broken_line: bool,
}

impl Session {
    /// Wraps a file that is already locked and positioned for appending.
    pub(crate) fn new(file: File, path: PathBuf, header: SessionHeader) -> Self {
        Session {
            file,
            path,
            header,
            broken_line: false,
        }
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.header.id
    }

    /// The session's header.
    pub fn header(&self) -> &SessionHeader {
        &self.header
    }

    /// The session's file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Records a finished message.
    pub fn append_message(&mut self, message: &Message) -> Result<(), SessionError> {
        self.append(&LineRef::Message(message))
    }

    /// Records an event.
    pub fn append_event(&mut self, event: &SessionEvent) -> Result<(), SessionError> {
        self.append(&LineRef::Event(event))
    }

    /// Writes one line with a single `write_all` and flushes it, so a crash of rein can only
    /// ever cut the line being written.
    pub(crate) fn append(&mut self, line: &LineRef<'_>) -> Result<(), SessionError> {
        let mut bytes = Vec::with_capacity(512);
        if self.broken_line {
            bytes.push(b'\n');
        }
        serde_json::to_writer(&mut bytes, line)?;
        bytes.push(b'\n');
        match self.file.write_all(&bytes).and_then(|()| self.file.flush()) {
            Ok(()) => {
                self.broken_line = false;
                Ok(())
            }
            Err(source) => {
                self.broken_line = true;
                Err(SessionError::Io {
                    path: self.path.clone(),
                    source,
                })
            }
        }
    }
}

/// Takes the session's exclusive lock without waiting.
pub(crate) fn lock(file: &File, id: &str, path: &Path) -> Result<(), SessionError> {
    match file.try_lock() {
        Ok(()) => Ok(()),
        Err(TryLockError::WouldBlock) => Err(SessionError::InUse { id: id.to_owned() }),
        // Some network filesystems have no locks; working unlocked beats not working.
        Err(TryLockError::Error(err)) if err.kind() == io::ErrorKind::Unsupported => Ok(()),
        Err(TryLockError::Error(source)) => Err(SessionError::Io {
            path: path.to_path_buf(),
            source,
        }),
    }
}
