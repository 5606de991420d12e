//! `--output-format text`: tool lines, narration and retries on stderr as they happen; the
//! final answer is printed on stdout by the caller.

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
}

impl TextProgress {
    pub(crate) fn new() -> Self {
        TextProgress {
            style: Style::for_stderr(),
            pending_text: Mutex::new(String::new()),
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
                name, arguments, ..
            } => {
                self.flush_narration();
                self.write(&format!(
                    "{} {}\n",
                    s.bold(&format!("● {name}")),
                    describe_call(&name, &arguments)
                ));
            }
            AgentEvent::ToolResult {
                name,
                content,
                is_error,
                summary,
                ..
            } => self.write(&result_block(s, &name, &content, &summary, is_error)),
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
            AgentEvent::Warning { message } => {
                self.write(&format!("{}\n", s.warn(&format!("warning: {message}"))));
            }
            AgentEvent::ReasoningDelta { .. }
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

fn result_block(s: Style, name: &str, content: &str, summary: &str, is_error: bool) -> String {
    if is_error {
        return format!("  {}\n", s.error(&format!("✗ {summary}")));
    }
    let counted = |noun: &str| format!("{} {noun}", content.lines().count());
    let short = match name {
        "edit_file" | "bash" => None,
        "read_file" => Some(counted("lines")),
        "glob" if !content.starts_with("No files") => Some(counted("files")),
        _ => Some(summary.to_owned()),
    };
    if let Some(short) = short {
        return format!("  {}\n", s.dim(&format!("⎿ {short}")));
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
    out
}
