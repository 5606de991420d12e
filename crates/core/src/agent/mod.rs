//! The agent loop: request → stream → assemble → run tools → repeat, until the model answers
//! without calling a tool (and the Stop hooks let the turn end), a limit is reached, or the
//! person interrupts.

mod approval;
mod blind;
mod call_args;
mod calls;
mod compaction;
mod context;
mod cut;
mod direct;
mod event;
mod guard;
mod hook_points;
mod leave_sandbox;
mod masking;
mod mcp_tools;
mod model_check;
mod outcome;
mod runner;
mod spend;
mod subagents;
mod transcript;

use std::collections::HashSet;
use std::sync::Arc;

use futures::StreamExt;
use rein_llm::assemble::Assembler;
use rein_llm::{
    Message, Part, Provider, ProviderKind, Request, Role, StopReason, StreamEvent, Usage,
};
use rein_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

use calls::EarlyStarts;
pub use context::CompactOutcome;
use context::ContextState;
pub use direct::DirectOutcome;
pub use event::{AgentEvent, EventSink, Events, NestedEvent, TurnStop};
use guard::LoopGuard;
use hook_points::AfterStop;
pub use hook_points::MAX_STOP_HOOK_CONTINUATIONS;
pub use outcome::{TurnEnd, TurnError, TurnOutcome};
use runner::{CallEnv, Fatal, ToolRunner};
use spend::{CallKind, Spend};
pub use spend::{LimitReached, SpendLimit, SpendLimits, SpendTotals};
pub use subagents::AGENT_TOOL;
pub(crate) use subagents::SubagentLink;
pub use transcript::Transcript;

use crate::context::{CompactRequests, ContextSettings, Ledger, PinnedState, PromptAnchor};
use crate::hooks::Hooks;
use crate::interaction::Interaction;
use crate::permissions::Policy;
use crate::tools::TodoList;

