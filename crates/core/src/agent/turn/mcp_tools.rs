//! MCP tools in the agent loop. Servers start in the background; the first request waits
//! only for those still starting (each up to its `startup_timeout`) and warns of the ones
//! it goes without. Before every request the tool list is brought up to date: servers that
//! became ready join, changed tool lists (`tools/list_changed`) are listed again. Between
//! rounds no call is running, so the runner can be swapped whole.

use std::sync::Arc;

use rein_mcp::McpHub;
use rein_tools::{ToolKind, ToolRegistry};

use crate::agent::Agent;
use crate::agent::runner::CallEnv;
use crate::agent::tool_search::{SharedCatalog, ToolSearchBudget, ToolSearchTool};
use crate::permissions::PermissionMode;

/// The MCP servers an agent is offered the tools of, and which of them.
#[derive(Debug, Clone)]
pub(crate) struct McpOffer {
    pub(crate) hub: Arc<McpHub>,
    /// Which kinds of tool the mode offers (plan mode: read-only ones).
    pub(crate) mode: PermissionMode,
    /// Which of the servers' tools (a sub-agent's type may name them).
    pub(crate) only: McpFilter,
    /// When the MCP tools go through `tool_search`.
    pub(crate) budget: ToolSearchBudget,
}

/// Which MCP tools an agent is offered, beside what its mode allows.
#[derive(Debug, Clone)]
pub(crate) enum McpFilter {
    /// Every one (the main agent, a general sub-agent).
    All,
    /// The read-only ones (the `explore` sub-agent).
    ReadOnly,
    /// Those an agent type's `tools` list names: `mcp__github__get_issue`, a pattern
    /// `mcp__github__*`, or Claude Code's `mcp__github` for every tool of a server.
    Named(Vec<String>),
}

impl McpFilter {
    /// Whether the tool `name` of `kind` is offered.
    fn admits(&self, name: &str, kind: ToolKind) -> bool {
        match self {
            McpFilter::All => true,
            McpFilter::ReadOnly => kind == ToolKind::ReadOnly,
            McpFilter::Named(names) => names.iter().any(|wanted| {
                let wanted = wanted.trim();
                match wanted.strip_suffix('*') {
                    Some(prefix) => name.starts_with(prefix),
                    None => {
                        name == wanted
                            || name
                                .strip_prefix(wanted)
                                .is_some_and(|rest| rest.starts_with("__"))
                                && wanted.matches("__").count() == 1
                    }
                }
            }),
        }
    }
}

/// The MCP servers an agent offers tools of, and what it last offered.
pub(crate) struct McpTools {
    pub(crate) hub: Arc<McpHub>,
    /// Which of the servers' tools this agent is offered.
    pub(crate) only: McpFilter,
    /// The agent's other tools.
    pub(crate) base: Arc<ToolRegistry>,
    /// Which kinds of tool the mode offers (plan mode: read-only ones).
    pub(crate) mode: PermissionMode,
    /// The hub's generation and the count of tools found by `tool_search` the current
    /// tools come from.
    pub(crate) seen: Option<(u64, usize)>,
    /// When the MCP tools go through `tool_search`.
    pub(crate) budget: ToolSearchBudget,
    /// Set once the tools passed the budget: the MCP tools to search (for good).
    pub(crate) search: Option<SharedCatalog>,
    /// The first request has waited for the servers.
    pub(crate) waited: bool,
}

