//! One scripted model answer ([`Turn`]) and the pieces it is built from.
//!
//! A turn is format-neutral: the server renders it as OpenAI chunks or Anthropic events
//! depending on the path of the request it answers. Content is always streamed in the order
//! reasoning, text, tool calls.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::{MockToolCall, MockUsage, duration_ms};

/// The Anthropic thinking signature sent when a turn has reasoning and sets none.
pub const DEFAULT_THINKING_SIGNATURE: &str = "mock-thinking-signature";

/// A scripted model answer: reasoning, text, tool calls, usage, and how the stream misbehaves.
///
/// The events of a streamed turn, which `cut_after`, `stall_after` and `error_after` count:
/// - OpenAI: one role chunk (`delta.role = "assistant"`), one chunk per reasoning piece, per text
///   piece and per tool-call fragment, the finish chunk (`finish_reason`), the usage chunk (when
///   the request asked for it, see [`UsageChunk`]), then the terminator `data: [DONE]`.
/// - Anthropic: `message_start`, `ping` (when [`Turn::ping`] is set), then per block a
///   `content_block_start`, its deltas (a thinking block ends with one `signature_delta`; a
///   tool-use block starts with an empty `input_json_delta` like the real API) and a
///   `content_block_stop`; then `message_delta` and the terminator `message_stop`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Turn {
    reasoning: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    signature: Option<String>,
    redacted_thinking: Vec<String>,
    thinking_blocks: bool,
    text: Vec<String>,
    tool_calls: Vec<MockToolCall>,
    first_index: usize,
    shared_index: bool,
    usage: MockUsage,
    #[serde(skip_serializing_if = "Option::is_none")]
    stop_reason: Option<MockStopReason>,
    usage_chunk: UsageChunk,
    ping: bool,
    #[serde(rename = "chunk_delay_ms", with = "duration_ms")]
    chunk_delay: Duration,
    #[serde(rename = "response_delay_ms", with = "duration_ms")]
    response_delay: Duration,
    #[serde(skip_serializing_if = "Option::is_none")]
    interrupt: Option<Interruption>,
    malformed: Vec<MalformedLine>,
    non_streaming: bool,
    headers: Vec<(String, String)>,
}

impl Turn {
    /// An empty turn: no text, no tool calls, zero usage.
    pub fn new() -> Self {
        Self::default()
    }

    /// A turn answering `text`, streamed as one piece (see [`Turn::chunks`]).
    pub fn text(text: impl Into<String>) -> Self {
        Self::new().with_text(text)
    }

    /// Sets the answer's text, streamed as one piece.
    pub fn with_text(mut self, text: impl Into<String>) -> Self {
        self.text = non_empty_piece(text.into());
        self
    }

    /// Streams the text as exactly these pieces (replacing any text set before).
    pub fn chunks<I, S>(mut self, pieces: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.text = pieces.into_iter().map(Into::into).collect();
        self
    }

    /// Adds reasoning, streamed as one piece before the text.
    pub fn reasoning(mut self, text: impl Into<String>) -> Self {
        self.reasoning = non_empty_piece(text.into());
        self
    }

    /// Streams the reasoning as exactly these pieces.
    pub fn reasoning_chunks<I, S>(mut self, pieces: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.reasoning = pieces.into_iter().map(Into::into).collect();
        self
    }

    /// The Anthropic thinking block's signature (default [`DEFAULT_THINKING_SIGNATURE`]).
    pub fn signature(mut self, signature: impl Into<String>) -> Self {
        self.signature = Some(signature.into());
        self
    }

    /// Adds an Anthropic `redacted_thinking` block holding `data`, after the thinking block.
    ///
    /// OpenAI rendering sends it only with [`Turn::thinking_blocks`].
    pub fn redacted_thinking(mut self, data: impl Into<String>) -> Self {
        self.redacted_thinking.push(data.into());
        self
    }

    /// Renders reasoning on the OpenAI route as LiteLLM relays Claude's thinking: each piece in
    /// `reasoning_content` and in `thinking_blocks`, then the signature, and any redacted
    /// block, in `thinking_blocks` alone.
    pub fn thinking_blocks(mut self) -> Self {
        self.thinking_blocks = true;
        self
    }

    /// Adds a tool call after the text and any calls added before.
    pub fn tool_call(mut self, call: MockToolCall) -> Self {
        self.tool_calls.push(call);
        self
    }

    /// The OpenAI `index` of the first tool call (some compatible servers do not start at 0).
    ///
    /// Anthropic content-block indices always count from 0, as the real API does.
    pub fn first_index(mut self, index: usize) -> Self {
        self.first_index = index;
        self
    }