/// Rounds (model responses) in one turn unless configured otherwise.
pub const DEFAULT_MAX_ROUNDS: u32 = 50;

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
    pub mcp: Option<(Arc<rein_mcp::McpHub>, crate::permissions::PermissionMode)>,
    /// The prices calls are billed at.
    pub prices: Arc<rein_llm::PriceBook>,
    /// What the run may spend.
    pub limits: SpendLimits,
    /// The workspace's checkpoints, and what opening them had to say.
    pub checkpoints: Option<(crate::checkpoint::Checkpoints, Vec<String>)>,
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
    model_check: model_check::ModelCheck,
    guard: LoopGuard,
    /// Every tool call id in the history.
    call_ids: HashSet<String>,
    transcript: Option<Box<dyn Transcript>>,
    /// The last record could not be written (the person has been told).
    transcript_failing: bool,
    /// The session's hooks (the tool runner holds them too).
    hooks: Arc<dyn Hooks>,
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
    mcp: Option<mcp_tools::McpTools>,
    /// The workspace's checkpoints (a main agent with a session only).
    checkpoints: Option<crate::checkpoint::Checkpoints>,
    /// What the checkpoints said before the first turn, to tell then.
    checkpoint_warnings: Vec<String>,
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
        let tool_specs = mcp_tools::tool_specs(&parts.registry);
        let mcp = parts.mcp.map(|(hub, mode)| mcp_tools::McpTools {
            hub,
            base: Arc::clone(&parts.registry),
            mode,
            seen: None,
            waited: false,
        });
        let call_ids = parts
            .history
            .iter()
            .flat_map(|m| &m.parts)
            .filter_map(|p| match p {
                Part::ToolCall(call) => Some(call.id.clone()),
                Part::Text { .. }
                | Part::Reasoning { .. }
                | Part::ToolResult(_)
                | Part::Image(_) => None,
            })
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
            runner: Arc::new(ToolRunner::new(
                parts.registry,
                parts.policy,
                parts.interaction,
                Arc::clone(&parts.hooks),
                parts.agent_name,
                parts.secrets,
            )),
            tool_ctx: parts.tool_ctx,
            settings: parts.settings,
            request,
            usage: Usage::default(),
            spend: Spend::new(parts.prices, parts.limits),
            model_check: model_check::ModelCheck::default(),
            guard: LoopGuard::default(),
            call_ids,
            transcript: parts.transcript,
            transcript_failing: false,
            hooks: parts.hooks,
            session_context: None,
            pending_images: Vec::new(),
            context: ContextState::new(ledger, parts.context, parts.pinned, parts.compact_requests),
            todos: parts.todos,
            todo_reminded: false,
            subagents: parts.subagents,
            mcp,
            checkpoints,
            checkpoint_warnings: checkpoint_warnings.unwrap_or_default(),
        }
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

    /// Runs one turn: the person's input, then model rounds and tool calls until the model is
    /// done. Cancelling `cancel` stops the stream, a question to the person or the running
    /// tools; the history stays valid (every tool call gets a result) whatever happens.
    pub async fn run_turn(
        &mut self,
        input: &str,
        events: &Events,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        // Everything the front-end gets is masked: the model's text as it streams too.
        let events = &crate::secrets::EventMasker::wrap(&self.runner.secrets, events);
        if let Some(subagents) = &self.subagents {
            subagents.start_turn(events);
        }
        // A new request from the person: repeats are counted within one turn.
        self.guard = LoopGuard::default();
        self.context.reactive_streak = 0;
        self.todo_reminded = false;
        let mut outcome = TurnOutcome::new();
        let before = self.spend.totals();
        self.start_model_check();
        self.start_window_probe();
        self.checkpoint(Some(input), events).await;
        match self.submit_prompt(input, events, &cancel).await {
            Ok(message) => {
                self.push(message, events);
                self.run_rounds(events, cancel, &mut outcome).await;
            }
            Err(end) => outcome.end = end,
        }
        let after = self.spend.totals();
        outcome.usage_reported = after.reported_calls > before.reported_calls;
        outcome.cost_usd = match (before.cost_usd, after.cost_usd) {
            (Some(a), Some(b)) => Some(rein_llm::micro_dollars(b - a)),
            _ => None,
        };
        self.mask_outcome(&mut outcome);
        let stop = outcome.stop();
        if stop == TurnStop::Cancelled {
            // Background processes of this turn's commands end with it.
            self.tool_ctx.processes().kill_all().await;
        }
        self.checkpoint(None, events).await;
        // A blocked request left nothing in the conversation to record.
        if stop != TurnStop::PromptBlocked
            && let Some(t) = self.transcript.as_mut()
        {
            let recorded = t.record_turn_end(stop);
            self.note_recording(recorded, events);
        }
        events.emit(AgentEvent::TurnFinished { stop_reason: stop });
        outcome
    }

    /// Model rounds until the model is done (and the Stop hooks let the turn end), a limit
    /// is reached, or the person interrupts.
    async fn run_rounds(
        &mut self,
        events: &Events,
        cancel: CancellationToken,
        outcome: &mut TurnOutcome,
    ) {
        let mut env = CallEnv {
            runner: Arc::clone(&self.runner),
            ctx: self.tool_ctx.with_cancel(cancel.clone()),
            events: events.clone(),
            cancel: cancel.clone(),
        };
        let mut continued = 0;
        loop {
            self.sync_mcp_tools(&mut env).await;
            let round = self.round(&env, outcome).await;
            // What summary calls used counts with the turn.
            let summaries = std::mem::take(&mut self.context.unreported_usage);
            outcome.usage += summaries;
            outcome.compaction_usage += summaries;
            let end = match round {
                RoundEnd::Continue => None,
                RoundEnd::Stop(end @ (TurnEnd::EndTurn | TurnEnd::MaxTokens)) => {
                    match self.stop_hooks(&mut continued, events, &cancel).await {
                        AfterStop::End => match self.todo_reminder(&end) {
                            Some(message) => {
                                self.push(message, events);
                                None
                            }
                            None => Some(end),
                        },
                        AfterStop::Cancelled => Some(TurnEnd::Cancelled),
                        AfterStop::Continue(message) => {
                            self.push(message, events);
                            None
                        }
                    }
                }
                RoundEnd::Stop(end) => Some(end),
            };
            match end {
                Some(end) => {
                    outcome.end = end;
                    return;
                }
                None if outcome.rounds >= self.settings.max_rounds => {
                    outcome.end = TurnEnd::MaxRounds;
                    return;
                }
                None => {}
            }
        }
    }

    /// One model response and its tool calls.
    async fn round(&mut self, env: &CallEnv, outcome: &mut TurnOutcome) -> RoundEnd {
        let events = &env.events;
        // The request must fit the window: compact first when it would not fit comfortably.
        if let Err(end) = self.prepare_context(events, &env.cancel).await {
            return RoundEnd::Stop(end);
        }
        // A request that would cross a spending limit is not sent; the history is whole
        // (every call answered), so the session can be continued with a higher limit.
        if let Err(reached) = self
            .spend
            .check(&self.settings.model, self.context.ledger.used())
        {
            return RoundEnd::Stop(TurnEnd::SpendingLimit(reached));
        }
        let sent = self.request.messages.len();
        // Call ids stay unique across the whole conversation (providers reject a reused one);
        // the set moves into the assembler and back, never rebuilt.
        let mut assembler = Assembler::with_taken_ids(std::mem::take(&mut self.call_ids));
        let mut early = EarlyStarts::new();
        let streamed = self
            .stream_response(env, &mut assembler, &mut early, outcome)
            .await;
        // Before the call is priced: the list may give the price.
        self.finish_model_check(events).await;
        if streamed.is_err() {
            self.count_unfinished(&assembler, outcome);
        }
        let finished = streamed.and_then(|()| {
            assembler.finish().map_err(|error| {
                early.abandon("Not answered: the model's response failed.", env);
                RoundEnd::Stop(TurnEnd::Failed(TurnError::Model(error)))
            })
        });
        self.call_ids = assembler.into_taken_ids();
        let response = match finished {
            Ok(response) => response,
            // "Too long" gets a compaction and another try.
            Err(end) => return self.after_failed_request(end, events, &env.cancel).await,
        };
        // Only a response the model finished counts as a round.
        outcome.rounds += 1;
        self.after_response();
        if let Some(usage) = response.usage {
            self.count_usage(usage, sent, events, outcome);
        }
        let message = without_empty_parts(response.message);
        let calls: Vec<rein_llm::ToolCall> = message
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall(call) => Some(call.clone()),
                Part::Text { .. }
                | Part::Reasoning { .. }
                | Part::ToolResult(_)
                | Part::Image(_) => None,
            })
            .collect();
        let text = text_of(&message);
        events.emit(AgentEvent::ResponseFinished {
            round: outcome.rounds,
            text: text.clone(),
            tool_calls: calls.len(),
        });
        // The answer is the text of a response that asks for nothing more; text before tool
        // calls is narration, already shown as such.
        outcome.text = if calls.is_empty() {
            text
        } else {
            String::new()
        };
        let sendable = message
            .parts
            .iter()
            .any(|p| matches!(p, Part::Text { .. } | Part::ToolCall(_)));
        if sendable {
            self.push(message, events);
        }
        if calls.is_empty() {
            return RoundEnd::Stop(match response.stop_reason {
                StopReason::MaxTokens => TurnEnd::MaxTokens,
                StopReason::EndTurn | StopReason::ToolUse | StopReason::Other(_) => {
                    TurnEnd::EndTurn
                }
            });
        }
        let mut outcomes = calls::run_calls(env, &calls, early, &mut self.guard).await;
        self.count_subagents(events, outcome);
        let updated = self.report_todos(events);
        // What goes to the model with the results: a reminder of a stale todo list, and
        // the background commands that ended.
        let notes = self
            .todos
            .after_round(updated)
            .into_iter()
            .chain(self.tool_ctx.background().take_finish_notices());
        if let Some(last) = outcomes.last_mut() {
            for note in notes {
                last.result.content.push_str("\n\n");
                last.result.content.push_str(&note);
            }
        }
        let fatal = outcomes
            .iter()
            .find_map(|o| o.fatal.clone())
            .or_else(|| env.cancel.is_cancelled().then_some(Fatal::Cancelled));
        let mut results = Message {
            role: Role::Tool,
            parts: outcomes
                .into_iter()
                .map(|o| Part::ToolResult(o.result))
                .collect(),
        };
        // No result may take more than its share of the window.
        self.fit_results(&mut results, &calls, &env.cancel).await;
        self.push(results, events);
        match fatal {
            None => RoundEnd::Continue,
            Some(Fatal::Cancelled) => RoundEnd::Stop(TurnEnd::Cancelled),
            Some(Fatal::RepeatedCalls) => RoundEnd::Stop(TurnEnd::RepeatedCalls),
            Some(Fatal::Internal(message)) => {
                RoundEnd::Stop(TurnEnd::Failed(TurnError::Tool(message)))
            }
        }
    }

    /// Counts what one request of `sent` messages used: in the totals, in the context's
    /// ledger, in the transcript, and for the front-end.
    fn count_usage(
        &mut self,
        usage: Usage,
        sent: usize,
        events: &Events,
        outcome: &mut TurnOutcome,
    ) {
        self.usage += usage;
        outcome.usage += usage;
        self.spend
            .record(CallKind::Round, &self.settings.model, &usage);
        self.context.ledger.observe(PromptAnchor {
            prompt_tokens: usage.prompt_tokens,
            messages: sent,
        });
        if let Some(t) = self.transcript.as_mut() {
            let recorded = t.record_usage(&self.settings.model, self.settings.provider, &usage);
            self.note_recording(recorded, events);
        }
        events.emit(AgentEvent::Usage {
            call: usage,
            total: self.usage,
        });
    }

    /// Streams one response into `assembler`, starting calls early where they may. Ends the
    /// round early when the person interrupts or the stream fails.
    async fn stream_response(
        &mut self,
        env: &CallEnv,
        assembler: &mut Assembler,
        early: &mut EarlyStarts,
        outcome: &mut TurnOutcome,
    ) -> Result<(), RoundEnd> {
        let events = &env.events;
        let blind = (!self.tool_ctx.config().vision)
            .then(|| blind::without_images(&self.request))
            .flatten();
        let mut stream = self
            .provider
            .stream(blind.as_ref().unwrap_or(&self.request));
        loop {
            let next = tokio::select! {
                biased;
                () = env.cancel.cancelled() => {
                    early.abandon("Not answered: the person interrupted the response.", env);
                    // Keep what the person already saw; unfinished tool calls are dropped.
                    let text = assembler.text();
                    if !text.trim().is_empty() {
                        outcome.text.clone_from(&text);
                        self.push(Message { role: Role::Assistant, parts: vec![Part::Text { text }] }, events);
                    }
                    return Err(RoundEnd::Stop(TurnEnd::Cancelled));
                }
                next = stream.next() => next,
            };
            let event = match next {
                None => return Ok(()),
                Some(Ok(event)) => event,
                Some(Err(error)) => {
                    early.abandon("Not answered: the model's response failed.", env);
                    return Err(RoundEnd::Stop(TurnEnd::Failed(TurnError::Model(error))));
                }
            };
            match &event {
                StreamEvent::TextDelta { text } => {
                    events.emit(AgentEvent::TextDelta { text: text.clone() });
                }
                StreamEvent::ReasoningDelta { text } => {
                    events.emit(AgentEvent::ReasoningDelta { text: text.clone() });
                }
                StreamEvent::Retry {
                    attempt,
                    wait,
                    reason,
                } => {
                    early.abandon(
                        "Dropped: the response was cut off and is being requested again.",
                        env,
                    );
                    events.emit(AgentEvent::Retry {
                        attempt: *attempt,
                        wait: *wait,
                        reason: reason.clone(),
                    });
                }
                StreamEvent::Waiting { elapsed } => {
                    events.emit(AgentEvent::Waiting { elapsed: *elapsed });
                }
                StreamEvent::ReasoningSignature { .. }
                | StreamEvent::RedactedReasoning { .. }
                | StreamEvent::ToolCallDelta { .. }
                | StreamEvent::ToolCallEnd { .. }
                | StreamEvent::Usage(_)
                | StreamEvent::Finish { .. } => {}
            }
            for call in assembler.push(&event) {
                early.offer(env, call);
            }
        }
    }

    /// Counts what the sub-agents of this round used in the session's total (and the turn's),
    /// and records it apart from the agent's own calls.
    fn count_subagents(&mut self, events: &Events, outcome: &mut TurnOutcome) {
        let Some(subagents) = &self.subagents else {
            return;
        };
        for (model, agent, usage) in subagents.take() {
            self.spend.record(CallKind::Subagent, &model, &usage);
            self.usage += usage;
            outcome.usage += usage;
            outcome.subagent_usage += usage;
            if let Some(t) = self.transcript.as_mut() {
                let recorded = t.record_subagent_usage(&model, &agent, &usage);
                self.note_recording(recorded, events);
            }
        }
    }

    /// Counts a response that ended before it finished (interrupted, failed): what the
    /// server reported of it, else its output estimated from what streamed.
    fn count_unfinished(&mut self, assembler: &Assembler, outcome: &mut TurnOutcome) {
        match assembler.usage() {
            Some(usage) => {
                self.usage += usage;
                outcome.usage += usage;
                self.spend
                    .record(CallKind::Round, &self.settings.model, &usage);
            }
            None => {
                let chars = assembler.streamed_chars();
                if chars > 0 {
                    // About four characters a token: an estimate, and shown as one.
                    let tokens = (chars as u64).div_ceil(4);
                    outcome.estimated_output_tokens += tokens;
                    self.spend.record_estimate(&self.settings.model, tokens);
                }
            }
        }
    }

    /// Takes the checkpoint before a turn (`Some(prompt)`) or records what the turn changed
    /// (`None`), off the async threads: a scan reads the disk. A failure is a warning.
    async fn checkpoint(&mut self, before: Option<&str>, events: &Events) {
        let Some(mut checkpoints) = self.checkpoints.take() else {
            return;
        };
        let line = self.transcript.as_ref().map_or(0, |t| t.lines());
        let prompt = before.map(str::to_owned);
        let scanned = tokio::task::spawn_blocking(move || {
            let warnings = match &prompt {
                Some(prompt) => checkpoints.before_turn(prompt, line),
                None => checkpoints.after_turn(),
            };
            (checkpoints, warnings)
        })
        .await;
        let warnings = match scanned {
            Ok((checkpoints, warnings)) => {
                self.checkpoints = Some(checkpoints);
                warnings
            }
            Err(e) => vec![format!("checkpoints stopped: {e}")],
        };
        for message in std::mem::take(&mut self.checkpoint_warnings)
            .into_iter()
            .chain(warnings)
        {
            events.emit(AgentEvent::Warning { message });
        }
    }

    /// Whether the workspace's checkpoints are taken.
    pub fn has_checkpoints(&self) -> bool {
        self.checkpoints.is_some()
    }

    /// Whether this agent is a sub-agent of another.
    pub(crate) fn is_subagent(&self) -> bool {
        self.runner.agent.is_some()
    }

    /// Tells the front-end and the session file of a new todo list; whether there was one.
    fn report_todos(&mut self, events: &Events) -> bool {
        let Some(todos) = self.todos.take_change() else {
            return false;
        };
        if let Some(t) = self.transcript.as_mut() {
            let recorded = t.record_todos(&todos);
            self.note_recording(recorded, events);
        }
        events.emit(AgentEvent::Todos { todos });
        true
    }

    /// The message that keeps a turn going once, when the model ends it with open items.
    fn todo_reminder(&mut self, end: &TurnEnd) -> Option<Message> {
        if *end != TurnEnd::EndTurn || self.todo_reminded {
            return None;
        }
        let text = self.todos.end_of_turn_reminder()?;
        self.todo_reminded = true;
        Some(Message {
            role: Role::User,
            parts: vec![Part::Text { text }],
        })
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
                events.emit(AgentEvent::Warning {
                    message: "the session file can be written again; every record is saved"
                        .to_owned(),
                });
            }
            Ok(()) => {}
            Err(_) if self.transcript_failing => {}
            Err(error) => {
                self.transcript_failing = true;
                events.emit(AgentEvent::Warning {
                    message: format!("the session is not being saved: {error}"),
                });
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

enum RoundEnd {
    Continue,
    Stop(TurnEnd),
}

/// Drops empty text parts (some providers send them), keeping reasoning and calls.
fn without_empty_parts(mut message: Message) -> Message {
    message.parts.retain(|p| match p {
        // Anthropic rejects text blocks that are only whitespace.
        Part::Text { text } => !text.trim().is_empty(),
        Part::Reasoning {
            text,
            signature,
            redacted,
        } => !text.is_empty() || signature.is_some() || redacted.is_some(),
        Part::ToolCall(_) | Part::ToolResult(_) | Part::Image(_) => true,
    });
    message
}

fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            Part::Reasoning { .. } | Part::ToolCall(_) | Part::ToolResult(_) | Part::Image(_) => {
                None
            }
        })
        .collect()
}
