//! The session directory: creating, finding, loading and resuming sessions.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use rein_llm::{Message, Part, Role, Usage};

use super::SessionError;
use super::id::{SESSION_FILE_EXTENSION, SessionId};
use super::record::{
    Line, LineRef, LoadWarning, Parsed, SESSION_FORMAT_VERSION, SessionEvent, SessionHeader,
    parse_line,
};
use super::repair::{Entry, RecordedEvent, repair};
use super::replay::replay;
use super::time::UtcTime;
use super::writer::{Session, lock};
use crate::config::ProviderKind;
use crate::context::PromptAnchor;

#[path = "store_parse.rs"]
mod parse;
use parse::{parse_file, read_header};

/// The longest header line read when scanning; a longer first line is not a header.
const MAX_HEADER_BYTES: u64 = 64 * 1024;
/// How many fresh ids to try if one is taken (it never should be).
const CREATE_ATTEMPTS: usize = 16;

/// The sessions under `$REIN_HOME/sessions/`.
#[derive(Debug, Clone)]
pub struct SessionStore {
    dir: PathBuf,
}

/// What a new session records in its header.
#[derive(Debug, Clone, Copy)]
pub struct NewSession<'a> {
    /// The model.
    pub model: &'a str,
    /// The provider.
    pub provider: ProviderKind,
    /// The working directory, as `-c` will later compare it.
    pub cwd: &'a Path,
    /// The session it is forked from, if any.
    pub parent: Option<&'a str>,
}

/// A session's history as loaded, after repair, with its compactions replayed.
#[derive(Debug, Clone)]
pub struct LoadedSession {
    /// The header.
    pub header: SessionHeader,
    /// The context the session had when it stopped, valid to send: every tool call has
    /// exactly one result right after it. With compactions, a summary stands for the
    /// messages they replaced (the file keeps those whole).
    pub messages: Vec<Message>,
    /// The provider's count of the last request, when the context has not changed since but
    /// for messages added at its end.
    pub anchor: Option<PromptAnchor>,
    /// How many compactions were replayed.
    pub compactions: usize,
    /// The events, in order.
    pub events: Vec<RecordedEvent>,
    /// What loading had to work around, for the caller to show.
    pub warnings: Vec<LoadWarning>,
}

impl LoadedSession {
    /// The model last used and the API it was reached through: those of the last recorded
    /// model call, else the header's. `-r`/`-c` resume with both, so a session that switched
    /// to another provider's model never sends that model to the first provider's API.
    pub fn model(&self) -> (&str, ProviderKind) {
        self.events
            .iter()
            .rev()
            .find_map(|recorded| match &recorded.event {
                SessionEvent::Usage {
                    model, provider, ..
                } => Some((model.as_str(), provider.unwrap_or(self.header.provider))),
                SessionEvent::TurnFinished { .. }
                | SessionEvent::Compaction(_)
                | SessionEvent::Todos { .. }
                | SessionEvent::SubagentUsage { .. }
                | SessionEvent::Rewind { .. } => None,
            })
            .unwrap_or((&self.header.model, self.header.provider))
    }

    /// The tokens used by every model call recorded in the session.
    pub fn total_usage(&self) -> Usage {
        let mut total = Usage::default();
        for recorded in &self.events {
            match &recorded.event {
                SessionEvent::Usage { usage, .. } => total += *usage,
                SessionEvent::Compaction(record) => total += record.usage.unwrap_or_default(),
                SessionEvent::SubagentUsage { usage, .. } => total += *usage,
                SessionEvent::TurnFinished { .. }
                | SessionEvent::Todos { .. }
                | SessionEvent::Rewind { .. } => {}
            }
        }
        total
    }

    /// The todo list as it was last written (empty when it never was).
    pub fn todos(&self) -> Vec<crate::tools::TodoItem> {
        self.events
            .iter()
            .rev()
            .find_map(|recorded| match &recorded.event {
                SessionEvent::Todos { todos } => Some(todos.clone()),
                SessionEvent::Usage { .. }
                | SessionEvent::TurnFinished { .. }
                | SessionEvent::Compaction(_)
                | SessionEvent::SubagentUsage { .. }
                | SessionEvent::Rewind { .. } => None,
            })
            .unwrap_or_default()
    }
}

/// A session found by [`SessionStore::list`] or [`SessionStore::newest_for_cwd`].
#[derive(Debug, Clone)]
pub struct SessionSummary {
    /// The header.
    pub header: SessionHeader,
    /// The file.
    pub path: PathBuf,
    /// When the file was last written.
    pub modified: SystemTime,
}

