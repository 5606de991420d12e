//! The text mode's wording: the tools in the system prompt, calls and results as text, in
//! the Hermes format most open models' templates use.

use std::borrow::Cow;

use crate::{ToolArguments, ToolCall, ToolSpec};

/// The description of the tools, with `{tools}` standing for their signatures.
const TOOLS_PROMPT: &str = include_str!("tools_prompt.md");

/// `system` followed by the description of `tools`.
pub(crate) fn system_with_tools<'a>(system: &'a str, tools: &[ToolSpec]) -> Cow<'a, str> {
    if tools.is_empty() {
        return Cow::Borrowed(system);
    }
    let signatures: Vec<String> = tools
        .iter()
        .map(|tool| {
            serde_json::json!({
                "type": "function",
                "function": {
                    "name": tool.name,
                    "description": tool.description,
                    "parameters": tool.parameters,
                },
            })
            .to_string()
        })
        .collect();
    let described = TOOLS_PROMPT.replace("{tools}", &signatures.join("\n"));
    if system.is_empty() {
        Cow::Owned(described)
    } else {
        Cow::Owned(format!("{system}\n\n{described}"))
    }
}

/// A call as the model would have written it.
pub(crate) fn call_as_text(call: &ToolCall) -> String {
    let arguments = match &call.arguments {
        ToolArguments::Json { value } => value.to_string(),
        ToolArguments::Invalid { raw, .. } => raw.clone(),
    };
    let name = serde_json::Value::String(call.name.clone());
    format!("<tool_call>\n{{\"name\": {name}, \"arguments\": {arguments}}}\n</tool_call>")
}

/// A result as the model's template expects it.
pub(crate) fn result_as_text(content: &str, is_error: bool) -> String {
    let label = if is_error { "error: " } else { "" };
    format!("<tool_response>\n{label}{content}\n</tool_response>")
}
