//! Sessions: one append-only JSON Lines file per session under `$REIN_HOME/sessions/`.
//!
//! The first line is a [`SessionHeader`]; each later line is one finished message or one
//! [`SessionEvent`], written and flushed as soon as it is final, so a crash loses at most
//! the message being streamed. Loading repairs what a crash leaves (a cut-off last line,
//! tool calls without results) so the next request is always valid, and resuming records
//! that repair in the file. An open [`Session`] holds an exclusive lock on its file.
//! API keys are never written.

mod append;
mod error;
mod id;
mod record;
mod repair;
mod replay;
mod store;
pub(crate) mod time;
mod writer;

pub use error::SessionError;
pub use id::SessionId;
pub use record::{LoadWarning, SESSION_FORMAT_VERSION, SessionEvent, SessionHeader};
pub use repair::{INTERRUPTED_RESULT, RecordedEvent, UNNAMED_TOOL};
pub(crate) use store::create_transcript;
pub use store::{LoadedSession, NewSession, SessionStore, SessionSummary};
pub use writer::Session;

/// `time` as RFC 3339 in UTC, to the millisecond (`2025-01-02T15:04:05.123Z`).
pub fn rfc3339(time: std::time::SystemTime) -> String {
    time::UtcTime::from_system(time).rfc3339()
}

/// `YYYYMMDD-HHMMSS` in UTC, for names that sort by time.
pub fn utc_timestamp_compact(time: std::time::SystemTime) -> String {
    time::UtcTime::from_system(time).compact()
}
