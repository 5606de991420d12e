//! The agent loop: request → stream → assemble → run tools → repeat, until the model answers
//! without calling a tool (and the Stop hooks let the turn end), a limit is reached, or the
//! person interrupts.

mod approval;
mod blind;
mod call_args;
mod calls;
mod context;
mod direct;
mod event;
mod execute;
mod guard;
mod leave_sandbox;
mod masking;
mod nested;
mod outcome;
mod runner;
mod spend;
mod subagents;
mod tool_search;
mod transcript;
mod turn;

use std::collections::HashSet;
use std::sync::Arc;

use rein_llm::{Message, Part, Provider, ProviderKind, Request, Role, Usage};
use rein_tools::{ToolContext, ToolRegistry};

pub use context::CompactOutcome;
use context::ContextState;
pub use direct::DirectOutcome;
pub use event::{AgentEvent, EventSink, Events, NestedEvent, TurnStop};
use guard::LoopGuard;
pub use nested::NestedInstructions;
pub use outcome::{TurnEnd, TurnError, TurnOutcome};
use runner::ToolRunner;
pub(crate) use runner::llm_images;
use spend::Spend;
pub use spend::{LimitReached, SpendLimit, SpendLimits, SpendTotals};
pub use subagents::AGENT_TOOL;
pub(crate) use subagents::SubagentLink;
pub use tool_search::{
    TOOL_SEARCH, TOOL_SEARCH_MAX_SCHEMA_BYTES, TOOL_SEARCH_MAX_TOOLS, ToolSearchBudget,
};
pub use transcript::Transcript;
use turn::RoundEnd;
pub use turn::hook_points::MAX_STOP_HOOK_CONTINUATIONS;
pub(crate) use turn::mcp_tools::{McpFilter, McpOffer};

use crate::context::{CompactRequests, ContextSettings, Ledger, PinnedState, PromptAnchor};
use crate::hooks::Hooks;
use crate::interaction::Interaction;
use crate::permissions::Policy;
use crate::tools::TodoList;

pub use crate::config::DEFAULT_MAX_ROUNDS;

/// How the agent asks the model.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// The model's name as the provider knows it.
    pub model: String,
    /// The API the model is reached through (recorded with each call, for resuming).
    pub provider: ProviderKind,
    /// Sampling temperature, when set.
    pub temperature: Option<f32>,
    /// The output token limit per response, when set.
    pub max_tokens: Option<u32>,
    /// Model responses allowed in one turn.
    pub max_rounds: u32,
    /// The conversation's `prompt_cache_key` (derived from the session id), where the
    /// endpoint takes one.
    pub cache_key: Option<String>,
}

/// Everything an agent is built from (see [`crate::build::AgentBuilder`], the way to build
/// one).
pub(crate) struct AgentParts {
    /// The model endpoint.
    pub provider: Arc<dyn Provider>,
    /// The nested AGENTS.md files, given with the first call below them.
    pub nested: Option<Arc<NestedInstructions>>,
    /// The tools the model may call.
    pub registry: Arc<ToolRegistry>,
    /// The state the tools share (workspace, current directory, files read).
    pub tool_ctx: ToolContext,
    /// The system prompt; sent byte-identical every round.
    pub system_prompt: String,
    /// Model settings.
    pub settings: AgentSettings,
    /// The conversation so far (empty, or a resumed session's history).
    pub history: Vec<Message>,
    /// Where finished messages and events are recorded, if anywhere.
    pub transcript: Option<Box<dyn Transcript>>,
    /// What may run without asking.
    pub policy: Arc<dyn Policy>,
    /// Where questions for the person go.
    pub interaction: Arc<dyn Interaction>,
    /// The session's hooks.
    pub hooks: Arc<dyn Hooks>,
    /// The name questions are marked with when this agent is not the main conversation (a
    /// sub-agent's).
    pub agent_name: Option<String>,
    /// What tool results must not show.
    pub secrets: Arc<crate::secrets::Secrets>,
    /// How the context is kept within the window.
    pub context: ContextSettings,
    /// What compaction always keeps (the todo list).
    pub pinned: Vec<Arc<dyn PinnedState>>,
    /// Where the `compact` tool leaves its requests.
    pub compact_requests: Arc<CompactRequests>,
    /// The todo list the `todo_write` tool keeps.
    pub todos: Arc<TodoList>,
    /// The provider's count of the resumed history's last request, when it still applies.
    pub anchor: Option<PromptAnchor>,
    /// Where the `agent` tool leaves what its sub-agents used.
    pub subagents: Option<Arc<SubagentLink>>,
    /// The session's MCP servers, whose tools join the registry's as they become ready.
    pub mcp: Option<McpOffer>,
    /// The prices calls are billed at.
    pub prices: Arc<rein_llm::PriceBook>,
    /// What the run may spend.
    pub limits: SpendLimits,
    /// The workspace's checkpoints, and what opening them had to say.
    pub checkpoints: Option<(crate::checkpoint::Checkpoints, Vec<String>)>,
    /// The sandbox the commands run in, for an agent rebuilt in its place (a main agent's).
    pub sandbox: Option<crate::sandboxing::KeptSandbox>,
}

