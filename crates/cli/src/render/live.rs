//! Progress for a person at a terminal, as it happens: the answer rendered as Markdown line
//! by line while it streams, reasoning dimmed, one line per tool call and its result, and a
//! spinner on the last line (elapsed seconds, tokens so far) that is replaced in place, never
//! scrolled. The REPL and the one-shot text mode on a terminal both use it.
//!
//! Every write first clears the spinner's line, so the spinner only ever sits below what is
//! final; output is written in whole lines, so nothing already on screen is redrawn.

use std::io::Write;
use std::sync::{Mutex, PoisonError};
use std::time::Instant;

use rein_core::agent::{AgentEvent, EventSink};
use rein_core::face::{Display, Progress};

use super::markdown::MarkdownStream;
use super::text::State as Lines;
use super::width::{fit, fit_or_wrap};
use super::{Style, neutralize};

/// How often the spinner moves to its next frame.
pub(crate) const SPINNER_TICK: std::time::Duration = std::time::Duration::from_millis(100);
/// Spinner frames, one per tick.
const FRAMES: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];
/// Characters per token, for the count shown while streaming (the provider's own count
/// comes with the usage at the end).
const CHARS_PER_TOKEN: u64 = 4;

/// How the live renderer behaves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiveOptions {
    /// Colours.
    pub(crate) style: Style,
    /// Columns of the terminal.
    pub(crate) width: usize,
    /// Whether a spinner may be drawn (the output is a terminal).
    pub(crate) spinner: bool,
    /// Whether reasoning text is shown (dimmed).
    pub(crate) show_reasoning: bool,
    /// Whether a person answers approvals here (the question itself shows the reason).
    pub(crate) interactive: bool,
}

/// An edit made this session, for `/diff`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edit {
    /// The file, as the model named it.
    pub(crate) path: String,
    /// The edit's unified diff.
    pub(crate) diff: String,
}

/// The live renderer.
pub(crate) struct Live {
    options: LiveOptions,
    state: Mutex<State>,
}

struct State {
    out: Box<dyn Write + Send>,
    style: Style,
    width: usize,
    markdown: MarkdownStream,
    /// The incomplete last line of reasoning.
    reasoning: String,
    /// Reasoning lines were written since the last answer text.
    reasoning_open: bool,
    lines: Lines,
    spinner: Spinner,
    edits: Vec<Edit>,
    /// A question's keys line is on screen without a newline after it: other output starts
    /// below it instead of over it.
    inline_open: bool,
    /// Reads the terminal's width now, for the spinner: drawn wider than the window, it
    /// would wrap, and its next redraw would leave a stale row behind.
    width_probe: Option<fn() -> usize>,
}

#[derive(Debug)]
struct Spinner {
    /// A turn is running.
    active: bool,
    /// Hidden while the person answers a question.
    paused: bool,
    /// The spinner's line is on screen now.
    drawn: bool,
    started: Instant,
    chars: u64,
    label: String,
    /// "running NAME" of the call in flight, that progress reports add to.
    tool: String,
    frame: usize,
    /// What the person typed ahead, to go after the turn.
    queued: String,
}

