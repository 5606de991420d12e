//! `--output-format text`: tool lines, narration and retries on stderr as they happen; the
//! final answer is printed on stdout by the caller.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Mutex;

use rein_core::agent::{AgentEvent, EventSink};

use super::Style;

/// Lines of a diff or command output shown under a tool line.
const SHOWN_RESULT_LINES: usize = 12;

/// Renders progress on stderr.
#[derive(Debug)]
pub(crate) struct TextProgress {
    style: Style,
    /// Text of the response streaming now: narration if tool calls follow, else the answer
    /// (which the caller prints on stdout).
    pending_text: Mutex<String>,
    /// The calls whose results are still to come, and which of them was printed last.
    calls: Mutex<OpenCalls>,
}

/// Calls started but not finished: a result that does not follow its own call's line (the
/// calls of a read-only batch run together) names its call again.
#[derive(Debug, Default)]
struct OpenCalls {
    /// Call id → its tool name and the argument shown on its line.
    lines: HashMap<String, (String, String)>,
    /// The call whose line or result block was the last thing printed.
    last: Option<String>,
}

impl TextProgress {
    pub(crate) fn new() -> Self {
        TextProgress {
            style: Style::for_stderr(),
            pending_text: Mutex::new(String::new()),
            calls: Mutex::new(OpenCalls::default()),
        }
    }

    /// Prints the text streamed so far as narration, before the tool lines it introduces.
    fn flush_narration(&self) {
        let text = match self.pending_text.lock() {
            Ok(mut pending) => std::mem::take(&mut *pending),
            Err(_) => return,
        };
        if !text.trim().is_empty() {
            self.write(&format!("{}\n", text.trim()));
        }
    }

    fn write(&self, text: &str) {
        let mut err = std::io::stderr().lock();
        let _ = err.write_all(text.as_bytes());
        let _ = err.flush();
    }
}

impl EventSink for TextProgress {
    fn emit(&self, event: AgentEvent) {
        let s = self.style;
        match event {
            AgentEvent::TextDelta { text } => {
                if let Ok(mut pending) = self.pending_text.lock() {
                    pending.push_str(&text);
                }
            }
            AgentEvent::ResponseFinished { tool_calls, .. } => {
                if tool_calls > 0 {
                    self.flush_narration();
                } else if let Ok(mut pending) = self.pending_text.lock() {
                    pending.clear();
                }
            }
            AgentEvent::ToolCallStarted {
                id,
                name,
                arguments,
            } => {
                self.flush_narration();
                let described = describe_call(&name, &arguments);
                self.write(&format!("{} {described}\n", s.bold(&format!("● {name}"))));
                if let Ok(mut calls) = self.calls.lock() {
                    calls.lines.insert(id.clone(), (name, described));
                    calls.last = Some(id);
                }
            }
            AgentEvent::ToolResult {
                id,
                name,
                content,
                is_error,
                summary,
                ..
            } => {
                // A result right under its own call line needs no label; one that comes
                // after other calls' lines says which call it answers.
                let mut label = None;
                if let Ok(mut calls) = self.calls.lock() {
                    let line = calls.lines.remove(&id);
                    if calls.last.as_ref() != Some(&id) {
                        label = line;
                    }
                    calls.last = Some(id);
                }
                let text = match result_block(s, &name, &content, &summary, is_error) {
                    Shown::Line(line) => match label {
                        Some((_, described)) => {
                            format!("  {}\n", s.dim(&format!("⎿ {described}: {line}")))
                        }
                        None => format!("  {}\n", s.dim(&format!("⎿ {line}"))),
                    },
                    Shown::Error(line) => match label {
                        Some((_, described)) => {
                            format!("  {}\n", s.error(&format!("✗ {described}: {line}")))
                        }
                        None => format!("  {}\n", s.error(&format!("✗ {line}"))),
                    },
                    Shown::Block(block) => match label {
                        Some((name, described)) => {
                            format!("{}\n{block}", s.dim(&format!("● {name} {described}")))
                        }
                        None => block,
                    },
                };
                self.write(&text);
            }
            AgentEvent::Retry {
                attempt,
                wait,
                reason,
            } => {
                if let Ok(mut pending) = self.pending_text.lock() {
                    pending.clear();
                }
                self.write(&format!(
                    "{}\n",
                    s.warn(&format!(
                        "↻ retry {attempt} in {:.1}s: {reason}",
                        wait.as_secs_f64()
                    ))
                ));
            }
            AgentEvent::Waiting { elapsed } => {
                self.write(&format!(
                    "{}\n",
                    s.dim(&format!(
                        "… waiting for the model: no answer yet after {} s",
                        elapsed.as_secs()
                    ))
                ));
            }
            AgentEvent::Warning { message } => {
                self.write(&format!("{}\n", s.warn(&format!("warning: {message}"))));
            }
            // A refused call's result, which follows, says why; a one-shot run asks nothing.
            AgentEvent::PermissionDenied { .. }
            | AgentEvent::ToolProgress { .. }
            | AgentEvent::ApprovalRequested { .. }
            | AgentEvent::ReasoningDelta { .. }
            | AgentEvent::Usage { .. }
            | AgentEvent::TurnFinished { .. } => {}
        }
    }
}

/// The most telling argument of a call, on one line.
fn describe_call(name: &str, arguments: &serde_json::Value) -> String {
    let key = match name {
        "read_file" | "write_file" | "edit_file" => "file_path",
        "bash" => "command",
        "glob" | "grep" => "pattern",
        _ => "",
    };
    let value = arguments
        .get(key)
        .and_then(|v| v.as_str())
        .map(str::to_owned)
        .unwrap_or_else(|| arguments.to_string());
    let first_line = value.lines().next().unwrap_or_default();
    let mut shown: String = first_line.chars().take(100).collect();
    if shown.len() < value.len() {
        shown.push('…');
    }
    shown
}

/// How a tool result is shown.
enum Shown {
    /// One line (`⎿ 12 lines`).
    Line(String),
    /// A failure, in one line.
    Error(String),
    /// Lines of a diff or of command output, ready to print.
    Block(String),
}

fn result_block(s: Style, name: &str, content: &str, summary: &str, is_error: bool) -> Shown {
    if is_error {
        return Shown::Error(summary.to_owned());
    }
    let counted = |noun: &str| format!("{} {noun}", content.lines().count());
    let short = match name {
        "edit_file" | "bash" => None,
        "read_file" => Some(counted("lines")),
        "glob" if !content.starts_with("No files") => Some(counted("files")),
        _ => Some(summary.to_owned()),
    };
    if let Some(short) = short {
        return Shown::Line(short);
    }
    let lines: Vec<&str> = content.lines().collect();
    let mut out = String::new();
    for line in lines.iter().take(SHOWN_RESULT_LINES) {
        let painted = if name == "edit_file" && line.starts_with('+') && !line.starts_with("+++") {
            s.added(line)
        } else if name == "edit_file" && line.starts_with('-') && !line.starts_with("---") {
            s.removed(line)
        } else {
            s.dim(line)
        };
        out.push_str(&format!("  │ {painted}\n"));
    }
    if lines.len() > SHOWN_RESULT_LINES {
        out.push_str(&format!(
            "  {}\n",
            s.dim(&format!(
                "│ … (+{} lines)",
                lines.len() - SHOWN_RESULT_LINES
            ))
        ));
    }
    Shown::Block(out)
}