impl std::fmt::Debug for AgentParts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentParts")
            .field("settings", &self.settings)
            .field("history", &self.history.len())
            .finish_non_exhaustive()
    }
}

/// One conversation with a model, and the tools it may use.
pub struct Agent {
    provider: Arc<dyn Provider>,
    runner: Arc<ToolRunner>,
    tool_ctx: ToolContext,
    settings: AgentSettings,
    /// The next request: system prompt, tools and the whole history. Kept between rounds so
    /// nothing is rebuilt or copied; each round only appends messages.
    request: Request,
    usage: Usage,
    /// What the calls cost, and the limits on it.
    spend: Spend,
    /// The question to the server's model list.
    model_check: turn::model_check::ModelCheck,
    guard: LoopGuard,
    /// Every tool call id in the history.
    call_ids: HashSet<String>,
    transcript: Option<Box<dyn Transcript>>,
    /// The last record could not be written (the person has been told).
    transcript_failing: bool,
    /// What the SessionStart hooks gave the model, until it goes with the next request.
    session_context: Option<String>,
    /// Pictures attached to the next request.
    pending_images: Vec<rein_llm::Image>,
    /// The context's accounting and what keeps it within the window.
    context: ContextState,
    /// The model's plan.
    todos: Arc<TodoList>,
    /// This turn already reminded the model of open items when it tried to end.
    todo_reminded: bool,
    /// What the sub-agents of this agent used, not yet counted.
    subagents: Option<Arc<SubagentLink>>,
    /// MCP servers whose tools join between rounds.
    mcp: Option<turn::mcp_tools::McpTools>,
    /// The workspace's checkpoints (a main agent with a session only).
    checkpoints: Option<crate::checkpoint::Checkpoints>,
    /// What the checkpoints said before the first turn, to tell then.
    checkpoint_warnings: Vec<String>,
    /// The checkpoint before the turn, while it is being taken (beside the first request).
    checkpoint_pending:
        Option<tokio::task::JoinHandle<(crate::checkpoint::Checkpoints, Vec<String>)>>,
    /// The sandbox the commands run in, with what it was made from.
    sandbox: Option<crate::sandboxing::KeptSandbox>,
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Agent")
            .field("settings", &self.settings)
            .field("messages", &self.request.messages.len())
            .finish_non_exhaustive()
    }
}

impl Agent {
    /// An agent ready for its first (or next, when resumed) turn.
    pub(crate) fn new(parts: AgentParts) -> Self {
        let tool_specs = turn::mcp_tools::tool_specs(&parts.registry);
        let mcp = parts.mcp.map(|offer| turn::mcp_tools::McpTools {
            hub: offer.hub,
            only: offer.only,
            base: Arc::clone(&parts.registry),
            mode: offer.mode,
            seen: None,
            budget: offer.budget,
            search: None,
            // A sub-agent's servers were waited for by its parent's first request.
            waited: parts.agent_name.is_some(),
        });
        let call_ids = parts
            .history
            .iter()
            .flat_map(|m| &m.parts)
            .filter_map(Part::as_tool_call)
            .map(|call| call.id.clone())
            .collect();
        let mut ledger = Ledger::new(
            &parts.system_prompt,
            crate::context::estimate::tools_tokens(&tool_specs),
            &parts.history,
        );
        if let Some(anchor) = parts.anchor {
            ledger.observe(anchor);
        }
        let (checkpoints, checkpoint_warnings) = parts.checkpoints.unzip();
        let request = Request {
            model: parts.settings.model.clone(),
            system: parts.system_prompt,
            messages: parts.history,
            tools: tool_specs,
            temperature: parts.settings.temperature,
            max_tokens: parts.settings.max_tokens,
            cache_key: parts.settings.cache_key.clone(),
        };
        Agent {
            provider: parts.provider,
            runner: Arc::new(
                ToolRunner::new(
                    parts.registry,
                    parts.policy,
                    parts.interaction,
                    parts.hooks,
                    parts.agent_name,
                    parts.secrets,
                )
                .with_nested(parts.nested),
            ),
            tool_ctx: parts.tool_ctx,
            settings: parts.settings,
            request,
            usage: Usage::default(),
            spend: Spend::new(parts.prices, parts.limits),
            model_check: turn::model_check::ModelCheck::default(),
            guard: LoopGuard::default(),
            call_ids,
            transcript: parts.transcript,
            transcript_failing: false,
            session_context: None,
            pending_images: Vec::new(),
            context: ContextState::new(ledger, parts.context, parts.pinned, parts.compact_requests),
            todos: parts.todos,
            todo_reminded: false,
            subagents: parts.subagents,
            mcp,
            checkpoints,
            checkpoint_warnings: checkpoint_warnings.unwrap_or_default(),
            checkpoint_pending: None,
            sandbox: parts.sandbox,
        }
    }

