//! Every event masked on its way to the front-end: the model's streamed text and reasoning
//! (held back only where a secret may be starting), its tool calls' arguments, results,
//! warnings and error messages. Core never prints, so this is the one door to the terminal.

use std::sync::Arc;

use parking_lot::Mutex;
use rein_tools::{Display, Preview, Progress, ToolOutput};
use serde_json::Value;

use super::Secrets;
use super::stream::TextMasker;
use crate::agent::{AgentEvent, EventSink, Events};
use crate::interaction::{AnswerScope, ApprovalRequest};

/// Masks the events of one turn before they reach `inner`.
#[derive(Debug)]
pub struct EventMasker {
    secrets: Arc<Secrets>,
    inner: Events,
    streams: Mutex<Streams>,
}

/// The two texts the model streams.
#[derive(Debug)]
struct Streams {
    text: TextMasker,
    reasoning: TextMasker,
}

impl EventMasker {
    /// Events masked with `secrets`, then sent to `inner`; without secrets, `inner` itself.
    pub fn wrap(secrets: &Arc<Secrets>, inner: &Events) -> Events {
        if !secrets.any() {
            return inner.clone();
        }
        Events::new(EventMasker {
            secrets: Arc::clone(secrets),
            inner: inner.clone(),
            streams: Mutex::new(Streams {
                text: TextMasker::new(Arc::clone(secrets)),
                reasoning: TextMasker::new(Arc::clone(secrets)),
            }),
        })
    }

    /// Sends what the streams held back, before an event that follows them.
    fn flush(&self, streams: &mut Streams) {
        if streams.text.holds() {
            let text = streams.text.finish();
            self.inner.emit(AgentEvent::TextDelta { text });
        }
        if streams.reasoning.holds() {
            let text = streams.reasoning.finish();
            self.inner.emit(AgentEvent::ReasoningDelta { text });
        }
    }
}

