//! Building an agent: one function for the CLI, the demo, the tests, the benches and
//! sub-agents. [`AgentBuilder`] starts from defaults (or from a resolved [`Config`]) and
//! takes the parts a caller wants to choose: the model endpoint, the tools, the permission
//! mode and who answers its questions, the session.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rein_llm::{NetworkConfig, Provider, ProviderConfig, ProviderKind, RetryPolicy};
use rein_tools::sandbox::{Enforcement, Sandbox, SandboxLevel};
use rein_tools::{DynTool, ToolConfig, ToolContext, ToolRegistry};

use crate::agent::{Agent, AgentParts, AgentSettings, DEFAULT_MAX_ROUNDS, Transcript};
use crate::config::{Config, ConfiguredRule, HookCommand, RuleLists, SandboxSettings, Setting};
use crate::context::{
    COMPACT_TOOL, CompactRequests, CompactTool, ContextSettings, PinnedState, PromptAnchor,
};
use crate::hooks::{CommandHooks, HookSetup, Hooks, NoHooks};
use crate::interaction::{Interaction, Unattended};
use crate::permissions::{
    CallView, ModePolicy, PermissionMode, Policy, Rule, RuleOrigin, RuleSet, SourcedRule, Verdict,
};
use crate::prompt::{self, PROJECT_INSTRUCTIONS_LIMIT_BYTES, PromptInputs};
use crate::sandboxing::{Places, SandboxPlan};
use crate::secrets::{SecretValues, Secrets};
use crate::session::{LoadedSession, Session};
use crate::tools::skill::{Skill, SkillTool, load as load_skills, prompt_section, skill_dirs};
use crate::tools::subagent::types::agent_dirs;
use crate::tools::subagent::{AgentTool, AgentType, EXPLORE, SubagentSetup, SubagentUsage};
use crate::tools::{TODO_TOOL, TodoItem, TodoList, TodoWriteTool};
use crate::trust::TrustStore;

/// Why an agent could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// No API key is configured for a remote endpoint.
    #[error("no API key for {base_url}")]
    NoApiKey {
        /// The endpoint.
        base_url: String,
    },
    /// The model endpoint could not be set up.
    #[error(transparent)]
    Provider(#[from] rein_llm::ConfigError),
    /// Nothing was given to reach a model with.
    #[error("no model endpoint: give a provider or a configuration")]
    NoProvider,
    /// The auto permission mode was asked for where the sandbox it relies on cannot be
    /// enforced.
    #[error(
        "the auto permission mode needs the OS sandbox, which cannot be enforced here: {0}. \
         Use another mode (default, accept-edits, yolo), or see `rein sandbox --explain`"
    )]
    SandboxUnavailable(String),
}

/// Builds an [`Agent`]. Every part has a default: the built-in tools offered by the
/// permission mode, the default mode, no one to ask, no hooks, no session file, the system
/// prompt rendered for the workspace.
pub struct AgentBuilder {
    workspace: PathBuf,
    provider: Option<Arc<dyn Provider>>,
    provider_config: Option<ProviderConfig>,
    settings: AgentSettings,
    tool_config: ToolConfig,
    rein_home: Option<PathBuf>,
    tools: Option<ToolRegistry>,
    extra_tools: Vec<Arc<dyn DynTool>>,
    mode: PermissionMode,
    rules: RuleSet,
    policy: Option<Arc<dyn Policy>>,
    interaction: Arc<dyn Interaction>,
    /// Hooks the caller chose; otherwise the configured ones run (see [`HookPlan`]).
    hooks: Option<Arc<dyn Hooks>>,
    hook_plan: Option<HookPlan>,
    /// The recorded session's id and file, for hooks.
    session_file: Option<(String, PathBuf)>,
    agent_name: Option<String>,
    system_prompt: Option<String>,
    project_instructions: Option<String>,
    is_git_repo: bool,
    history: Vec<rein_llm::Message>,
    /// The provider's last count of the resumed history, when it still applies.
    anchor: Option<PromptAnchor>,
    transcript: Option<Box<dyn Transcript>>,
    context: ContextSettings,
    pinned: Vec<Arc<dyn PinnedState>>,
    /// The todo list a resumed session had.
    todos: Vec<TodoItem>,
    /// The kinds of sub-agent the `agent` tool offers.
    agent_types: Vec<AgentType>,
    /// Where sub-agents' transcripts go (the session's directory).
    subagent_dir: Option<PathBuf>,
    /// The skills found.
    skills: Vec<Skill>,
    /// The window the skill list in the system prompt is sized for.
    skill_window_tokens: u64,
    warnings: Vec<String>,
    /// What the configuration knows of secrets: the `.env` file's, the API key, the
    /// variables passed through. The environment's come with [`AgentBuilder::environment`].
    secret_sources: SecretSources,
    secrets: Secrets,
    /// The `[sandbox]` settings, the `--sandbox` level, and where temporary directories go.
    sandbox: SandboxPlan,
    /// MCP servers to start when the agent is built (from the configuration).
    mcp_plan: Vec<rein_mcp::ServerConfig>,
    /// Where their logs go.
    mcp_log_dir: Option<PathBuf>,
    /// Servers already started by the caller, in place of the plan.
    mcp_hub: Option<Arc<rein_mcp::McpHub>>,
    /// What the person should know about the configured servers (skipped ones).
    mcp_warnings: Vec<String>,
    /// The configured stdio servers that run in the OS sandbox.
    mcp_sandboxed: Vec<String>,
    /// Checkpoints before each turn, when a session and rein's home are given.
    checkpoints: Option<crate::checkpoint::CheckpointSettings>,
}

