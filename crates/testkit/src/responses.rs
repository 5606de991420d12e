//! The OpenAI Responses API rendering of a turn: `response.*` SSE events or one `response`
//! body. A turn's reasoning becomes a reasoning item whose summary is the reasoning text and
//! whose `encrypted_content` is the turn's signature; its calls are `function_call` items.

use serde_json::{Value, json};

use crate::{MockStopReason, MockUsage, StreamError, Turn, render::RenderContext};

fn usage_json(usage: &MockUsage) -> Value {
    json!({
        "input_tokens": usage.prompt_tokens,
        "input_tokens_details": { "cached_tokens": usage.cached_tokens },
        "output_tokens": usage.completion_tokens,
        "output_tokens_details": { "reasoning_tokens": 0 },
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    })
}

fn frame(value: &Value) -> String {
    let kind = value["type"].as_str().unwrap_or("message");
    format!("event: {kind}\ndata: {value}\n\n")
}

fn reasoning_item(turn: &Turn, context: &RenderContext) -> Value {
    json!({
        "id": format!("rs_mock_{}", context.request_index),
        "type": "reasoning",
        "summary": [{ "type": "summary_text", "text": turn.full_reasoning() }],
        "encrypted_content": turn.signature_or_default(),
    })
}

fn message_item(turn: &Turn, context: &RenderContext) -> Value {
    json!({
        "id": format!("msg_mock_{}", context.request_index),
        "type": "message",
        "status": "completed",
        "role": "assistant",
        "content": [{ "type": "output_text", "text": turn.full_text(), "annotations": [] }],
    })
}

fn call_item(call: &crate::MockToolCall, index: usize, arguments: &str) -> Value {
    json!({
        "id": format!("fc_mock_{index}"),
        "type": "function_call",
        "status": "completed",
        "call_id": call.id(),
        "name": call.name(),
        "arguments": arguments,
    })
}

/// The whole `response` object, as `response.completed` and a non-streamed reply carry it.
fn response_object(turn: &Turn, context: &RenderContext, output: Vec<Value>) -> Value {
    let (status, incomplete) = match turn.effective_stop_reason() {
        MockStopReason::MaxTokens => ("incomplete", json!({ "reason": "max_output_tokens" })),
        MockStopReason::EndTurn | MockStopReason::ToolUse | MockStopReason::Other(_) => {
            ("completed", Value::Null)
        }
    };
    json!({
        "id": format!("resp_mock_{}", context.request_index),
        "object": "response",
        "created_at": context.created_unix_secs,
        "status": status,
        "incomplete_details": incomplete,
        "model": context.model,
        "output": output,
        "usage": usage_json(turn.token_usage()),
    })
}

fn all_items(turn: &Turn, context: &RenderContext) -> Vec<Value> {
    let mut items = Vec::new();
    if !turn.reasoning_pieces().is_empty() {
        items.push(reasoning_item(turn, context));
    }
    if !turn.text_pieces().is_empty() {
        items.push(message_item(turn, context));
    }
    for (index, call) in turn.calls().iter().enumerate() {
        items.push(call_item(call, index, call.arguments()));
    }
    items
}

/// The SSE events of a streamed turn, the last being `response.completed` (or
/// `response.incomplete`).
pub(crate) fn stream_events(turn: &Turn, context: &RenderContext) -> Vec<String> {
    let mut events = Vec::new();
    let created = response_object(turn, context, Vec::new());
    events.push(frame(
        &json!({ "type": "response.created", "response": created }),
    ));
    let mut output_index = 0;
    if !turn.reasoning_pieces().is_empty() {
        let item = reasoning_item(turn, context);
        let mut added = item.clone();
        added["summary"] = json!([]);
        added["encrypted_content"] = Value::Null;
        events.push(frame(&json!({
            "type": "response.output_item.added", "output_index": output_index, "item": added,
        })));
        for piece in turn.reasoning_pieces() {
            events.push(frame(&json!({
                "type": "response.reasoning_summary_text.delta", "item_id": item["id"],
                "output_index": output_index, "summary_index": 0, "delta": piece,
            })));
        }
        events.push(frame(&json!({
            "type": "response.output_item.done", "output_index": output_index, "item": item,
        })));
        output_index += 1;
    }
    if !turn.text_pieces().is_empty() {
        let item = message_item(turn, context);
        let mut added = item.clone();
        added["content"] = json!([]);
        added["status"] = json!("in_progress");
        events.push(frame(&json!({
            "type": "response.output_item.added", "output_index": output_index, "item": added,
        })));
        for piece in turn.text_pieces() {
            events.push(frame(&json!({
                "type": "response.output_text.delta", "item_id": item["id"],
                "output_index": output_index, "content_index": 0, "delta": piece,
            })));
        }
        events.push(frame(&json!({
            "type": "response.output_item.done", "output_index": output_index, "item": item,
        })));
        output_index += 1;
    }
    for (index, call) in turn.calls().iter().enumerate() {
        let item = call_item(call, index, call.arguments());
        events.push(frame(&json!({
            "type": "response.output_item.added", "output_index": output_index,
            "item": call_item(call, index, ""),
        })));
        for fragment in call.fragments() {
            events.push(frame(&json!({
                "type": "response.function_call_arguments.delta", "item_id": item["id"],
                "output_index": output_index, "delta": fragment,
            })));
        }
        events.push(frame(&json!({
            "type": "response.function_call_arguments.done", "item_id": item["id"],
            "output_index": output_index, "arguments": call.arguments(),
        })));
        events.push(frame(&json!({
            "type": "response.output_item.done", "output_index": output_index, "item": item,
        })));
        output_index += 1;
    }
    let done = response_object(turn, context, all_items(turn, context));
    let kind = if done["status"] == "incomplete" {
        "response.incomplete"
    } else {
        "response.completed"
    };
    events.push(frame(&json!({ "type": kind, "response": done })));
    events
}

/// The non-streamed `response` body of a turn.
pub(crate) fn json_body(turn: &Turn, context: &RenderContext) -> Value {
    response_object(turn, context, all_items(turn, context))
}

/// The mid-stream `error` event.
pub(crate) fn error_event(error: &StreamError) -> String {
    frame(&json!({
        "type": "error", "code": error.error_type, "message": error.message, "param": null,
    }))
}
