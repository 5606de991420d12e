//! The conversation in OpenAI's Chat Completions format, both ways.
//!
//! Requests serialise borrowed views of the conversation, so a long history is not copied
//! before it is written.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::value::RawValue;

use crate::text_calls::{ToolFormat, call_as_text, result_as_text, system_with_tools};
use crate::toolspec::OpenAiTool;
use crate::{Image, Message, Part, Request, Role, ToolArguments, ToolCall, ToolSpec};

/// How one endpoint's request bodies are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct BodyOptions {
    /// Which field carries the output limit.
    pub(crate) max_field: MaxTokensField,
    /// How tools reach the model.
    pub(crate) tool_format: ToolFormat,
    /// Ollama's `options.num_ctx`, when configured.
    pub(crate) num_ctx: Option<u32>,
}

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
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_tokens: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_completion_tokens: Option<u32>,
    // Ollama's own field: the window to load the model with.
    #[serde(skip_serializing_if = "Option::is_none")]
    options: Option<OllamaOptions>,
}

#[derive(Serialize)]
struct OllamaOptions {
    num_ctx: u32,
}

#[derive(Serialize)]
#[serde(tag = "role", rename_all = "lowercase")]
enum WireMessage<'a> {
    System {
        content: Cow<'a, str>,
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
    /// A user message with images: content parts.
    #[serde(rename = "user")]
    UserParts {
        content: Vec<ContentPart<'a>>,
    },
}

/// One part of a user message's content.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ContentPart<'a> {
    Text { text: Cow<'a, str> },
    ImageUrl { image_url: ImageUrl },
}

#[derive(Serialize)]
struct ImageUrl {
    url: String,
}

/// The images of a message's tool results, as the user message that must carry them: the
/// API takes no image in a `tool` message.
fn result_images(parts: &[Part]) -> Option<WireMessage<'_>> {
    let mut content = Vec::new();
    for part in parts {
        let Part::ToolResult(result) = part else {
            continue;
        };
        if result.images.is_empty() {
            continue;
        }
        content.push(ContentPart::Text {
            text: Cow::Owned(format!(
                "The image{} the tool call {} returned:",
                if result.images.len() == 1 { "" } else { "s" },
                result.call_id
            )),
        });
        content.extend(result.images.iter().map(image_part));
    }
    (!content.is_empty()).then_some(WireMessage::UserParts { content })
}

fn image_part(image: &Image) -> ContentPart<'static> {
    ContentPart::ImageUrl {
        image_url: ImageUrl {
            url: image.data_url(),
        },
    }
}

/// A user message with images, its parts in order.
fn user_parts(parts: &[Part]) -> Option<WireMessage<'_>> {
    if !parts.iter().any(|p| matches!(p, Part::Image(_))) {
        return None;
    }
    let content = parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text } => Some(ContentPart::Text {
                text: Cow::Borrowed(text),
            }),
            Part::Image(image) => Some(image_part(image)),
            Part::Reasoning { .. } | Part::ToolCall(_) | Part::ToolResult(_) => None,
        })
        .collect();
    Some(WireMessage::UserParts { content })
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
const USAGE_OPTION_JSON: &[u8] = br#","stream_options":{"include_usage":true}"#;

/// The optional members a request may carry, which some servers refuse.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Extras<'a> {
    /// `stream_options: {include_usage: true}`.
    pub(crate) usage: bool,
    /// `prompt_cache_key`.
    pub(crate) cache_key: Option<&'a str>,
}

