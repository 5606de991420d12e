//! The Anthropic Messages rendering of a turn: typed SSE events or one `message` body.

use serde_json::{Value, json};

use crate::{ApiErrorKind, MockStopReason, MockUsage, StreamError, Turn, render::RenderContext};

fn stop_reason(reason: &MockStopReason) -> &str {
    match reason {
        MockStopReason::EndTurn => "end_turn",
        MockStopReason::ToolUse => "tool_use",
        MockStopReason::MaxTokens => "max_tokens",
        MockStopReason::Other(other) => other,
    }
}

fn input_usage(usage: &MockUsage, output_tokens: u64) -> Value {
    json!({
        "input_tokens": usage.uncached_input_tokens(),
        "cache_creation_input_tokens": usage.cache_creation_tokens,
        "cache_read_input_tokens": usage.cached_tokens,
        "output_tokens": output_tokens,
    })
}

/// One SSE event: `event: <type>` then `data: <json>`.
fn event(value: &Value) -> String {
    let kind = value["type"].as_str().unwrap_or("unknown");
    format!("event: {kind}\ndata: {value}\n\n")
}

/// The tool input object of a non-streamed answer; arguments that are not JSON stay a string.
fn tool_input(arguments: &str) -> Value {
    if arguments.trim().is_empty() {
        return json!({});
    }
    serde_json::from_str(arguments).unwrap_or_else(|_| json!(arguments))
}

/// The SSE events of a streamed turn, the last being `message_stop`.
pub(crate) fn stream_events(turn: &Turn, context: &RenderContext) -> Vec<String> {
    let usage = turn.token_usage();
    let mut events = vec![event(&json!({
        "type": "message_start",
        "message": {
            "id": format!("msg_mock_{}", context.request_index),
            "type": "message",
            "role": "assistant",
            "model": context.model,
            "content": [],
            "stop_reason": null,
            "stop_sequence": null,
            "usage": input_usage(usage, usage.completion_tokens.min(1)),
        },
    }))];
    if turn.sends_ping() {
        events.push(event(&json!({ "type": "ping" })));
    }
    let mut index = 0_usize;
    let delta = |index: usize, delta: Value| {
        event(&json!({ "type": "content_block_delta", "index": index, "delta": delta }))
    };
    let stop = |index: usize| event(&json!({ "type": "content_block_stop", "index": index }));

    if !turn.reasoning_pieces().is_empty() {
        events.push(event(&json!({
            "type": "content_block_start",
            "index": index,
            "content_block": { "type": "thinking", "thinking": "" },
        })));
        for piece in turn.reasoning_pieces() {
            events.push(delta(
                index,
                json!({ "type": "thinking_delta", "thinking": piece }),
            ));
        }
        events.push(delta(
            index,
            json!({ "type": "signature_delta", "signature": turn.signature_or_default() }),
        ));
        events.push(stop(index));
        index += 1;
    }
    for data in turn.redacted_blocks() {
        events.push(event(&json!({
            "type": "content_block_start",
            "index": index,
            "content_block": { "type": "redacted_thinking", "data": data },
        })));
        events.push(stop(index));
        index += 1;
    }
    if !turn.text_pieces().is_empty() {
        events.push(event(&json!({
            "type": "content_block_start",
            "index": index,
            "content_block": { "type": "text", "text": "" },
        })));
        for piece in turn.text_pieces() {
            events.push(delta(index, json!({ "type": "text_delta", "text": piece })));
        }
        events.push(stop(index));
        index += 1;
    }
    for call in turn.calls() {
        events.push(event(&json!({
            "type": "content_block_start",
            "index": index,
            "content_block": { "type": "tool_use", "id": call.id(), "name": call.name(), "input": {} },
        })));
        events.push(delta(
            index,
            json!({ "type": "input_json_delta", "partial_json": "" }),
        ));
        for fragment in call.fragments() {
            events.push(delta(
                index,
                json!({ "type": "input_json_delta", "partial_json": fragment }),
            ));
        }
        events.push(stop(index));
        index += 1;
    }
    events.push(event(&json!({
        "type": "message_delta",
        "delta": { "stop_reason": stop_reason(&turn.effective_stop_reason()), "stop_sequence": null },
        "usage": { "output_tokens": usage.completion_tokens },
    })));
    events.push(event(&json!({ "type": "message_stop" })));
    events
}

/// The non-streamed `message` body of a turn.
pub(crate) fn json_body(turn: &Turn, context: &RenderContext) -> Value {
    let mut content = Vec::new();
    if !turn.reasoning_pieces().is_empty() {
        content.push(json!({
            "type": "thinking",
            "thinking": turn.full_reasoning(),
            "signature": turn.signature_or_default(),
        }));
    }
    for data in turn.redacted_blocks() {
        content.push(json!({ "type": "redacted_thinking", "data": data }));
    }
    if !turn.text_pieces().is_empty() {
        content.push(json!({ "type": "text", "text": turn.full_text() }));
    }
    for call in turn.calls() {
        content.push(json!({
            "type": "tool_use",
            "id": call.id(),
            "name": call.name(),
            "input": tool_input(call.arguments()),
        }));
    }
    let usage = turn.token_usage();
    json!({
        "id": format!("msg_mock_{}", context.request_index),
        "type": "message",
        "role": "assistant",
        "model": context.model,
        "content": content,
        "stop_reason": stop_reason(&turn.effective_stop_reason()),
        "stop_sequence": null,
        "usage": input_usage(usage, usage.completion_tokens),
    })
}

/// An Anthropic error body.
pub(crate) fn error_json(error_type: &str, message: &str) -> Value {
    json!({ "type": "error", "error": { "type": error_type, "message": message } })
}

/// The mid-stream `event: error`.
pub(crate) fn error_event(error: &StreamError) -> String {
    event(&error_json(&error.error_type, &error.message))
}

/// The body of a provider error.
pub(crate) fn api_error_body(kind: ApiErrorKind) -> Value {
    match kind {
        ApiErrorKind::RateLimited { .. } => error_json(
            "rate_limit_error",
            "This request would exceed your organization's rate limit. Please try again later.",
        ),
        ApiErrorKind::Overloaded => error_json("overloaded_error", "Overloaded"),
        ApiErrorKind::ServerError => error_json("api_error", "Internal server error"),
        ApiErrorKind::ContextTooLong => error_json(
            "invalid_request_error",
            "prompt is too long: 210000 tokens > 200000 maximum",
        ),
        ApiErrorKind::Unauthorized => error_json("authentication_error", "invalid x-api-key"),
    }
}