impl Live {
    /// A renderer writing to `out`.
    pub(crate) fn new(out: impl Write + Send + 'static, options: LiveOptions) -> Self {
        Live {
            options,
            state: Mutex::new(State {
                out: Box::new(out),
                style: options.style,
                width: options.width,
                markdown: MarkdownStream::new(options.style, options.width),
                reasoning: String::new(),
                reasoning_open: false,
                lines: Lines::detached(),
                spinner: Spinner {
                    active: false,
                    paused: false,
                    drawn: false,
                    started: Instant::now(),
                    chars: 0,
                    label: String::new(),
                    tool: String::new(),
                    frame: 0,
                    queued: String::new(),
                },
                edits: Vec::new(),
                inline_open: false,
                width_probe: None,
            }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The style output is written in.
    pub(crate) fn style(&self) -> Style {
        self.options.style
    }

    /// The terminal's width now.
    pub(crate) fn width(&self) -> usize {
        self.lock().width
    }

    /// Follows a change of the terminal's width, mid-stream too: the next line and the
    /// spinner are laid out at the new width (a spinner wider than the window would wrap,
    /// and its redraws would leave stale rows behind).
    pub(crate) fn set_width(&self, width: usize) {
        let mut state = self.lock();
        if state.width != width {
            state.width = width;
            state.markdown.set_width(width);
            if state.spinner.drawn {
                state.clear_spinner();
                self.draw_spinner(&mut state);
            }
        }
    }

    /// Reads the terminal's width with `probe` before each spinner redraw.
    pub(crate) fn set_width_probe(&self, probe: fn() -> usize) {
        self.lock().width_probe = Some(probe);
    }

    /// A turn starts: the spinner runs until [`Live::end`].
    pub(crate) fn begin(&self, label: &str) {
        let mut state = self.lock();
        state.spinner.active = true;
        state.spinner.paused = false;
        state.spinner.started = Instant::now();
        state.spinner.chars = 0;
        state.spinner.label = label.to_owned();
        self.draw_spinner(&mut state);
    }

    /// The turn ended: what is held back is written, the spinner goes.
    pub(crate) fn end(&self) {
        let mut state = self.lock();
        let mut text = String::new();
        state.close_text(&mut text);
        state.spinner.active = false;
        state.spinner.queued.clear();
        self.write_locked(&mut state, &text);
        state.clear_spinner();
        let _ = state.out.flush();
    }

    /// Redraws the spinner (called a few times a second while a turn runs).
    pub(crate) fn tick(&self) {
        let mut state = self.lock();
        state.spinner.frame = state.spinner.frame.wrapping_add(1);
        self.draw_spinner(&mut state);
    }

    /// Hides the spinner while the person answers a question; [`Live::resume`] brings it back.
    pub(crate) fn pause(&self) {
        let mut state = self.lock();
        let mut text = String::new();
        state.close_text(&mut text);
        state.spinner.paused = true;
        self.write_locked(&mut state, &text);
    }

    /// Shows the spinner again after a question.
    pub(crate) fn resume(&self) {
        let mut state = self.lock();
        state.spinner.paused = false;
        self.draw_spinner(&mut state);
    }

    /// Notes what the person typed ahead, shown beside the spinner.
    pub(crate) fn set_queued(&self, queued: &str) {
        let mut state = self.lock();
        state.spinner.queued = queued.trim().replace('\n', " ⏎ ");
        self.draw_spinner(&mut state);
    }

    /// Writes text of rein's own (it must be safe and end with a newline), above the spinner.
    pub(crate) fn write(&self, text: &str) {
        let mut state = self.lock();
        self.write_locked(&mut state, text);
    }

    /// Writes text with no newline after it (a question), with the spinner cleared.
    pub(crate) fn write_inline(&self, text: &str) {
        let mut state = self.lock();
        state.clear_spinner();
        let _ = state.out.write_all(text.as_bytes());
        state.inline_open = !text.ends_with('\n');
        let _ = state.out.flush();
    }

    /// Writes `text` (ending with a newline) in place of the inline text on screen and the
    /// `rows_above` rows above it, or below what came since when something else was written.
    pub(crate) fn replace_inline(&self, rows_above: usize, text: &str) {
        let mut state = self.lock();
        if std::mem::take(&mut state.inline_open) {
            let up = "\x1b[1A\x1b[K".repeat(rows_above);
            let _ = write!(state.out, "\r\x1b[K{up}");
        }
        self.write_locked(&mut state, text);
        let _ = state.out.flush();
    }

    /// Renders a whole Markdown text now (a resumed session's last answer).
    pub(crate) fn markdown(&self, text: &str) {
        let mut state = self.lock();
        let mut out = String::new();
        state.close_text(&mut out);
        state.markdown.push(text, &mut out);
        state.markdown.finish(&mut out);
        self.write_locked(&mut state, &out);
    }

    /// The edits made so far, oldest first.
    pub(crate) fn edits(&self) -> Vec<Edit> {
        self.lock().edits.clone()
    }

    /// Forgets the edits (a new session).
    pub(crate) fn clear_edits(&self) {
        self.lock().edits.clear();
    }

    fn write_locked(&self, state: &mut State, text: &str) {
        if text.is_empty() {
            return;
        }
        state.clear_spinner();
        if std::mem::take(&mut state.inline_open) {
            let _ = state.out.write_all(b"\n");
        }
        let _ = state.out.write_all(text.as_bytes());
        self.draw_spinner(state);
        let _ = state.out.flush();
    }

    fn draw_spinner(&self, state: &mut State) {
        if !self.options.spinner || !state.spinner.active || state.spinner.paused {
            return;
        }
        if let Some(probe) = state.width_probe {
            let width = probe();
            if width != state.width {
                state.width = width;
                state.markdown.set_width(width);
            }
        }
        let spinner = &state.spinner;
        let secs = spinner.started.elapsed().as_secs();
        let tokens = spinner.chars.div_ceil(CHARS_PER_TOKEN);
        let mut line = format!(
            "{} {}… {secs} s",
            FRAMES[spinner.frame % FRAMES.len()],
            spinner.label
        );
        if tokens > 0 {
            line.push_str(&format!(" · ↓ {tokens} tokens"));
        }
        line.push_str(" · Esc to stop");
        if !spinner.queued.is_empty() {
            line.push_str(&format!(" · queued: {}", neutralize(&spinner.queued)));
        }
        let line = self
            .options
            .style
            .dim(&fit(&line, state.width.saturating_sub(1)));
        let _ = write!(state.out, "\r\x1b[K{line}");
        let _ = state.out.flush();
        state.spinner.drawn = true;
    }
}

impl State {
    /// Clears the spinner's line, so the next write starts at its beginning.
    fn clear_spinner(&mut self) {
        if self.spinner.drawn {
            let _ = self.out.write_all(b"\r\x1b[K");
            self.spinner.drawn = false;
        }
    }

    /// Ends reasoning and answer text held back, into `out`.
    fn close_text(&mut self, out: &mut String) {
        self.close_reasoning(out);
        self.markdown.finish(out);
    }

    fn close_reasoning(&mut self, out: &mut String) {
        if !self.reasoning.is_empty() {
            let line = std::mem::take(&mut self.reasoning);
            out.push_str(&reasoning_line(self.style, &line, self.width));
        }
        if self.reasoning_open {
            self.reasoning_open = false;
            out.push('\n');
        }
    }
}

/// `3/5`, `40%` of a total of 1 or 100, or the count alone.
fn steps(progress: f64, total: Option<f64>) -> String {
    match total {
        Some(total) if total > 0.0 && (total - 1.0).abs() < f64::EPSILON => {
            format!("{:.0}%", progress * 100.0)
        }
        Some(total) if total > 0.0 => format!("{progress}/{total}"),
        _ => format!("{progress}"),
    }
}

fn reasoning_line(style: Style, line: &str, width: usize) -> String {
    format!("{}\n", style.dim(&fit(&neutralize(line), width)))
}

impl EventSink for Live {
    fn emit(&self, event: AgentEvent) {
        let s = self.options.style;
        let mut state = self.lock();
        let mut text = String::new();
        match event {
            AgentEvent::TextDelta { text: delta } => {
                state.close_reasoning(&mut text);
                state.spinner.chars += delta.len() as u64;
                state.spinner.label = "writing".to_owned();
                state.markdown.push(&delta, &mut text);
            }
            AgentEvent::ReasoningDelta { text: delta } => {
                state.spinner.chars += delta.len() as u64;
                state.spinner.label = "thinking".to_owned();
                if self.options.show_reasoning {
                    state.reasoning.push_str(&delta);
                    while let Some(end) = state.reasoning.find('\n') {
                        let line: String = state.reasoning.drain(..=end).collect();
                        text.push_str(&reasoning_line(s, line.trim_end(), state.width));
                    }
                    state.reasoning_open = true;
                }
            }
            AgentEvent::ApprovalRequested { .. } if self.options.interactive => {
                // The question shows the reason.
                state.close_text(&mut text);
            }
            other => {
                state.close_text(&mut text);
                match &other {
                    AgentEvent::ToolCallStarted { name, .. } => {
                        state.spinner.label = format!("running {}", neutralize(name));
                        state.spinner.tool = state.spinner.label.clone();
                    }
                    // A tool's own report of how far it got (an MCP server's progress).
                    AgentEvent::ToolProgress {
                        progress:
                            Progress::Steps {
                                progress,
                                total,
                                message,
                            },
                        ..
                    } => {
                        let mut label =
                            format!("{} · {}", state.spinner.tool, steps(*progress, *total));
                        if let Some(message) = message {
                            label.push_str(" · ");
                            label.push_str(&neutralize(message));
                        }
                        state.spinner.label = label;
                    }
                    AgentEvent::ToolResult {
                        display: Display::FileEdit { path, diff, .. },
                        is_error: false,
                        ..
                    } => {
                        state.edits.push(Edit {
                            path: path.clone(),
                            diff: diff.clone(),
                        });
                        state.spinner.label = "thinking".to_owned();
                    }
                    AgentEvent::ToolResult { .. } | AgentEvent::ResponseFinished { .. } => {
                        state.spinner.label = "thinking".to_owned();
                    }
                    AgentEvent::Retry { .. } => {
                        state.spinner.label = "waiting to retry".to_owned();
                    }
                    AgentEvent::CompactionStarted { .. } => {
                        state.spinner.label = "compacting".to_owned();
                    }
                    _ => {}
                }
                let width = state.width;
                let lines = state.lines.render(s, other);
                for line in lines.lines() {
                    text.push_str(&fit_or_wrap(line, width));
                    text.push('\n');
                }
            }
        }
        self.write_locked(&mut state, &text);
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::Duration;

    use super::*;

    #[derive(Clone, Default)]
    struct Buffer(Arc<Mutex<Vec<u8>>>);

    impl Write for Buffer {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn live(width: usize, spinner: bool) -> (Live, Buffer) {
        let buffer = Buffer::default();
        let live = Live::new(
            buffer.clone(),
            LiveOptions {
                style: Style::plain(),
                width,
                spinner,
                show_reasoning: true,
                interactive: true,
            },
        );
        (live, buffer)
    }

    fn text(buffer: &Buffer) -> String {
        String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn the_answer_streams_line_by_line_with_tool_lines_between() {
        let (live, out) = live(80, false);
        live.emit(AgentEvent::TextDelta {
            text: "I will **read** it.\nNow".into(),
        });
        assert_eq!(text(&out), "I will read it.\n");
        live.emit(AgentEvent::ResponseFinished {
            round: 1,
            text: String::new(),
            tool_calls: 1,
        });
        live.emit(AgentEvent::ToolCallStarted {
            id: "c1".into(),
            name: "bash".into(),
            arguments: serde_json::json!({"command": "cargo test"}),
        });
        live.emit(AgentEvent::ToolResult {
            id: "c1".into(),
            name: "bash".into(),
            summary: String::new(),
            content: String::new(),
            is_error: false,
            duration: Duration::from_millis(10),
            display: Display::Command {
                command: "cargo test".into(),
                exit_code: Some(0),
                duration: Duration::from_millis(10),
                timed_out: false,
                output_tail: "ok".into(),
                sandbox_refusal: None,
                saved_to: None,
            },
            changes: Vec::new(),
        });
        insta::assert_snapshot!(text(&out));
    }

    /// A turn with a long command, a failed one and an edit, as the REPL shows it.
    fn tool_turn(width: usize) -> String {
        let (live, out) = live(width, false);
        let command = "cargo test --workspace --all-features -- --nocapture --test-threads=1 2>&1 | tee target/test-output.log";
        live.emit(AgentEvent::ToolCallStarted {
            id: "c1".into(),
            name: "bash".into(),
            arguments: serde_json::json!({ "command": command }),
        });
        live.emit(AgentEvent::ToolResult {
            id: "c1".into(),
            name: "bash".into(),
            summary: String::new(),
            content: String::new(),
            is_error: true,
            duration: Duration::from_millis(3200),
            display: Display::Command {
                command: command.into(),
                exit_code: Some(101),
                duration: Duration::from_millis(3200),
                timed_out: false,
                output_tail: "running 12 tests\ntest parse::works ... ok\ntest parse::fails_on_a_very_long_input_that_goes_past_the_edge_of_any_reasonable_terminal ... FAILED\nfailures:\n    parse::fails\ntest result: FAILED. 11 passed; 1 failed".into(),
                sandbox_refusal: None,
                saved_to: None,
            },
            changes: Vec::new(),
        });
        live.emit(AgentEvent::ToolCallStarted {
            id: "c2".into(),
            name: "edit_file".into(),
            arguments: serde_json::json!({ "file_path": "src/parse.rs" }),
        });
        live.emit(AgentEvent::ToolResult {
            id: "c2".into(),
            name: "edit_file".into(),
            summary: String::new(),
            content: String::new(),
            is_error: false,
            duration: Duration::from_millis(4),
            display: Display::FileEdit {
                path: "src/parse.rs".into(),
                diff: "--- src/parse.rs\n+++ src/parse.rs\n@@ -10,3 +10,3 @@\n fn parse(input: &str) -> Result<Ast, Error> {\n-    let tokens = lex(input).expect(\"the lexer never fails on input that came from a file we just read\");\n+    let tokens = lex(input).map_err(|e| Error::Lex { offset: e.offset, message: e.to_string() })?;\n     build(tokens)\n".into(),
                added: 1,
                removed: 1,
                created: false,
            },
            changes: Vec::new(),
        });
        text(&out)
    }

    #[test]
    fn tool_lines_and_diffs_at_80_and_120_columns() {
        insta::assert_snapshot!("tools_80", tool_turn(80));
        insta::assert_snapshot!("tools_120", tool_turn(120));
    }

    #[test]
    fn the_spinner_is_replaced_in_place_and_cleared_before_text() {
        let (live, out) = live(80, true);
        live.begin("thinking");
        live.tick();
        live.emit(AgentEvent::TextDelta {
            text: "hello\n".into(),
        });
        live.end();
        let written = text(&out);
        assert!(
            !written.contains("\n⠋"),
            "the spinner never scrolls: {written:?}"
        );
        assert!(written.contains("\r\x1b[Khello\n"), "{written:?}");
        assert!(
            written.ends_with("\r\x1b[K"),
            "cleared at the end: {written:?}"
        );
    }

    #[test]
    fn long_tool_lines_fit_the_width() {
        let (live, out) = live(30, false);
        live.emit(AgentEvent::ToolCallStarted {
            id: "c1".into(),
            name: "bash".into(),
            arguments: serde_json::json!({"command": "x".repeat(80)}),
        });
        for line in text(&out).lines() {
            assert!(super::super::width::visible_width(line) <= 30, "{line}");
        }
    }
}