/// The secrets a configuration names, before rein's environment is added.
#[derive(Debug, Clone, Default)]
struct SecretSources {
    dotenv: SecretValues,
    api_key: Option<(String, String)>,
    pass_env: Vec<String>,
}

impl std::fmt::Debug for AgentBuilder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentBuilder")
            .field("workspace", &self.workspace)
            .field("settings", &self.settings)
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

impl AgentBuilder {
    /// An agent working in `workspace` (canonical), with `model` reached through `provider`
    /// (set the endpoint itself with [`AgentBuilder::provider`]). Large tool outputs are
    /// saved under `workspace/.rein-tool-output` until a session or a home says otherwise.
    pub fn new(
        workspace: impl Into<PathBuf>,
        model: impl Into<String>,
        kind: ProviderKind,
    ) -> Self {
        let workspace = workspace.into();
        let tool_config = ToolConfig::new(&workspace, workspace.join(".rein-tool-output"));
        AgentBuilder {
            provider: None,
            provider_config: None,
            settings: AgentSettings {
                model: model.into(),
                provider: kind,
                temperature: None,
                max_tokens: None,
                max_rounds: DEFAULT_MAX_ROUNDS,
            },
            tool_config,
            rein_home: None,
            tools: None,
            extra_tools: Vec::new(),
            mode: PermissionMode::Default,
            rules: RuleSet::default(),
            policy: None,
            interaction: Arc::new(Unattended),
            hooks: None,
            hook_plan: None,
            session_file: None,
            agent_name: None,
            system_prompt: None,
            project_instructions: None,
            is_git_repo: false,
            history: Vec::new(),
            anchor: None,
            transcript: None,
            checkpoints: None,
            context: ContextSettings::default(),
            pinned: Vec::new(),
            todos: Vec::new(),
            agent_types: vec![AgentType::explore()],
            subagent_dir: None,
            skills: Vec::new(),
            skill_window_tokens: crate::context::UNKNOWN_WINDOW_TOKENS,
            warnings: Vec::new(),
            secret_sources: SecretSources::default(),
            secrets: Secrets::default(),
            sandbox: SandboxPlan::default(),
            mcp_plan: Vec::new(),
            mcp_log_dir: None,
            mcp_hub: None,
            mcp_warnings: Vec::new(),
            mcp_sandboxed: Vec::new(),
            workspace,
        }
    }

