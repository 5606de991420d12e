//! `--output-format text`: tool lines, narration and retries as they happen, on stderr (or
//! any writer); the final answer is printed on stdout by the caller.
//!
//! A finished call shows what its display payload says ([`super::result`]). Everything a tool
//! or the model produced (narration, arguments, messages, diffs, output) is neutralised
//! before rein's own colours are put around it.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use parking_lot::Mutex;
use rein_core::agent::{AgentEvent, EventSink, NestedEvent};
use rein_core::context::{CompactionInfo, CompactionLayer, SummaryAuthor};
use rein_core::tools::{TodoItem, TodoStatus};
use serde_json::Value;

use super::result::{self, Finished};
use super::safe::one_line;
use super::{Style, neutralize};

/// Characters of a call's argument shown on its line.
const CALL_SHOWN_CHARS: usize = 100;

/// Renders progress for a person.
pub(crate) struct TextProgress {
    style: Style,
    state: Mutex<State>,
}

/// Everything that changes as events come, behind one lock so that lines from concurrent
/// calls never interleave.
pub(super) struct State {
    out: Box<dyn Write + Send>,
    /// Text of the response streaming now: narration if tool calls follow, else the answer
    /// (which the caller prints on stdout).
    pending: String,
    calls: OpenCalls,
    /// Whether Ctrl+O shows a command's whole output (the REPL).
    pub(super) pager: bool,
}

/// Calls started but not finished: a result that does not follow its own call's line (the
/// calls of a read-only batch run together) names its call again.
#[derive(Debug, Default)]
struct OpenCalls {
    /// Call id → what its line showed (its argument, or its tool's name), made safe.
    labels: HashMap<String, String>,
    /// Calls refused: their refusal was shown, and their result says the same again.
    refused: HashSet<String>,
    /// The call whose line or result was the last thing printed.
    last: Option<String>,
}

impl OpenCalls {
    /// Notes that a line about call `id` is printed now; returns the label it needs, if the
    /// line before it was about another call.
    fn answer(&mut self, id: &str) -> Option<String> {
        let label = if self.last.as_deref() == Some(id) {
            None
        } else {
            self.labels.get(id).cloned()
        };
        self.last = Some(id.to_owned());
        label
    }

    /// Forgets a finished call; whether it was refused.
    fn finish(&mut self, id: &str) -> bool {
        self.labels.remove(id);
        self.refused.remove(id)
    }
}

impl TextProgress {
    /// Progress on stderr, coloured when it is a terminal.
    pub(crate) fn new() -> Self {
        TextProgress::with_output(std::io::stderr(), Style::for_stderr())
    }

    /// Progress written to `out` in `style`.
    pub(crate) fn with_output(out: impl Write + Send + 'static, style: Style) -> Self {
        TextProgress {
            style,
            state: Mutex::new(State {
                out: Box::new(out),
                pending: String::new(),
                calls: OpenCalls::default(),
                pager: false,
            }),
        }
    }
}

impl EventSink for TextProgress {
    fn emit(&self, event: AgentEvent) {
        let mut state = self.state.lock();
        let text = state.render(self.style, event);
        if !text.is_empty() {
            // Progress is best effort: a closed stderr must not stop the run.
            let _ = state.out.write_all(text.as_bytes());
            let _ = state.out.flush();
        }
    }
}

impl State {
    /// The lines of tool calls and notices, for a renderer that writes them itself.
    /// `pager`: Ctrl+O shows a command's whole output here.
    pub(super) fn detached(pager: bool) -> Self {
        State {
            out: Box::new(std::io::sink()),
            pending: String::new(),
            calls: OpenCalls::default(),
            pager,
        }
    }

