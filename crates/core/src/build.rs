//! Building an agent: one function for the CLI, the demo, the tests, the benches and
//! sub-agents. [`AgentBuilder`] starts from defaults (or from a resolved [`Config`]) and
//! takes the parts a caller wants to choose: the model endpoint, the tools, the permission
//! mode and who answers its questions, the session.

use std::path::PathBuf;
use std::sync::Arc;

use rein_llm::{Provider, ProviderConfig, ProviderKind};
use rein_tools::{DynTool, ToolConfig, ToolRegistry};

use crate::agent::{Agent, AgentSettings, DEFAULT_MAX_ROUNDS, Transcript};
use crate::config::HookCommand;
use crate::context::{ContextSettings, PinnedState, PromptAnchor};
use crate::hooks::Hooks;
use crate::interaction::{Interaction, OneAtATime, Unattended};
use crate::permissions::{PermissionMode, Policy, RuleSet};
use crate::sandboxing::SandboxPlan;
use crate::secrets::{SecretValues, Secrets};
use crate::session::{LoadedSession, Session};
use crate::tools::TodoItem;
use crate::tools::skill::Skill;
use crate::tools::subagent::{AgentType, EXPLORE};

mod assemble;
mod explain;
use crate::sandboxing::KeptSandbox;
pub use explain::ExplainError;
mod from_config;
mod mcp;
mod sandbox;

pub use assemble::render_system_prompt;
pub use from_config::{untrusted_warning, untrusted_warning_besides_tables};

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
    /// The person's prompt in place of rein's (`--system-prompt-file`).
    prompt_template: Option<String>,
    /// Text added after the system prompt (`--append-system-prompt`, `--add-dir`).
    prompt_additions: Vec<String>,
    project_instructions: Option<String>,
    /// The nested AGENTS.md files of the project.
    nested_instructions: Option<Arc<crate::agent::NestedInstructions>>,
    is_git_repo: bool,
    history: Vec<rein_llm::Message>,
    /// The provider's last count of the resumed history, when it still applies.
    anchor: Option<PromptAnchor>,
    /// The prices calls are billed at.
    prices: Arc<rein_llm::PriceBook>,
    /// What the run may spend.
    limits: crate::agent::SpendLimits,
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
    /// Where the sign-ins of servers reached by URL are kept (`rein mcp login`).
    mcp_auth_dir: Option<PathBuf>,
    /// Servers already started by the caller, in place of the plan.
    mcp_hub: Option<Arc<rein_mcp::McpHub>>,
    /// What the person should know about the configured servers (skipped ones).
    mcp_warnings: Vec<String>,
    /// The project's servers that wait for `rein trust`.
    mcp_awaiting_trust: Vec<String>,
    /// The configured servers not started, and why.
    mcp_skipped: Vec<crate::mcp::SkippedServer>,
    /// When the MCP tools go through `tool_search`.
    tool_search_budget: crate::agent::ToolSearchBudget,
    /// The configured stdio servers that run in the OS sandbox.
    mcp_sandboxed: Vec<String>,
    /// The sandbox made for the servers started early ([`AgentBuilder::start_mcp`]): the
    /// agent's commands and hooks run in the same one, with the same private `TMPDIR`.
    early_sandbox: Option<KeptSandbox>,
    /// The sandbox of the agent this one replaces, kept when its policy is unchanged
    /// ([`AgentBuilder::keep_sandbox`]).
    kept_sandbox: Option<KeptSandbox>,
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
                cache_key: None,
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
            prompt_template: None,
            prompt_additions: Vec::new(),
            project_instructions: None,
            nested_instructions: None,
            is_git_repo: false,
            history: Vec::new(),
            anchor: None,
            prices: Arc::default(),
            limits: crate::agent::SpendLimits::default(),
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
            mcp_auth_dir: None,
            mcp_hub: None,
            mcp_warnings: Vec::new(),
            mcp_awaiting_trust: Vec::new(),
            mcp_skipped: Vec::new(),
            tool_search_budget: crate::agent::ToolSearchBudget::default(),
            mcp_sandboxed: Vec::new(),
            early_sandbox: None,
            kept_sandbox: None,
            workspace,
        }
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

    /// Who answers questions (default: no one; what would ask is refused). Whoever asks (a
    /// call, a sub-agent's call, the sandbox's proxy about a host) asks one question at a
    /// time, whatever the front-end.
    pub fn interaction(mut self, interaction: Arc<dyn Interaction>) -> Self {
        self.interaction = OneAtATime::wrap(interaction);
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

    /// The person's own system prompt in place of rein's (`--system-prompt-file`): its
    /// `{placeholders}` are filled as rein's are, the project's instructions follow it.
    pub fn prompt_template(mut self, template: impl Into<String>) -> Self {
        self.prompt_template = Some(template.into());
        self
    }

    /// Text added after the system prompt (`--append-system-prompt`).
    pub fn append_system_prompt(mut self, text: impl Into<String>) -> Self {
        self.prompt_additions.push(text.into());
        self
    }

    /// Another directory the agent works in (`--add-dir`, canonical): file tools may read
    /// and write there, the sandbox makes it writable, and the rules judge it as they judge
    /// the workspace (writes there are not "outside"; `.git` and sensitive files keep
    /// their protection).
    pub fn add_dir(mut self, dir: PathBuf) -> Self {
        if !self.tool_config.extra_allowed_dirs.contains(&dir) {
            self.sandbox
                .settings
                .writable
                .push(dir.to_string_lossy().into_owned());
            self.prompt_additions.push(format!(
                "The user added {} as another directory you may read and change.",
                dir.display()
            ));
            self.tool_config.extra_allowed_dirs.push(dir);
        }
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
        // Stable across the session's runs (`rein -c` included), so its requests keep
        // reaching the same prompt cache.
        self.settings.cache_key = Some(format!("rein-{}", session.id()));
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

    /// Spending limits in place of the configured ones.
    pub fn limits(mut self, limits: crate::agent::SpendLimits) -> Self {
        self.limits = limits;
        self
    }

    /// The price the run's model is billed at, when any source knows it (checked before a
    /// cost limit is accepted).
    pub fn model_price(&self) -> Option<rein_llm::Price> {
        self.prices.price_for(&self.settings.model)
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
}

/// The configured hooks an agent will run, once it is built (with the session and the
/// permission mode it then has).
#[derive(Debug)]
struct HookPlan {
    hooks: Vec<HookCommand>,
    project_dir: PathBuf,
}
