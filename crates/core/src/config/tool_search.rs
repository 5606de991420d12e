//! The `[tool_search]` table: when the MCP tools go through `tool_search` instead of being
//! listed in every request (see `agent::tool_search`).

use serde::Deserialize;

/// `[tool_search]` of every layer, a later one's keys over an earlier one's (merged as
/// TOML, then read once: a key here is one field).
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolSearchSettings {
    /// More offered tools than this: the MCP tools go through search (default 128).
    pub max_tools: Option<usize>,
    /// More KB of tool descriptions than this: the MCP tools go through search (default 48).
    pub max_schema_kb: Option<usize>,
}

impl ToolSearchSettings {
    /// Puts `above` on top of these settings: each key it sets wins.
    pub(crate) fn stack(&mut self, above: ToolSearchSettings) {
        self.max_tools = above.max_tools.or(self.max_tools);
        self.max_schema_kb = above.max_schema_kb.or(self.max_schema_kb);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_read_and_mistakes_named() {
        let read = |text: &str| {
            let table = toml::Value::Table(toml::from_str(text).unwrap());
            super::super::de::read_keys::<ToolSearchSettings>(
                &table,
                "tool_search",
                "[tool_search]",
            )
            .map_err(|e| e.message)
        };
        let settings = read("max_tools = 10").unwrap();
        assert_eq!(settings.max_tools, Some(10));
        assert_eq!(settings.max_schema_kb, None);
        let error = read("max_tool = 10").unwrap_err();
        assert!(
            error.contains("max_tool") && error.contains("max_tools"),
            "{error}"
        );
        let error = read("max_tools = -1").unwrap_err();
        assert!(error.contains("tool_search.max_tools"), "{error}");
    }
}
