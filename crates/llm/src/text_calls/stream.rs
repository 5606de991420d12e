//! Recognising text tool calls while a response streams: text is passed on as it comes
//! until it may be the start of a call, held from there, and at the end either shown as the
//! calls it was or released as the text it was.

use std::collections::VecDeque;

use futures::StreamExt;
use serde_json::Value;

use super::parse::{find_text_calls, is_fence, marker_at_line_start, may_become_marker};
use crate::{EventStream, StopReason, StreamEvent};

/// `inner` with tool calls written as text turned into tool-call events, when the response
/// carries no native call.
pub(crate) fn recognise_text_calls(inner: EventStream) -> EventStream {
    let state = (Some(inner), Recogniser::default(), VecDeque::new());
    Box::pin(futures::stream::unfold(
        state,
        |(mut inner, mut recogniser, mut queue)| async move {
            loop {
                if let Some(event) = queue.pop_front() {
                    return Some((Ok(event), (inner, recogniser, queue)));
                }
                let stream = inner.as_mut()?;
                match stream.next().await {
                    None => {
                        inner = None;
                        recogniser.release(&mut queue);
                    }
                    Some(Err(error)) => {
                        inner = None;
                        return Some((Err(error), (inner, recogniser, queue)));
                    }
                    Some(Ok(event)) => recogniser.push(event, &mut queue),
                }
            }
        },
    ))
}

/// What the text held back may be.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
enum Hold {
    /// Nothing in particular: text flows, a line that may become a marker waits.
    #[default]
    Free,
    /// The answer so far may be one call object and nothing else.
    WholeAnswer,
    /// A marker was written: everything from it on waits for the end.
    Markup,
}

/// The state of one response being watched.
#[derive(Debug, Default)]
pub(crate) struct Recogniser {
    /// The attempt's text so far.
    text: String,
    /// How much of it was passed on.
    emitted: usize,
    /// Where the line being written starts.
    line_start: usize,
    /// Whether that line is inside a code block.
    in_code: bool,
    hold: Hold,
    /// The response carries native calls: nothing to recognise.
    native: bool,
}

impl Recogniser {
    /// Takes one event of the inner stream, queueing what is to be passed on.
    pub(crate) fn push(&mut self, event: StreamEvent, out: &mut VecDeque<StreamEvent>) {
        match event {
            StreamEvent::TextDelta { text } if !self.native => {
                let closes = text.contains(['}', ']', '`', '\n']);
                self.text.push_str(&text);
                self.advance(closes, out);
            }
            StreamEvent::ToolCallDelta { .. } | StreamEvent::ToolCallEnd { .. } => {
                if !self.native {
                    self.native = true;
                    self.release(out);
                }
                out.push_back(event);
            }
            StreamEvent::Finish { stop_reason } if !self.native => {
                self.finish(stop_reason, out);
            }
            StreamEvent::Retry { .. } => {
                // What was streamed is discarded downstream; so is what was held.
                *self = Recogniser::default();
                out.push_back(event);
            }
            other => out.push_back(other),
        }
    }

    /// Passes on the text held back, as text.
    pub(crate) fn release(&mut self, out: &mut VecDeque<StreamEvent>) {
        let end = self.text.len();
        self.emit_to(end, out);
    }

    fn emit_to(&mut self, end: usize, out: &mut VecDeque<StreamEvent>) {
        if end > self.emitted {
            out.push_back(StreamEvent::TextDelta {
                text: self.text[self.emitted..end].to_owned(),
            });
            self.emitted = end;
        }
    }

