//! MCP tools in the agent loop. Servers start in the background; the first request waits
//! only for those still starting (each up to its `startup_timeout`) and warns of the ones
//! it goes without. Before every request the tool list is brought up to date: servers that
//! became ready join, changed tool lists (`tools/list_changed`) are listed again. Between
//! rounds no call is running, so the runner can be swapped whole.

use std::sync::Arc;

use rein_mcp::McpHub;
use rein_tools::ToolRegistry;

use crate::agent::Agent;
use crate::agent::event::AgentEvent;
use crate::agent::runner::CallEnv;
use crate::permissions::PermissionMode;

/// The MCP servers an agent offers tools of, and what it last offered.
pub(crate) struct McpTools {
    pub(crate) hub: Arc<McpHub>,
    /// The agent's other tools.
    pub(crate) base: Arc<ToolRegistry>,
    /// Which kinds of tool the mode offers (plan mode: read-only ones).
    pub(crate) mode: PermissionMode,
    /// The hub's generation the current tools come from.
    pub(crate) seen: Option<u64>,
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
                env.events.emit(AgentEvent::Warning { message });
            }
        }
        mcp.hub.refresh().await;
        let generation = mcp.hub.generation();
        if mcp.seen == Some(generation) {
            return;
        }
        mcp.seen = Some(generation);
        let mut registry = mcp.base.offered(|_| true);
        for tool in mcp.hub.tools() {
            if mcp.mode.offers(tool.kind()) {
                registry.register_arc(tool);
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
        .infos()
        .into_iter()
        .map(|s| rein_llm::ToolSpec::new(s.name, s.description, s.parameters))
        .collect()
}
