//! Reading openai wire messages back into the neutral conversation: only the round-trip
//! tests need it (rein never reads a request it did not build).

use serde_json::Value;

use crate::{LlmError, Message, Part, Role, ToolCall, ToolResult};

/// Reads an OpenAI `messages` array back into the system prompt and the neutral conversation;
/// consecutive `tool` messages become one [`Role::Tool`] message.
pub(crate) fn messages_from_openai(messages: &Value) -> Result<(String, Vec<Message>), LlmError> {
    let bad = |what: &str| LlmError::Protocol(format!("not an OpenAI message list: {what}"));
    let list = messages.as_array().ok_or_else(|| bad("not an array"))?;
    let mut system = Vec::new();
    let mut out: Vec<Message> = Vec::new();
    for m in list {
        let role = m
            .get("role")
            .and_then(Value::as_str)
            .ok_or_else(|| bad("a message has no role"))?;
        let text = content_text(m.get("content"));
        match role {
            "system" | "developer" => system.extend(text),
            "user" => out.push(Message {
                role: Role::User,
                parts: text.map(|text| Part::Text { text }).into_iter().collect(),
            }),
            "assistant" => {
                let mut parts = reasoning_from_openai(m);
                parts.extend(text.map(|text| Part::Text { text }));
                for call in m
                    .get("tool_calls")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                {
                    let function = call.get("function");
                    let field = |k: &str| function.and_then(|f| f.get(k)).and_then(Value::as_str);
                    parts.push(Part::ToolCall(ToolCall {
                        id: call
                            .get("id")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_owned(),
                        name: field("name").unwrap_or_default().to_owned(),
                        arguments: crate::assemble::parse_arguments(
                            field("arguments").unwrap_or_default(),
                        ),
                    }));
                }
                out.push(Message {
                    role: Role::Assistant,
                    parts,
                });
            }
            "tool" => {
                let result = Part::ToolResult(ToolResult {
                    call_id: m
                        .get("tool_call_id")
                        .and_then(Value::as_str)
                        .unwrap_or_default()
                        .to_owned(),
                    content: text.unwrap_or_default(),
                    is_error: false,
                    images: Vec::new(),
                });
                match out.last_mut() {
                    Some(last) if last.role == Role::Tool => last.parts.push(result),
                    _ => out.push(Message {
                        role: Role::Tool,
                        parts: vec![result],
                    }),
                }
            }
            other => return Err(bad(&format!("unknown role {other:?}"))),
        }
    }
    Ok((system.join("\n"), out))
}

/// The reasoning of an assistant message: its `thinking_blocks` when present, else its
/// `reasoning_content` as one unsigned block.
fn reasoning_from_openai(message: &Value) -> Vec<Part> {
    let field = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
    let blocks = message.get("thinking_blocks").and_then(Value::as_array);
    if let Some(blocks) = blocks.filter(|b| !b.is_empty()) {
        return blocks
            .iter()
            .map(|b| match b.get("type").and_then(Value::as_str) {
                Some("redacted_thinking") => Part::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some(field(b, "data").unwrap_or_default()),
                },
                _ => Part::Reasoning {
                    text: field(b, "thinking").unwrap_or_default(),
                    signature: field(b, "signature"),
                    redacted: None,
                },
            })
            .collect();
    }
    field(message, "reasoning_content")
        .filter(|text| !text.is_empty())
        .map(|text| Part::Reasoning {
            text,
            signature: None,
            redacted: None,
        })
        .into_iter()
        .collect()
}

/// The text of a `content` that is a string or an array of `{type: "text", text}` parts.
fn content_text(content: Option<&Value>) -> Option<String> {
    match content? {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let texts: Vec<&str> = parts
                .iter()
                .filter_map(|p| p.get("text").and_then(Value::as_str))
                .collect();
            (!texts.is_empty()).then(|| texts.join("\n"))
        }
        _ => None,
    }
}
