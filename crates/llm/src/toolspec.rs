//! Rendering tool descriptions into each wire format: `function` for OpenAI, `input_schema`
//! for Anthropic.

use parking_lot::Mutex;
use serde::Serialize;
use serde_json::value::RawValue;

use crate::{ProviderKind, ToolSpec};

/// The `tools` array of the last request, serialised: a conversation sends the same tools
/// every round, and serialising their schemas was a third of writing a request. An unchanged
/// list compares cheaply (the schemas are shared, and compared by pointer first).
#[derive(Debug, Default)]
pub(crate) struct ToolsCache(Mutex<Option<(Vec<ToolSpec>, Box<RawValue>)>>);

impl ToolsCache {
    /// Calls `write` with `tools` serialised, by `render` when they are not the last ones.
    pub(crate) fn with<R>(
        &self,
        tools: &[ToolSpec],
        render: impl FnOnce(&[ToolSpec]) -> Box<RawValue>,
        write: impl FnOnce(&RawValue) -> R,
    ) -> R {
        let mut cached = self.0.lock();
        if cached
            .as_ref()
            .is_some_and(|(last, _)| last.as_slice() != tools)
        {
            *cached = None;
        }
        let (_, json) = cached.get_or_insert_with(|| (tools.to_vec(), render(tools)));
        write(json)
    }
}

/// An OpenAI tool: `{"type": "function", "function": {name, description, parameters}}`.
#[derive(Debug, Serialize)]
pub(crate) struct OpenAiTool<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    function: OpenAiFunction<'a>,
}

#[derive(Debug, Serialize)]
struct OpenAiFunction<'a> {
    name: &'a str,
    description: &'a str,
    parameters: Schema<'a>,
}

/// An Anthropic tool: `{name, description, input_schema}`, and `cache_control` on the last
/// tool of a request.
#[derive(Debug, Serialize)]
pub(crate) struct AnthropicTool<'a> {
    name: &'a str,
    description: &'a str,
    input_schema: Schema<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) cache_control: Option<crate::cache::CacheControl>,
}

/// A parameters schema; both APIs insist on an object schema, so anything else (a tool
/// with no parameters, `null`) becomes the empty object schema.
#[derive(Debug)]
struct Schema<'a>(&'a serde_json::Value);

impl Serialize for Schema<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        if self.0.is_object() {
            self.0.serialize(s)
        } else {
            serde_json::json!({"type": "object", "properties": {}}).serialize(s)
        }
    }
}

impl<'a> From<&'a ToolSpec> for OpenAiTool<'a> {
    fn from(spec: &'a ToolSpec) -> Self {
        Self {
            kind: "function",
            function: OpenAiFunction {
                name: &spec.name,
                description: &spec.description,
                parameters: Schema(&spec.parameters),
            },
        }
    }
}

impl<'a> From<&'a ToolSpec> for AnthropicTool<'a> {
    fn from(spec: &'a ToolSpec) -> Self {
        Self {
            name: &spec.name,
            description: &spec.description,
            input_schema: Schema(&spec.parameters),
            cache_control: None,
        }
    }
}

/// Renders one tool in `kind`'s wire format.
pub fn tool_to_wire(spec: &ToolSpec, kind: ProviderKind) -> serde_json::Value {
    let rendered = match kind {
        ProviderKind::OpenAi => serde_json::to_value(OpenAiTool::from(spec)),
        ProviderKind::Anthropic => serde_json::to_value(AnthropicTool::from(spec)),
        ProviderKind::OpenAiResponses => Ok(crate::responses::wire::tool_json(spec)),
    };
    // Serialising borrowed strings and a `Value` into a `Value` cannot fail.
    rendered.unwrap_or_default()
}

/// Renders a tool list in `kind`'s wire format, as the JSON array of a request's `tools`.
pub fn tools_to_wire(specs: &[ToolSpec], kind: ProviderKind) -> serde_json::Value {
    serde_json::Value::Array(specs.iter().map(|s| tool_to_wire(s, kind)).collect())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn read_file() -> ToolSpec {
        ToolSpec::new(
            "read_file",
            "Reads a file.",
            json!({"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}),
        )
    }

    #[test]
    fn openai_form_nests_a_function() {
        assert_eq!(
            tool_to_wire(&read_file(), ProviderKind::OpenAi),
            json!({"type":"function","function":{"name":"read_file","description":"Reads a file.",
                "parameters":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}})
        );
    }

    #[test]
    fn anthropic_form_uses_input_schema() {
        assert_eq!(
            tools_to_wire(&[read_file()], ProviderKind::Anthropic),
            json!([{"name":"read_file","description":"Reads a file.",
                "input_schema":{"type":"object","properties":{"file_path":{"type":"string"}},"required":["file_path"]}}])
        );
    }

    #[test]
    fn a_missing_schema_becomes_an_empty_object_schema() {
        let spec = ToolSpec::new("todo", "d", serde_json::Value::Null);
        assert_eq!(
            tool_to_wire(&spec, ProviderKind::Anthropic)["input_schema"],
            json!({"type":"object","properties":{}})
        );
    }
}
