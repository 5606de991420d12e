//! The `agent` tool: a sub-agent with a clean context for a side quest.
//!
//! - A fresh conversation with the parent's provider and model (or its type's model), every
//!   tool of the parent's but `agent` (no recursion: the tool is not offered, and a call to it
//!   anyway is refused with a clear result), and its own todo list and compactions.
//! - The same permissions and hooks: its calls go through the same policy, and what needs an
//!   approval is asked through the parent's [`crate::interaction::Interaction`], marked with
//!   the sub-agent's name. SubagentStop fires when it finishes; Stop and UserPromptSubmit do
//!   not (its "prompt" is the parent model's task, and its end is not the turn's).
//! - At most [`SUBAGENT_MAX_ROUNDS`] rounds (a type's `max_rounds` may set another), and
//!   [`MAX_CONCURRENT_SUBAGENTS`] at once; the parent's Ctrl+C cancels them all.
//! - Its result is its final text, cut at [`RESULT_MAX_CHARS`] with a marker; when it stops
//!   without one, the result says so and what it did.
//! - Its events reach the parent's front-end nested ([`AgentEvent::Nested`], with the parent
//!   call's id); its usage counts in the parent's total and is recorded apart; its transcript
//!   is a session file of its own in the session's directory.

pub mod types;

use std::path::PathBuf;
use std::sync::Arc;

use rein_llm::{Part, Provider};
use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, ToolRegistry, async_trait};
use schemars::JsonSchema;
use serde::Deserialize;
use tokio::sync::Semaphore;

pub use crate::agent::AGENT_TOOL;
use crate::agent::{
    Agent, AgentEvent, AgentParts, AgentSettings, Events, McpFilter, McpOffer, NestedEvent,
    SubagentLink, Transcript, TurnStop,
};
use crate::context::{CompactRequests, CompactTool, ContextSettings, PinnedState};
use crate::hooks::Hooks;
use crate::interaction::Interaction;
use crate::permissions::Policy;
use crate::secrets::Secrets;
use crate::session::NewSession;
use crate::tools::{TodoList, TodoWriteTool};
pub use types::{AgentType, EXPLORE};

/// A sub-agent's round limit unless its type sets one.
pub const SUBAGENT_MAX_ROUNDS: u32 = 30;
/// The longest result a sub-agent gives back, in characters.
pub const RESULT_MAX_CHARS: usize = 5_000;
/// Sub-agents running at once; more wait for a slot.
pub const MAX_CONCURRENT_SUBAGENTS: usize = 4;

/// What every sub-agent of an agent is built from: the parent's endpoint, tools, rules,
/// hooks and prompt inputs.
pub(crate) struct SubagentSetup {
    pub(crate) provider: Arc<dyn Provider>,
    pub(crate) settings: AgentSettings,
    /// The parent's tools, without its own state's (`agent`, `compact`, `todo_write`).
    pub(crate) tools: ToolRegistry,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) interaction: Arc<dyn Interaction>,
    pub(crate) hooks: Arc<dyn Hooks>,
    pub(crate) secrets: Arc<Secrets>,
    pub(crate) context: ContextSettings,
    /// Renders the system prompt for a set of tools.
    pub(crate) prompt: Box<dyn Fn(&ToolRegistry) -> String + Send + Sync>,
    /// Where transcripts go (the session's directory) and the session's working directory.
    pub(crate) transcripts: Option<(PathBuf, PathBuf)>,
    /// Where sub-agents' events go during the parent's turn, and what they used, for the
    /// parent to count and record.
    pub(crate) link: Arc<SubagentLink>,
    /// The parent's MCP servers and permission mode: sub-agents get their tools too.
    pub(crate) mcp: Option<(
        Arc<rein_mcp::McpHub>,
        crate::permissions::PermissionMode,
        crate::agent::ToolSearchBudget,
    )>,
}

/// The `agent` tool.
pub struct AgentTool {
    setup: Arc<SubagentSetup>,
    types: Vec<AgentType>,
    description: String,
    slots: Arc<Semaphore>,
}