    /// Streams every tool call whole, in one chunk, at the same OpenAI `index` (the first
    /// one), told apart only by its id, as Ollama does.
    pub fn calls_share_index(mut self) -> Self {
        self.shared_index = true;
        self
    }

    /// The token counts reported for this turn.
    pub fn usage(mut self, usage: MockUsage) -> Self {
        self.usage = usage;
        self
    }

    /// Overrides the stop reason (default: tool use when there are tool calls, else end of turn).
    pub fn stop_reason(mut self, reason: MockStopReason) -> Self {
        self.stop_reason = Some(reason);
        self
    }

    /// Where an OpenAI stream reports usage (default: a separate chunk when the request asked).
    pub fn usage_chunk(mut self, placement: UsageChunk) -> Self {
        self.usage_chunk = placement;
        self
    }

    /// Sends an Anthropic `ping` event right after `message_start`, as the real API does.
    pub fn ping(mut self) -> Self {
        self.ping = true;
        self
    }

    /// Waits this long before every event after the first.
    pub fn chunk_delay(mut self, delay: Duration) -> Self {
        self.chunk_delay = delay;
        self
    }

    /// Waits this long before sending the response headers (time to first byte).
    pub fn response_delay(mut self, delay: Duration) -> Self {
        self.response_delay = delay;
        self
    }

    /// Closes the connection after `events` events, never sending the terminator.
    ///
    /// The HTTP chunked body is left unfinished, as when a connection drops. A count at or past
    /// the last event cuts just before the terminator. A non-streamed answer is cut after
    /// `events` bytes of its body.
    pub fn cut_after(mut self, events: usize) -> Self {
        self.interrupt = Some(Interruption::CutAfter(events));
        self
    }

    /// Stops sending after `events` events but keeps the connection open until the client
    /// closes it or the server stops. A non-streamed answer stalls after `events` bytes of body.
    pub fn stall_after(mut self, events: usize) -> Self {
        self.interrupt = Some(Interruption::StallAfter(events));
        self
    }

    /// After `events` events, sends an `overloaded_error` error event and ends the response.
    ///
    /// Anthropic: `event: error` with `{"type":"error","error":{...}}`; OpenAI: a
    /// `data: {"error":{...}}` line, as OpenRouter-style servers send. A non-streamed answer
    /// becomes an HTTP error with that body (529 for `overloaded_error`).
    pub fn error_after(self, events: usize) -> Self {
        self.stream_error_after(events, StreamError::overloaded())
    }

    /// Like [`Turn::error_after`] with an error of your choosing.
    pub fn stream_error_after(mut self, events: usize, error: StreamError) -> Self {
        self.interrupt = Some(Interruption::ErrorAfter { events, error });
        self
    }

    /// Injects `line` (followed by a blank line) before the first event.
    pub fn malformed_line(self, line: impl Into<String>) -> Self {
        self.malformed_line_at(0, line)
    }

    /// Injects `line` (followed by a blank line) before event number `before_event` (from 0);
    /// an index past the last event puts it after the terminator.
    pub fn malformed_line_at(mut self, before_event: usize, line: impl Into<String>) -> Self {
        self.malformed.push(MalformedLine {
            before_event,
            line: line.into(),
        });
        self
    }

    /// Answers with one JSON body even when the request asked for a stream.
    pub fn non_streaming(mut self) -> Self {
        self.non_streaming = true;
        self
    }

