//! The conversation in Anthropic's Messages format, both ways.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;

use crate::cache::{CacheControl, CacheTtl};
use crate::toolspec::AnthropicTool;
use crate::{Image, Message, Part, Request, Role, ToolArguments, ToolSpec};

/// The API version rein speaks, sent as `anthropic-version`.
pub(crate) const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The output limit sent when the request sets none (the API requires one).
const DEFAULT_MAX_TOKENS: u32 = 8192;
/// The output limit of the original Claude 3 models, which reject more.
const CLAUDE_3_MAX_TOKENS: u32 = 4096;

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    thinking: Option<Thinking>,
    /// Content blocks (not a plain string), so the prompt can carry a cache breakpoint.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    system: Vec<SystemBlock<'a>>,
    messages: Vec<WireMessage<'a>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tools: Option<&'a RawValue>,
    stream: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
}

/// Extended thinking, `{"type": "enabled", "budget_tokens": N}`.
#[derive(Serialize)]
struct Thinking {
    #[serde(rename = "type")]
    kind: &'static str,
    budget_tokens: u32,
}

/// A text block of the system prompt.
#[derive(Serialize)]
struct SystemBlock<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache_control: Option<CacheControl>,
}

#[derive(Serialize)]
struct WireMessage<'a> {
    role: &'static str,
    content: Vec<Block<'a>>,
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Block<'a> {
    Thinking {
        thinking: &'a str,
        signature: &'a str,
    },
    RedactedThinking {
        data: &'a str,
    },
    Text {
        text: &'a str,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolUse {
        id: &'a str,
        name: &'a str,
        input: &'a Value,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    ToolResult {
        tool_use_id: &'a str,
        content: ResultContent<'a>,
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        is_error: bool,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    Image {
        source: ImageSource<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
}

/// A tool result's content: its text, or (with images) text and image blocks.
#[derive(Serialize)]
#[serde(untagged)]
enum ResultContent<'a> {
    Text(&'a str),
    Blocks(Vec<ResultBlock<'a>>),
}

#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ResultBlock<'a> {
    Text { text: &'a str },
    Image { source: ImageSource<'a> },
}

/// An image's bytes, inline.
#[derive(Serialize)]
struct ImageSource<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    media_type: &'a str,
    data: &'a str,
}

impl<'a> From<&'a Image> for ImageSource<'a> {
    fn from(image: &'a Image) -> Self {
        ImageSource {
            kind: "base64",
            media_type: &image.media_type,
            data: &image.data,
        }
    }
}

impl Block<'_> {
    /// Marks the block as a cache breakpoint; thinking blocks cannot be one (the API refuses
    /// it), so `false` says the mark must go elsewhere.
    fn mark(&mut self, control: CacheControl) -> bool {
        match self {
            Block::Text { cache_control, .. }
            | Block::ToolUse { cache_control, .. }
            | Block::ToolResult { cache_control, .. }
            | Block::Image { cache_control, .. } => {
                *cache_control = Some(control);
                true
            }
            Block::Thinking { .. } | Block::RedactedThinking { .. } => false,
        }
    }
}

/// What the Anthropic client adds to every request besides the conversation.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct WireOptions {
    /// Extended thinking's budget in tokens; `None` leaves thinking off.
    pub(crate) thinking_budget_tokens: Option<u32>,
    /// How long the prompt cache keeps what the breakpoints mark.
    pub(crate) cache_ttl: CacheTtl,
}

static EMPTY_OBJECT: std::sync::LazyLock<Value> =
    std::sync::LazyLock::new(|| Value::Object(serde_json::Map::new()));

/// The output limit for `model` when the request sets none.
fn default_max_tokens(model: &str) -> u32 {
    let m = model.to_ascii_lowercase();
    let original_claude_3 = ["claude-3-opus", "claude-3-sonnet", "claude-3-haiku"]
        .iter()
        .any(|p| m.starts_with(p));
    if original_claude_3 {
        CLAUDE_3_MAX_TOKENS
    } else {
        DEFAULT_MAX_TOKENS
    }
}

/// Serialises a streaming request body, its cache breakpoints marked (see [`crate::cache`]).
/// With a thinking budget (tokens), extended thinking is on, within the API's rules: the
/// output limit must exceed the budget (it is raised by the usual answer allowance when it
/// does not), and temperature may not be set.
pub(crate) fn request_body(request: &Request, options: WireOptions) -> Vec<u8> {
    let tools = (!request.tools.is_empty()).then(|| tools_json(&request.tools, options));
    body_with_tools(request, options, tools.as_deref())
}

/// A request's `tools` array, serialised, the stable prefix's breakpoint on its last tool.
pub(crate) fn tools_json(tools: &[ToolSpec], options: WireOptions) -> Box<RawValue> {
    let mut tools: Vec<AnthropicTool<'_>> = tools.iter().map(AnthropicTool::from).collect();
    if let Some(last) = tools.last_mut() {
        last.cache_control = Some(CacheControl::new(options.cache_ttl));
    }
    // Borrowed strings and `Value`s always serialise.
    serde_json::value::to_raw_value(&tools).unwrap_or_default()
}

