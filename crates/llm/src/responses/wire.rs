//! Requests in the OpenAI Responses API's format. rein sends the whole conversation every
//! time (`store: false`, no `previous_response_id`), so a session resumes from rein's own
//! file; reasoning items go back with their `encrypted_content`, as received.

use serde::Serialize;
use serde_json::{Value, json};

use crate::{Image, Message, Part, Request, Role, ToolArguments, ToolSpec};

#[derive(Serialize)]
struct WireRequest<'a> {
    model: &'a str,
    #[serde(skip_serializing_if = "str::is_empty")]
    instructions: &'a str,
    input: Vec<Value>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    stream: bool,
    store: bool,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    include: Vec<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_output_tokens: Option<u32>,
}

/// Whether `model` reasons, so its encrypted reasoning is asked for (other models refuse
/// the `include`).
fn is_reasoning_model(model: &str) -> bool {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    ["o1", "o3", "o4", "gpt-5", "codex"]
        .iter()
        .any(|prefix| name.starts_with(prefix))
        || name.contains("codex")
}

/// Serialises a streaming request body.
pub(crate) fn request_body(request: &Request) -> Vec<u8> {
    let body = WireRequest {
        model: &request.model,
        instructions: &request.system,
        input: input_items(&request.messages),
        tools: request.tools.iter().map(tool_json).collect(),
        stream: true,
        store: false,
        include: if is_reasoning_model(&request.model) {
            vec!["reasoning.encrypted_content"]
        } else {
            Vec::new()
        },
        temperature: request.temperature,
        max_output_tokens: request.max_tokens,
    };
    serde_json::to_vec(&body).unwrap_or_default()
}

/// A tool as the Responses API takes it: flat, not under `function`.
pub(crate) fn tool_json(tool: &ToolSpec) -> Value {
    json!({
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "strict": false,
    })
}

/// The conversation as input items.
pub(crate) fn input_items(messages: &[Message]) -> Vec<Value> {
    let mut items = Vec::new();
    for message in messages {
        // Images of tool results follow them in a user message: `function_call_output`
        // takes text everywhere, images not on every server that speaks this API.
        let mut result_images = Vec::new();
        for part in &message.parts {
            match (message.role, part) {
                (Role::User, Part::Text { text }) => {
                    items.push(json!({ "role": "user", "content": text }));
                }
                (Role::Assistant, Part::Text { text }) => items.push(json!({
                    "type": "message",
                    "role": "assistant",
                    "content": [{ "type": "output_text", "text": text }],
                })),
                (_, Part::Reasoning { redacted, .. }) => {
                    // Only a whole reasoning item (as the stream gave it) goes back.
                    if let Some(item) = redacted
                        .as_deref()
                        .and_then(|data| serde_json::from_str::<Value>(data).ok())
                        .filter(|item| item["type"] == "reasoning")
                    {
                        items.push(item);
                    }
                }
                (_, Part::ToolCall(call)) => {
                    let arguments = match &call.arguments {
                        ToolArguments::Json { value } => value.to_string(),
                        ToolArguments::Invalid { raw, .. } => raw.clone(),
                    };
                    items.push(json!({
                        "type": "function_call",
                        "call_id": call.id,
                        "name": call.name,
                        "arguments": arguments,
                    }));
                }
                (_, Part::ToolResult(result)) => {
                    items.push(json!({
                        "type": "function_call_output",
                        "call_id": result.call_id,
                        "output": result.content,
                    }));
                    if !result.images.is_empty() {
                        result_images.push(json!({
                            "type": "input_text",
                            "text": format!("The image{} the tool call {} returned:",
                                if result.images.len() == 1 { "" } else { "s" },
                                result.call_id),
                        }));
                        result_images.extend(result.images.iter().map(input_image));
                    }
                }
                (_, Part::Image(image)) => items.push(json!({
                    "role": "user",
                    "content": [input_image(image)],
                })),
                (Role::Tool, Part::Text { text }) => {
                    items.push(json!({ "role": "user", "content": text }));
                }
            }
        }
        if !result_images.is_empty() {
            items.push(json!({ "role": "user", "content": result_images }));
        }
    }
    items
}

fn input_image(image: &Image) -> Value {
    json!({ "type": "input_image", "image_url": image.data_url() })
}
