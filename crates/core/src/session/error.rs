//! What can go wrong with a session file.

use std::io;
use std::path::PathBuf;

/// A session could not be created, opened, read or written.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The id is not a safe file name.
    #[error("invalid session id \"{id}\": {reason}")]
    InvalidId {
        /// The id as given.
        id: String,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// No session has this id.
    #[error(
        "no session \"{id}\" in {dir} (each file there is one session, named by its id); \
         continue the newest one of this directory with `rein -c`",
        dir = dir.display()
    )]
    NotFound {
        /// The id.
        id: String,
        /// Where sessions are stored.
        dir: PathBuf,
    },
    /// Another rein process (or another open in this one) holds the session.
    #[error("session {id} is in use by another rein process")]
    InUse {
        /// The id.
        id: String,
    },
    /// The file does not start with a valid header, so it is not a session rein can use.
    #[error("{} is not a usable session file: {reason}", path.display())]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Reading or writing the file failed.
    #[error("session file {}: {source}", path.display())]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// Records could not be written (a full disk, a quota); rein keeps them and tries again
    /// with the next record.
    #[error(
        "cannot write to session file {}: {source} ({pending} record(s) not saved yet; rein \
         keeps them and tries again)",
        path.display()
    )]
    Unsaved {
        /// The file.
        path: PathBuf,
        /// Records waiting to be written.
        pending: usize,
        /// Why the write failed.
        source: io::Error,
    },
    /// A record could not be encoded as JSON (for example a non-UTF-8 working directory).
    #[error("cannot encode a session record: {0}")]
    Encode(#[from] serde_json::Error),
}
