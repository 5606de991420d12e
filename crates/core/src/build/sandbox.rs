//! The OS sandbox the agent's commands run in: the level asked for, what this machine
//! enforces of it, and why the auto mode cannot start without it.

use std::sync::Arc;

use rein_tools::sandbox::{Sandbox, SandboxLevel};

use crate::permissions::PermissionMode;
use crate::sandboxing::{KeptSandbox, SandboxRecipe};

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
        self.recipe().make()
    }

    /// The sandbox an agent rebuilt from this builder keeps when its policy is unchanged
    /// ([`Agent::sandbox`](crate::agent::Agent::sandbox) of the agent it replaces): the
    /// hosts the person answered about stay answered, and the commands keep the private
    /// `TMPDIR` the MCP servers kept across the rebuild share. One made for other settings
    /// (another workspace, mode or `[sandbox]`) is not kept: a new one is made. They are
    /// compared when the sandbox is needed ([`AgentBuilder::start_mcp`], the build).
    pub fn keep_sandbox(mut self, kept: KeptSandbox) -> Self {
        self.kept_sandbox = Some(kept);
        self
    }

    /// The sandbox this agent's commands (and its sandboxed MCP servers) run in: the kept
    /// one when it serves this builder's settings, else a new one.
    pub(super) fn agent_sandbox(&self) -> KeptSandbox {
        let recipe = self.recipe();
        match &self.kept_sandbox {
            Some(kept) if kept.recipe.serves(&recipe) => kept.clone(),
            _ => KeptSandbox {
                sandbox: recipe.make(),
                recipe: Arc::new(recipe),
            },
        }
    }

    /// Whether the kept sandbox ([`AgentBuilder::keep_sandbox`]) is the one this agent runs
    /// in: its policy is unchanged.
    pub(super) fn keeps_sandbox(&self) -> bool {
        let kept = self.kept_sandbox.as_ref();
        kept.is_some_and(|kept| kept.recipe.serves(&self.recipe()))
    }

    /// What this builder's sandbox is made from.
    fn recipe(&self) -> SandboxRecipe {
        let mut plan = self.sandbox.clone();
        plan.auto = self.mode == PermissionMode::Auto;
        SandboxRecipe {
            plan,
            workspace: self.workspace.clone(),
            home_dir: self.tool_config.home_dir.clone(),
            rein_home: self.rein_home.clone(),
            offload_dir: std::path::absolute(&self.tool_config.offload_dir)
                .unwrap_or_else(|_| self.tool_config.offload_dir.clone()),
        }
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

    /// Says when the project's `[sandbox] network` is left out because it would open more
    /// than the network in force (its `"proxy"` under auto's `"off"`).
    pub fn project_network_warning(&self) -> Option<String> {
        let mut plan = self.sandbox.clone();
        plan.auto = self.mode == PermissionMode::Auto;
        plan.project_network_left_out()
    }

    /// Why the auto permission mode cannot start here, when it is the mode.
    pub fn auto_refusal(&self) -> Option<String> {
        (self.mode == PermissionMode::Auto)
            .then(|| self.sandbox.auto_refusal())
            .flatten()
    }
}

#[cfg(test)]
mod tests {
    use rein_llm::ProviderKind;

    use super::*;

    /// A rebuild keeps the sandbox (its private `TMPDIR` and all) while the policy is the
    /// same (another mode that keeps it), and gets a new one when it changes (auto turns the
    /// network off).
    #[test]
    fn a_kept_sandbox_serves_only_the_same_policy() {
        let dir = tempfile::tempdir().unwrap();
        let builder = |mode| AgentBuilder::new(dir.path(), "m", ProviderKind::OpenAi).mode(mode);
        let tmp = |kept: &KeptSandbox| kept.sandbox.policy().tmp_dir.clone();
        let first = builder(PermissionMode::Default).agent_sandbox();
        assert!(tmp(&first).is_some(), "{:?}", first.sandbox.policy());
        let again = builder(PermissionMode::AcceptEdits)
            .keep_sandbox(first.clone())
            .agent_sandbox();
        assert_eq!(tmp(&again), tmp(&first));
        let auto = builder(PermissionMode::Auto)
            .keep_sandbox(first.clone())
            .agent_sandbox();
        assert_ne!(tmp(&auto), tmp(&first));
        let fresh = builder(PermissionMode::Default).agent_sandbox();
        assert_ne!(tmp(&fresh), tmp(&first));
    }
}