impl Agent {
    /// Brings the offered tools up to date with the MCP servers, before a request.
    pub(in crate::agent) async fn sync_mcp_tools(&mut self, env: &mut CallEnv) {
        let Some(mcp) = self.mcp.as_mut() else {
            return;
        };
        if !mcp.waited {
            mcp.waited = true;
            let report = mcp.hub.wait_started(&env.cancel).await;
            for message in report.warnings() {
                env.events.warn(message);
            }
        }
        mcp.hub.refresh().await;
        let generation = mcp.hub.generation();
        let found = mcp.search.as_ref().map_or(0, |c| c.lock().found_count());
        if mcp.seen == Some((generation, found)) {
            return;
        }
        mcp.seen = Some((generation, found));
        let mcp_tools: Vec<Arc<dyn rein_tools::DynTool>> = mcp
            .hub
            .tools()
            .into_iter()
            .filter(|tool| {
                mcp.mode.offers(tool.kind()) && mcp.only.admits(tool.name(), tool.kind())
            })
            .collect();
        let mut registry = mcp.base.offered(|_| true);
        if mcp.search.is_none() {
            let mut all = registry.offered(|_| true);
            for tool in &mcp_tools {
                all.register_arc(Arc::clone(tool));
            }
            if mcp.budget.exceeded(&tool_specs(&all)) {
                let catalog = SharedCatalog::default();
                env.events.warn(format!(
                    "{} MCP tools pass the tool budget ({} tools or {} KB of descriptions): \
                         the model finds them through tool_search",
                    mcp_tools.len(),
                    mcp.budget.max_tools,
                    mcp.budget.max_schema_bytes / 1024
                ));
                mcp.search = Some(catalog);
            }
        }
        match &mcp.search {
            Some(catalog) => {
                registry.register(ToolSearchTool::new(Arc::clone(catalog)));
                let mut catalog = catalog.lock();
                catalog.set_tools(mcp_tools);
                // After the agent's own tools: the request's start stays as it was.
                for tool in catalog.found() {
                    registry.register_arc(tool);
                }
            }
            None => {
                for tool in mcp_tools {
                    registry.register_arc(tool);
                }
            }
        }
        let registry = Arc::new(registry);
        let runner = Arc::new(self.runner.with_registry(Arc::clone(&registry)));
        self.runner = Arc::clone(&runner);
        env.runner = runner;
        self.request.tools = tool_specs(&registry);
        self.context
            .ledger
            .set_tools_tokens(crate::context::estimate::tools_tokens(&self.request.tools));
    }

    /// The MCP servers of this session, if any are configured.
    pub fn mcp_hub(&self) -> Option<&Arc<McpHub>> {
        self.mcp.as_ref().map(|m| &m.hub)
    }

    /// The text of resource `uri` of MCP server `server` (`@server:uri` in the REPL), with
    /// secret values masked as in every tool result: it is bound for the model. The error
    /// says why it could not be read (masked too: it can quote the server).
    pub async fn read_mcp_resource(
        &self,
        server: &str,
        uri: &str,
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<String, String> {
        let hub = self
            .mcp_hub()
            .ok_or_else(|| format!("there is no MCP server `{server}`"))?;
        let secrets = &self.runner.secrets;
        match hub.read_resource(server, uri, cancel).await {
            Ok(mut text) => {
                secrets.redact_in_place(&mut text);
                Ok(text)
            }
            Err(mut why) => {
                secrets.redact_in_place(&mut why);
                Err(why)
            }
        }
    }

    /// Stops the session's MCP servers (their connections closed, process groups stopped).
    pub async fn shutdown_mcp(&self) {
        if let Some(mcp) = &self.mcp {
            mcp.hub.shutdown().await;
        }
    }
}

/// The request's description of `registry`'s tools.
pub(in crate::agent) fn tool_specs(registry: &ToolRegistry) -> Vec<rein_llm::ToolSpec> {
    registry
        .info_refs()
        .map(|s| rein_llm::ToolSpec::new(&s.name, &s.description, Arc::clone(&s.parameters)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_agent_types_list_names_mcp_tools_one_by_one_by_pattern_or_by_server() {
        let named =
            |names: &[&str]| McpFilter::Named(names.iter().map(|n| (*n).to_owned()).collect());
        let write = ToolKind::Execute;
        assert!(named(&["mcp__gh__get_issue"]).admits("mcp__gh__get_issue", write));
        assert!(!named(&["mcp__gh__get_issue"]).admits("mcp__gh__get_issues", write));
        assert!(named(&["mcp__gh__*"]).admits("mcp__gh__delete", write));
        assert!(named(&["mcp__gh"]).admits("mcp__gh__delete", write));
        assert!(!named(&["mcp__gh"]).admits("mcp__ghx__delete", write));
        assert!(!named(&["read_file", "grep"]).admits("mcp__gh__delete", write));
        assert!(McpFilter::ReadOnly.admits("mcp__gh__get", ToolKind::ReadOnly));
        assert!(!McpFilter::ReadOnly.admits("mcp__gh__delete", write));
    }
}
