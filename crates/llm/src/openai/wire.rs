//! The conversation in OpenAI's Chat Completions format, both ways.
//!
//! Requests serialise borrowed views of the conversation, so a long history is not copied
//! before it is written.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::Value;

use crate::toolspec::OpenAiTool;
use crate::{LlmError, Message, Part, Request, Role, ToolArguments, ToolCall, ToolResult};

/// Which field carries the output limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MaxTokensField {
    /// `max_tokens`, understood by every compatible server.
    MaxTokens,
    /// `max_completion_tokens`, which OpenAI's own reasoning models require.
    MaxCompletionTokens,
}

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<OpenAiTool<'a>>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: &'a str,
    },
    User {
        content: Cow<'a, str>,
    },
    Assistant {
        // `null` when the message is only tool calls, as the API documents.
        content: Option<Cow<'a, str>>,
        // DeepSeek's (and Kimi's) thinking mode refuses a tool-call turn without it.
        #[serde(skip_serializing_if = "Option::is_none")]
        reasoning_content: Option<Cow<'a, str>>,
        #[serde(skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<WireToolCall<'a>>,
        // LiteLLM hands these to Claude, which refuses a tool-call turn without them.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        thinking_blocks: Vec<WireThinkingBlock<'a>>,
    },
    Tool {
        tool_call_id: &'a str,
        content: &'a str,
    },
}

/// A signed or redacted thinking block, as LiteLLM takes them back.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum WireThinkingBlock<'a> {
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
}

#[derive(Serialize)]
struct WireToolCall<'a> {
    id: &'a str,
    #[serde(rename = "type")]
    kind: &'static str,
    function: WireFunction<'a>,
}

#[derive(Serialize)]
struct WireFunction<'a> {
    name: &'a str,
    arguments: Cow<'a, str>,
}

/// The `stream_options` member, spliced in before the body's closing brace.
const USAGE_OPTION_JSON: &[u8] = br#","stream_options":{"include_usage":true}}"#;

/// `body` with `stream_options: {include_usage: true}` added. Splicing spares serialising
/// the conversation twice, once with and once without, for servers that refuse it.
pub(crate) fn with_usage_option(body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + USAGE_OPTION_JSON.len());
    out.extend_from_slice(body.strip_suffix(b"}").unwrap_or(body));
    out.extend_from_slice(USAGE_OPTION_JSON);
    out
}

/// Serialises a streaming request body, without `stream_options`.
pub(crate) fn request_body(request: &Request, max_field: MaxTokensField) -> Vec<u8> {
    let (max_tokens, max_completion_tokens) = match max_field {
        MaxTokensField::MaxTokens => (request.max_tokens, None),
        MaxTokensField::MaxCompletionTokens => (None, request.max_tokens),
    };
    let body = WireRequest {
        model: &request.model,
        messages: wire_messages(&request.system, &request.messages),
        tools: request.tools.iter().map(OpenAiTool::from).collect(),
        stream: true,
        temperature: request.temperature,
        max_tokens,
        max_completion_tokens,
    };
    // Borrowed strings, numbers and `Value`s always serialise.
    serde_json::to_vec(&body).unwrap_or_default()
}

fn joined_text(parts: &[Part]) -> Option<Cow<'_, str>> {
    let mut texts = parts.iter().filter_map(|p| match p {
        Part::Text { text } => Some(text.as_str()),
        Part::Reasoning { .. } | Part::ToolCall(_) | Part::ToolResult(_) => None,
    });
    let first = texts.next()?;
    match texts.next() {
        None => Some(Cow::Borrowed(first)),
        Some(second) => {
            let mut all = format!("{first}\n{second}");
            for t in texts {
                all.push('\n');
                all.push_str(t);
            }
            Some(Cow::Owned(all))
        }
    }
}

/// The reasoning of an assistant message as `reasoning_content` (the texts joined) and as
/// `thinking_blocks` (the signed and redacted ones).
fn wire_reasoning(parts: &[Part]) -> (Option<Cow<'_, str>>, Vec<WireThinkingBlock<'_>>) {
    let mut text: Option<Cow<'_, str>> = None;
    let mut blocks = Vec::new();
    for part in parts {
        let Part::Reasoning {
            text: piece,
            signature,
            redacted,
        } = part
        else {
            continue;
        };
        match (redacted, signature) {
            (Some(data), _) => blocks.push(WireThinkingBlock::RedactedThinking { data }),
            (None, Some(signature)) => blocks.push(WireThinkingBlock::Thinking {
                thinking: piece,
                signature,
            }),
            (None, None) => {}
        }
        if piece.is_empty() {
            continue;
        }
        text = Some(match text {
            None => Cow::Borrowed(piece.as_str()),
            Some(before) => Cow::Owned(format!("{before}{piece}")),
        });
    }
    (text, blocks)
}

fn wire_messages<'a>(system: &'a str, messages: &'a [Message]) -> Vec<WireMessage<'a>> {
    let mut out = Vec::with_capacity(messages.len() + 1);
    if !system.is_empty() {
        out.push(WireMessage::System { content: system });
    }
    // Reasoning goes back only within the current turn (after the last user message), as
    // DeepSeek asks: earlier turns' reasoning is dropped.
    let current_turn = messages
        .iter()
        .rposition(|m| m.role == Role::User)
        .map_or(0, |last_user| last_user + 1);
    for (position, message) in messages.iter().enumerate() {
        // Tool results become one `tool` message each, wherever they sit.
        for part in &message.parts {
            if let Part::ToolResult(result) = part {
                out.push(WireMessage::Tool {
                    tool_call_id: &result.call_id,
                    content: &result.content,
                });
            }
        }
        match message.role {
            Role::User => {
                if let Some(content) = joined_text(&message.parts) {
                    out.push(WireMessage::User { content });
                }
            }
            Role::Assistant => {
                let tool_calls: Vec<WireToolCall<'_>> = message
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::ToolCall(call) => Some(wire_tool_call(call)),
                        Part::Text { .. } | Part::Reasoning { .. } | Part::ToolResult(_) => None,
                    })
                    .collect();
                let content = joined_text(&message.parts);
                let (reasoning_content, thinking_blocks) = if position >= current_turn {
                    wire_reasoning(&message.parts)
                } else {
                    (None, Vec::new())
                };
                if content.is_some() || !tool_calls.is_empty() {
                    out.push(WireMessage::Assistant {
                        content,
                        reasoning_content,
                        tool_calls,
                        thinking_blocks,
                    });
                }
            }
            Role::Tool => {}
        }
    }
    out
}

fn wire_tool_call(call: &ToolCall) -> WireToolCall<'_> {
    let arguments = match &call.arguments {
        ToolArguments::Json { value } => Cow::Owned(value.to_string()),
        // Sent back exactly as the model wrote it; the tool result explains what was wrong.
        ToolArguments::Invalid { raw, .. } => Cow::Borrowed(raw.as_str()),
    };
    WireToolCall {
        id: &call.id,
        kind: "function",
        function: WireFunction {
            name: &call.name,
            arguments,
        },
    }
}

/// Reads an OpenAI `messages` array back into the system prompt and the neutral conversation;
/// consecutive `tool` messages become one [`Role::Tool`] message.
pub fn messages_from_openai(messages: &Value) -> Result<(String, Vec<Message>), LlmError> {
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

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