impl SessionStore {
    /// The store of `rein_home` (sessions live in its `sessions` directory).
    pub fn new(rein_home: impl Into<PathBuf>) -> Self {
        SessionStore {
            dir: rein_home.into().join("sessions"),
        }
    }

    /// Where the session files are.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts a session: a new id, its file created and locked, the header written.
    pub fn create(&self, new: NewSession<'_>) -> Result<Session, SessionError> {
        create_private_dir(&self.dir).map_err(|source| self.io_error(&self.dir, source))?;
        let now = SystemTime::now();
        let mut attempts = 0;
        let (id, path, file) = loop {
            let id = SessionId::generate(now);
            let path = self.dir.join(id.file_name());
            match create_private_file(&path) {
                Ok(file) => break (id, path, file),
                Err(err)
                    if err.kind() == io::ErrorKind::AlreadyExists && attempts < CREATE_ATTEMPTS =>
                {
                    attempts += 1;
                }
                Err(source) => return Err(self.io_error(&path, source)),
            }
        };
        lock(&file, id.as_str(), &path)?;
        let header = SessionHeader {
            format: SESSION_FORMAT_VERSION,
            id: id.as_str().to_owned(),
            model: new.model.to_owned(),
            provider: new.provider,
            cwd: new.cwd.to_path_buf(),
            created: UtcTime::from_system(now).rfc3339(),
            rein_version: env!("CARGO_PKG_VERSION").to_owned(),
            parent: new.parent.map(str::to_owned),
        };
        let mut session = Session::new(file, (0, 0), path.clone(), header.clone());
        if let Err(err) = session.append(&LineRef::Header(&header)) {
            // A file without a header is no session; do not leave it behind.
            drop(session);
            let _ = fs::remove_file(&path);
            return Err(err);
        }
        Ok(session)
    }

    /// Resumes a session: locks it, loads and repairs its history, and records the repair in
    /// the file (a cut-off last line is removed, interrupted tool calls get their results
    /// appended), so the file itself is valid from now on.
    pub fn open(&self, id: &str) -> Result<(Session, LoadedSession), SessionError> {
        let (id, path) = self.existing(id)?;
        let mut file = OpenOptions::new()
            .read(true)
            .append(true)
            .open(&path)
            .map_err(|source| self.not_found_or(&id, &path, source))?;
        lock(&file, id.as_str(), &path)?;
        let mut bytes = Vec::new();
        file.read_to_end(&mut bytes)
            .map_err(|source| self.io_error(&path, source))?;
        let (loaded, complete_len, synthetic) = parse_file(&bytes, &path, Compactions::Replay)?;
        if complete_len < bytes.len() {
            file.set_len(complete_len as u64)
                .map_err(|source| self.io_error(&path, source))?;
        }
        let lines = bytes[..complete_len]
            .iter()
            .filter(|&&b| b == b'\n')
            .count() as u64;
        let mut session = Session::new(
            file,
            (complete_len as u64, lines),
            path,
            loaded.header.clone(),
        );
        if !synthetic.is_empty() {
            let parts = synthetic.into_iter().map(Part::ToolResult).collect();
            session.append_message(&Message {
                role: Role::Tool,
                parts,
            })?;
        }
        Ok((session, loaded))
    }

    /// Starts a new session from `parent`'s history — its first `upto_line` lines, or all —
    /// leaving `parent` untouched; the new header names the parent. Returns the new id.
    pub fn fork(&self, parent: &str, upto_line: Option<u64>) -> Result<String, SessionError> {
        let (id, path) = self.existing(parent)?;
        let bytes = fs::read(&path).map_err(|source| self.not_found_or(&id, &path, source))?;
        let (loaded, complete_len, _) = parse_file(&bytes, &path, Compactions::Ignore)?;
        let header = loaded.header;
        let mut session = self.create(NewSession {
            model: &header.model,
            provider: header.provider,
            cwd: &header.cwd,
            parent: Some(id.as_str()),
        })?;
        let keep = upto_line.map_or(u64::MAX, |l| l);
        for (number, line) in bytes[..complete_len]
            .split_inclusive(|&b| b == b'\n')
            .enumerate()
            .skip(1)
        {
            if number as u64 >= keep {
                break;
            }
            session.append_raw(line)?;
        }
        session.catch_up()?;
        Ok(session.id().to_owned())
    }

    /// Reads a session without locking or changing it (to show it, for example).
    pub fn load(&self, id: &str) -> Result<LoadedSession, SessionError> {
        self.read(id, Compactions::Replay)
    }

    /// Reads a session's whole conversation, every message as it was written, its
    /// compactions not replayed (they are among its events): what the person said and got,
    /// whatever the model was later shown instead.
    pub fn load_whole(&self, id: &str) -> Result<LoadedSession, SessionError> {
        self.read(id, Compactions::Ignore)
    }