impl EventSink for EventMasker {
    fn emit(&self, mut event: AgentEvent) {
        let mut streams = self.streams.lock();
        match &mut event {
            AgentEvent::TextDelta { text } => {
                if streams.reasoning.holds() {
                    let rest = streams.reasoning.finish();
                    self.inner.emit(AgentEvent::ReasoningDelta { text: rest });
                }
                let shown = streams.text.push(text);
                if !shown.is_empty() {
                    self.inner.emit(AgentEvent::TextDelta { text: shown });
                }
                return;
            }
            AgentEvent::ReasoningDelta { text } => {
                if streams.text.holds() {
                    let rest = streams.text.finish();
                    self.inner.emit(AgentEvent::TextDelta { text: rest });
                }
                let shown = streams.reasoning.push(text);
                if !shown.is_empty() {
                    self.inner.emit(AgentEvent::ReasoningDelta { text: shown });
                }
                return;
            }
            // What streamed since the request started is being thrown away.
            AgentEvent::Retry { .. } => {
                streams.text.discard();
                streams.reasoning.discard();
            }
            // Sent while nothing has streamed yet.
            AgentEvent::Waiting { .. } => {}
            // Whatever follows the streamed text comes after what it held back.
            AgentEvent::ResponseFinished { .. }
            | AgentEvent::ToolCallStarted { .. }
            | AgentEvent::ApprovalRequested { .. }
            | AgentEvent::PermissionDenied { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::ToolResult { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::CompactionStarted { .. }
            | AgentEvent::Compaction(_)
            | AgentEvent::Todos { .. }
            | AgentEvent::Warning { .. }
            | AgentEvent::InstructionsLoaded { .. }
            | AgentEvent::TurnFinished { .. }
            | AgentEvent::Nested(_) => self.flush(&mut streams),
        }
        drop(streams);
        mask_event(&self.secrets, &mut event);
        self.inner.emit(event);
    }
}

/// Masks every text of `event` that could hold a secret.
pub(crate) fn mask_event(secrets: &Secrets, event: &mut AgentEvent) {
    match event {
        AgentEvent::TextDelta { text }
        | AgentEvent::ReasoningDelta { text }
        | AgentEvent::ResponseFinished { text, .. } => secrets.redact_in_place(text),
        AgentEvent::Retry { reason, .. } | AgentEvent::ApprovalRequested { reason, .. } => {
            secrets.redact_in_place(reason);
        }
        AgentEvent::Warning { message } => secrets.redact_in_place(message),
        AgentEvent::ToolCallStarted { arguments, .. } => mask_value(secrets, arguments),
        AgentEvent::PermissionDenied {
            arguments, reason, ..
        } => {
            mask_value(secrets, arguments);
            secrets.redact_in_place(reason);
        }
        AgentEvent::ToolProgress { progress, .. } => match progress {
            Progress::Output {
                last_line, tail, ..
            } => {
                secrets.redact_in_place(last_line);
                secrets.redact_in_place(tail);
            }
            Progress::Steps { message, .. } => {
                if let Some(message) = message {
                    secrets.redact_in_place(message);
                }
            }
        },
        AgentEvent::ToolResult {
            summary,
            content,
            display,
            ..
        } => {
            secrets.redact_in_place(summary);
            secrets.redact_in_place(content);
            mask_display(secrets, display);
        }
        AgentEvent::Compaction(info) => {
            if let Some(error) = &mut info.summary_error {
                secrets.redact_in_place(error);
            }
            for pinned in &mut info.pinned {
                secrets.redact_in_place(pinned);
            }
        }
        AgentEvent::Todos { todos } => {
            for todo in todos {
                secrets.redact_in_place(&mut todo.content);
                if let Some(active) = &mut todo.active_form {
                    secrets.redact_in_place(active);
                }
            }
        }
        AgentEvent::Nested(nested) => mask_event(secrets, &mut nested.event),
        AgentEvent::Waiting { .. }
        | AgentEvent::Usage { .. }
        | AgentEvent::CompactionStarted { .. }
        | AgentEvent::InstructionsLoaded { .. }
        | AgentEvent::TurnFinished { .. } => {}
    }
}

/// Masks every string in a JSON value (a tool call's arguments).
pub(crate) fn mask_value(secrets: &Secrets, value: &mut Value) {
    match value {
        Value::String(text) => secrets.redact_in_place(text),
        Value::Array(items) => items.iter_mut().for_each(|v| mask_value(secrets, v)),
        Value::Object(fields) => fields.values_mut().for_each(|v| mask_value(secrets, v)),
        Value::Null | Value::Bool(_) | Value::Number(_) => {}
    }
}

/// Masks everything a call's result shows: the text the model gets and every text of its
/// display payload. The one place that knows which fields can hold a secret: the result
/// is masked with it once it has run, and again on its way out as an event.
pub(crate) fn mask_output(secrets: &Secrets, output: &mut ToolOutput) {
    secrets.redact_in_place(&mut output.content);
    mask_display(secrets, &mut output.display);
}

/// Masks every text of a result's display payload (numbers and flags hold none).
pub(crate) fn mask_display(secrets: &Secrets, display: &mut Display) {
    match display {
        Display::FileEdit { path, diff, .. } => {
            secrets.redact_in_place(path);
            secrets.redact_in_place(diff);
        }
        Display::Command {
            command,
            output_tail,
            output,
            saved_to,
            sandbox_refusal,
            hosts_refused,
            ..
        } => {
            secrets.redact_in_place(command);
            secrets.redact_in_place(output_tail);
            secrets.redact_in_place(output);
            for text in [saved_to, sandbox_refusal].into_iter().flatten() {
                secrets.redact_in_place(text);
            }
            for refused in hosts_refused {
                secrets.redact_in_place(&mut refused.host);
            }
        }
        Display::FileRead { path, .. } => secrets.redact_in_place(path),
        Display::Image {
            path, media_type, ..
        } => {
            secrets.redact_in_place(path);
            secrets.redact_in_place(media_type);
        }
        Display::WebPage {
            url, content_type, ..
        } => {
            secrets.redact_in_place(url);
            secrets.redact_in_place(content_type);
        }
        Display::Text | Display::Search { .. } | Display::Listing { .. } => {}
    }
}

/// Masks every text of a question before a front-end shows it: the call's arguments, its
/// preview, why rein asks and what a no means. The rules it offers stay as they are (they
/// are what a yes grants): a rule that holds a secret is not offered at all.
pub(crate) fn mask_request(secrets: &Secrets, request: &mut ApprovalRequest) {
    secrets.redact_in_place(&mut request.call_id);
    mask_value(secrets, &mut request.arguments);
    if let Some(preview) = &mut request.preview {
        mask_preview(secrets, preview);
    }
    secrets.redact_in_place(&mut request.reason);
    match &mut request.scope {
        AnswerScope::Session { after_no } => secrets.redact_in_place(after_no),
        AnswerScope::Call { .. } | AnswerScope::Once => {}
    }
}

/// Masks what the person is shown before approving a call.
pub(crate) fn mask_preview(secrets: &Secrets, preview: &mut Preview) {
    match preview {
        Preview::Diff { path, diff, .. } => {
            secrets.redact_in_place(path);
            secrets.redact_in_place(diff);
        }
        Preview::Command { command, cwd } => {
            secrets.redact_in_place(command);
            secrets.redact_in_place(cwd);
        }
        Preview::Connection { host, .. } => secrets.redact_in_place(host),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::secrets::SecretValues;

    const SECRET: &str = "ghp_abcdefghijklmnop";

    /// A result with the secret in its text and in every text field of `display`.
    fn leaky(display: Display) -> ToolOutput {
        ToolOutput::success(format!("token {SECRET}")).with_display(display)
    }

    /// Every text of a question holding the secret is masked; none keeps it.
    #[test]
    fn every_text_of_a_question_is_masked() {
        let secrets = Secrets::gather(
            [("GITHUB_TOKEN", SECRET)],
            &SecretValues::default(),
            None,
            &[],
        );
        let s = || format!("{SECRET}.example");
        let mut request = ApprovalRequest {
            call_id: s(),
            tool: "network".into(),
            arguments: serde_json::json!({ "host": s(), "port": 443 }),
            preview: Some(Preview::Command {
                command: s(),
                cwd: s(),
            }),
            reason: s(),
            scope: AnswerScope::Session { after_no: s() },
            agent: None,
        };
        mask_request(&secrets, &mut request);
        let shown = format!("{request:?}");
        assert!(!shown.contains(SECRET), "{shown}");
        assert_eq!(
            shown.matches("[REDACTED:GITHUB_TOKEN]").count(),
            6,
            "{shown}"
        );
    }

    /// Every payload a tool gives, each text field holding the secret: masked, none keeps it
    /// (the result masked after its run and the event on its way out use this one function).
    #[test]
    fn every_text_of_every_payload_is_masked() {
        let secrets = Secrets::gather(
            [("GITHUB_TOKEN", SECRET)],
            &SecretValues::default(),
            None,
            &[],
        );
        let s = || format!("/home/me/{SECRET}");
        let payloads = [
            Display::FileRead {
                path: s(),
                first_line: 1,
                lines_shown: 1,
                total_lines: None,
                truncated: false,
            },
            Display::FileEdit {
                path: s(),
                diff: s(),
                added: 1,
                removed: 0,
                created: true,
            },
            Display::Command {
                command: s(),
                exit_code: Some(1),
                duration: Duration::ZERO,
                timed_out: false,
                output_tail: s(),
                output_lines: 1,
                output: s(),
                saved_to: Some(s()),
                sandbox_refusal: Some(format!("the sandbox refused a write to {}", s())),
                hosts_refused: vec![rein_tools::HostPort {
                    host: s(),
                    port: 443,
                }],
            },
            Display::WebPage {
                url: s(),
                status: 200,
                content_type: s(),
                bytes: 1,
                truncated: false,
            },
            Display::Image {
                path: s(),
                media_type: s(),
                width: 1,
                height: 1,
                bytes: 1,
                resized_from: None,
            },
        ];
        for display in payloads {
            let mut output = leaky(display);
            mask_output(&secrets, &mut output);
            let shown = format!("{output:?}");
            assert!(!shown.contains(SECRET), "{shown}");
            assert!(shown.contains("[REDACTED:GITHUB_TOKEN]"), "{shown}");
        }
    }
}