impl std::fmt::Debug for AgentTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTool")
            .field("types", &self.types)
            .finish_non_exhaustive()
    }
}

impl AgentTool {
    pub(crate) fn new(setup: SubagentSetup, types: Vec<AgentType>) -> Self {
        let mut description = String::from(
            "Give a self-contained task to a sub-agent with a fresh context; returns its final \
             answer. Calls run in parallel. Types:",
        );
        for ty in &types {
            description.push_str(&format!("\n- {}: {}", ty.name, ty.description));
        }
        AgentTool {
            setup: Arc::new(setup),
            types,
            description,
            slots: Arc::new(Semaphore::new(MAX_CONCURRENT_SUBAGENTS)),
        }
    }
}

/// The `agent` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AgentArgs {
    /// What to do and report.
    pub task: String,
    /// Default: general (all tools).
    #[serde(default)]
    pub agent_type: Option<String>,
}

#[async_trait]
impl Tool for AgentTool {
    type Args = AgentArgs;

    fn name(&self) -> &'static str {
        AGENT_TOOL
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn kind(&self) -> ToolKind {
        // The call itself touches nothing: each call the sub-agent makes is decided on its
        // own. This also lets several run at once.
        ToolKind::ReadOnly
    }

    async fn run(&self, args: AgentArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if args.task.trim().is_empty() {
            return Err(ToolError::model(
                "`task` is empty: say what the sub-agent should do and report",
            ));
        }
        let ty = match args.agent_type.as_deref().map(str::trim) {
            None | Some("" | "general") => None,
            Some(name) => Some(self.types.iter().find(|t| t.name == name).ok_or_else(|| {
                let names: Vec<&str> = self.types.iter().map(|t| t.name.as_str()).collect();
                ToolError::Model(format!(
                    "there is no agent type `{name}`; the types are: general, {}",
                    names.join(", ")
                ))
            })?),
        };
        let parent = self.setup.link.turn_events().ok_or_else(|| {
            ToolError::Internal("the agent call runs outside the parent's turn".to_owned())
        })?;
        let call_id = ctx.scope().call_id.clone();
        let cancel = ctx.cancel_token().clone();
        let _slot = tokio::select! {
            biased;
            () = cancel.cancelled() => {
                return Err(ToolError::Cancelled { partial: "(the sub-agent never started)".to_owned() });
            }
            slot = self.slots.acquire() => slot.map_err(|e| ToolError::Internal(e.to_string()))?,
        };
        let name = ty.map_or("general", |t| t.name.as_str()).to_owned();
        let (mut agent, unrecorded) = self.build(ty, &name, &call_id, ctx);
        if let Some(why) = unrecorded {
            parent.warn(format!(
                "the {name} sub-agent's transcript is not kept: {why}"
            ));
        }
        let nested = parent.clone();
        let agent_name = name.clone();
        let events = Events::new(move |event: AgentEvent| {
            nested.emit(AgentEvent::Nested(NestedEvent {
                parent_call_id: call_id.clone(),
                agent: agent_name.clone(),
                event: Box::new(event),
            }));
        });
        let outcome = agent.run_turn(&args.task, &events, cancel).await;
        if let Err(e) = agent.save_session() {
            parent.warn(format!(
                "the {name} sub-agent's transcript is incomplete: {e}"
            ));
        }
        self.setup
            .link
            .add(agent.model(), &name, agent.total_usage());
        let mut warnings = Vec::new();
        self.setup.hooks.subagent_stop(&mut warnings).await;
        for message in warnings {
            parent.warn(message);
        }
        result(&agent, &outcome)
    }
}

