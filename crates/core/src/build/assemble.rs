//! Putting the agent together: its own tools beside the offered ones, the policy, the hooks,
//! the sub-agents and the system prompt.

use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use rein_llm::Provider;
use rein_tools::sandbox::{Enforcement, Sandbox};
use rein_tools::{ToolConfig, ToolContext, ToolRegistry};

use crate::agent::SubagentLink;
use crate::agent::{Agent, AgentParts};
use crate::context::{COMPACT_TOOL, CompactRequests, CompactTool, PinnedState};
use crate::hooks::{CommandHooks, HookSetup, Hooks, NoHooks};
use crate::permissions::{ModePolicy, PermissionMode, Policy};
use crate::prompt::{self, PromptInputs};
use crate::tools::skill::{SkillTool, prompt_section};
use crate::tools::subagent::{AgentTool, SubagentSetup};
use crate::tools::{TODO_TOOL, TodoList, TodoWriteTool, WebFetchTool};

use super::mcp::start_mcp;
use super::{AgentBuilder, BuildError};

impl AgentBuilder {
    /// The registry with the agent's own tools beside the offered ones: `compact`,
    /// `todo_write` (its list pinned through compactions) and `skill`. Takes the todos, the
    /// skills and the pinned state out of the builder; the skills' prompt section last.
    pub(super) fn own_tools(
        &mut self,
    ) -> (
        ToolRegistry,
        Arc<CompactRequests>,
        Arc<TodoList>,
        Option<String>,
    ) {
        let mut registry = self.tools_offered();
        let compact_requests = Arc::new(CompactRequests::default());
        registry.register_arc(Arc::new(CompactTool::new(Arc::clone(&compact_requests))));
        let todos = Arc::new(TodoList::restored(std::mem::take(&mut self.todos)));
        registry.register_arc(Arc::new(TodoWriteTool::new(Arc::clone(&todos))));
        self.pinned.push(Arc::clone(&todos) as Arc<dyn PinnedState>);
        let skills_section = prompt_section(&self.skills, self.skill_window_tokens);
        let skills = std::mem::take(&mut self.skills);
        if !skills.is_empty() {
            registry.register(SkillTool::new(skills));
        }
        (registry, compact_requests, todos, skills_section)
    }