/// [`request_body`] with the `tools` array serialised already.
pub(crate) fn body_with_tools(
    request: &Request,
    options: WireOptions,
    tools: Option<&RawValue>,
) -> Vec<u8> {
    let thinking_budget_tokens = options.thinking_budget_tokens;
    let mut max_tokens = request
        .max_tokens
        .unwrap_or_else(|| default_max_tokens(&request.model));
    let mut temperature = request.temperature;
    let thinking = thinking_budget_tokens.map(|budget_tokens| {
        if max_tokens <= budget_tokens {
            max_tokens = budget_tokens.saturating_add(default_max_tokens(&request.model));
        }
        temperature = None;
        Thinking {
            kind: "enabled",
            budget_tokens,
        }
    });
    let control = CacheControl::new(options.cache_ttl);
    // The stable prefix: the tools (their breakpoint is in `tools`), then the system prompt
    // with the project's instructions.
    let system = if request.system.is_empty() {
        Vec::new()
    } else {
        vec![SystemBlock {
            kind: "text",
            text: &request.system,
            cache_control: Some(control),
        }]
    };
    let mut messages = wire_messages(&request.messages);
    // The moving breakpoints: the newest message, and the one that was newest a round ago
    // (two back: an assistant answer lies between), whose prefix that round wrote.
    let len = messages.len();
    for at in [len.checked_sub(1), len.checked_sub(3)]
        .into_iter()
        .flatten()
    {
        if let Some(message) = messages.get_mut(at) {
            let _ = message.content.iter_mut().rev().any(|b| b.mark(control));
        }
    }
    let body = WireRequest {
        model: &request.model,
        max_tokens,
        thinking,
        system,
        messages,
        tools,
        stream: true,
        temperature,
    };
    serde_json::to_vec(&body).unwrap_or_default()
}

fn block(part: &Part) -> Option<Block<'_>> {
    match part {
        Part::Text { text } if text.is_empty() => None, // the API rejects empty text blocks
        Part::Text { text } => Some(Block::Text {
            text,
            cache_control: None,
        }),
        // Thinking goes back exactly as it came, signed or redacted; unsigned reasoning (from
        // another provider) stays local.
        Part::Reasoning {
            redacted: Some(data),
            ..
        } => Some(Block::RedactedThinking { data }),
        Part::Reasoning {
            text,
            signature,
            redacted: None,
        } => signature.as_deref().map(|signature| Block::Thinking {
            thinking: text,
            signature,
        }),
        Part::ToolCall(call) => Some(Block::ToolUse {
            id: &call.id,
            name: &call.name,
            input: match &call.arguments {
                ToolArguments::Json { value } if value.is_object() => value,
                // `input` must be an object; the tool result tells the model what was wrong.
                ToolArguments::Json { .. } | ToolArguments::Invalid { .. } => &EMPTY_OBJECT,
            },
            cache_control: None,
        }),
        Part::ToolResult(result) => Some(Block::ToolResult {
            tool_use_id: &result.call_id,
            content: if result.images.is_empty() {
                ResultContent::Text(&result.content)
            } else {
                // The API takes image blocks inside a tool result.
                let text = (!result.content.is_empty()).then_some(ResultBlock::Text {
                    text: &result.content,
                });
                let images = result.images.iter().map(|image| ResultBlock::Image {
                    source: image.into(),
                });
                ResultContent::Blocks(text.into_iter().chain(images).collect())
            },
            is_error: result.is_error,
            cache_control: None,
        }),
        Part::Image(image) => Some(Block::Image {
            source: image.into(),
            cache_control: None,
        }),
    }
}

/// Maps the conversation; tool results and user text that follow each other form one user
/// message (results first, as the API requires), since roles must alternate.
fn wire_messages(messages: &[Message]) -> Vec<WireMessage<'_>> {
    let mut out: Vec<WireMessage<'_>> = Vec::with_capacity(messages.len());
    for message in messages {
        let role = match message.role {
            Role::User | Role::Tool => "user",
            Role::Assistant => "assistant",
        };
        let blocks = message.parts.iter().filter_map(block);
        match out.last_mut() {
            Some(last) if last.role == role => last.content.extend(blocks),
            _ => out.push(WireMessage {
                role,
                content: blocks.collect(),
            }),
        }
    }
    out.retain(|m| !m.content.is_empty());
    for m in &mut out {
        // A stable sort keeps the order within results and within the rest.
        m.content
            .sort_by_key(|b| !matches!(b, Block::ToolResult { .. }));
    }
    out
}

#[cfg(test)]
#[path = "wire_read_tests.rs"]
mod read;
#[cfg(test)]
use read::messages_from_anthropic;

#[cfg(test)]
#[path = "wire_tests.rs"]
mod tests;
