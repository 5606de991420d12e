//! The JSON object a hook reads on stdin, with Claude Code's field names.

use std::path::Path;

use rein_tools::ToolOutput;
use serde_json::{Map, Value, json};

use super::matcher::hook_tool_name;
use super::{HookCall, SessionStartSource};
use crate::config::HookEvent;
use crate::permissions::PermissionMode;

/// What every hook is told, whatever the event.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Common<'a> {
    /// The session's id (`null` when the conversation is not recorded).
    pub(crate) session_id: Option<&'a str>,
    /// The session file.
    pub(crate) transcript_path: Option<&'a Path>,
    /// The workspace, where the hook runs.
    pub(crate) cwd: &'a Path,
    /// The permission mode.
    pub(crate) mode: PermissionMode,
}

/// An event, with what its hooks are told about it.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EventInput<'a> {
    /// Before a tool call's permission decision.
    PreToolUse(&'a HookCall<'a>),
    /// After a tool call ran.
    PostToolUse(&'a HookCall<'a>, &'a ToolOutput),
    /// The person's request, before the model sees it.
    UserPromptSubmit(&'a str),
    /// The model answered without a tool call; whether a Stop hook already made it go on.
    Stop(bool),
    /// A sub-agent finished; whether a hook already made it go on.
    SubagentStop(bool),
    /// A session starts.
    SessionStart(SessionStartSource),
    /// The session ends.
    SessionEnd,
    /// The conversation is about to be compacted.
    PreCompact,
}

impl EventInput<'_> {
    /// The event.
    pub(crate) fn event(&self) -> HookEvent {
        match self {
            EventInput::PreToolUse(_) => HookEvent::PreToolUse,
            EventInput::PostToolUse(..) => HookEvent::PostToolUse,
            EventInput::UserPromptSubmit(_) => HookEvent::UserPromptSubmit,
            EventInput::Stop(_) => HookEvent::Stop,
            EventInput::SubagentStop(_) => HookEvent::SubagentStop,
            EventInput::SessionStart(_) => HookEvent::SessionStart,
            EventInput::SessionEnd => HookEvent::SessionEnd,
            EventInput::PreCompact => HookEvent::PreCompact,
        }
    }

    /// What the event's matchers are matched against: the tool (rein's name) for tool
    /// events, the source for SessionStart; `None` where matchers do not apply.
    pub(crate) fn subject(&self) -> Option<Subject<'_>> {
        match self {
            EventInput::PreToolUse(call) | EventInput::PostToolUse(call, _) => {
                Some(Subject::Tool(call.tool))
            }
            EventInput::SessionStart(source) => Some(Subject::Name(source_name(*source))),
            EventInput::UserPromptSubmit(_)
            | EventInput::Stop(_)
            | EventInput::SubagentStop(_)
            | EventInput::SessionEnd
            | EventInput::PreCompact => None,
        }
    }
}

/// What a matcher is matched against.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Subject<'a> {
    /// A tool, by rein's name (its Claude Code aliases match too).
    Tool(&'a str),
    /// A plain name.
    Name(&'a str),
}

/// Claude Code's name of a permission mode.
fn mode_name(mode: PermissionMode) -> &'static str {
    match mode {
        PermissionMode::Default => "default",
        PermissionMode::AcceptEdits => "acceptEdits",
        PermissionMode::Plan => "plan",
        // Claude Code has no such mode; its own name is the clearest.
        PermissionMode::Auto => "auto",
        PermissionMode::Yolo => "bypassPermissions",
    }
}

fn source_name(source: SessionStartSource) -> &'static str {
    match source {
        SessionStartSource::Startup => "startup",
        SessionStartSource::Resume => "resume",
    }
}

/// The object, as one line of JSON.
pub(crate) fn render(common: &Common<'_>, input: &EventInput<'_>) -> Vec<u8> {
    let mut object = Map::new();
    object.insert("session_id".into(), json!(common.session_id));
    object.insert("transcript_path".into(), json!(common.transcript_path));
    object.insert("cwd".into(), json!(common.cwd));
    object.insert("permission_mode".into(), json!(mode_name(common.mode)));
    object.insert("hook_event_name".into(), json!(<&str>::from(input.event())));
    match input {
        EventInput::PreToolUse(call) => tool_fields(&mut object, call),
        EventInput::PostToolUse(call, output) => {
            tool_fields(&mut object, call);
            object.insert(
                "tool_response".into(),
                json!({ "content": output.content, "is_error": output.is_error }),
            );
        }
        EventInput::UserPromptSubmit(prompt) => {
            object.insert("prompt".into(), json!(prompt));
        }
        EventInput::Stop(active) | EventInput::SubagentStop(active) => {
            object.insert("stop_hook_active".into(), json!(active));
        }
        EventInput::SessionStart(source) => {
            object.insert("source".into(), json!(source_name(*source)));
        }
        EventInput::SessionEnd => {
            object.insert("reason".into(), json!("other"));
        }
        EventInput::PreCompact => {}
    }
    let mut line = serde_json::to_vec(&Value::Object(object)).unwrap_or_default();
    line.push(b'\n');
    line
}

fn tool_fields(object: &mut Map<String, Value>, call: &HookCall<'_>) {
    object.insert("tool_name".into(), json!(hook_tool_name(call.tool)));
    object.insert("tool_input".into(), call.arguments.clone());
    object.insert("tool_use_id".into(), json!(call.id));
    // rein's own name, for hooks written for rein.
    object.insert("rein_tool_name".into(), json!(call.tool));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(bytes: &[u8]) -> Value {
        serde_json::from_slice(bytes).unwrap()
    }

    fn common() -> Common<'static> {
        Common {
            session_id: Some("s1"),
            transcript_path: None,
            cwd: Path::new("/work"),
            mode: PermissionMode::AcceptEdits,
        }
    }

    #[test]
    fn tool_events_carry_claude_codes_fields() {
        let arguments = json!({"command": "ls"});
        let call = HookCall {
            id: "c1",
            tool: "bash",
            arguments: &arguments,
        };
        let pre = parse(&render(&common(), &EventInput::PreToolUse(&call)));
        assert_eq!(
            pre,
            json!({
                "session_id": "s1",
                "transcript_path": null,
                "cwd": "/work",
                "permission_mode": "acceptEdits",
                "hook_event_name": "PreToolUse",
                "tool_name": "Bash",
                "tool_input": {"command": "ls"},
                "tool_use_id": "c1",
                "rein_tool_name": "bash",
            })
        );
        let output = ToolOutput::error("boom");
        let post = parse(&render(&common(), &EventInput::PostToolUse(&call, &output)));
        assert_eq!(post["hook_event_name"], "PostToolUse");
        assert_eq!(
            post["tool_response"],
            json!({"content": "boom", "is_error": true})
        );
    }

    #[test]
    fn other_events_carry_theirs() {
        let prompt = parse(&render(&common(), &EventInput::UserPromptSubmit("fix it")));
        assert_eq!(prompt["prompt"], "fix it");
        assert_eq!(prompt["hook_event_name"], "UserPromptSubmit");
        let stop = parse(&render(&common(), &EventInput::Stop(true)));
        assert_eq!(stop["stop_hook_active"], true);
        let start = parse(&render(
            &common(),
            &EventInput::SessionStart(SessionStartSource::Resume),
        ));
        assert_eq!(start["source"], "resume");
        let end = parse(&render(&common(), &EventInput::SessionEnd));
        assert_eq!(end["reason"], "other");
    }
}
