//! Decoding the Responses API's events (`response.output_text.delta`, function-call argument
//! deltas, reasoning items, `response.completed`), or one non-streamed `response` object.

use std::collections::HashMap;

use serde_json::Value;

use crate::classify::classify_in_stream;
use crate::emit::Emit;
use crate::sse::SseEvent;
use crate::{LlmError, StopReason, StreamEvent, Usage};

/// The state of one Responses API response being decoded.
#[derive(Debug, Default)]
pub(crate) struct ResponsesStream {
    /// The call index of each `function_call` item, by output index.
    calls: HashMap<u64, usize>,
    /// Calls whose arguments came as deltas.
    streamed_arguments: HashMap<usize, bool>,
    stop_reason: Option<StopReason>,
    done: bool,
}

impl ResponsesStream {
    pub(crate) fn is_complete(&self) -> bool {
        self.done
    }

    pub(crate) fn event(
        &mut self,
        event: SseEvent<'_>,
        out: &mut Emit<'_>,
    ) -> Result<(), LlmError> {
        let data = event.data.trim_ascii();
        if data.is_empty() || data == b"[DONE]" {
            return Ok(());
        }
        let value: Value = serde_json::from_slice(data).map_err(|e| {
            LlmError::Protocol(format!(
                "a stream event is not valid JSON ({e}): {}",
                String::from_utf8_lossy(&data[..data.len().min(200)])
            ))
        })?;
        self.value(&value, out)
    }

    fn value(&mut self, value: &Value, out: &mut Emit<'_>) -> Result<(), LlmError> {
        let text = |key: &str| value[key].as_str().unwrap_or_default();
        match text("type") {
            "response.output_text.delta" | "response.refusal.delta" => out.text(text("delta")),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                out.reasoning(text("delta"));
            }
            "response.output_item.added" => {
                let item = &value["item"];
                if item["type"] == "function_call" {
                    let index = self.calls.len();
                    self.calls
                        .insert(value["output_index"].as_u64().unwrap_or_default(), index);
                    let arguments = item["arguments"].as_str().unwrap_or_default();
                    self.streamed_arguments.insert(index, !arguments.is_empty());
                    out.tool_fragment(
                        index,
                        item["call_id"].as_str(),
                        item["name"].as_str(),
                        arguments,
                    );
                }
            }
            "response.function_call_arguments.delta" => {
                if let Some(&index) = self.call_at(value) {
                    self.streamed_arguments.insert(index, true);
                    out.tool_fragment(index, None, None, text("delta"));
                }
            }
            "response.output_item.done" => self.item_done(value, out),
            "response.completed" | "response.incomplete" => {
                let response = &value["response"];
                out.push(StreamEvent::Usage(usage(&response["usage"])));
                self.stop_reason = Some(match response["incomplete_details"]["reason"].as_str() {
                    Some("max_output_tokens") => StopReason::MaxTokens,
                    Some(other) => StopReason::Other(other.to_owned()),
                    None if !self.calls.is_empty() => StopReason::ToolUse,
                    None => StopReason::EndTurn,
                });
                self.done = true;
            }
            "response.failed" => {
                return Err(classify_in_stream(&value["response"]["error"]));
            }
            "error" => return Err(classify_in_stream(value)),
            _ => {}
        }
        Ok(())
    }

    fn call_at(&self, value: &Value) -> Option<&usize> {
        self.calls
            .get(&value["output_index"].as_u64().unwrap_or_default())
    }

    fn item_done(&mut self, value: &Value, out: &mut Emit<'_>) {
        let item = &value["item"];
        match item["type"].as_str() {
            Some("function_call") => {
                if let Some(&index) = self.call_at(value) {
                    if self.streamed_arguments.get(&index) != Some(&true) {
                        out.tool_fragment(
                            index,
                            None,
                            None,
                            item["arguments"].as_str().unwrap_or("{}"),
                        );
                    }
                    out.push(StreamEvent::ToolCallEnd { index });
                }
            }
            Some("reasoning") if item["encrypted_content"].is_string() => {
                // The whole item goes back with the next request, exactly as received.
                let kept = serde_json::json!({
                    "type": "reasoning",
                    "id": item["id"],
                    "summary": item["summary"],
                    "encrypted_content": item["encrypted_content"],
                });
                out.push(StreamEvent::RedactedReasoning {
                    data: kept.to_string(),
                });
            }
            _ => {}
        }
    }

    /// Decodes a non-streamed reply: the `response` object.
    pub(crate) fn whole_reply(&mut self, body: &[u8], out: &mut Emit<'_>) -> Result<(), LlmError> {
        let response: Value = serde_json::from_slice(body)
            .map_err(|e| LlmError::Protocol(format!("the reply is not valid JSON: {e}")))?;
        if response["error"].is_object() {
            return Err(classify_in_stream(&response["error"]));
        }
        let output = response["output"].as_array().cloned().unwrap_or_default();
        for (output_index, item) in output.iter().enumerate() {
            match item["type"].as_str() {
                Some("message") => {
                    for content in item["content"].as_array().into_iter().flatten() {
                        out.text(content["text"].as_str().unwrap_or_default());
                    }
                }
                Some("reasoning") => {
                    for summary in item["summary"].as_array().into_iter().flatten() {
                        out.reasoning(summary["text"].as_str().unwrap_or_default());
                    }
                }
                _ => {}
            }
            let position = serde_json::json!({ "output_index": output_index, "item": item });
            if item["type"] == "function_call" {
                self.value(
                    &serde_json::json!({ "type": "response.output_item.added", "output_index": output_index, "item": { "type": "function_call", "call_id": item["call_id"], "name": item["name"] } }),
                    out,
                )?;
            }
            self.item_done(&position, out);
        }
        let kind = if response["status"] == "incomplete" {
            "response.incomplete"
        } else {
            "response.completed"
        };
        self.value(
            &serde_json::json!({ "type": kind, "response": response }),
            out,
        )?;
        self.finish(out)
    }

    pub(crate) fn finish(&mut self, out: &mut Emit<'_>) -> Result<(), LlmError> {
        if !self.done {
            return Err(LlmError::Connection(
                "the stream ended before the response was complete".into(),
            ));
        }
        let stop_reason = self.stop_reason.take().unwrap_or(StopReason::EndTurn);
        out.push(StreamEvent::Finish { stop_reason });
        Ok(())
    }
}

/// The Responses API's usage object.
fn usage(value: &Value) -> Usage {
    let count = |v: &Value| v.as_u64().unwrap_or_default();
    Usage {
        prompt_tokens: count(&value["input_tokens"]),
        completion_tokens: count(&value["output_tokens"]),
        cached_prompt_tokens: count(&value["input_tokens_details"]["cached_tokens"]),
        cache_creation_tokens: 0,
        cost_usd: None,
    }
}