impl AgentTool {
    /// A sub-agent of type `ty` (`None`: general) for the call `call_id`, and why its
    /// transcript could not be started, if it could not.
    fn build(
        &self,
        ty: Option<&AgentType>,
        name: &str,
        call_id: &str,
        ctx: &ToolContext,
    ) -> (Agent, Option<String>) {
        let setup = &self.setup;
        let mut tools = self.tools_for(ty);
        let compact_requests = Arc::new(CompactRequests::default());
        tools.register(CompactTool::new(Arc::clone(&compact_requests)));
        let todos = Arc::new(TodoList::default());
        tools.register(TodoWriteTool::new(Arc::clone(&todos)));
        let mut system_prompt = (setup.prompt)(&tools);
        system_prompt.push_str(&format!(
            "\n\n# You are a sub-agent ({name})\nAnother agent gave you the task below; it \
             sees only your final answer. Work on your own (no one answers questions), then \
             answer with the conclusion and the facts behind it (paths, lines), briefly."
        ));
        if let Some(prompt) = ty.map(|t| t.prompt.trim()).filter(|p| !p.is_empty()) {
            system_prompt.push_str("\n\n");
            system_prompt.push_str(prompt);
        }
        let mut settings = setup.settings.clone();
        if let Some(model) = ty.and_then(|t| t.model.clone()) {
            settings.model = model;
        }
        settings.max_rounds = ty.and_then(|t| t.max_rounds).unwrap_or(SUBAGENT_MAX_ROUNDS);
        // Its own prefix, its own cache: sub-agents of one type share a prompt.
        settings.cache_key = settings.cache_key.map(|key| format!("{key}-{name}"));
        let (transcript, unrecorded) = self.transcript(call_id, &settings);
        let agent = Agent::new(AgentParts {
            nested: None,
            provider: Arc::clone(&setup.provider),
            registry: Arc::new(tools),
            tool_ctx: ctx.for_helper(),
            system_prompt,
            settings,
            history: Vec::new(),
            transcript,
            policy: Arc::clone(&setup.policy),
            interaction: Arc::clone(&setup.interaction),
            hooks: Arc::clone(&setup.hooks),
            agent_name: Some(name.to_owned()),
            secrets: Arc::clone(&setup.secrets),
            context: setup.context.clone(),
            pinned: vec![Arc::clone(&todos) as Arc<dyn PinnedState>],
            compact_requests,
            todos,
            anchor: None,
            subagents: None,
            // The parent prices what its sub-agents used and checks its limits between rounds.
            prices: Arc::default(),
            limits: crate::agent::SpendLimits::default(),
            // A sub-agent is never rebuilt: it runs in its parent's sandbox (its context's).
            sandbox: None,
            // The parent's MCP servers, whose tools it gets as its type allows.
            mcp: setup.mcp.clone().map(|(hub, mode, budget)| McpOffer {
                hub,
                mode,
                budget,
                only: match ty {
                    Some(t) if t.read_only => McpFilter::ReadOnly,
                    Some(AgentType {
                        tools: Some(names), ..
                    }) => McpFilter::Named(names.clone()),
                    Some(_) | None => McpFilter::All,
                },
            }),
            // The parent turn's checkpoint covers what a sub-agent changes.
            checkpoints: None,
        });
        (agent, unrecorded)
    }

    /// The tools a sub-agent of type `ty` gets: the read-only ones, the ones it names, or all.
    fn tools_for(&self, ty: Option<&AgentType>) -> ToolRegistry {
        let tools = &self.setup.tools;
        match ty {
            Some(t) if t.read_only => tools
                .offered(|kind| kind == ToolKind::ReadOnly)
                .without(&["bash_output", "kill_shell"]),
            Some(AgentType {
                tools: Some(names), ..
            }) => {
                let unwanted: Vec<&str> = (tools.names().into_iter())
                    .filter(|tool| !names.iter().any(|n| n == tool))
                    .collect();
                tools.without(&unwanted)
            }
            Some(_) | None => tools.offered(|_| true),
        }
    }

