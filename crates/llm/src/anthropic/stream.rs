//! Decoding Anthropic Messages responses: SSE events, or one non-streaming reply.

use std::borrow::Cow;

use serde::Deserialize;

use crate::classify::classify_in_stream;
use crate::emit::Emit;
use crate::serde_util::count;
use crate::sse::SseEvent;
use crate::{LlmError, StopReason, StreamEvent, Usage};

/// The state of one Anthropic response being decoded.
#[derive(Debug, Default)]
pub(crate) struct AnthropicStream {
    usage: WireUsage,
    saw_usage: bool,
    /// Indexes of the open `tool_use` blocks.
    tool_blocks: Vec<usize>,
    stop_reason: Option<StopReason>,
    started: bool,
    done: bool,
}

#[derive(Deserialize)]
struct TypeOnly<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
}

#[derive(Deserialize)]
struct MessageStart {
    message: MessageHead,
}

#[derive(Deserialize)]
struct MessageHead {
    #[serde(default)]
    usage: WireUsage,
}

/// Anthropic's usage: `input_tokens` excludes the cache reads and writes, which rein counts
/// as prompt tokens too.
#[derive(Debug, Deserialize, Default, Clone, Copy)]
struct WireUsage {
    #[serde(default, deserialize_with = "count")]
    input_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    output_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    cache_read_input_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    cache_creation_input_tokens: u64,
}

#[derive(Deserialize)]
struct BlockStart<'a> {
    index: usize,
    #[serde(borrow)]
    content_block: ContentBlock<'a>,
}

#[derive(Deserialize)]
struct ContentBlock<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
    /// A `redacted_thinking` block's encrypted content.
    #[serde(borrow, default)]
    data: Option<Cow<'a, str>>,
    #[serde(default)]
    input: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct BlockDelta<'a> {
    index: usize,
    #[serde(borrow)]
    delta: Delta<'a>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    partial_json: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct BlockStop {
    index: usize,
}

#[derive(Deserialize)]
struct MessageDelta<'a> {
    #[serde(borrow, default)]
    delta: Option<StopDelta<'a>>,
    #[serde(default)]
    usage: Option<PartialUsage>,
}

#[derive(Deserialize)]
struct StopDelta<'a> {
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
}

/// `message_delta` usage: only the fields present replace what `message_start` said.
#[derive(Deserialize)]
struct PartialUsage {
    #[serde(default)]
    input_tokens: Option<u64>,
    #[serde(default)]
    output_tokens: Option<u64>,
    #[serde(default)]
    cache_read_input_tokens: Option<u64>,
    #[serde(default)]
    cache_creation_input_tokens: Option<u64>,
}

/// A whole non-streaming reply.
#[derive(Deserialize)]
struct WholeReply<'a> {
    #[serde(borrow, default)]
    content: Vec<ContentBlock<'a>>,
    #[serde(borrow, default)]
    stop_reason: Option<Cow<'a, str>>,
    #[serde(default)]
    usage: WireUsage,
}

fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "end_turn" | "stop_sequence" => StopReason::EndTurn,
        "tool_use" => StopReason::ToolUse,
        "max_tokens" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_owned()),
    }
}

fn protocol(what: &str, e: serde_json::Error) -> LlmError {
    LlmError::Protocol(format!("a malformed {what} event: {e}"))
}

fn to_usage(u: WireUsage) -> Usage {
    Usage {
        prompt_tokens: u.input_tokens + u.cache_read_input_tokens + u.cache_creation_input_tokens,
        completion_tokens: u.output_tokens,
        cached_prompt_tokens: u.cache_read_input_tokens,
        cache_creation_tokens: u.cache_creation_input_tokens,
        cost_usd: None,
    }
}

impl AnthropicStream {
    pub(crate) fn is_complete(&self) -> bool {
        self.done
    }

    pub(crate) fn event(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Emit<'_>,
    ) -> Result<(), LlmError> {
        let data = event.data;
        // The `event:` line names the type; the JSON's own `type` is the fallback for servers
        // that leave the line out.
        let named = match event.event {
            b"" | b"message" => None,
            name => std::str::from_utf8(name).ok(),
        };
        let peeked;
        let kind = match named {
            Some(kind) => kind,
            None => {
                peeked = serde_json::from_slice::<TypeOnly<'_>>(data)
                    .map_err(|e| protocol("untyped", e))?;
                &*peeked.kind
            }
        };
        match kind {
            "message_start" => {
                let start: MessageStart =
                    serde_json::from_slice(data).map_err(|e| protocol(kind, e))?;
                self.started = true;
                self.usage = start.message.usage;
            }
            "content_block_start" => {
                let start: BlockStart<'_> =
                    serde_json::from_slice(data).map_err(|e| protocol(kind, e))?;
                self.block_start(start.index, &start.content_block, out);
            }
            "content_block_delta" => {
                let delta: BlockDelta<'_> =
                    serde_json::from_slice(data).map_err(|e| protocol(kind, e))?;
                self.block_delta(delta.index, &delta.delta, out);
            }
            "content_block_stop" => {
                let stop: BlockStop =
                    serde_json::from_slice(data).map_err(|e| protocol(kind, e))?;
                if let Some(pos) = self.tool_blocks.iter().position(|i| *i == stop.index) {
                    self.tool_blocks.remove(pos);
                    out.push(StreamEvent::ToolCallEnd { index: stop.index });
                }
            }
            "message_delta" => {
                let delta: MessageDelta<'_> =
                    serde_json::from_slice(data).map_err(|e| protocol(kind, e))?;
                if let Some(reason) = delta.delta.and_then(|d| d.stop_reason) {
                    self.stop_reason = Some(stop_reason(&reason));
                }
                if let Some(u) = delta.usage {
                    self.merge_usage(&u);
                    self.saw_usage = true;
                    out.push(StreamEvent::Usage(to_usage(self.usage)));
                }
            }
            "message_stop" => self.done = true,
            "error" => {
                let value: serde_json::Value =
                    serde_json::from_slice(data).map_err(|e| protocol(kind, e))?;
                return Err(classify_in_stream(&value));
            }
            // `ping`, and event types newer than this code, which the API promises may appear.
            _ => {}
        }
        Ok(())
    }

