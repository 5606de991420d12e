//! The OpenAI Chat Completions rendering of a turn: `chat.completion.chunk` SSE or one
//! `chat.completion` body.

use serde_json::{Value, json};

use crate::{
    ApiErrorKind, MockStopReason, MockUsage, StreamError, Turn, UsageChunk, render::RenderContext,
};

fn finish_reason(reason: &MockStopReason) -> &str {
    match reason {
        MockStopReason::EndTurn => "stop",
        MockStopReason::ToolUse => "tool_calls",
        MockStopReason::MaxTokens => "length",
        MockStopReason::Other(other) => other,
    }
}

fn usage_json(usage: &MockUsage) -> Value {
    let mut value = json!({
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
        "prompt_tokens_details": { "cached_tokens": usage.cached_tokens },
    });
    if let Some(cost) = usage.cost_usd {
        value["cost"] = json!(cost);
    }
    value
}

fn data_frame(value: &Value) -> String {
    format!("data: {value}\n\n")
}

/// The SSE events of a streamed turn, the last being `data: [DONE]`.
pub(crate) fn stream_events(turn: &Turn, context: &RenderContext) -> Vec<String> {
    let placement = turn.usage_placement();
    let separate_usage_chunk = match placement {
        UsageChunk::IfRequested => context.include_usage,
        UsageChunk::Always => true,
        UsageChunk::Never | UsageChunk::InFinishChunk => false,
    };
    // OpenAI sends `"usage": null` in every chunk once usage was asked for.
    let null_usage = separate_usage_chunk;
    let chunk = |delta: Value, finish: Value, usage: Option<Value>| {
        let mut body = json!({
            "id": format!("chatcmpl-mock-{}", context.request_index),
            "object": "chat.completion.chunk",
            "created": context.created_unix_secs,
            "model": context.model,
            "system_fingerprint": null,
            "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
        });
        if let Some(usage) = usage.or(null_usage.then_some(Value::Null)) {
            body["usage"] = usage;
        }
        data_frame(&body)
    };

    let mut events = vec![chunk(
        json!({ "role": "assistant", "content": "" }),
        Value::Null,
        None,
    )];
    if turn.uses_thinking_blocks() {
        for piece in turn.reasoning_pieces() {
            let block = json!({ "type": "thinking", "thinking": piece, "signature": "" });
            events.push(chunk(
                json!({ "reasoning_content": piece, "thinking_blocks": [block] }),
                Value::Null,
                None,
            ));
        }
        if !turn.reasoning_pieces().is_empty() {
            let block = json!({
                "type": "thinking", "thinking": "", "signature": turn.signature_or_default(),
            });
            events.push(chunk(
                json!({ "reasoning_content": "", "thinking_blocks": [block] }),
                Value::Null,
                None,
            ));
        }
        for data in turn.redacted_blocks() {
            let block = json!({ "type": "redacted_thinking", "data": data });
            events.push(chunk(
                json!({ "thinking_blocks": [block] }),
                Value::Null,
                None,
            ));
        }
    } else {
        for piece in turn.reasoning_pieces() {
            events.push(chunk(
                json!({ "reasoning_content": piece }),
                Value::Null,
                None,
            ));
        }
    }
    for piece in turn.text_pieces() {
        events.push(chunk(json!({ "content": piece }), Value::Null, None));
    }
    for (offset, call) in turn.calls().iter().enumerate() {
        if turn.calls_share_one_index() {
            let tool_call = json!({
                "index": turn.first_tool_index(),
                "id": call.id(),
                "type": "function",
                "function": { "name": call.name(), "arguments": call.arguments() },
            });
            events.push(chunk(
                json!({ "tool_calls": [tool_call] }),
                Value::Null,
                None,
            ));
            continue;
        }
        let index = turn.first_tool_index() + offset;
        for (position, fragment) in call.fragments().into_iter().enumerate() {
            let tool_call = if position == 0 {
                json!({
                    "index": index,
                    "id": call.id(),
                    "type": "function",
                    "function": { "name": call.name(), "arguments": fragment },
                })
            } else {
                json!({ "index": index, "function": { "arguments": fragment } })
            };
            events.push(chunk(
                json!({ "tool_calls": [tool_call] }),
                Value::Null,
                None,
            ));
        }
    }
    let finish_usage = match placement {
        UsageChunk::InFinishChunk => Some(usage_json(turn.token_usage())),
        UsageChunk::IfRequested | UsageChunk::Always | UsageChunk::Never => None,
    };
    events.push(chunk(
        json!({}),
        json!(finish_reason(&turn.effective_stop_reason())),
        finish_usage,
    ));
    if separate_usage_chunk {
        events.push(data_frame(&json!({
            "id": format!("chatcmpl-mock-{}", context.request_index),
            "object": "chat.completion.chunk",
            "created": context.created_unix_secs,
            "model": context.model,
            "system_fingerprint": null,
            "choices": [],
            "usage": usage_json(turn.token_usage()),
        })));
    }
    events.push("data: [DONE]\n\n".to_owned());
    events
}