    /// An agent as `config` describes it, working in `cwd`: its model endpoint (built when
    /// the agent is), settings, tool limits and the project's instructions. `env` supplies
    /// proxy variables; `home_dir` is where `~` points for the tools.
    pub fn from_config(
        config: &Config,
        cwd: &Path,
        home_dir: Option<&Path>,
        env: &dyn Fn(&str) -> Option<String>,
    ) -> Self {
        let mut builder = AgentBuilder::new(cwd, config.model.clone(), config.provider);
        builder.settings.temperature = config.temperature;
        builder.settings.max_tokens = config.max_tokens;
        builder.settings.max_rounds = config.max_rounds;
        builder.context = ContextSettings {
            window_tokens: config.context_window_tokens,
            auto_compact: config.auto_compact,
            compact_threshold: config.compact_threshold,
        };
        builder.tool_config.output_budget_chars = config.tool_output_budget_chars;
        builder.tool_config.offload_max_bytes = config.tool_output_file_max_bytes;
        builder.tool_config.bash_default_timeout = config.bash_default_timeout;
        builder.tool_config.home_dir = home_dir.map(Path::to_path_buf);
        builder.rein_home = Some(config.rein_home.clone());
        builder.checkpoints = Some(config.checkpoints);
        // Outside any session (`rein sandbox -- CMD`): under rein's home, never in the
        // person's workspace.
        builder.tool_config.offload_dir = config.rein_home.join("tool-output");
        builder.is_git_repo = config.is_git_repo;
        builder.rules = rule_set(&config.rules, home_dir, &mut builder.warnings);
        builder.sandbox = SandboxPlan::from_config(config, env);
        builder
            .warnings
            .extend(config.sandbox.ignored.iter().cloned());
        builder.warnings.extend(config.repl.ignored.iter().cloned());
        let mcp = crate::mcp::plan(config, env);
        builder.warnings.extend(mcp.warnings.iter().cloned());
        builder.mcp_warnings = mcp.warnings;
        builder.mcp_sandboxed = mcp
            .servers
            .iter()
            .filter(|s| {
                matches!(
                    s.transport,
                    rein_mcp::TransportConfig::Stdio {
                        sandboxed: true,
                        ..
                    }
                )
            })
            .map(|s| s.name.clone())
            .collect();
        builder.mcp_plan = mcp.servers;
        builder.mcp_log_dir = Some(config.rein_home.join(crate::mcp::MCP_LOG_DIR));
        builder.secret_sources = SecretSources {
            // The servers' configured credentials are masked like the `.env` file's.
            dotenv: SecretValues::of(
                config
                    .dotenv_secrets
                    .iter()
                    .chain(mcp.secrets.iter().map(|(k, v)| (k.as_str(), v.as_str()))),
            ),
            api_key: config
                .api_key()
                .zip(config.api_key_variable())
                .map(|(key, var)| (var.to_owned(), key.to_owned())),
            pass_env: config.pass_env.clone(),
        };
        // Commands and hooks inherit rein's own environment: its secrets are what to keep
        // from them.
        builder = builder.environment(process_vars());
        match prompt::find_project_instructions(
            &config.project_root,
            cwd,
            PROJECT_INSTRUCTIONS_LIMIT_BYTES,
        ) {
            Ok(found) => builder.project_instructions = found.map(|i| i.text),
            Err(e) => builder
                .warnings
                .push(format!("project instructions skipped: {e}")),
        }
        let thinking_budget_tokens = match (config.thinking_budget_tokens, config.provider) {
            (Some(budget), ProviderKind::Anthropic) => Some(budget),
            (Some(_), ProviderKind::OpenAi) => {
                builder.warnings.push(format!(
                    "thinking_budget (from {}) applies to the Anthropic API only; it is not \
                     sent to this OpenAI-compatible endpoint",
                    config.source(Setting::ThinkingBudget)
                ));
                None
            }
            (None, _) => None,
        };
        builder.plan_hooks(config);
        let dirs = agent_dirs(&config.project_root, Some(&config.rein_home));
        let (types, skipped) = crate::tools::subagent::types::load(&dirs);
        builder.agent_types = types;
        builder.warnings.extend(skipped);
        let (skills, skipped) =
            load_skills(&skill_dirs(&config.project_root, Some(&config.rein_home)));
        builder.warnings.extend(skipped);
        builder.skill_window_tokens = config
            .context_window_tokens
            .or_else(|| rein_llm::context_window_for(&config.model))
            .unwrap_or(crate::context::UNKNOWN_WINDOW_TOKENS);
        builder = builder.skills(skills);
        builder.provider_config = Some(ProviderConfig {
            kind: config.provider,
            base_url: Some(config.base_url.clone()),
            api_key: config.api_key().map(str::to_owned),
            api_key_origin: config.api_key_origin(),
            network: NetworkConfig {
                // The configured file (`ca_file`), or SSL_CERT_FILE, which the config's
                // environment layer already read, with `.env` files.
                ca_file: config.ca_file.clone(),
                connect_timeout: config.timeouts.connect,
                first_byte_timeout: config.timeouts.first_byte,
                stream_idle_timeout: config.timeouts.stream_idle,
                request_timeout: config.timeouts.request,
                ..NetworkConfig::from_env_vars(env)
            },
            retry: RetryPolicy {
                max_retries: config.retries,
                ..RetryPolicy::default()
            },
            thinking_budget_tokens,
        });
        builder
    }

