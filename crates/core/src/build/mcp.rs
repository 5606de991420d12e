//! The MCP servers an agent offers the tools of: started early or when the agent is built,
//! or given already started.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rein_tools::sandbox::Sandbox;

use super::AgentBuilder;

impl AgentBuilder {
    /// Starts the configured MCP servers now, in the background, rather than when the agent
    /// is built: the earlier they start, the less the first request may wait for them. Needs
    /// a tokio runtime (without one they start, if at all, when the agent is built).
    /// The sandbox level and the settings it depends on are to be set first.
    pub fn start_mcp(mut self) -> Self {
        if self.mcp_hub.is_none() && tokio::runtime::Handle::try_current().is_ok() {
            let made = self.mcp_sandbox(|| self.agent_sandbox());
            // One sandbox, one private TMPDIR: the agent built later runs in this one too.
            if made.is_some() {
                self.early_sandbox.clone_from(&made);
            }
            let sandbox = made.map(|made| made.sandbox);
            self.mcp_hub = start_mcp(
                std::mem::take(&mut self.mcp_plan),
                &self.workspace,
                self.mcp_log_dir.clone(),
                self.mcp_auth_dir.clone(),
                self.secrets.env_remove(),
                sandbox,
            );
        }
        self
    }

    /// The sandbox for the stdio servers configured `sandboxed` (none: `None`): the one the
    /// agent's commands run in ([`AgentBuilder::agent_sandbox`]), wherever the servers start.
    pub(super) fn mcp_sandbox<S>(&self, sandbox: impl FnOnce() -> S) -> Option<S> {
        (!self.mcp_sandboxed.is_empty()).then(sandbox)
    }

    /// These MCP servers (started already) instead of the configured ones.
    pub fn mcp_hub(mut self, hub: Arc<rein_mcp::McpHub>) -> Self {
        self.mcp_hub = Some(hub);
        self
    }

    /// The MCP servers of the agent this one replaces (`/model`, `/permissions`), running
    /// already, unless some run in the OS sandbox and this agent's sandbox is not the one
    /// they run in (entering or leaving `auto`, another `[sandbox]`): the configured servers
    /// then start again, in this agent's sandbox, rather than go on in the old policy. The
    /// old servers stop when the last holder of `hub` lets it go.
    pub fn keep_mcp_hub(self, hub: Arc<rein_mcp::McpHub>) -> Self {
        if self.mcp_sandboxed.is_empty() || self.keeps_sandbox() {
            self.mcp_hub(hub)
        } else {
            self.start_mcp()
        }
    }

    /// The MCP servers started with [`AgentBuilder::start_mcp`] or given with
    /// [`AgentBuilder::mcp_hub`] (none configured: `None`).
    pub fn started_mcp(&self) -> Option<&Arc<rein_mcp::McpHub>> {
        self.mcp_hub.as_ref()
    }

    /// When the MCP tools go through `tool_search` instead of being listed (default: more
    /// than 128 tools or 48 KB of tool descriptions).
    pub fn tool_search_budget(mut self, budget: crate::agent::ToolSearchBudget) -> Self {
        self.tool_search_budget = budget;
        self
    }

    /// The project's MCP servers that do not start until the person runs `rein trust`.
    pub fn mcp_awaiting_trust(&self) -> &[String] {
        &self.mcp_awaiting_trust
    }

    /// The configured MCP servers not started (disabled, untrusted, naming an unset
    /// variable), and why.
    pub fn mcp_skipped(&self) -> &[crate::mcp::SkippedServer] {
        &self.mcp_skipped
    }

    /// What the person should know about the configured MCP servers: those left out (an
    /// untrusted project's, one naming an unset variable; these are among
    /// [`AgentBuilder::warnings`] too), and, when some are to run in the OS sandbox, why it
    /// cannot be enforced here if it cannot ([`AgentBuilder::sandbox_warning`]).
    pub fn mcp_warnings(&self) -> Vec<String> {
        let mut warnings = self.mcp_warnings.clone();
        if !self.mcp_sandboxed.is_empty() {
            warnings.extend(self.sandbox_warning());
        }
        warnings
    }
}

/// Starts the planned MCP servers in the background (none planned: no hub). Building an
/// agent with servers needs a tokio runtime; without one they are left out.
pub(super) fn start_mcp(
    servers: Vec<rein_mcp::ServerConfig>,
    workspace: &Path,
    log_dir: Option<PathBuf>,
    auth_dir: Option<PathBuf>,
    env_remove: &[String],
    sandbox: Option<Sandbox>,
) -> Option<Arc<rein_mcp::McpHub>> {
    if servers.is_empty() || tokio::runtime::Handle::try_current().is_err() {
        return None;
    }
    // Servers are planned from a configuration, which always has a home for their logs.
    let log_dir = log_dir?;
    Some(rein_mcp::McpHub::start(rein_mcp::McpSetup {
        servers,
        cwd: workspace.to_path_buf(),
        log_dir,
        env_remove: env_remove.to_vec(),
        sandbox,
        auth_dir,
    }))
}