/// The non-streamed `chat.completion` body of a turn.
pub(crate) fn json_body(turn: &Turn, context: &RenderContext) -> Value {
    let text = turn.full_text();
    let mut message = json!({
        "role": "assistant",
        "content": if text.is_empty() && !turn.calls().is_empty() { Value::Null } else { json!(text) },
        "refusal": null,
    });
    if !turn.reasoning_pieces().is_empty() {
        message["reasoning_content"] = json!(turn.full_reasoning());
    }
    if turn.uses_thinking_blocks() {
        let mut blocks = Vec::new();
        if !turn.reasoning_pieces().is_empty() {
            blocks.push(json!({
                "type": "thinking",
                "thinking": turn.full_reasoning(),
                "signature": turn.signature_or_default(),
            }));
        }
        for data in turn.redacted_blocks() {
            blocks.push(json!({ "type": "redacted_thinking", "data": data }));
        }
        message["thinking_blocks"] = json!(blocks);
    }
    if !turn.calls().is_empty() {
        let calls: Vec<Value> = turn
            .calls()
            .iter()
            .map(|call| {
                json!({
                    "id": call.id(),
                    "type": "function",
                    "function": { "name": call.name(), "arguments": call.arguments() },
                })
            })
            .collect();
        message["tool_calls"] = json!(calls);
    }
    json!({
        "id": format!("chatcmpl-mock-{}", context.request_index),
        "object": "chat.completion",
        "created": context.created_unix_secs,
        "model": context.model,
        "system_fingerprint": null,
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish_reason(&turn.effective_stop_reason()),
        }],
        "usage": usage_json(turn.token_usage()),
    })
}

/// An OpenAI error body.
pub(crate) fn error_json(error_type: &str, message: &str, code: Option<&str>) -> Value {
    json!({ "error": { "message": message, "type": error_type, "param": null, "code": code } })
}

/// The mid-stream error event.
pub(crate) fn error_event(error: &StreamError) -> String {
    data_frame(&error_json(&error.error_type, &error.message, None))
}

/// The body of a provider error.
pub(crate) fn api_error_body(kind: ApiErrorKind) -> Value {
    match kind {
        ApiErrorKind::RateLimited { .. } => error_json(
            "requests",
            "Rate limit reached for requests. Please try again later.",
            Some("rate_limit_exceeded"),
        ),
        ApiErrorKind::Overloaded => error_json(
            "server_error",
            "The server is overloaded, please try again later.",
            Some("overloaded"),
        ),
        ApiErrorKind::ServerError => error_json(
            "server_error",
            "The server had an error while processing your request. Sorry about that!",
            None,
        ),
        ApiErrorKind::ContextTooLong => {
            let mut body = error_json(
                "invalid_request_error",
                "This model's maximum context length is 128000 tokens. However, your messages \
                 resulted in 130000 tokens. Please reduce the length of the messages.",
                Some("context_length_exceeded"),
            );
            body["error"]["param"] = json!("messages");
            body
        }
        ApiErrorKind::Unauthorized => error_json(
            "invalid_request_error",
            "Incorrect API key provided. You can find your API key in your account settings.",
            Some("invalid_api_key"),
        ),
    }
}