    /// The environment commands and hooks inherit, in place of rein's own (which
    /// [`AgentBuilder::from_config`] reads): its secret-looking variables are kept from them
    /// and their values masked in tool results, with those of the `.env` file and the API key.
    pub fn environment(mut self, vars: impl IntoIterator<Item = (String, String)>) -> Self {
        let vars: Vec<(String, String)> = vars.into_iter().collect();
        let sources = &self.secret_sources;
        self.secrets = Secrets::gather(
            vars.iter().map(|(k, v)| (k.as_str(), v.as_str())),
            &sources.dotenv,
            sources
                .api_key
                .as_ref()
                .map(|(n, v)| (n.as_str(), v.as_str())),
            &sources.pass_env,
        );
        self
    }

    /// The model endpoint to use instead of the configured one (a replay, a recorder, a
    /// test's mock).
    pub fn provider(mut self, provider: Arc<dyn Provider>) -> Self {
        self.provider = Some(provider);
        self
    }

    /// What rein may do without asking; also decides which tools are offered.
    pub fn mode(mut self, mode: PermissionMode) -> Self {
        self.mode = mode;
        self
    }

    /// The sandbox level (`--sandbox`), over the configured one.
    pub fn sandbox_level(mut self, level: Option<SandboxLevel>) -> Self {
        if level.is_some() {
            self.sandbox.level = level;
        }
        self
    }

    /// Changes the `[sandbox]` settings (tests: `landlock = false`, the network).
    pub fn sandbox_settings(mut self, adjust: impl FnOnce(&mut SandboxSettings)) -> Self {
        adjust(&mut self.sandbox.settings);
        self
    }

