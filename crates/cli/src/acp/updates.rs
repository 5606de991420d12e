//! rein's events as ACP `session/update` notifications: message and thought chunks, tool
//! calls with their kind, locations and (for edits) diffs, the todo list as a plan; and a
//! resumed session's history replayed the same way.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_client_protocol::Client;
use agent_client_protocol::v1::ConnectionTo;
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, Diff, Plan, PlanEntry, PlanEntryPriority, PlanEntryStatus,
    SessionId, SessionNotification, SessionUpdate, TextContent, ToolCall, ToolCallContent,
    ToolCallLocation, ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, ToolKind,
};
use parking_lot::Mutex;
use rein_core::face::{AgentEvent, EventSink, Message, Part, Role, ToolArguments};
use rein_core::tools::{TodoItem, TodoStatus};

use super::files::EditorFiles;

/// Sends a session's updates to the client.
#[derive(Clone)]
pub(crate) struct Updates {
    cx: ConnectionTo<Client>,
    session: SessionId,
    cwd: PathBuf,
    /// The editor's buffers, when the tools go through them (they know what an edit changed).
    files: Option<Arc<EditorFiles>>,
    /// Edits in flight: the file's text before the call, by call id (files on disk only).
    before: Arc<Mutex<HashMap<String, Before>>>,
}

/// A file an edit in flight names, and its text before the edit (`None`: it did not exist).
type Before = (PathBuf, Option<String>);

impl std::fmt::Debug for Updates {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Updates")
            .field("session", &self.session)
            .finish_non_exhaustive()
    }
}

impl Updates {
    /// Updates of `session`, whose relative paths are under `cwd`.
    pub(crate) fn new(
        cx: ConnectionTo<Client>,
        session: SessionId,
        cwd: PathBuf,
        files: Option<Arc<EditorFiles>>,
    ) -> Self {
        Updates {
            cx,
            session,
            cwd,
            files,
            before: Arc::default(),
        }
    }

    /// Sends one update (a closed connection is noticed by the connection itself).
    pub(crate) fn send(&self, update: SessionUpdate) {
        let _ = self
            .cx
            .send_notification(SessionNotification::new(self.session.clone(), update));
    }

    /// Sends a piece of the agent's message.
    pub(crate) fn say(&self, text: impl Into<String>) {
        self.send(SessionUpdate::AgentMessageChunk(text_chunk(text)));
    }

    /// Replays a resumed session's history: the person's prompts, the answers, the tool
    /// calls with their results.
    pub(crate) fn replay(&self, history: &[Message]) {
        let mut names = HashMap::new();
        for message in history {
            for part in &message.parts {
                match (part, message.role) {
                    (Part::Text { text }, Role::User) => {
                        self.send(SessionUpdate::UserMessageChunk(text_chunk(text.clone())));
                    }
                    (Part::Text { text }, _) => self.say(text.clone()),
                    (Part::Reasoning { text, .. }, _) => {
                        self.send(SessionUpdate::AgentThoughtChunk(text_chunk(text.clone())));
                    }
                    (Part::ToolCall(call), _) => {
                        let arguments = match &call.arguments {
                            ToolArguments::Json { value } => value.clone(),
                            ToolArguments::Invalid { raw, .. } => {
                                serde_json::Value::String(raw.clone())
                            }
                        };
                        names.insert(call.id.clone(), call.name.clone());
                        self.send(SessionUpdate::ToolCall(
                            self.tool_call(&call.id, &call.name, &arguments)
                                .status(ToolCallStatus::Pending),
                        ));
                    }
                    (Part::ToolResult(result), _) => {
                        let status = if result.is_error {
                            ToolCallStatus::Failed
                        } else {
                            ToolCallStatus::Completed
                        };
                        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                            result.call_id.clone(),
                            ToolCallUpdateFields::new()
                                .status(status)
                                .content(vec![text_content(result.content.clone())]),
                        )));
                    }
                    // A replayed picture is not sent to the client: the text beside it (the
                    // request, read_file's result) says one was there.
                    (Part::Image(_), _) => {}
                }
            }
        }
    }

    fn tool_call(&self, id: &str, name: &str, arguments: &serde_json::Value) -> ToolCall {
        let locations = self
            .target(arguments)
            .map(|path| vec![ToolCallLocation::new(path)])
            .unwrap_or_default();
        ToolCall::new(id.to_owned(), title(name, arguments))
            .kind(kind_of(name))
            .status(ToolCallStatus::InProgress)
            .locations(locations)
            .raw_input(arguments.clone())
    }

    /// The file a call names, absolute.
    fn target(&self, arguments: &serde_json::Value) -> Option<PathBuf> {
        let named = arguments
            .get("file_path")
            .or_else(|| arguments.get("path"))
            .and_then(serde_json::Value::as_str)?;
        Some(self.cwd.join(named))
    }

    fn started(&self, id: &str, name: &str, arguments: &serde_json::Value) {
        if matches!(name, "edit_file" | "write_file")
            && self.files.is_none()
            && let Some(path) = self.target(arguments)
        {
            let text = std::fs::read_to_string(&path).ok();
            self.before.lock().insert(id.to_owned(), (path, text));
        }
        self.send(SessionUpdate::ToolCall(self.tool_call(id, name, arguments)));
    }

    fn finished(&self, id: &str, content: &str, is_error: bool, changed: &[PathBuf]) {
        let before = self.before.lock().remove(id);
        let mut shown = Vec::new();
        for path in changed {
            if let Some(diff) = self.diff(path, before.as_ref()) {
                shown.push(ToolCallContent::Diff(diff));
            }
        }
        if shown.is_empty() || is_error {
            shown.push(text_content(content.to_owned()));
        }
        let status = if is_error {
            ToolCallStatus::Failed
        } else {
            ToolCallStatus::Completed
        };
        self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_owned(),
            ToolCallUpdateFields::new().status(status).content(shown),
        )));
    }

    /// What a call changed in `path`: the editor's buffer before and after, or the disk's.
    fn diff(&self, path: &Path, before: Option<&Before>) -> Option<Diff> {
        if let Some(files) = &self.files {
            let (old, new) = files.last_change(path)?;
            return Some(Diff::new(path.to_owned(), new).old_text(old));
        }
        let new = std::fs::read_to_string(path).ok()?;
        let old = before
            .filter(|(p, _)| p == path)
            .and_then(|(_, text)| text.clone());
        Some(Diff::new(path.to_owned(), new).old_text(old))
    }

    fn plan(&self, todos: &[TodoItem]) {
        let entries = todos
            .iter()
            .map(|todo| {
                let status = match todo.status {
                    TodoStatus::Pending => PlanEntryStatus::Pending,
                    TodoStatus::InProgress => PlanEntryStatus::InProgress,
                    TodoStatus::Completed => PlanEntryStatus::Completed,
                };
                PlanEntry::new(todo.content.clone(), PlanEntryPriority::Medium, status)
            })
            .collect();
        self.send(SessionUpdate::Plan(Plan::new(entries)));
    }
}