    pub(super) fn assemble(mut self, provider: Arc<dyn Provider>) -> Result<Agent, BuildError> {
        let secrets = Arc::new(std::mem::take(&mut self.secrets));
        let made = self.checked_sandbox(&secrets)?;
        let sandbox = made.sandbox.clone();
        let hook_sandbox = self.sandbox.settings.hooks.then(|| sandbox.clone());
        let mcp_sandbox = self.mcp_sandbox(|| sandbox.clone());
        let (mut registry, compact_requests, todos, skills_section) = self.own_tools();
        let subagent_prompt = self.subagent_prompt(skills_section.clone());
        let checkpoints = self.open_checkpoints();
        let prompt = self.prompt_parts();
        let pinned = self.pinned;
        let mode_policy = ModePolicy::with_rules(self.mode, self.rules);
        let tool_config = configured_tools(self.tool_config, &secrets, sandbox, &mode_policy);
        let policy: Arc<dyn Policy> = self.policy.unwrap_or_else(|| Arc::new(mode_policy));
        // With the built-in tools: web_fetch judges redirects by the same policy.
        if self.tools.is_none() {
            registry.register(WebFetchTool::new(Arc::clone(&policy)));
        }
        // Sub-agents, unless this is one (no recursion).
        let subagent_usage = Arc::new(SubagentLink::default());
        let subagent_tools = registry.without(&[COMPACT_TOOL, TODO_TOOL]);
        let offer_subagents = self.agent_name.is_none();
        let tool_ctx = ToolContext::new(tool_config);
        let mcp = self.mcp_hub.or_else(|| {
            start_mcp(
                self.mcp_plan,
                &self.workspace,
                self.mcp_log_dir,
                self.mcp_auth_dir,
                secrets.env_remove(),
                mcp_sandbox,
            )
        });
        let hooks: Arc<dyn Hooks> = match (self.hooks, self.hook_plan) {
            (Some(hooks), _) => hooks,
            (None, Some(plan)) => {
                let (session_id, transcript_path) = self.session_file.unzip();
                Arc::new(CommandHooks::new(
                    &plan.hooks,
                    HookSetup {
                        workspace: self.workspace.clone(),
                        project_dir: plan.project_dir,
                        session_id,
                        transcript_path,
                        permission_mode: self.mode,
                        secrets: Arc::clone(&secrets),
                        // Stopped with the commands: on Ctrl+C, at the end of the run.
                        processes: tool_ctx.processes().clone(),
                        sandbox: hook_sandbox,
                        env_set: tool_ctx.config().env_set.clone(),
                    },
                ))
            }
            (None, None) => Arc::new(NoHooks),
        };
        if offer_subagents {
            let setup = SubagentSetup {
                provider: Arc::clone(&provider),
                settings: self.settings.clone(),
                tools: subagent_tools,
                policy: Arc::clone(&policy),
                interaction: Arc::clone(&self.interaction),
                hooks: Arc::clone(&hooks),
                secrets: Arc::clone(&secrets),
                context: self.context.clone(),
                prompt: subagent_prompt,
                transcripts: self.subagent_dir.map(|dir| (dir, self.workspace.clone())),
                link: Arc::clone(&subagent_usage),
                mcp: mcp
                    .clone()
                    .map(|hub| (hub, self.mode, self.tool_search_budget)),
            };
            registry.register(AgentTool::new(setup, self.agent_types));
        }
        let system_prompt = prompt.render(&self.workspace, &registry, skills_section.as_deref());
        Ok(Agent::new(AgentParts {
            provider,
            nested: self.nested_instructions,
            registry: Arc::new(registry),
            tool_ctx,
            system_prompt,
            settings: self.settings,
            history: self.history,
            transcript: self.transcript,
            policy,
            interaction: self.interaction,
            hooks,
            agent_name: self.agent_name,
            secrets,
            context: self.context,
            pinned,
            compact_requests,
            todos,
            subagents: offer_subagents.then_some(subagent_usage),
            anchor: self.anchor,
            prices: self.prices,
            limits: self.limits,
            mcp: mcp.map(|hub| crate::agent::McpOffer {
                hub,
                mode: self.mode,
                only: crate::agent::McpFilter::All,
                budget: self.tool_search_budget,
            }),
            checkpoints,
            sandbox: Some(made),
        }))
    }

    /// What the system prompt is made of, taken out of the builder before it is taken apart
    /// (the prompt is rendered last, once every tool is registered).
    fn prompt_parts(&mut self) -> PromptParts {
        PromptParts {
            given: self.system_prompt.take(),
            template: self.prompt_template.take(),
            additions: std::mem::take(&mut self.prompt_additions),
            instructions: self.project_instructions.take(),
            is_git_repo: self.is_git_repo,
        }
    }

    /// The sandbox for this agent: refused in the auto mode where it cannot be enforced;
    /// hosts the proxy does not list are asked about when someone can answer.
    fn checked_sandbox(
        &self,
        secrets: &Arc<crate::secrets::Secrets>,
    ) -> Result<super::KeptSandbox, BuildError> {
        // The servers started early have one already: the same, not a second.
        let made = self
            .early_sandbox
            .clone()
            .unwrap_or_else(|| self.agent_sandbox());
        let sandbox = &made.sandbox;
        if self.mode == PermissionMode::Auto
            && let Enforcement::Unavailable(why) = sandbox.enforcement()
        {
            return Err(BuildError::SandboxUnavailable(why.clone()));
        }
        if self.interaction.attended() {
            // A kept sandbox's proxy asks through this agent's interaction from now on.
            sandbox.set_host_gate(Arc::new(crate::network_gate::AskingGate {
                interaction: Arc::clone(&self.interaction),
                secrets: Arc::clone(secrets),
            }));
        }
        Ok(made)
    }

    /// The checkpoints of the main agent's session, when configured (never a sub-agent's).
    fn open_checkpoints(&self) -> Option<(crate::checkpoint::Checkpoints, Vec<String>)> {
        match (&self.checkpoints, &self.rein_home, &self.session_file) {
            (Some(settings), Some(home), Some((id, _))) if self.agent_name.is_none() => Some(
                crate::checkpoint::Checkpoints::open(home, id, &self.workspace, *settings),
            ),
            _ => None,
        }
    }

