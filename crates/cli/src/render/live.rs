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
use super::result::output_tail_body;
use super::safe::one_line;
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

/// The whole output of the last command that ran, for Ctrl+O.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LastOutput {
    /// The command.
    pub(crate) command: String,
    /// Its output, when rein held it.
    pub(crate) text: String,
    /// The file holding it, when it was too big to hold.
    pub(crate) saved_to: Option<String>,
}

/// Characters of a line of a running command's output shown live.
const TAIL_LINE_CHARS: usize = 200;

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
    /// The last command's whole output.
    last_output: Option<LastOutput>,
}

#[derive(Debug)]
struct Spinner {
    /// A turn is running.
    active: bool,
    /// Hidden while the person answers a question.
    paused: bool,
    /// Rows of the live area on screen now: the spinner's line and, above it, the tail of
    /// a running command's output.
    drawn: usize,
    /// The running command's output so far: its last lines, how many in all, the call.
    tail: Vec<String>,
    tail_lines: u64,
    tail_id: String,
    /// The command of the call running, for the whole-output view.
    command: String,
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
                lines: Lines::detached(options.interactive),
                spinner: Spinner {
                    active: false,
                    paused: false,
                    drawn: 0,
                    tail: Vec::new(),
                    tail_lines: 0,
                    tail_id: String::new(),
                    command: String::new(),
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
                last_output: None,
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
            if state.spinner.drawn > 0 {
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
        state.spinner.tail.clear();
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

    /// The last command's whole output, for Ctrl+O.
    pub(crate) fn last_output(&self) -> Option<LastOutput> {
        self.lock().last_output.clone()
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
        let room = state.width.saturating_sub(1);
        let s = self.options.style;
        // A running command's last lines above the spinner, redrawn in place with it.
        let mut rows: Vec<String> = Vec::new();
        if !spinner.tail.is_empty() {
            let tail = spinner.tail.join("\n");
            rows.extend(
                output_tail_body(s, &tail, spinner.tail_lines, false)
                    .iter()
                    .map(|row| fit(&format!("    {row}"), room)),
            );
        }
        rows.push(s.dim(&fit(&line, room)));
        state.clear_spinner();
        let _ = write!(state.out, "\r{}", rows.join("\r\n"));
        let _ = state.out.flush();
        state.spinner.drawn = rows.len();
    }

    /// Notes what a finished call leaves for the whole-output view and, for a command
    /// stopped while it ran, the lines to show under its result (its last lines and how
    /// many are hidden): its result holds neither.
    fn finish_call(&self, state: &mut State, event: &mut AgentEvent) -> Vec<String> {
        let AgentEvent::ToolResult {
            id,
            summary,
            content,
            is_error,
            display,
            ..
        } = event
        else {
            return Vec::new();
        };
        let spinner = &mut state.spinner;
        let (tail, lines) = if *id == spinner.tail_id {
            spinner.tail_id.clear();
            (std::mem::take(&mut spinner.tail), spinner.tail_lines)
        } else {
            (Vec::new(), 0)
        };
        match display {
            Display::Command {
                command,
                output,
                saved_to,
                ..
            } => {
                state.last_output = Some(LastOutput {
                    command: command.clone(),
                    text: output.clone(),
                    saved_to: saved_to.clone(),
                });
                Vec::new()
            }
            Display::Text if *is_error && !tail.is_empty() => {
                state.last_output = Some(LastOutput {
                    command: state.spinner.command.clone(),
                    text: content.clone(),
                    saved_to: None,
                });
                // The interruption's own line, then the output's end, not "(+12 lines)".
                *summary = content.lines().next().unwrap_or_default().to_owned();
                output_tail_body(
                    self.options.style,
                    &tail.join("\n"),
                    lines,
                    self.options.interactive,
                )
            }
            _ => Vec::new(),
        }
    }
}

impl State {
    /// Clears the live area (the spinner's line, the tail above it), so the next write
    /// starts where it began.
    fn clear_spinner(&mut self) {
        match std::mem::take(&mut self.spinner.drawn) {
            0 => {}
            1 => {
                let _ = self.out.write_all(b"\r\x1b[K");
            }
            rows => {
                let _ = write!(self.out, "\r\x1b[{}A\x1b[J", rows - 1);
            }
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
            AgentEvent::ToolProgress {
                id,
                progress: Progress::Output { lines, tail, .. },
            } => {
                state.spinner.tail = tail
                    .lines()
                    .map(|line| one_line(line, TAIL_LINE_CHARS))
                    .collect();
                state.spinner.tail_lines = lines;
                state.spinner.tail_id = id;
            }
            mut other => {
                state.close_text(&mut text);
                let after = self.finish_call(&mut state, &mut other);
                match &other {
                    AgentEvent::ToolCallStarted {
                        name, arguments, ..
                    } => {
                        state.spinner.label = format!("running {}", neutralize(name));
                        state.spinner.tool = state.spinner.label.clone();
                        if let Some(command) = arguments.get("command").and_then(|c| c.as_str()) {
                            state.spinner.command = command.to_owned();
                        }
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
                for line in after {
                    text.push_str(&fit_or_wrap(&format!("    {line}"), width));
                    text.push('\n');
                }
            }
        }
        self.write_locked(&mut state, &text);
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