/// `body` with the `extras` added at its end. Splicing spares serialising the conversation
/// again for servers that refuse one of them, and leaves the conversation's bytes, the
/// prefix a server's prompt cache matches, the same whichever are sent.
pub(crate) fn with_extras(body: &[u8], extras: Extras<'_>) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + USAGE_OPTION_JSON.len() + 64);
    out.extend_from_slice(body.strip_suffix(b"}").unwrap_or(body));
    if extras.usage {
        out.extend_from_slice(USAGE_OPTION_JSON);
    }
    if let Some(key) = extras.cache_key {
        out.extend_from_slice(br#","prompt_cache_key":"#);
        // A string always serialises.
        out.extend_from_slice(&serde_json::to_vec(key).unwrap_or_default());
    }
    out.push(b'}');
    out
}

/// Serialises a streaming request body, without `stream_options`.
pub(crate) fn request_body(request: &Request, options: BodyOptions) -> Vec<u8> {
    let tools = (options.tool_format == ToolFormat::Native && !request.tools.is_empty())
        .then(|| tools_json(&request.tools));
    body_with_tools(request, options, tools.as_deref())
}

/// A request's `tools` array, serialised.
pub(crate) fn tools_json(tools: &[ToolSpec]) -> Box<RawValue> {
    let tools: Vec<OpenAiTool<'_>> = tools.iter().map(OpenAiTool::from).collect();
    // Borrowed strings and `Value`s always serialise.
    serde_json::value::to_raw_value(&tools).unwrap_or_default()
}

/// [`request_body`] with the `tools` array serialised already (native tools only).
pub(crate) fn body_with_tools(
    request: &Request,
    options: BodyOptions,
    tools: Option<&RawValue>,
) -> Vec<u8> {
    let (max_tokens, max_completion_tokens) = match options.max_field {
        MaxTokensField::MaxTokens => (request.max_tokens, None),
        MaxTokensField::MaxCompletionTokens => (None, request.max_tokens),
    };
    let (system, tools) = match options.tool_format {
        ToolFormat::Native => (Cow::Borrowed(request.system.as_str()), tools),
        ToolFormat::Text => (system_with_tools(&request.system, &request.tools), None),
    };
    let body = WireRequest {
        model: &request.model,
        messages: wire_messages(system, &request.messages, options.tool_format),
        tools,
        stream: true,
        temperature: request.temperature,
        max_tokens,
        max_completion_tokens,
        options: options.num_ctx.map(|num_ctx| OllamaOptions { num_ctx }),
    };
    // Borrowed strings, numbers and `Value`s always serialise.
    serde_json::to_vec(&body).unwrap_or_default()
}

fn joined_text(parts: &[Part]) -> Option<Cow<'_, str>> {
    let mut texts = parts.iter().filter_map(|p| match p {
        Part::Text { text } => Some(text.as_str()),
        Part::Reasoning { .. } | Part::ToolCall(_) | Part::ToolResult(_) | Part::Image(_) => None,
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

fn wire_messages<'a>(
    system: Cow<'a, str>,
    messages: &'a [Message],
    tool_format: ToolFormat,
) -> Vec<WireMessage<'a>> {
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
        // Tool results become one `tool` message each, wherever they sit; in the text mode,
        // one user message for them all.
        match tool_format {
            ToolFormat::Native => {
                for part in &message.parts {
                    if let Part::ToolResult(result) = part {
                        out.push(WireMessage::Tool {
                            tool_call_id: &result.call_id,
                            content: &result.content,
                        });
                    }
                }
                out.extend(result_images(&message.parts));
            }
            ToolFormat::Text => {
                let results: Vec<String> = message
                    .parts
                    .iter()
                    .filter_map(|part| match part {
                        Part::ToolResult(r) => Some(result_as_text(&r.content, r.is_error)),
                        Part::Text { .. }
                        | Part::Reasoning { .. }
                        | Part::ToolCall(_)
                        | Part::Image(_) => None,
                    })
                    .collect();
                if !results.is_empty() {
                    out.push(WireMessage::User {
                        content: Cow::Owned(results.join("\n")),
                    });
                }
                out.extend(result_images(&message.parts));
            }
        }
        match message.role {
            Role::User => {
                if let Some(with_images) = user_parts(&message.parts) {
                    out.push(with_images);
                } else if let Some(content) = joined_text(&message.parts) {
                    out.push(WireMessage::User { content });
                }
            }
            Role::Assistant => {
                let tool_calls: Vec<WireToolCall<'_>> = message
                    .parts
                    .iter()
                    .filter_map(|p| match p {
                        Part::ToolCall(call) => Some(wire_tool_call(call)),
                        Part::Text { .. }
                        | Part::Reasoning { .. }
                        | Part::ToolResult(_)
                        | Part::Image(_) => None,
                    })
                    .collect();
                let mut content = joined_text(&message.parts);
                let tool_calls = match tool_format {
                    ToolFormat::Native => tool_calls,
                    ToolFormat::Text => {
                        content = with_calls_as_text(content, &message.parts);
                        Vec::new()
                    }
                };
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

/// An assistant message's text followed by its calls, written as the model would have.
fn with_calls_as_text<'a>(content: Option<Cow<'a, str>>, parts: &[Part]) -> Option<Cow<'a, str>> {
    let calls: Vec<String> = parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(call) => Some(call_as_text(call)),
            Part::Text { .. } | Part::Reasoning { .. } | Part::ToolResult(_) | Part::Image(_) => {
                None
            }
        })
        .collect();
    if calls.is_empty() {
        return content;
    }
    let calls = calls.join("\n");
    Some(Cow::Owned(match content {
        Some(text) => format!("{text}\n{calls}"),
        None => calls,
    }))
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

#[cfg(test)]
#[path = "wire_read_tests.rs"]
mod read;
#[cfg(test)]
use read::messages_from_openai;

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