    /// The sandbox the agent's commands would run in, with what this machine enforces of
    /// it; its private temporary directory is made (and removed when the last clone goes).
    pub fn sandbox(&self) -> Sandbox {
        let offload = std::path::absolute(&self.tool_config.offload_dir)
            .unwrap_or_else(|_| self.tool_config.offload_dir.clone());
        Sandbox::new(self.sandbox.policy(&Places {
            workspace: &self.workspace,
            home_dir: self.tool_config.home_dir.as_deref(),
            rein_home: self.rein_home.as_deref(),
            offload_dir: &offload,
        }))
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

    /// Permission rules, in place of the configured ones.
    pub fn rules(mut self, rules: RuleSet) -> Self {
        self.rules = rules;
        self
    }

    /// A policy of the caller's own instead of the mode's.
    pub fn policy(mut self, policy: Arc<dyn Policy>) -> Self {
        self.policy = Some(policy);
        self
    }

    /// Who answers questions (default: no one; what would ask is refused).
    pub fn interaction(mut self, interaction: Arc<dyn Interaction>) -> Self {
        self.interaction = interaction;
        self
    }

    /// These hooks instead of the configured ones.
    pub fn hooks(mut self, hooks: Arc<dyn Hooks>) -> Self {
        self.hooks = Some(hooks);
        self
    }

    /// Marks this agent's questions to the person as coming from `name` (a sub-agent).
    pub fn agent_name(mut self, name: impl Into<String>) -> Self {
        self.agent_name = Some(name.into());
        self
    }

    /// The kinds of sub-agent offered, in place of those found (the built-in `explore` is
    /// added when missing).
    pub fn agent_types(mut self, types: Vec<AgentType>) -> Self {
        self.agent_types = types;
        if !self.agent_types.iter().any(|t| t.name == EXPLORE) {
            self.agent_types.insert(0, AgentType::explore());
        }
        self
    }

    /// The skills offered, in place of those found. Those outside the workspace may be read
    /// with read_file (their resources).
    pub fn skills(mut self, skills: Vec<Skill>) -> Self {
        for skill in &skills {
            let dir = std::fs::canonicalize(&skill.dir).unwrap_or_else(|_| skill.dir.clone());
            let root = std::fs::canonicalize(&self.tool_config.workspace_root)
                .unwrap_or_else(|_| self.tool_config.workspace_root.clone());
            if !dir.starts_with(&root) && !self.tool_config.extra_allowed_dirs.contains(&dir) {
                self.tool_config.extra_allowed_dirs.push(dir);
            }
        }
        self.skills = skills;
        self
    }

    /// These tools instead of the built-in ones (still filtered by the mode).
    pub fn tools(mut self, tools: ToolRegistry) -> Self {
        self.tools = Some(tools);
        self
    }

    /// One more tool beside the others.
    pub fn tool(mut self, tool: Arc<dyn DynTool>) -> Self {
        self.extra_tools.push(tool);
        self
    }

    /// Starts the configured MCP servers now, in the background, rather than when the agent
    /// is built: the earlier they start, the less the first request may wait for them. Needs
    /// a tokio runtime (without one they start, if at all, when the agent is built).
    /// The sandbox level and the settings it depends on are to be set first.
    pub fn start_mcp(mut self) -> Self {
        if self.mcp_hub.is_none() && tokio::runtime::Handle::try_current().is_ok() {
            let sandbox = self.mcp_sandbox(|| self.sandbox());
            self.mcp_hub = start_mcp(
                std::mem::take(&mut self.mcp_plan),
                &self.workspace,
                self.mcp_log_dir.clone(),
                self.secrets.env_remove(),
                sandbox,
            );
        }
        self
    }

    /// The sandbox for the stdio servers configured `sandboxed` (none: `None`): the one the
    /// agent's commands run in ([`AgentBuilder::sandbox`]), wherever the servers start.
    fn mcp_sandbox(&self, sandbox: impl FnOnce() -> Sandbox) -> Option<Sandbox> {
        (!self.mcp_sandboxed.is_empty()).then(sandbox)
    }

    /// These MCP servers (started already) instead of the configured ones.
    pub fn mcp_hub(mut self, hub: Arc<rein_mcp::McpHub>) -> Self {
        self.mcp_hub = Some(hub);
        self
    }

    /// The MCP servers started with [`AgentBuilder::start_mcp`] or given with
    /// [`AgentBuilder::mcp_hub`] (none configured: `None`).
    pub fn started_mcp(&self) -> Option<&Arc<rein_mcp::McpHub>> {
        self.mcp_hub.as_ref()
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

    /// Changes the tools' settings (output budget, timeouts, offload directory).
    pub fn tool_config(mut self, adjust: impl FnOnce(&mut ToolConfig)) -> Self {
        adjust(&mut self.tool_config);
        self
    }

    /// Changes the model settings (temperature, token and round limits).
    pub fn settings(mut self, adjust: impl FnOnce(&mut AgentSettings)) -> Self {
        adjust(&mut self.settings);
        self
    }

    /// Changes how the context is kept within the window (the window, `auto_compact`, the
    /// threshold).
    pub fn context(mut self, adjust: impl FnOnce(&mut ContextSettings)) -> Self {
        adjust(&mut self.context);
        self
    }

    /// State every compaction keeps, word for word (the todo list).
    pub fn pin(mut self, state: Arc<dyn PinnedState>) -> Self {
        self.pinned.push(state);
        self
    }

    /// This system prompt instead of the rendered one.
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> Self {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// Records the conversation in `session`, continuing `history` (empty for a new one).
    /// Large tool outputs then go to the session's own directory under rein's home.
    pub fn session(mut self, session: Session, history: Vec<rein_llm::Message>) -> Self {
        if let Some(home) = &self.rein_home {
            self.tool_config.offload_dir = home.join("tool-output").join(session.id());
        }
        self.session_file = Some((session.id().to_owned(), session.path().to_path_buf()));
        // Beside the session's file: `<sessions>/<id>/`.
        self.subagent_dir = Some(session.path().with_extension(""));
        self.transcript = Some(Box::new(session));
        self.history = history;
        self.anchor = None;
        self
    }

    /// Continues a session loaded with [`crate::session::SessionStore::open`]: its context
    /// (compactions replayed) and the provider's last count of it, so the next request is
    /// the one the earlier run would have sent.
    pub fn resume(mut self, session: Session, loaded: LoadedSession) -> Self {
        self.todos = loaded.todos();
        self = self.session(session, loaded.messages);
        self.anchor = loaded.anchor;
        self
    }

    /// Records the conversation in a transcript of the caller's own.
    pub fn transcript(
        mut self,
        transcript: Box<dyn Transcript>,
        history: Vec<rein_llm::Message>,
    ) -> Self {
        self.session_file = None;
        self.transcript = Some(transcript);
        self.history = history;
        self
    }

    /// Checkpoints of the workspace before each turn (`None`: none are taken). They are
    /// taken only for a main agent with a session and rein's home.
    pub fn checkpoints(mut self, settings: Option<crate::checkpoint::CheckpointSettings>) -> Self {
        self.checkpoints = settings;
        self
    }

    /// The id of the session the conversation is recorded in, once one is given.
    pub fn session_id(&self) -> Option<&str> {
        self.session_file.as_ref().map(|(id, _)| id.as_str())
    }

    /// Things the person should know, gathered while building (instructions skipped, a
    /// setting that does not apply).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// What the policy this builder would give the agent decides for a call written as a
    /// rule (`bash(git push)`, `edit_file(src/main.rs)`, `read_file(.env)`), and why: for
    /// `rein explain-permission`.
    pub fn explain(&self, call: &str) -> Result<Verdict, String> {
        let rule = Rule::parse(call, self.tool_config.home_dir.as_deref())?;
        let tool = rule.tool.as_str();
        // The argument as written: a rule's text is normalised (spaces, line breaks), and a
        // command must be judged as the model would send it.
        let argument = rule.pattern.as_ref().map(|_| {
            let open = call.find('(').map_or(0, |i| i + 1);
            let close = call.rfind(')').filter(|&i| i >= open).unwrap_or(call.len());
            call[open..close].to_owned()
        });
        let arguments = match (tool, argument) {
            ("bash", Some(command)) => serde_json::json!({ "command": command }),
            (_, Some(path)) => serde_json::json!({ "file_path": path }),
            (_, None) => serde_json::json!({}),
        };
        self.explain_call(tool, &arguments)
    }

    /// The decision for a call of `tool` with `arguments` (JSON, as the model sends them),
    /// under this builder's mode and rules, and what made it; an error when the call fails
    /// before any permission check (a path that cannot be resolved, say).
    pub fn explain_call(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<Verdict, String> {
        let registry = self.tools_offered();
        let kind = registry
            .get(tool)
            .map_or(rein_tools::ToolKind::Execute, |t| t.kind());
        // An MCP tool is not listed until its server runs: judged as one outside the sandbox.
        let confined = registry
            .get(tool)
            .map_or(!tool.starts_with("mcp__"), |t| t.confined());
        let ctx = ToolContext::new(self.tool_config.clone());
        let path = crate::permissions::facts::path_target(&ctx, arguments)?;
        let shell = crate::permissions::facts::shell_facts(&ctx, tool, arguments);
        let policy = ModePolicy::with_rules(self.mode, self.rules.clone());
        Ok(policy.explain(&CallView {
            tool,
            kind,
            arguments,
            path: path.as_ref(),
            shell: shell.as_ref(),
            confined,
        }))
    }

    /// Sets up the configured model endpoint now, so that a missing key or a bad setting is
    /// reported before anything is written (a session file, say).
    pub fn connect(mut self) -> Result<Self, BuildError> {
        if let Some(why) = self.auto_refusal() {
            return Err(BuildError::SandboxUnavailable(why));
        }
        if self.provider.is_none() {
            let config = self
                .provider_config
                .as_ref()
                .ok_or(BuildError::NoProvider)?;
            let base_url = config.base_url.clone().unwrap_or_default();
            if config.api_key.is_none() && !rein_llm::is_loopback_url(&base_url) {
                return Err(BuildError::NoApiKey { base_url });
            }
            self.provider = Some(rein_llm::build_provider(config)?);
        }
        Ok(self)
    }

    /// Wraps the endpoint (set, or connected with [`AgentBuilder::connect`]) — to record it,
    /// say. Without one, `wrap` is not called.
    pub fn wrap_provider<E>(
        mut self,
        wrap: impl FnOnce(Arc<dyn Provider>) -> Result<Arc<dyn Provider>, E>,
    ) -> Result<Self, E> {
        if let Some(provider) = self.provider.take() {
            self.provider = Some(wrap(provider)?);
        }
        Ok(self)
    }

    /// The agent.
    pub fn build(self) -> Result<Agent, BuildError> {
        let this = self.connect()?;
        let Some(provider) = this.provider.clone() else {
            return Err(BuildError::NoProvider);
        };
        this.assemble(provider)
    }

    fn assemble(self, provider: Arc<dyn Provider>) -> Result<Agent, BuildError> {
        let sandbox = self.sandbox();
        if self.mode == PermissionMode::Auto
            && let Enforcement::Unavailable(why) = sandbox.enforcement()
        {
            return Err(BuildError::SandboxUnavailable(why.clone()));
        }
        let hook_sandbox = self.sandbox.settings.hooks.then(|| sandbox.clone());
        let mcp_sandbox = self.mcp_sandbox(|| sandbox.clone());
        let mut registry = self.tools_offered();
        let compact_requests = Arc::new(CompactRequests::default());
        registry.register_arc(Arc::new(CompactTool::new(Arc::clone(&compact_requests))));
        let todos = Arc::new(TodoList::restored(self.todos));
        registry.register_arc(Arc::new(TodoWriteTool::new(Arc::clone(&todos))));
        let mut pinned = self.pinned;
        pinned.push(Arc::clone(&todos) as Arc<dyn PinnedState>);
        let skills_section = prompt_section(&self.skills, self.skill_window_tokens);
        if !self.skills.is_empty() {
            registry.register(SkillTool::new(self.skills));
        }
        // Sub-agents, unless this is one (no recursion).
        let subagent_usage = Arc::new(SubagentUsage::default());
        let subagent_tools = registry.without(&[COMPACT_TOOL, TODO_TOOL]);
        let offer_subagents = self.agent_name.is_none();
        let mode_policy = ModePolicy::with_rules(self.mode, self.rules);
        let mut tool_config = self.tool_config;
        tool_config.env_remove = self.secrets.env_remove().to_vec();
        tool_config.sandbox = sandbox;
        tool_config.read_guard = Some(mode_policy.read_guard(tool_config.workspace_root.clone()));
        let policy: Arc<dyn Policy> = self.policy.unwrap_or_else(|| Arc::new(mode_policy));
        let tool_ctx = ToolContext::new(tool_config);
        let mcp = self.mcp_hub.or_else(|| {
            start_mcp(
                self.mcp_plan,
                &self.workspace,
                self.mcp_log_dir,
                self.secrets.env_remove(),
                mcp_sandbox,
            )
        });
        let secrets = Arc::new(self.secrets);
        let checkpoints = match (&self.checkpoints, &self.rein_home, &self.session_file) {
            (Some(settings), Some(home), Some((id, _))) if self.agent_name.is_none() => Some(
                crate::checkpoint::Checkpoints::open(home, id, &self.workspace, *settings),
            ),
            _ => None,
        };
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
                    },
                ))
            }
            (None, None) => Arc::new(NoHooks),
        };
        if offer_subagents {
            let workspace = self.workspace.clone();
            let is_git_repo = self.is_git_repo;
            let instructions = self.project_instructions.clone();
            let skills = skills_section.clone();
            let setup = SubagentSetup {
                provider: Arc::clone(&provider),
                settings: self.settings.clone(),
                tools: subagent_tools,
                policy: Arc::clone(&policy),
                interaction: Arc::clone(&self.interaction),
                hooks: Arc::clone(&hooks),
                secrets: Arc::clone(&secrets),
                context: self.context.clone(),
                prompt: Box::new(move |tools| {
                    with_skills(
                        render_system_prompt(
                            &workspace,
                            is_git_repo,
                            tools,
                            instructions.as_deref(),
                        ),
                        skills.as_deref(),
                    )
                }),
                transcripts: self.subagent_dir.map(|dir| (dir, self.workspace.clone())),
                usage: Arc::clone(&subagent_usage),
            };
            registry.register(AgentTool::new(setup, self.agent_types));
        }
        // Rendered once, with every tool: the prompt stays byte-identical across rounds.
        let system_prompt = self.system_prompt.unwrap_or_else(|| {
            with_skills(
                render_system_prompt(
                    &self.workspace,
                    self.is_git_repo,
                    &registry,
                    self.project_instructions.as_deref(),
                ),
                skills_section.as_deref(),
            )
        });
        Ok(Agent::new(AgentParts {
            provider,
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
            mcp: mcp.map(|hub| (hub, self.mode)),
            checkpoints,
        }))
    }

    /// Keeps the configured hooks that may run: the user's, and the project's once the
    /// project is trusted (a warning says how, when they are skipped).
    fn plan_hooks(&mut self, config: &Config) {
        if !config.untrusted_ignored.is_empty() {
            self.warnings.push(untrusted_warning(config));
        }
        let trust = TrustStore::new(&config.rein_home);
        let (hooks, skipped) =
            crate::hooks::runnable_hooks(&config.hooks, &config.project_root, &trust);
        self.warnings.extend(skipped);
        if hooks.is_empty() {
            return;
        }
        self.hook_plan = Some(HookPlan {
            hooks,
            project_dir: config.project_root.clone(),
        });
    }
}