    /// Adds a response header (sent as given; the name should be lowercase).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    pub(crate) fn reasoning_pieces(&self) -> &[String] {
        &self.reasoning
    }

    pub(crate) fn signature_or_default(&self) -> &str {
        self.signature
            .as_deref()
            .unwrap_or(DEFAULT_THINKING_SIGNATURE)
    }

    pub(crate) fn redacted_blocks(&self) -> &[String] {
        &self.redacted_thinking
    }

    pub(crate) fn uses_thinking_blocks(&self) -> bool {
        self.thinking_blocks
    }

    pub(crate) fn text_pieces(&self) -> &[String] {
        &self.text
    }

    pub(crate) fn calls(&self) -> &[MockToolCall] {
        &self.tool_calls
    }

    pub(crate) fn first_tool_index(&self) -> usize {
        self.first_index
    }

    pub(crate) fn calls_share_one_index(&self) -> bool {
        self.shared_index
    }

    pub(crate) fn token_usage(&self) -> &MockUsage {
        &self.usage
    }

    pub(crate) fn usage_placement(&self) -> UsageChunk {
        self.usage_chunk
    }

    pub(crate) fn sends_ping(&self) -> bool {
        self.ping
    }

    pub(crate) fn effective_stop_reason(&self) -> MockStopReason {
        match &self.stop_reason {
            Some(reason) => reason.clone(),
            None if self.tool_calls.is_empty() => MockStopReason::EndTurn,
            None => MockStopReason::ToolUse,
        }
    }

    pub(crate) fn delay_between_chunks(&self) -> Duration {
        self.chunk_delay
    }

    pub(crate) fn delay_before_response(&self) -> Duration {
        self.response_delay
    }

    pub(crate) fn interruption(&self) -> Option<&Interruption> {
        self.interrupt.as_ref()
    }

    pub(crate) fn malformed_lines(&self) -> &[MalformedLine] {
        &self.malformed
    }

    pub(crate) fn forces_json(&self) -> bool {
        self.non_streaming
    }

    pub(crate) fn extra_headers(&self) -> &[(String, String)] {
        &self.headers
    }

    pub(crate) fn add_delay(&mut self, delay: Duration) {
        self.response_delay += delay;
    }

    pub(crate) fn push_header(&mut self, name: String, value: String) {
        self.headers.push((name, value));
    }

    /// All the text, joined.
    pub(crate) fn full_text(&self) -> String {
        self.text.concat()
    }

    /// All the reasoning, joined.
    pub(crate) fn full_reasoning(&self) -> String {
        self.reasoning.concat()
    }
}

/// One piece holding `text`, or none when it is empty (so `Turn::text("")` has no text block).
fn non_empty_piece(text: String) -> Vec<String> {
    if text.is_empty() {
        Vec::new()
    } else {
        vec![text]
    }
}

/// Why the scripted model stopped.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MockStopReason {
    /// OpenAI `stop`, Anthropic `end_turn`.
    EndTurn,
    /// OpenAI `tool_calls`, Anthropic `tool_use`.
    ToolUse,
    /// OpenAI `length`, Anthropic `max_tokens`.
    MaxTokens,
    /// Sent verbatim in both formats.
    Other(String),
}

/// Where an OpenAI stream reports token usage.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageChunk {
    /// A chunk with empty `choices` before `[DONE]`, only when the request set
    /// `stream_options.include_usage` (what OpenAI does).
    #[default]
    IfRequested,
    /// That chunk whether or not the request asked.
    Always,
    /// Never, even when asked (some compatible servers ignore the option).
    Never,
    /// In the finish chunk itself, whether or not asked (some compatible servers do this).
    InFinishChunk,
}

/// How a streamed turn stops early.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Interruption {
    /// Close the connection after this many events.
    CutAfter(usize),
    /// Stop sending after this many events, keeping the connection open.
    StallAfter(usize),
    /// Send an error event after this many events and end the response.
    ErrorAfter {
        /// Events sent before the error.
        events: usize,
        /// The error sent.
        error: StreamError,
    },
}

/// An error event sent in the middle of a stream.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StreamError {
    /// The error's type, e.g. `overloaded_error` or `api_error`.
    pub error_type: String,
    /// The error's message.
    pub message: String,
}

impl StreamError {
    /// Anthropic's `overloaded_error` ("Overloaded").
    pub fn overloaded() -> Self {
        Self::new("overloaded_error", "Overloaded")
    }

    /// An error of type `error_type` saying `message`.
    pub fn new(error_type: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            error_type: error_type.into(),
            message: message.into(),
        }
    }

    /// The HTTP status a non-streamed answer with this error gets.
    pub(crate) fn http_status(&self) -> u16 {
        match self.error_type.as_str() {
            "overloaded_error" => 529,
            "rate_limit_error" => 429,
            "invalid_request_error" => 400,
            "authentication_error" => 401,
            _ => 500,
        }
    }
}

/// A line injected into the stream on purpose, to test a client's tolerance.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MalformedLine {
    /// The index of the event it comes before (from 0).
    pub before_event: usize,
    /// The line, written as given and followed by a blank line.
    pub line: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_reason_follows_the_content_unless_set() {
        assert_eq!(
            Turn::text("x").effective_stop_reason(),
            MockStopReason::EndTurn
        );
        let tool = Turn::new().tool_call(MockToolCall::new("c", "t", "{}"));
        assert_eq!(tool.effective_stop_reason(), MockStopReason::ToolUse);
        let capped = Turn::text("x").stop_reason(MockStopReason::MaxTokens);
        assert_eq!(capped.effective_stop_reason(), MockStopReason::MaxTokens);
    }
}