    /// The transcript of the sub-agent for the call `call_id`, when transcripts are kept;
    /// why it could not be started, if it could not.
    fn transcript(
        &self,
        call_id: &str,
        settings: &AgentSettings,
    ) -> (Option<Box<dyn Transcript>>, Option<String>) {
        let Some((dir, cwd)) = &self.setup.transcripts else {
            return (None, None);
        };
        let label: String = call_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let path = dir.join(format!("agent-{label}.jsonl"));
        let session = NewSession {
            model: &settings.model,
            provider: settings.provider,
            cwd,
            parent: None,
        };
        match crate::session::create_transcript(&path, &format!("agent-{label}"), session) {
            Ok(transcript) => (Some(Box::new(transcript)), None),
            Err(e) => (None, Some(e.to_string())),
        }
    }
}

/// What the parent's model gets back.
fn result(agent: &Agent, outcome: &crate::agent::TurnOutcome) -> Result<ToolOutput, ToolError> {
    let did = what_it_did(agent, outcome.rounds);
    let text = outcome.text.trim();
    match outcome.stop() {
        TurnStop::Cancelled => Err(ToolError::Cancelled {
            partial: format!("The sub-agent was interrupted. {did}"),
        }),
        TurnStop::EndTurn if !text.is_empty() => Ok(ToolOutput::success(cut(text))),
        stop => {
            let why = match stop {
                TurnStop::MaxRounds => format!("it reached its limit of {} rounds", outcome.rounds),
                TurnStop::MaxTokens => "its answer was cut at the output token limit".to_owned(),
                TurnStop::RepeatedCalls => "it kept repeating the same call".to_owned(),
                TurnStop::Error => format!(
                    "it failed: {}",
                    outcome
                        .error()
                        .map_or_else(|| "an error".to_owned(), ToString::to_string)
                ),
                TurnStop::MaxCost | TurnStop::MaxSessionTokens => {
                    "it reached the session's spending limit".to_owned()
                }
                TurnStop::EndTurn | TurnStop::Cancelled | TurnStop::PromptBlocked => {
                    "it gave no answer".to_owned()
                }
            };
            let mut content = format!("The sub-agent stopped without a final answer: {why}. {did}");
            if !text.is_empty() {
                content.push_str(&format!("\nIts last text:\n{}", cut(text)));
            }
            Ok(if stop == TurnStop::Error {
                ToolOutput::error(content)
            } else {
                ToolOutput::success(content)
            })
        }
    }
}

/// Its rounds, the calls it made by tool, and the files it changed.
fn what_it_did(agent: &Agent, rounds: u32) -> String {
    let mut calls: Vec<(String, usize)> = Vec::new();
    for part in agent.history().iter().flat_map(|m| &m.parts) {
        if let Part::ToolCall(call) = part {
            match calls.iter_mut().find(|(name, _)| *name == call.name) {
                Some((_, n)) => *n += 1,
                None => calls.push((call.name.clone(), 1)),
            }
        }
    }
    let mut did = format!("It ran {rounds} round(s)");
    if calls.is_empty() {
        did.push_str(" and made no tool calls.");
    } else {
        let listed: Vec<String> = calls
            .iter()
            .map(|(name, n)| format!("{name} ×{n}"))
            .collect();
        did.push_str(&format!("; its calls: {}.", listed.join(", ")));
    }
    did
}

/// `text` within [`RESULT_MAX_CHARS`], with a marker when cut.
fn cut(text: &str) -> String {
    if text.chars().count() <= RESULT_MAX_CHARS {
        return text.to_owned();
    }
    let kept: String = text.chars().take(RESULT_MAX_CHARS).collect();
    format!(
        "{kept}\n[rein: the sub-agent's answer was cut at {RESULT_MAX_CHARS} characters of {}]",
        text.chars().count()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_answers_are_cut_with_a_marker() {
        let short = "a".repeat(RESULT_MAX_CHARS);
        assert_eq!(cut(&short), short);
        let long = "é".repeat(RESULT_MAX_CHARS + 10);
        let shown = cut(&long);
        assert!(shown.starts_with(&"é".repeat(RESULT_MAX_CHARS)));
        assert!(
            shown.ends_with("cut at 5000 characters of 5010]"),
            "{shown}"
        );
    }
}
