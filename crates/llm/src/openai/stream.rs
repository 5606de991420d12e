//! Decoding OpenAI Chat Completions responses: SSE chunks, or one non-streaming reply.

use std::borrow::Cow;

use serde::Deserialize;

use crate::classify::classify_in_stream;
use crate::emit::Emit;
use crate::serde_util::{InlineVec, TextOrJson, cost, count};
use crate::sse::SseEvent;
use crate::{LlmError, StopReason, StreamEvent, Usage};

/// The state of one OpenAI response being decoded.
#[derive(Debug, Default)]
pub(crate) struct OpenAiStream {
    /// The call currently receiving argument fragments.
    open_call: Option<usize>,
    /// The id of the open call, to tell calls apart on servers that omit `index`.
    open_call_id: Option<String>,
    /// One past the highest call index seen.
    next_index: usize,
    saw_tool_call: bool,
    stop_reason: Option<StopReason>,
    done: bool,
}

#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(borrow, default)]
    choices: InlineVec<Choice<'a>>,
    #[serde(default)]
    usage: Option<WireUsage>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default)]
    index: u32,
    // A non-streaming reply carries the same fields under `message`.
    #[serde(borrow, default, alias = "message")]
    delta: Option<Delta<'a>>,
    #[serde(borrow, default)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(borrow, default)]
    content: Option<Cow<'a, str>>,
    // DeepSeek, Qwen, Kimi and vLLM say `reasoning_content`; OpenRouter and newer vLLM say
    // `reasoning`. Two fields rather than an alias, since some servers send both.
    #[serde(borrow, default)]
    reasoning_content: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    reasoning: Option<Cow<'a, str>>,
    // LiteLLM relays Claude's thinking as blocks beside `reasoning_content`, with the
    // signatures (and redacted blocks) that must go back with the next request.
    #[serde(borrow, default)]
    thinking_blocks: Option<Vec<ThinkingBlock<'a>>>,
    // A `Vec` rather than an `InlineVec`: kept small, `Delta` is cheap to move through
    // serde's layers, and only chunks that carry calls pay an allocation.
    #[serde(borrow, default)]
    tool_calls: Option<Vec<ToolCallDelta<'a>>>,
}

/// A thinking block as LiteLLM streams it: a piece of text or a signature, or a whole
/// redacted block.
#[derive(Deserialize)]
struct ThinkingBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    thinking: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    signature: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    data: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct ToolCallDelta<'a> {
    #[serde(default)]
    index: Option<usize>,
    #[serde(borrow, default)]
    id: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    function: Option<FunctionDelta<'a>>,
}

#[derive(Deserialize)]
struct FunctionDelta<'a> {
    #[serde(borrow, default)]
    name: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    arguments: Option<TextOrJson<'a>>,
}

/// OpenAI's usage object, with the cache fields of DeepSeek and Kimi as well.
#[derive(Deserialize, Default)]
pub(crate) struct WireUsage {
    #[serde(default, deserialize_with = "count")]
    prompt_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    completion_tokens: u64,
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
    #[serde(default, deserialize_with = "count")]
    prompt_cache_hit_tokens: u64,
    #[serde(default, deserialize_with = "count")]
    cached_tokens: u64,
    /// The price of the call in USD, from gateways (LiteLLM, OpenRouter).
    #[serde(default, deserialize_with = "cost")]
    cost: Option<f64>,
}

#[derive(Deserialize, Default)]
struct PromptDetails {
    #[serde(default, deserialize_with = "count")]
    cached_tokens: u64,
}

impl WireUsage {
    pub(crate) fn to_usage(&self) -> Usage {
        let details = self
            .prompt_tokens_details
            .as_ref()
            .map_or(0, |d| d.cached_tokens);
        Usage {
            prompt_tokens: self.prompt_tokens,
            completion_tokens: self.completion_tokens,
            cached_prompt_tokens: details
                .max(self.prompt_cache_hit_tokens)
                .max(self.cached_tokens),
            cache_creation_tokens: 0,
            cost_usd: self.cost,
        }
    }
}

