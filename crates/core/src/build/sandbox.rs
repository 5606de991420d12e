//! The OS sandbox the agent's commands run in: the level asked for, what this machine
//! enforces of it, and why the auto mode cannot start without it.

use rein_tools::sandbox::{Sandbox, SandboxLevel};

use crate::permissions::PermissionMode;
use crate::sandboxing::Places;

use super::AgentBuilder;

impl AgentBuilder {
    /// The sandbox level (`--sandbox`), over the configured one.
    pub fn sandbox_level(mut self, level: Option<SandboxLevel>) -> Self {
        if level.is_some() {
            self.sandbox.level = level;
        }
        self
    }

    /// The sandbox the agent's commands would run in, with what this machine enforces of
    /// it; its private temporary directory is made (and removed when the last clone goes).
    /// It is made beside the rest of the start, on a thread of its own.
    pub fn sandbox(&self) -> Sandbox {
        let offload = std::path::absolute(&self.tool_config.offload_dir)
            .unwrap_or_else(|_| self.tool_config.offload_dir.clone());
        let mut plan = self.sandbox.clone();
        plan.auto = self.mode == PermissionMode::Auto;
        let workspace = self.workspace.clone();
        let home_dir = self.tool_config.home_dir.clone();
        let rein_home = self.rein_home.clone();
        Sandbox::resolving(move || {
            plan.policy(&Places {
                workspace: &workspace,
                home_dir: home_dir.as_deref(),
                rein_home: rein_home.as_deref(),
                offload_dir: &offload,
            })
        })
    }

    /// The level asked for: `--sandbox`, else the configuration, else workspace-write.
    pub fn sandbox_level_wanted(&self) -> SandboxLevel {
        self.sandbox.level_wanted()
    }

    /// Says, when a sandbox is wanted and the kernel cannot give it, why (once, as a
    /// warning: commands then run with the permission checks alone).
    pub fn sandbox_warning(&self) -> Option<String> {
        let warning = self.sandbox.warning()?;
        Some(match self.mcp_sandboxed.as_slice() {
            [] => warning,
            servers => format!(
                "{warning}. The MCP server{} {} configured to run in it run{} without it too",
                if servers.len() == 1 { "" } else { "s" },
                servers.join(", "),
                if servers.len() == 1 { "s" } else { "" },
            ),
        })
    }

    /// Why the auto permission mode cannot start here, when it is the mode.
    pub fn auto_refusal(&self) -> Option<String> {
        (self.mode == PermissionMode::Auto)
            .then(|| self.sandbox.auto_refusal())
            .flatten()
    }
}
