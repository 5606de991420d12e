//! `tool_search { query }`: when the offered tools would pass a budget (more than
//! [`ToolSearchBudget::max_tools`] tools, or more than [`ToolSearchBudget::max_schema_bytes`]
//! of tool descriptions), the MCP servers' tools are not listed in the request; the model
//! finds them with this tool by words of their names and descriptions, and those it finds
//! are offered from its next round on, added at the end of the tool list so the request
//! before them stays byte-identical (what prompt caches key on). Below the budget nothing
//! changes. Once a session has switched to search it stays so, for the same reason.

use std::sync::Arc;

use parking_lot::Mutex;
use rein_tools::{DynTool, Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use schemars::JsonSchema;
use serde::Deserialize;

/// The tool's name.
pub const TOOL_SEARCH: &str = "tool_search";
/// Tools offered at most before MCP tools go through search (OpenAI refuses past 128).
pub const TOOL_SEARCH_MAX_TOOLS: usize = 128;
/// Bytes of tool descriptions (names, descriptions, schemas) at most before MCP tools go
/// through search.
pub const TOOL_SEARCH_MAX_SCHEMA_BYTES: usize = 48 * 1024;
/// Tools one search makes callable, at most.
const RESULTS_MAX: usize = 8;

/// When the MCP tools go through `tool_search`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolSearchBudget {
    /// More offered tools than this switches to search.
    pub max_tools: usize,
    /// More bytes of tool descriptions than this switches to search.
    pub max_schema_bytes: usize,
}

impl Default for ToolSearchBudget {
    fn default() -> Self {
        ToolSearchBudget {
            max_tools: TOOL_SEARCH_MAX_TOOLS,
            max_schema_bytes: TOOL_SEARCH_MAX_SCHEMA_BYTES,
        }
    }
}

impl From<&crate::config::ToolSearchSettings> for ToolSearchBudget {
    /// The budget `[tool_search]` makes: each key it leaves out at its default.
    fn from(settings: &crate::config::ToolSearchSettings) -> Self {
        let default = ToolSearchBudget::default();
        ToolSearchBudget {
            max_tools: settings.max_tools.unwrap_or(default.max_tools),
            max_schema_bytes: settings
                .max_schema_kb
                .map_or(default.max_schema_bytes, |kb| kb.saturating_mul(1024)),
        }
    }
}

impl ToolSearchBudget {
    /// Whether these tool descriptions pass the budget.
    pub(crate) fn exceeded(&self, specs: &[rein_llm::ToolSpec]) -> bool {
        let bytes: usize = specs
            .iter()
            .map(|s| {
                s.name.len()
                    + s.description.len()
                    + serde_json::to_string(&s.parameters).map_or(0, |p| p.len())
            })
            .sum();
        specs.len() > self.max_tools || bytes > self.max_schema_bytes
    }
}

/// The MCP tools to search, and those found so far (in the order found).
#[derive(Default)]
pub(crate) struct Catalog {
    tools: Vec<Arc<dyn DynTool>>,
    found: Vec<String>,
}

impl Catalog {
    /// The tools to search now (servers join, lists change).
    pub(crate) fn set_tools(&mut self, tools: Vec<Arc<dyn DynTool>>) {
        self.tools = tools;
    }

    /// The tools found so far that still exist, in the order found.
    pub(crate) fn found(&self) -> Vec<Arc<dyn DynTool>> {
        self.found
            .iter()
            .filter_map(|name| self.tools.iter().find(|t| t.name() == name).cloned())
            .collect()
    }

    /// How many tools have been found so far.
    pub(crate) fn found_count(&self) -> usize {
        self.found.len()
    }
}

/// The catalog shared between the agent's tool list and the `tool_search` tool.
pub(crate) type SharedCatalog = Arc<Mutex<Catalog>>;

/// The `tool_search` tool.
pub(crate) struct ToolSearchTool {
    catalog: SharedCatalog,
}

impl ToolSearchTool {
    pub(crate) fn new(catalog: SharedCatalog) -> Self {
        ToolSearchTool { catalog }
    }
}

/// The tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct ToolSearchArgs {
    /// Words to find in tool names and descriptions, e.g. "github issue" or an exact name.
    query: String,
}

/// Words of `text`, lower case.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// How well a tool matches the query's words: a word in its name counts more than one in
/// its description, a whole word more than its start; the exact name wins outright.
fn score(query: &str, terms: &[String], tool: &dyn DynTool) -> usize {
    if tool.name() == query.trim() {
        return usize::MAX;
    }
    let name = words(tool.name());
    let description = words(tool.description());
    let weigh = |words: &[String], term: &str| {
        if words.iter().any(|w| w == term) {
            2
        } else {
            usize::from(words.iter().any(|w| w.starts_with(term)))
        }
    };
    terms
        .iter()
        .map(|term| 3 * weigh(&name, term) + weigh(&description, term))
        .sum()
}

#[async_trait]
impl Tool for ToolSearchTool {
    type Args = ToolSearchArgs;

    fn name(&self) -> &'static str {
        TOOL_SEARCH
    }

    fn description(&self) -> &str {
        "Find tools of the connected MCP servers (there are too many to list) by words of \
         their names and descriptions, or by exact name. The tools found can be called from \
         your next step on."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn run(&self, args: ToolSearchArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let terms = words(&args.query);
        if terms.is_empty() {
            return Err(ToolError::model(
                "`query` is empty: give words to look for in tool names and descriptions",
            ));
        }
        let mut catalog = self.catalog.lock();
        let mut scored: Vec<(usize, Arc<dyn DynTool>)> = catalog
            .tools
            .iter()
            .map(|t| (score(&args.query, &terms, t.as_ref()), Arc::clone(t)))
            .filter(|(s, _)| *s > 0)
            .collect();
        // Best first; among equals, the servers' order. A tool asked for by its exact name
        // comes alone: the others sharing its words would join every later request.
        scored.sort_by_key(|s| std::cmp::Reverse(s.0));
        if scored.first().is_some_and(|(s, _)| *s == usize::MAX) {
            scored.retain(|(s, _)| *s == usize::MAX);
        }
        scored.truncate(RESULTS_MAX);
        if scored.is_empty() {
            return Ok(ToolOutput::success(format!(
                "No tool matches \"{}\" among the {} MCP tools. Try other words.",
                args.query.trim(),
                catalog.tools.len()
            )));
        }
        let mut text = String::from("Callable from your next step:\n");
        for (_, tool) in &scored {
            let name = tool.name().to_owned();
            text.push_str(&format!("- {name}: {}\n", tool.description()));
            if !catalog.found.contains(&name) {
                catalog.found.push(name);
            }
        }
        Ok(ToolOutput::success(text))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_takes_what_tool_search_sets_and_defaults_the_rest() {
        let settings = crate::config::ToolSearchSettings {
            max_tools: Some(10),
            max_schema_kb: None,
        };
        let budget = ToolSearchBudget::from(&settings);
        assert_eq!(budget.max_tools, 10);
        assert_eq!(budget.max_schema_bytes, 48 * 1024);
        let settings = crate::config::ToolSearchSettings {
            max_tools: None,
            max_schema_kb: Some(2),
        };
        let budget = ToolSearchBudget::from(&settings);
        assert_eq!(budget.max_tools, TOOL_SEARCH_MAX_TOOLS);
        assert_eq!(budget.max_schema_bytes, 2048);
    }
}