/// Says what an untrusted project's config file set that rein ignored, and how to trust it.
pub fn untrusted_warning(config: &Config) -> String {
    format!(
        "{} in {} ignored: this project is not trusted (or its config changed since it was). \
         If you trust its config, run `rein trust` in {}",
        config.untrusted_ignored.join(", "),
        config
            .project_root
            .join(".rein")
            .join("config.toml")
            .display(),
        config.project_root.display()
    )
}

/// The configured hooks an agent will run, once it is built (with the session and the
/// permission mode it then has).
#[derive(Debug)]
struct HookPlan {
    hooks: Vec<HookCommand>,
    project_dir: PathBuf,
}

impl AgentBuilder {
    /// The tools the model is offered: the built-in ones (or those given), the extra ones,
    /// those the mode offers.
    fn tools_offered(&self) -> ToolRegistry {
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

/// Starts the planned MCP servers in the background (none planned: no hub). Building an
/// agent with servers needs a tokio runtime; without one they are left out.
fn start_mcp(
    servers: Vec<rein_mcp::ServerConfig>,
    workspace: &Path,
    log_dir: Option<PathBuf>,
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
    }))
}

/// rein's environment; a variable that is not UTF-8 cannot be masked as text and is passed
/// over.
fn process_vars() -> impl Iterator<Item = (String, String)> {
    std::env::vars_os().filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
}