/// Reads LiteLLM's `thinking_blocks`: text, then the signature that closes a block; redacted
/// blocks whole.
fn thinking_blocks(blocks: &[ThinkingBlock<'_>], out: &mut Emit<'_>) {
    for block in blocks {
        if block.kind.as_deref() == Some("redacted_thinking") {
            out.redacted(block.data.as_deref());
        } else {
            out.thinking(block.thinking.as_deref(), block.signature.as_deref());
        }
    }
}

/// Maps OpenAI's `finish_reason`.
fn stop_reason(reason: &str) -> StopReason {
    match reason {
        "stop" => StopReason::EndTurn,
        "tool_calls" | "function_call" => StopReason::ToolUse,
        "length" => StopReason::MaxTokens,
        other => StopReason::Other(other.to_owned()),
    }
}

impl OpenAiStream {
    pub(crate) fn is_complete(&self) -> bool {
        self.done
    }

    pub(crate) fn event(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Emit<'_>,
    ) -> Result<(), LlmError> {
        let data = event.data.trim_ascii();
        if data == b"[DONE]" {
            self.done = true;
            return Ok(());
        }
        if data.is_empty() {
            return Ok(());
        }
        let chunk: Chunk<'_> = serde_json::from_slice(data).map_err(|e| {
            LlmError::Protocol(format!(
                "a stream chunk is not valid JSON ({e}): {}",
                String::from_utf8_lossy(&data[..data.len().min(200)])
            ))
        })?;
        if event.event == b"error" && chunk.error.is_none() {
            let value: serde_json::Value = serde_json::from_slice(data).unwrap_or_default();
            return Err(classify_in_stream(&value));
        }
        self.chunk(chunk, out)
    }

    /// Decodes a non-streaming reply: the same shape as one chunk, with `message` for `delta`.
    pub(crate) fn whole_reply(&mut self, body: &[u8], out: &mut Emit<'_>) -> Result<(), LlmError> {
        let chunk: Chunk<'_> = serde_json::from_slice(body)
            .map_err(|e| LlmError::Protocol(format!("the reply is not valid JSON: {e}")))?;
        if chunk.error.is_none() && chunk.choices.first().is_none() {
            return Err(LlmError::Protocol("the reply has no choices".into()));
        }
        self.chunk(chunk, out)?;
        self.done = true;
        self.finish(out)
    }

    fn chunk(&mut self, chunk: Chunk<'_>, out: &mut Emit<'_>) -> Result<(), LlmError> {
        if let Some(error) = &chunk.error {
            return Err(classify_in_stream(error));
        }
        if let Some(choice) = chunk.choices.iter().find(|c| c.index == 0) {
            if let Some(delta) = &choice.delta {
                match delta.thinking_blocks.as_deref() {
                    // The blocks carry the same text as `reasoning_content`, plus where each
                    // block ends: they are read instead of it.
                    Some(blocks) if !blocks.is_empty() => thinking_blocks(blocks, out),
                    _ => {
                        if let Some(r) = delta
                            .reasoning_content
                            .as_deref()
                            .or(delta.reasoning.as_deref())
                        {
                            out.reasoning(r);
                        }
                    }
                }
                if let Some(text) = &delta.content {
                    out.text(text);
                }
                for call in delta.tool_calls.iter().flatten() {
                    self.tool_call(call, out);
                }
            }
            if let Some(reason) = &choice.finish_reason {
                self.stop_reason = Some(stop_reason(reason));
                self.end_open_call(out);
            }
        }
        // Usage comes in whichever chunk carries it: the last one with `include_usage`, the
        // finishing one on some servers, every one on others (the last wins downstream).
        if let Some(usage) = &chunk.usage {
            out.push(StreamEvent::Usage(usage.to_usage()));
        }
        Ok(())
    }

    fn tool_call(&mut self, call: &ToolCallDelta<'_>, out: &mut Emit<'_>) {
        let id = call.id.as_deref().filter(|id| !id.is_empty());
        let index = match call.index {
            Some(i) => i,
            // Without an index, a new id means a new call; anything else continues the open one.
            None => match (id, self.open_call) {
                (Some(id), Some(open)) if self.open_call_id.as_deref() == Some(id) => open,
                (None, Some(open)) => open,
                _ => self.next_index,
            },
        };
        // A different id at the open index is another call too: some servers (Ollama) send
        // whole calls that all say `index: 0`.
        let another_id =
            matches!((self.open_call_id.as_deref(), id), (Some(open), Some(id)) if open != id);
        if self.open_call != Some(index) || another_id {
            // Calls stream one after another, so a new call completes the previous one.
            self.end_open_call(out);
            self.open_call = Some(index);
            self.open_call_id = id.map(str::to_owned);
        } else if self.open_call_id.is_none() {
            self.open_call_id = id.map(str::to_owned);
        }
        self.saw_tool_call = true;
        self.next_index = self.next_index.max(index + 1);
        let function = call.function.as_ref();
        let name = function
            .and_then(|f| f.name.as_deref())
            .filter(|n| !n.is_empty());
        let fragment = function
            .and_then(|f| f.arguments.as_ref())
            .map_or("", |a| &a.0);
        out.tool_fragment(index, id, name, fragment);
    }

    fn end_open_call(&mut self, out: &mut Emit<'_>) {
        if let Some(index) = self.open_call.take() {
            self.open_call_id = None;
            out.push(StreamEvent::ToolCallEnd { index });
        }
    }

    pub(crate) fn finish(&mut self, out: &mut Emit<'_>) -> Result<(), LlmError> {
        if !self.done && self.stop_reason.is_none() {
            return Err(LlmError::Connection(
                "the stream ended before the response was complete".into(),
            ));
        }
        self.end_open_call(out);
        let stop_reason = match self.stop_reason.take() {
            // Some servers say "stop" after tool calls; the calls are what the agent acts on.
            Some(StopReason::EndTurn) | None if self.saw_tool_call => StopReason::ToolUse,
            Some(reason) => reason,
            None => StopReason::EndTurn,
        };
        out.push(StreamEvent::Finish { stop_reason });
        Ok(())
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