    /// What `event` prints (often nothing).
    pub(super) fn render(&mut self, s: Style, event: AgentEvent) -> String {
        match event {
            AgentEvent::TextDelta { text } => {
                self.pending.push_str(&text);
                String::new()
            }
            AgentEvent::ResponseFinished { tool_calls, .. } => {
                if tool_calls > 0 {
                    self.take_narration()
                } else {
                    self.pending.clear();
                    String::new()
                }
            }
            AgentEvent::ToolCallStarted {
                id,
                name,
                arguments,
            } => self.call_started(s, id, &name, &arguments),
            AgentEvent::ApprovalRequested { id, reason, .. } => {
                let label = self.calls.answer(&id);
                let line = labelled(label, &format!("asking for approval: {}", flat(&reason)));
                format!("  {}\n", s.warn(&format!("? {line}")))
            }
            AgentEvent::PermissionDenied { id, reason, .. } => {
                let label = self.calls.answer(&id);
                self.calls.refused.insert(id);
                let line = labelled(label, &format!("not allowed: {}", flat(&reason)));
                format!("  {}\n", s.error(&format!("✗ {line}")))
            }
            AgentEvent::ToolResult {
                id,
                summary,
                content,
                is_error,
                duration,
                display,
                ..
            } => self.call_finished(
                s,
                &id,
                &Finished {
                    display: &display,
                    content: &content,
                    summary: &summary,
                    is_error,
                    duration,
                    pager: self.pager,
                },
            ),
            AgentEvent::Retry {
                attempt,
                wait,
                reason,
            } => {
                // The response starts over: what streamed so far is not narration.
                self.pending.clear();
                let line = format!(
                    "↻ retry {attempt} in {}: {}",
                    result::human_duration(wait),
                    flat(&reason)
                );
                format!("{}\n", s.warn(&line))
            }
            AgentEvent::Waiting { elapsed } => format!(
                "{}\n",
                s.dim(&format!(
                    "… waiting for the model: no answer yet after {} s",
                    elapsed.as_secs()
                ))
            ),
            AgentEvent::Warning { message } => {
                format!("{}\n", s.warn(&format!("warning: {}", flat(&message))))
            }
            AgentEvent::InstructionsLoaded { path } => format!(
                "{}\n",
                s.dim(&format!(
                    "(instructions added from {})",
                    flat(&path.display().to_string())
                ))
            ),
            AgentEvent::CompactionStarted {
                tokens,
                usable_window,
                ..
            } => format!(
                "{}\n",
                s.dim(&format!(
                    "… compacting the conversation ({} of the context window): asking the \
                     model for a summary",
                    share(tokens, usable_window)
                ))
            ),
            AgentEvent::Compaction(info) => compaction_line(s, &info),
            AgentEvent::Todos { todos } => todos_line(s, &todos),
            AgentEvent::Nested(nested) => nested_line(s, &nested),
            // Text mode shows a command's output once it ends; the REPL shows it live.
            AgentEvent::ToolProgress { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::TurnFinished { .. } => String::new(),
        }
    }

    /// A call's line: the narration before it, the tool and what it is called on.
    fn call_started(
        &mut self,
        s: Style,
        id: String,
        name: &str,
        arguments: &serde_json::Value,
    ) -> String {
        let mut out = self.take_narration();
        let tool = one_line(name, CALL_SHOWN_CHARS);
        let argument = describe_call(name, arguments);
        out.push_str(&s.bold(&format!("● {tool}")));
        if !argument.is_empty() {
            out.push_str(&format!(" {argument}"));
        }
        out.push('\n');
        let label = if argument.is_empty() { tool } else { argument };
        self.calls.labels.insert(id.clone(), label);
        self.calls.last = Some(id);
        out
    }

    /// A finished call's lines: its label, how it went and what it shows.
    fn call_finished(&mut self, s: Style, id: &str, finished: &Finished<'_>) -> String {
        let label = self.calls.answer(id);
        if self.calls.finish(id) {
            // The refusal above already said why.
            return String::new();
        }
        let shown = result::shown(s, finished);
        let head = labelled(label, &shown.head);
        let mut out = if shown.failed {
            format!("  {}\n", s.error(&format!("✗ {head}")))
        } else {
            format!("  {}\n", s.dim(&format!("⎿ {head}")))
        };
        for line in &shown.body {
            out.push_str(&format!("    {line}\n"));
        }
        out
    }

    /// The text streamed so far, as narration before the tool lines it introduces.
    fn take_narration(&mut self) -> String {
        let text = std::mem::take(&mut self.pending);
        let text = text.trim();
        if text.is_empty() {
            String::new()
        } else {
            format!("{}\n", neutralize(text))
        }
    }
}

/// `tokens` as a share of `of`: `85%`.
fn share(tokens: u64, of: u64) -> String {
    if of == 0 {
        return "all".to_owned();
    }
    format!("{}%", rein_core::context::percent_of(tokens, of))
}

/// What a compaction did, in a line (a failed summary call has its own warning).
fn compaction_line(s: Style, info: &CompactionInfo) -> String {
    let sizes = format!(
        "{} → {} tokens, {} → {} of the window",
        info.tokens_before,
        info.tokens_after,
        share(info.tokens_before, info.usable_window),
        share(info.tokens_after, info.usable_window)
    );
    let what = match info.layer {
        CompactionLayer::Prune => format!(
            "pruned {} old tool result{}",
            info.pruned_results,
            if info.pruned_results == 1 { "" } else { "s" }
        ),
        CompactionLayer::Summary
        | CompactionLayer::Emergency
        | CompactionLayer::Reactive
        | CompactionLayer::Manual
        | CompactionLayer::Tool => {
            let mut kept = vec![format!("the last {} messages", info.kept_messages)];
            if info.quoted_requests > 0 {
                kept.push(format!("{} of your requests", info.quoted_requests));
            }
            kept.extend(info.pinned.iter().cloned());
            let why = match info.layer {
                CompactionLayer::Emergency => " (nearly full)",
                CompactionLayer::Reactive => " (the model refused the request as too long)",
                CompactionLayer::Manual => " (as asked)",
                CompactionLayer::Tool => " (the model asked)",
                CompactionLayer::Prune | CompactionLayer::Summary => "",
            };
            format!(
                "summarised {} earlier messages{why}; kept word for word: {}",
                info.summarised_messages,
                kept.join(", ")
            )
        }
    };
    let by_rein = match info.summary_by {
        Some(SummaryAuthor::Rein) => " (summary written by rein)",
        Some(SummaryAuthor::Model) | None => "",
    };
    format!(
        "{}\n",
        s.dim(&format!("⟳ context: {what}{by_rein}; {sizes}"))
    )
}

/// A sub-agent's event, when it is worth a line: its calls, questions and warnings, indented
/// under the `agent` call.
fn nested_line(s: Style, nested: &NestedEvent) -> String {
    let agent = one_line(&nested.agent, CALL_SHOWN_CHARS);
    let line = match nested.event.as_ref() {
        AgentEvent::ToolCallStarted {
            name, arguments, ..
        } => {
            let argument = describe_call(name, arguments);
            format!("{} {argument}", one_line(name, CALL_SHOWN_CHARS))
        }
        AgentEvent::ApprovalRequested { reason, .. } => {
            format!("asking for approval: {}", flat(reason))
        }
        AgentEvent::PermissionDenied { name, reason, .. } => {
            format!(
                "{}: not allowed: {}",
                one_line(name, CALL_SHOWN_CHARS),
                flat(reason)
            )
        }
        AgentEvent::Warning { message } => format!("warning: {}", flat(message)),
        _ => return String::new(),
    };
    format!("  {}\n", s.dim(&format!("↳ {agent}: {line}")))
}

/// The todo list in a line: how far along it is, and what is being done.
fn todos_line(s: Style, todos: &[TodoItem]) -> String {
    let done = todos.iter().filter(|t| !t.is_open()).count();
    let now = todos
        .iter()
        .find(|t| t.status == TodoStatus::InProgress)
        .map(|t| t.active_form.as_deref().unwrap_or(&t.content));
    let mut line = format!("☐ todo: {done}/{} done", todos.len());
    if let Some(now) = now {
        line.push_str(&format!("; now: {}", one_line(now, CALL_SHOWN_CHARS)));
    }
    format!("{}\n", s.dim(&line))
}

/// `label: text`, or `text` alone.
fn labelled(label: Option<String>, text: &str) -> String {
    match label {
        Some(label) => format!("{label}: {text}"),
        None => text.to_owned(),
    }
}

/// A message from elsewhere (a refusal, a server, a hook) on one line, made safe.
fn flat(message: &str) -> String {
    let joined: Vec<&str> = message
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    neutralize(&joined.join(" ")).into_owned()
}

/// The most telling argument of a call, on one line, made safe.
pub(super) fn describe_call(name: &str, arguments: &Value) -> String {
    let field = |key: &str| arguments.get(key).and_then(Value::as_str);
    let main = match name {
        "read_file" | "write_file" | "edit_file" => field("file_path"),
        "bash" => field("command"),
        "glob" | "grep" => field("pattern"),
        _ => None,
    };
    let mut shown = match (main, arguments) {
        (Some(main), _) => one_line(main, CALL_SHOWN_CHARS),
        // Arguments that were not JSON: their raw text.
        (None, Value::String(raw)) => one_line(raw, CALL_SHOWN_CHARS),
        (None, Value::Object(fields)) if fields.is_empty() => String::new(),
        (None, other) => one_line(&other.to_string(), CALL_SHOWN_CHARS),
    };
    if let ("glob" | "grep", Some(path)) = (name, field("path")) {
        shown.push_str(&format!(" in {}", one_line(path, CALL_SHOWN_CHARS)));
    }
    shown
}

#[cfg(test)]
#[path = "text_tests.rs"]
mod tests;
