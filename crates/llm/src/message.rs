//! The provider-neutral conversation: what rein stores in sessions and sends to every provider.

use serde::{Deserialize, Serialize};

/// Who said a message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// The person, or rein speaking for them.
    User,
    /// The model.
    Assistant,
    /// Results of the assistant's tool calls; holds only [`Part::ToolResult`] parts.
    Tool,
}

/// One message of the conversation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Message {
    /// Who said it.
    pub role: Role,
    /// What was said, in order.
    pub parts: Vec<Part>,
}

/// One piece of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Part {
    /// Plain text.
    Text {
        /// The text.
        text: String,
    },
    /// The model's reasoning, kept apart from its answer. Some providers refuse the next
    /// request unless it comes back unchanged (DeepSeek's `reasoning_content`, Anthropic's
    /// signed and redacted thinking blocks).
    Reasoning {
        /// The reasoning text (empty for a redacted block).
        text: String,
        /// Anthropic's signature for a thinking block, needed to send it back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        signature: Option<String>,
        /// Anthropic's `redacted_thinking` block: encrypted reasoning with no readable text,
        /// sent back exactly as received.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        redacted: Option<String>,
    },
    /// A tool call made by the assistant.
    ToolCall(ToolCall),
    /// The result of one tool call.
    ToolResult(ToolResult),
    /// An image the person attached (`@shot.png`).
    Image(Image),
}

impl Part {
    /// The tool call this part is, if it is one.
    pub fn as_tool_call(&self) -> Option<&ToolCall> {
        match self {
            Part::ToolCall(call) => Some(call),
            Part::Text { .. } | Part::Reasoning { .. } | Part::ToolResult(_) | Part::Image(_) => {
                None
            }
        }
    }
}

/// An image for the model: its bytes, base64, and their media type.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Image {
    /// `image/png`, `image/jpeg`, `image/gif` or `image/webp`.
    pub media_type: String,
    /// The bytes, base64 (standard alphabet, padded).
    pub data: String,
}

impl Image {
    /// The image as a `data:` URL, as OpenAI's APIs take it.
    pub fn data_url(&self) -> String {
        format!("data:{};base64,{}", self.media_type, self.data)
    }
}

/// A tool call requested by the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    /// The provider's id for the call; the result refers to it.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, as parsed.
    pub arguments: ToolArguments,
}

/// A tool call's arguments: valid JSON, or the raw text the model sent when it was not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ToolArguments {
    /// Arguments that parsed as JSON (empty arguments are `{}`).
    Json {
        /// The parsed value.
        value: serde_json::Value,
    },
    /// Arguments that were not valid JSON, kept so the model can be told what was wrong.
    Invalid {
        /// Exactly what the model sent.
        raw: String,
        /// Why it did not parse.
        error: String,
    },
}

/// The result of one tool call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// What the tool returned, as text for the model.
    pub content: String,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub is_error: bool,
    /// Images the result gives the model (read_file on a picture, an MCP tool's image).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<Image>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasoning_written_before_redacted_blocks_existed_still_reads() {
        let old: Part =
            serde_json::from_str(r#"{"type":"reasoning","text":"hm","signature":"sig"}"#).unwrap();
        assert_eq!(
            old,
            Part::Reasoning {
                text: "hm".into(),
                signature: Some("sig".into()),
                redacted: None,
            }
        );
        let redacted = Part::Reasoning {
            text: String::new(),
            signature: None,
            redacted: Some("opaque".into()),
        };
        let written = serde_json::to_string(&redacted).unwrap();
        assert_eq!(
            written,
            r#"{"type":"reasoning","text":"","redacted":"opaque"}"#
        );
        assert_eq!(serde_json::from_str::<Part>(&written).unwrap(), redacted);
    }
}
