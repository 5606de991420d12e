//! The OS sandbox the agent's commands run in: the level asked for, what this machine
//! enforces of it, and why the auto mode cannot start without it.

use std::path::PathBuf;
use std::sync::Arc;

use rein_tools::sandbox::{Sandbox, SandboxLevel};

use crate::permissions::PermissionMode;
use crate::sandboxing::{Places, SandboxPlan};

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

/// A sandbox with what it was made from, so that an agent rebuilt with the same settings
/// (the REPL's `/model`, a mode that keeps them) runs in it again ([`AgentBuilder::keep_sandbox`]).
#[derive(Debug, Clone)]
pub struct KeptSandbox {
    pub(super) sandbox: Sandbox,
    recipe: Arc<SandboxRecipe>,
}

impl KeptSandbox {
    /// A new session in the same sandbox: the hosts answered about are asked about again,
    /// as the rules allowed for the old session no longer hold.
    pub async fn forget_hosts(&self) {
        self.sandbox.forget_hosts().await;
    }
}

/// What a sandbox's policy is made from: the same recipe, the same policy.
#[derive(Debug, Clone, PartialEq)]
struct SandboxRecipe {
    plan: SandboxPlan,
    workspace: PathBuf,
    home_dir: Option<PathBuf>,
    rein_home: Option<PathBuf>,
    /// The directory rein writes for commands (absolute).
    offload_dir: PathBuf,
}

impl SandboxRecipe {
    /// Makes the sandbox (on a thread of its own; its private temporary directory is removed
    /// when the last clone goes).
    fn make(&self) -> Sandbox {
        let recipe = self.clone();
        Sandbox::resolving(move || {
            recipe.plan.policy(&Places {
                workspace: &recipe.workspace,
                home_dir: recipe.home_dir.as_deref(),
                rein_home: recipe.rein_home.as_deref(),
                offload_dir: &recipe.offload_dir,
            })
        })
    }

    /// Whether a sandbox made from this recipe serves an agent that wants `wanted`'s: the
    /// same policy, rein's directory for commands the same or one holding it (the sandbox
    /// made before a session is named, for MCP servers started early, lets commands write
    /// all of `tool-output`; the session's directory is in it).
    fn serves(&self, wanted: &SandboxRecipe) -> bool {
        wanted.offload_dir.starts_with(&self.offload_dir)
            && SandboxRecipe {
                offload_dir: wanted.offload_dir.clone(),
                ..self.clone()
            } == *wanted
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
