//! File tools through the client: when the editor offers `fs/read_text_file` and
//! `fs/write_text_file`, read_file, edit_file and write_file see its buffers (unsaved changes
//! included) and their edits land in the editor. Only the bytes travel this way: the path was
//! confined and the call decided by rein before it gets here.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{ReadTextFileRequest, SessionId, WriteTextFileRequest};
use parking_lot::Mutex;
use rein_core::face::ClientFiles;

/// How long a file request may wait for the editor: a client that never answers must not
/// hold a tool forever.
const CLIENT_FILE_TIMEOUT: Duration = Duration::from_secs(30);

/// The editor's buffers of one session.
pub(crate) struct EditorFiles {
    cx: ConnectionTo<Client>,
    /// Set once the session exists (its tools run only after).
    session: OnceLock<SessionId>,
    runtime: tokio::runtime::Handle,
    /// Each file's text as last read or written through the editor, and before that write:
    /// what an edit changed, for the tool call's diff.
    seen: Mutex<HashMap<PathBuf, (Option<String>, String)>>,
}

impl std::fmt::Debug for EditorFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EditorFiles")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl EditorFiles {
    /// The buffers reached over `cx`, for the session [`Self::name`] gives; requests are
    /// driven by `runtime`.
    pub(crate) fn new(cx: ConnectionTo<Client>, runtime: tokio::runtime::Handle) -> Self {
        EditorFiles {
            cx,
            session: OnceLock::new(),
            runtime,
            seen: Mutex::default(),
        }
    }

    /// The session they belong to.
    pub(crate) fn name(&self, session: SessionId) {
        let _ = self.session.set(session);
    }

    fn session(&self) -> SessionId {
        self.session
            .get()
            .cloned()
            .unwrap_or_else(|| SessionId::new(""))
    }

    /// The text of `path` before and after the last write through the editor.
    pub(crate) fn last_change(&self, path: &Path) -> Option<(Option<String>, String)> {
        self.seen.lock().get(path).cloned()
    }

    fn wait<T>(
        &self,
        what: &str,
        request: impl Future<Output = Result<T, agent_client_protocol::Error>>,
    ) -> std::io::Result<T> {
        // Called on a blocking thread: the connection runs on the runtime meanwhile.
        self.runtime.block_on(async {
            match tokio::time::timeout(CLIENT_FILE_TIMEOUT, request).await {
                Ok(Ok(value)) => Ok(value),
                Ok(Err(e)) => Err(std::io::Error::other(format!(
                    "the editor refused to {what}: {}",
                    e.message
                ))),
                Err(_) => Err(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    format!("the editor did not answer a request to {what}"),
                )),
            }
        })
    }
}

impl ClientFiles for EditorFiles {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        let request = ReadTextFileRequest::new(self.session(), path.to_owned());
        let response = self.wait("read the file", self.cx.send_request(request).block_task())?;
        self.seen
            .lock()
            .insert(path.to_owned(), (None, response.content.clone()));
        Ok(response.content)
    }

    fn write(&self, path: &Path, content: &str) -> std::io::Result<()> {
        let request =
            WriteTextFileRequest::new(self.session(), path.to_owned(), content.to_owned());
        self.wait("write the file", self.cx.send_request(request).block_task())?;
        let mut seen = self.seen.lock();
        let before = seen.remove(path).map(|(_, text)| text);
        seen.insert(path.to_owned(), (before, content.to_owned()));
        Ok(())
    }
}