    fn merge_usage(&mut self, u: &PartialUsage) {
        let t = &mut self.usage;
        t.input_tokens = u.input_tokens.unwrap_or(t.input_tokens);
        t.output_tokens = u.output_tokens.unwrap_or(t.output_tokens);
        t.cache_read_input_tokens = u
            .cache_read_input_tokens
            .unwrap_or(t.cache_read_input_tokens);
        t.cache_creation_input_tokens = u
            .cache_creation_input_tokens
            .unwrap_or(t.cache_creation_input_tokens);
    }

    fn block_start(&mut self, index: usize, block: &ContentBlock<'_>, out: &mut Emit<'_>) {
        match &*block.kind {
            "text" => out.text(block.text.as_deref().unwrap_or_default()),
            "thinking" => out.thinking(block.thinking.as_deref(), block.signature.as_deref()),
            "tool_use" => {
                self.tool_blocks.push(index);
                // A streamed start carries `input: {}` and the arguments follow as
                // `input_json_delta`; a whole reply carries them here. Input that is not an
                // object goes through as text, to be parsed (and flagged when invalid) like
                // streamed arguments, rather than silently becoming `{}`.
                let initial = match &block.input {
                    None | Some(serde_json::Value::Null) => String::new(),
                    Some(serde_json::Value::Object(map)) if map.is_empty() => String::new(),
                    Some(serde_json::Value::String(raw)) => raw.clone(),
                    Some(value) => value.to_string(),
                };
                out.tool_fragment(
                    index,
                    Some(block.id.as_deref().unwrap_or_default()),
                    Some(block.name.as_deref().unwrap_or_default()),
                    &initial,
                );
            }
            "redacted_thinking" => out.redacted(block.data.as_deref()),
            // Server tools and block types newer than this code.
            _ => {}
        }
    }

    fn block_delta(&mut self, index: usize, delta: &Delta<'_>, out: &mut Emit<'_>) {
        match &*delta.kind {
            "text_delta" => out.text(delta.text.as_deref().unwrap_or_default()),
            "input_json_delta" => {
                out.tool_fragment(
                    index,
                    None,
                    None,
                    delta.partial_json.as_deref().unwrap_or_default(),
                );
            }
            "thinking_delta" => out.reasoning(delta.thinking.as_deref().unwrap_or_default()),
            "signature_delta" => out.push(StreamEvent::ReasoningSignature {
                signature: delta.signature.as_deref().unwrap_or_default().to_owned(),
            }),
            _ => {}
        }
    }

    pub(crate) fn finish(&mut self, out: &mut Emit<'_>) -> Result<(), LlmError> {
        if !self.done {
            return Err(LlmError::Connection(
                "the stream ended before the response was complete".into(),
            ));
        }
        for index in std::mem::take(&mut self.tool_blocks) {
            out.push(StreamEvent::ToolCallEnd { index });
        }
        if !self.saw_usage && self.started {
            out.push(StreamEvent::Usage(to_usage(self.usage)));
        }
        let stop_reason = self.stop_reason.take().unwrap_or(StopReason::EndTurn);
        out.push(StreamEvent::Finish { stop_reason });
        Ok(())
    }

    /// Decodes a non-streaming reply (or an error object sent with a 200).
    pub(crate) fn whole_reply(&mut self, body: &[u8], out: &mut Emit<'_>) -> Result<(), LlmError> {
        let kind = serde_json::from_slice::<TypeOnly<'_>>(body)
            .map_err(|e| LlmError::Protocol(format!("the reply is not a message: {e}")))?;
        if kind.kind == "error" {
            let value: serde_json::Value = serde_json::from_slice(body).unwrap_or_default();
            return Err(classify_in_stream(&value));
        }
        let reply: WholeReply<'_> = serde_json::from_slice(body)
            .map_err(|e| LlmError::Protocol(format!("the reply is not a message: {e}")))?;
        for (index, block) in reply.content.iter().enumerate() {
            self.block_start(index, block, out);
            if block.kind == "tool_use" {
                self.tool_blocks.retain(|i| *i != index);
                out.push(StreamEvent::ToolCallEnd { index });
            }
        }
        self.usage = reply.usage;
        self.saw_usage = false;
        self.started = true;
        self.stop_reason = reply.stop_reason.as_deref().map(stop_reason);
        self.done = true;
        self.finish(out)
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