    /// The sandbox this agent's commands run in, for the agent rebuilt in its place to keep
    /// ([`crate::build::AgentBuilder::keep_sandbox`]); `None` for a sub-agent.
    pub fn sandbox(&self) -> Option<&crate::sandboxing::KeptSandbox> {
        self.sandbox.as_ref()
    }

    /// The conversation so far.
    pub fn history(&self) -> &[Message] {
        &self.request.messages
    }

    /// Tokens used by every model call of this agent.
    pub fn total_usage(&self) -> Usage {
        self.usage
    }

    /// What this agent's calls used and cost, the parts apart.
    pub fn spent(&self) -> SpendTotals {
        self.spend.totals()
    }

    /// The limits the run stops at.
    pub fn limits(&self) -> SpendLimits {
        self.spend.limits
    }

    /// Raises (or sets) the run's limits, for a person who chose to go on.
    pub fn set_limits(&mut self, limits: SpendLimits) {
        self.spend.limits = limits;
    }

    /// The prices calls are billed at.
    pub fn prices(&self) -> &Arc<rein_llm::PriceBook> {
        self.spend.prices()
    }

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The API the model is reached through.
    pub fn provider_kind(&self) -> ProviderKind {
        self.settings.provider
    }

    /// The tools' shared state (files changed, current directory).
    pub fn tool_context(&self) -> &ToolContext {
        &self.tool_ctx
    }

    /// Whether this agent is a sub-agent of another.
    pub(crate) fn is_subagent(&self) -> bool {
        self.runner.agent.is_some()
    }

    /// The model's todo list now.
    pub fn todos(&self) -> Vec<crate::tools::TodoItem> {
        self.todos.items()
    }

    /// The answer and the error the front-end prints, masked (a server's message can quote
    /// the key).
    fn mask_outcome(&self, outcome: &mut TurnOutcome) {
        let secrets = &self.runner.secrets;
        secrets.redact_in_place(&mut outcome.text);
        if let TurnEnd::Failed(error) = &mut outcome.end {
            let masked = match std::mem::replace(error, TurnError::Tool(String::new())) {
                TurnError::Model(e) => {
                    TurnError::Model(e.map_messages(|m| secrets.redact(&m).into_owned()))
                }
                TurnError::Tool(m) => TurnError::Tool(secrets.redact(&m).into_owned()),
            };
            *error = masked;
        }
    }

    /// Appends a finished message to the history and the transcript, with its secrets masked
    /// (the model may have written one: its calls run with what it wrote, its history and the
    /// session file keep it masked).
    fn push(&mut self, message: Message, events: &Events) {
        use crate::secrets::{Reasoning, masked_message};
        let secrets = &self.runner.secrets;
        let message = masked_message(secrets, &message, Reasoning::Keep).unwrap_or(message);
        if let Some(t) = self.transcript.as_mut() {
            let recorded = match masked_message(secrets, &message, Reasoning::Mask) {
                Some(masked) => t.record_message(&masked),
                None => t.record_message(&message),
            };
            self.note_recording(recorded, events);
        }
        self.context.ledger.push(&message);
        self.request.messages.push(message);
    }

    /// Tells the person when the session file stops taking records, once, and when it takes
    /// them again: every record is kept in memory meanwhile and written once it can be.
    fn note_recording(&mut self, recorded: std::io::Result<()>, events: &Events) {
        match recorded {
            Ok(()) if self.transcript_failing => {
                self.transcript_failing = false;
                events.warn("the session file can be written again; every record is saved");
            }
            Ok(()) => {}
            Err(_) if self.transcript_failing => {}
            Err(error) => {
                self.transcript_failing = true;
                events.warn(format!("the session is not being saved: {error}"));
            }
        }
    }

    /// Writes whatever the session file could not take earlier. An error means the session
    /// on disk is incomplete: the run should say so and fail.
    pub fn save_session(&mut self) -> std::io::Result<()> {
        match self.transcript.as_mut() {
            Some(t) => t.catch_up(),
            None => Ok(()),
        }
    }

    /// Deletes the session file when the model never answered anything in it (its only turn
    /// failed before a response), so `-c` does not later resume a session holding nothing
    /// but an unanswered prompt. Returns whether it was deleted.
    pub fn discard_unanswered_session(&mut self) -> std::io::Result<bool> {
        let answered = self.request.messages.iter().any(|m| m.role != Role::User);
        match self.transcript.as_mut() {
            Some(transcript) if !answered => transcript.discard().map(|()| true),
            Some(_) | None => Ok(false),
        }
    }
}