impl EventSink for Updates {
    fn emit(&self, event: AgentEvent) {
        match event {
            AgentEvent::TextDelta { text } => self.say(text),
            AgentEvent::ReasoningDelta { text } => {
                self.send(SessionUpdate::AgentThoughtChunk(text_chunk(text)));
            }
            AgentEvent::ToolCallStarted {
                id,
                name,
                arguments,
            } => self.started(&id, &name, &arguments),
            AgentEvent::PermissionDenied { id, reason, .. } => {
                self.send(SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
                    id,
                    ToolCallUpdateFields::new()
                        .status(ToolCallStatus::Failed)
                        .content(vec![text_content(reason)]),
                )));
            }
            AgentEvent::ToolResult {
                id,
                content,
                is_error,
                changes,
                ..
            } => {
                let changed: Vec<PathBuf> = changes.into_iter().map(|c| c.path).collect();
                self.finished(&id, &content, is_error, &changed);
            }
            AgentEvent::Todos { todos } => self.plan(&todos),
            AgentEvent::Retry { reason, .. } => {
                self.send(SessionUpdate::AgentThoughtChunk(text_chunk(format!(
                    "(retrying: {reason})\n"
                ))));
            }
            AgentEvent::Warning { message } => {
                self.send(SessionUpdate::AgentThoughtChunk(text_chunk(format!(
                    "(warning: {message})\n"
                ))));
            }
            // The response carries how the turn ended; usage is sent once the turn is over;
            // the rest has no place in the protocol (a sub-agent's events stay inside its
            // `agent` call).
            AgentEvent::Waiting { .. }
            | AgentEvent::ResponseFinished { .. }
            | AgentEvent::ApprovalRequested { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::CompactionStarted { .. }
            | AgentEvent::Compaction(_)
            | AgentEvent::InstructionsLoaded { .. }
            | AgentEvent::TurnFinished { .. }
            | AgentEvent::Nested(_) => {}
        }
    }
}

/// A text chunk.
fn text_chunk(text: impl Into<String>) -> ContentChunk {
    ContentChunk::new(ContentBlock::Text(TextContent::new(text.into())))
}

/// Text shown in a tool call.
fn text_content(text: String) -> ToolCallContent {
    ToolCallContent::from(ContentBlock::Text(TextContent::new(text)))
}

/// The protocol's kind of a rein tool, by its name.
pub(crate) fn kind_of(name: &str) -> ToolKind {
    match name {
        "read_file" => ToolKind::Read,
        "edit_file" | "write_file" => ToolKind::Edit,
        "glob" | "grep" | "tool_search" => ToolKind::Search,
        "bash" | "bash_output" | "kill_shell" => ToolKind::Execute,
        "web_fetch" => ToolKind::Fetch,
        "todo_write" | "compact" => ToolKind::Think,
        _ => ToolKind::Other,
    }
}

/// A call's title, as an editor lists it: the tool and what it acts on.
pub(crate) fn title(name: &str, arguments: &serde_json::Value) -> String {
    let on = ["command", "file_path", "pattern", "url", "task", "query"]
        .iter()
        .find_map(|key| arguments.get(key).and_then(serde_json::Value::as_str));
    match on {
        Some(on) => {
            let on: String = on.chars().take(120).collect();
            format!("{name}: {on}")
        }
        None => name.to_owned(),
    }
}