    fn read(&self, id: &str, compactions: Compactions) -> Result<LoadedSession, SessionError> {
        let (id, path) = self.existing(id)?;
        let bytes = fs::read(&path).map_err(|source| self.not_found_or(&id, &path, source))?;
        parse_file(&bytes, &path, compactions).map(|(loaded, _, _)| loaded)
    }

    /// Every session whose header can be read, most recently written first.
    pub fn list(&self) -> Result<Vec<SessionSummary>, SessionError> {
        let mut sessions: Vec<SessionSummary> = self
            .files_newest_first()?
            .into_iter()
            .filter_map(|(path, modified)| {
                read_header(&path).map(|header| SessionSummary {
                    header,
                    path,
                    modified,
                })
            })
            .collect();
        sessions.sort_by(|a, b| {
            b.modified
                .cmp(&a.modified)
                .then_with(|| b.header.id.cmp(&a.header.id))
        });
        Ok(sessions)
    }

    /// The most recently written session of `cwd` (for `-c`). Reads only first lines, in
    /// order of modification, stopping at the first match.
    pub fn newest_for_cwd(&self, cwd: &Path) -> Result<Option<SessionSummary>, SessionError> {
        for (path, modified) in self.files_newest_first()? {
            if let Some(header) = read_header(&path)
                && header.cwd == cwd
            {
                return Ok(Some(SessionSummary {
                    header,
                    path,
                    modified,
                }));
            }
        }
        Ok(None)
    }

    /// Session files and their modification times, newest first (ties: larger name first).
    fn files_newest_first(&self) -> Result<Vec<(PathBuf, SystemTime)>, SessionError> {
        let entries = match fs::read_dir(&self.dir) {
            Ok(entries) => entries,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
            Err(source) => return Err(self.io_error(&self.dir, source)),
        };
        let mut files: Vec<(PathBuf, SystemTime)> = entries
            .filter_map(Result::ok)
            .filter_map(|entry| {
                let path = entry.path();
                let is_session = path
                    .extension()
                    .is_some_and(|ext| ext == SESSION_FILE_EXTENSION);
                let metadata = entry
                    .metadata()
                    .ok()
                    .filter(|m| m.is_file() && is_session)?;
                Some((path, metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH)))
            })
            .collect();
        files.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| b.0.cmp(&a.0)));
        Ok(files)
    }

    /// The checked id and its file, which must exist.
    fn existing(&self, id: &str) -> Result<(SessionId, PathBuf), SessionError> {
        let id = SessionId::parse(id)?;
        let path = self.dir.join(id.file_name());
        if !path.is_file() {
            return Err(SessionError::NotFound {
                id: id.to_string(),
                dir: self.dir.clone(),
            });
        }
        Ok((id, path))
    }

    fn not_found_or(&self, id: &SessionId, path: &Path, source: io::Error) -> SessionError {
        if source.kind() == io::ErrorKind::NotFound {
            SessionError::NotFound {
                id: id.to_string(),
                dir: self.dir.clone(),
            }
        } else {
            self.io_error(path, source)
        }
    }

    fn io_error(&self, path: &Path, source: io::Error) -> SessionError {
        SessionError::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Whether loading replays the compactions of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compactions {
    /// The context the session had: the messages with the compactions replayed.
    Replay,
    /// Every message as written.
    Ignore,
}

/// Creates the directory readable by its owner only: sessions hold whole conversations.
fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Creates a new file (never an existing one) readable by its owner only, for appending.
fn create_private_file(path: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.append(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// Starts the transcript of a sub-agent at `path` (its directory made private if missing):
/// a session file of its own, in the same format, named `id` in its header.
pub(crate) fn create_transcript(
    path: &Path,
    id: &str,
    new: NewSession<'_>,
) -> Result<Session, SessionError> {
    let io_error = |source| SessionError::Io {
        path: path.to_path_buf(),
        source,
    };
    if let Some(dir) = path.parent() {
        create_private_dir(dir).map_err(io_error)?;
    }
    let file = create_private_file(path).map_err(io_error)?;
    lock(&file, id, path)?;
    let header = SessionHeader {
        format: SESSION_FORMAT_VERSION,
        id: id.to_owned(),
        model: new.model.to_owned(),
        provider: new.provider,
        cwd: new.cwd.to_path_buf(),
        created: UtcTime::from_system(SystemTime::now()).rfc3339(),
        rein_version: env!("CARGO_PKG_VERSION").to_owned(),
        parent: None,
    };
    let mut session = Session::new(file, (0, 0), path.to_path_buf(), header.clone());
    session.append(&LineRef::Header(&header))?;
    Ok(session)
}