    /// The system prompt a sub-agent gets for its tools: this workspace's, skills after it.
    fn subagent_prompt(
        &self,
        skills: Option<String>,
    ) -> Box<dyn Fn(&ToolRegistry) -> String + Send + Sync> {
        let workspace = self.workspace.clone();
        let is_git_repo = self.is_git_repo;
        let instructions = self.project_instructions.clone();
        Box::new(move |tools| {
            with_skills(
                render_system_prompt(&workspace, is_git_repo, tools, instructions.as_deref()),
                skills.as_deref(),
            )
        })
    }

    /// The tools the model is offered: the built-in ones (or those given), the extra ones,
    /// those the mode offers.
    pub(super) fn tools_offered(&self) -> ToolRegistry {
        let mut registry = match &self.tools {
            Some(tools) => tools.offered(|_| true),
            None => ToolRegistry::builtin(),
        };
        for tool in &self.extra_tools {
            registry.register_arc(Arc::clone(tool));
        }
        let offered = registry.offered(|kind| self.mode.offers(kind));
        // Background commands are read and stopped only where bash can start them.
        if offered.get("bash").is_none() {
            let names = ["bash_output", "kill_shell"];
            return offered.without(&names);
        }
        offered
    }
}

/// The tools' settings completed: the secrets kept from commands' environment and masked in
/// background outputs, the sandbox, and what searches may not read.
fn configured_tools(
    mut config: ToolConfig,
    secrets: &Arc<crate::secrets::Secrets>,
    sandbox: Sandbox,
    policy: &ModePolicy,
) -> ToolConfig {
    config.env_remove = secrets.env_remove().to_vec();
    // Background commands' outputs reach the disk masked.
    config.output_mask = secrets.any().then(|| {
        rein_tools::SharedMask(Arc::new(crate::secrets::SecretsMask(Arc::clone(secrets))))
    });
    config.sandbox = sandbox;
    config.read_guard = Some(policy.read_guard(config.workspace_root.clone()));
    config
}

/// The system prompt as given, or the parts rein renders it from.
struct PromptParts {
    given: Option<String>,
    template: Option<String>,
    additions: Vec<String>,
    instructions: Option<String>,
    is_git_repo: bool,
}

impl PromptParts {
    /// Rendered once, with every tool: the prompt stays byte-identical across rounds.
    fn render(self, workspace: &Path, registry: &ToolRegistry, skills: Option<&str>) -> String {
        if let Some(given) = self.given {
            return given;
        }
        let (template, instructions) = (self.template.as_deref(), self.instructions.as_deref());
        let rendered = render_prompt_from(
            template,
            workspace,
            self.is_git_repo,
            registry,
            instructions,
        );
        with_additions(with_skills(rendered, skills), &self.additions)
    }
}

/// The system prompt with the appended prompts after it (`--append-system-prompt`).
fn with_additions(mut prompt: String, additions: &[String]) -> String {
    for addition in additions {
        prompt.push_str("\n\n");
        prompt.push_str(addition.trim());
    }
    prompt
}

/// The system prompt with the skills' section after it, if there is one.
pub(super) fn with_skills(mut prompt: String, skills: Option<&str>) -> String {
    if let Some(section) = skills {
        prompt.push_str("\n\n");
        prompt.push_str(section);
    }
    prompt
}

/// The system prompt for `registry`'s tools in `cwd`, dated today.
pub fn render_system_prompt(
    cwd: &Path,
    is_git_repo: bool,
    registry: &ToolRegistry,
    project_instructions: Option<&str>,
) -> String {
    render_prompt_from(None, cwd, is_git_repo, registry, project_instructions)
}

/// [`render_system_prompt`] from the person's template when there is one.
fn render_prompt_from(
    template: Option<&str>,
    cwd: &Path,
    is_git_repo: bool,
    registry: &ToolRegistry,
    project_instructions: Option<&str>,
) -> String {
    let tools: Vec<(&str, &str)> = registry
        .info_refs()
        .map(|s| {
            (
                s.name.as_str(),
                s.description.lines().next().unwrap_or_default(),
            )
        })
        .collect();
    let date = prompt::utc_date(SystemTime::now());
    let inputs = PromptInputs {
        cwd,
        os: std::env::consts::OS,
        // The bash tool runs every command with `bash -c`, whatever the person's login shell.
        shell: "bash",
        date: &date,
        is_git_repo,
        tools: &tools,
        project_instructions,
    };
    match template {
        Some(template) => prompt::build_custom_system_prompt(template, &inputs),
        None => prompt::build_system_prompt(&inputs),
    }
}