/// The configured rules, parsed with the home directory for `~/` (they were checked when the
/// configuration was read; one that fails now is left out with a warning).
fn rule_set(lists: &RuleLists, home: Option<&Path>, warnings: &mut Vec<String>) -> RuleSet {
    let mut parse = |rules: &[ConfiguredRule]| -> Vec<SourcedRule> {
        rules
            .iter()
            .filter_map(|configured| match Rule::parse(&configured.text, home) {
                Ok(rule) => Some(SourcedRule {
                    rule,
                    origin: RuleOrigin::Configured(configured.source.to_string()),
                }),
                Err(e) => {
                    warnings.push(format!("rule left out ({}): {e}", configured.source));
                    None
                }
            })
            .collect()
    };
    RuleSet {
        allow: parse(&lists.allow),
        ask: parse(&lists.ask),
        deny: parse(&lists.deny),
    }
}

/// The system prompt with the skills' section after it, if there is one.
fn with_skills(mut prompt: String, skills: Option<&str>) -> String {
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
    let specs = registry.infos();
    let tools: Vec<(&str, &str)> = specs
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.description.lines().next().unwrap_or_default(),
            )
        })
        .collect();
    let date = prompt::utc_date(SystemTime::now());
    prompt::build_system_prompt(&PromptInputs {
        cwd,
        os: std::env::consts::OS,
        // The bash tool runs every command with `bash -c`, whatever the person's login shell.
        shell: "bash",
        date: &date,
        is_git_repo,
        tools: &tools,
        project_instructions,
    })
}
