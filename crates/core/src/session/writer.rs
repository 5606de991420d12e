//! An open session: the locked file, appended to one complete record at a time.

use std::fs::{File, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use rein_llm::Message;

use super::SessionError;
use super::append::AppendLog;
use super::record::{LineRef, SessionEvent, SessionHeader};

/// A session open for writing. It holds an exclusive lock on its file until dropped, so no
/// other rein process (and no second open in this one) can write to it meanwhile.
///
/// A record that cannot be written (a full disk) is kept in memory and written before the
/// next one, so the file only ever holds complete records in order; [`Session::catch_up`]
/// says at the end whether everything got to disk.
#[derive(Debug)]
pub struct Session {
    log: AppendLog<File>,
    path: PathBuf,
    header: SessionHeader,
    /// The file was deleted on purpose: records are no longer kept.
    discarded: bool,
    /// Lines in the file, those still waiting to be written included.
    lines: u64,
}

impl Session {
    /// Wraps a file that is already locked and positioned for appending, whose first `len`
    /// bytes are `lines` complete records.
    pub(crate) fn new(
        file: File,
        (len, lines): (u64, u64),
        path: PathBuf,
        header: SessionHeader,
    ) -> Self {
        Session {
            log: AppendLog::new(file, len),
            path,
            header,
            discarded: false,
            lines,
        }
    }

    /// How many lines the file holds (the header is line 1): where a rewind cuts back to.
    pub fn lines(&self) -> u64 {
        self.lines
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

    /// Writes every record still waiting because an earlier write failed. An error means
    /// the file lacks them (the count is in the message).
    pub fn catch_up(&mut self) -> Result<(), SessionError> {
        if self.discarded {
            return Ok(());
        }
        self.log.catch_up().map_err(|source| self.unsaved(source))
    }

    /// Deletes the session's file (it holds nothing worth resuming); later records are
    /// dropped. The lock is kept until the session is dropped.
    pub fn discard(&mut self) -> Result<(), SessionError> {
        self.discarded = true;
        std::fs::remove_file(&self.path).map_err(|source| SessionError::Io {
            path: self.path.clone(),
            source,
        })
    }

    /// Writes one line with a single append, so a crash of rein can only ever cut the line
    /// being written, and a failed write never leaves part of it before the next one.
    pub(crate) fn append(&mut self, line: &LineRef<'_>) -> Result<(), SessionError> {
        if self.discarded {
            return Ok(());
        }
        let mut bytes = Vec::with_capacity(512);
        serde_json::to_writer(&mut bytes, line)?;
        bytes.push(b'\n');
        // Counted even when it waits: it will be written before any later line.
        self.lines += 1;
        self.log
            .append(&bytes)
            .map_err(|source| self.unsaved(source))
    }

    /// Appends a complete line (ending in a newline) copied from another session file.
    pub(crate) fn append_raw(&mut self, line: &[u8]) -> Result<(), SessionError> {
        self.lines += 1;
        self.log.append(line).map_err(|source| self.unsaved(source))
    }

    fn unsaved(&self, source: io::Error) -> SessionError {
        SessionError::Unsaved {
            path: self.path.clone(),
            pending: self.log.pending_records(),
            source,
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