    /// Passes on what can no longer be part of a call.
    fn advance(&mut self, closes: bool, out: &mut VecDeque<StreamEvent>) {
        if self.hold == Hold::Free && self.text[..self.emitted].trim().is_empty() {
            let start = self.text.trim_start();
            if start.is_empty() {
                return;
            }
            if start.starts_with(['{', '[', '`']) && marker_at_line_start(start).is_none() {
                self.hold = Hold::WholeAnswer;
            }
        }
        if self.hold == Hold::WholeAnswer {
            if !closes || whole_answer_pending(&self.text) {
                return;
            }
            self.hold = Hold::Free;
        }
        if self.hold == Hold::Markup {
            return;
        }
        // Whole lines: a marker at the start of one outside code holds everything from it.
        while let Some(newline) = self.text[self.line_start..].find('\n') {
            let end = self.line_start + newline + 1;
            if self.hold_markup_at(end, out) {
                return;
            }
            if is_fence(&self.text[self.line_start..end]) {
                self.in_code = !self.in_code;
            }
            self.line_start = end;
        }
        if self.hold_markup_at(self.text.len(), out) {
            return;
        }
        let partial = &self.text[self.line_start..];
        if !self.in_code && self.emitted <= self.line_start && may_become_marker(partial) {
            let end = self.line_start;
            self.emit_to(end, out);
        } else {
            self.release(out);
        }
    }

    /// When the line from `line_start` to `end` starts with a marker outside code: passes on
    /// the text before it and holds the rest.
    fn hold_markup_at(&mut self, end: usize, out: &mut VecDeque<StreamEvent>) -> bool {
        let line = &self.text[self.line_start..end];
        if self.in_code || marker_at_line_start(line).is_none() {
            return false;
        }
        let at = self.line_start + (line.len() - line.trim_start().len());
        if self.emitted > at {
            return false;
        }
        self.emit_to(at, out);
        self.hold = Hold::Markup;
        true
    }

    /// The end of the response: the calls the held text makes, or the text it is.
    fn finish(&mut self, stop_reason: StopReason, out: &mut VecDeque<StreamEvent>) {
        let found = find_text_calls(&self.text).filter(|found| {
            // Markup already shown as text stays text.
            let shown = &self.text[found.narration_end.min(self.emitted)..self.emitted];
            shown.trim().is_empty()
        });
        let Some(found) = found else {
            self.release(out);
            out.push_back(StreamEvent::Finish { stop_reason });
            return;
        };
        let narration = self.text[self.emitted..found.narration_end.max(self.emitted)]
            .trim_end()
            .to_owned();
        if !narration.is_empty() {
            out.push_back(StreamEvent::TextDelta { text: narration });
        }
        self.emitted = self.text.len();
        for (index, call) in found.calls.into_iter().enumerate() {
            out.push_back(StreamEvent::ToolCallDelta {
                index,
                id: None,
                name: Some(call.name),
                arguments_fragment: call.arguments,
            });
            out.push_back(StreamEvent::ToolCallEnd { index });
        }
        out.push_back(StreamEvent::Finish {
            stop_reason: StopReason::ToolUse,
        });
    }
}

/// Whether `text`, the whole answer so far, may still turn out to be one call object and
/// nothing else.
fn whole_answer_pending(text: &str) -> bool {
    let text = text.trim_start();
    if let Some(after) = text.strip_prefix("```") {
        let Some((info, body)) = after.split_once('\n') else {
            let info = after.trim().to_ascii_lowercase();
            return ["json", "tool_call", "tool_code"]
                .iter()
                .any(|known| known.starts_with(&info));
        };
        let info = info.trim().to_ascii_lowercase();
        if !matches!(info.as_str(), "" | "json" | "tool_call" | "tool_code") {
            return false;
        }
        return match body.find("```") {
            // Closed: anything after the block makes it part of an explanation.
            Some(close) => body[close + 3..].trim().is_empty(),
            None => true,
        };
    }
    if text.len() < 3 && "```".starts_with(text) {
        return true;
    }
    if !text.starts_with(['{', '[']) {
        return false;
    }
    let mut values = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    match values.next() {
        Some(Ok(value)) => {
            text[values.byte_offset()..].trim().is_empty() && looks_like_calls(&value)
        }
        Some(Err(error)) => error.is_eof(),
        None => true,
    }
}

/// Whether a complete JSON value has the shape of one call or a list of calls.
fn looks_like_calls(value: &Value) -> bool {
    let one = |v: &Value| {
        v.get("name").is_some_and(Value::is_string)
            && (v.get("arguments").is_some() || v.get("parameters").is_some())
            || v.get("function").is_some()
    };
    match value {
        Value::Array(items) => !items.is_empty() && items.iter().all(one),
        other => one(other),
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
