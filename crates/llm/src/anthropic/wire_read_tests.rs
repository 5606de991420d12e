//! Reading anthropic wire messages back into the neutral conversation: only the round-trip
//! tests need it (rein never reads a request it did not build).

use serde_json::Value;

use super::EMPTY_OBJECT;

use crate::{LlmError, Message, Part, Role, ToolArguments, ToolCall, ToolResult};

/// Reads Anthropic's `system` and `messages` back into the neutral conversation; tool results
/// in a user message become a [`Role::Tool`] message before the user's text.
pub(crate) fn messages_from_anthropic(
    system: &Value,
    messages: &Value,
) -> Result<(String, Vec<Message>), LlmError> {
    let bad = |what: &str| LlmError::Protocol(format!("not an Anthropic message list: {what}"));
    let system = match system {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    let list = messages.as_array().ok_or_else(|| bad("not an array"))?;
    let mut out = Vec::new();
    for m in list {
        let role = m.get("role").and_then(Value::as_str);
        let blocks: Vec<Value> = match m.get("content") {
            Some(Value::String(s)) => vec![serde_json::json!({"type": "text", "text": s})],
            Some(Value::Array(a)) => a.clone(),
            _ => return Err(bad("a message has no content")),
        };
        let mut results = Vec::new();
        let mut parts = Vec::new();
        for b in &blocks {
            let s = |k: &str| {
                b.get(k)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_owned()
            };
            match b.get("type").and_then(Value::as_str) {
                Some("text") => parts.push(Part::Text { text: s("text") }),
                Some("thinking") => parts.push(Part::Reasoning {
                    text: s("thinking"),
                    signature: b
                        .get("signature")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                    redacted: None,
                }),
                Some("redacted_thinking") => parts.push(Part::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some(s("data")),
                }),
                Some("tool_use") => parts.push(Part::ToolCall(ToolCall {
                    id: s("id"),
                    name: s("name"),
                    arguments: ToolArguments::Json {
                        value: b
                            .get("input")
                            .cloned()
                            .unwrap_or_else(|| EMPTY_OBJECT.clone()),
                    },
                })),
                Some("tool_result") => results.push(Part::ToolResult(ToolResult {
                    call_id: s("tool_use_id"),
                    content: tool_result_text(b.get("content")),
                    is_error: b.get("is_error").and_then(Value::as_bool).unwrap_or(false),
                    images: Vec::new(),
                })),
                _ => {}
            }
        }
        match role {
            Some("user") => {
                if !results.is_empty() {
                    out.push(Message {
                        role: Role::Tool,
                        parts: results,
                    });
                }
                if !parts.is_empty() {
                    out.push(Message {
                        role: Role::User,
                        parts,
                    });
                }
            }
            Some("assistant") => out.push(Message {
                role: Role::Assistant,
                parts,
            }),
            other => return Err(bad(&format!("unknown role {other:?}"))),
        }
    }
    Ok((system, out))
}

fn tool_result_text(content: Option<&Value>) -> String {
    match content {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(blocks)) => blocks
            .iter()
            .filter_map(|b| b.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}
