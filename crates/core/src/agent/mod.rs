//! The agent loop: request → stream → assemble → run tools → repeat, until the model answers
//! without calling a tool, the round limit is reached, or the person interrupts.

mod calls;
mod event;
mod guard;
mod transcript;

use std::sync::Arc;

use futures::StreamExt;
use rein_llm::assemble::Assembler;
use rein_llm::{
    LlmError, Message, Part, Provider, ProviderKind, Request, Role, StopReason, StreamEvent, Usage,
};
use rein_tools::{ToolContext, ToolRegistry};
use tokio_util::sync::CancellationToken;

use calls::{CallEnv, EarlyStarts, Fatal};
pub use event::{AgentEvent, EventSink, TurnStop};
use guard::LoopGuard;
pub use transcript::Transcript;

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
}

/// Everything an agent is built from.
pub struct AgentParts {
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
}

/// What one turn achieved.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// Why the turn ended.
    pub stop: TurnStop,
    /// The final answer: the text of the last response when it called no tools (or what
    /// streamed before an interruption); empty when the turn ended otherwise.
    pub text: String,
    /// Model responses in this turn.
    pub rounds: u32,
    /// Tokens used in this turn.
    pub usage: Usage,
    /// What went wrong, when `stop` is [`TurnStop::Error`].
    pub error: Option<TurnError>,
}

/// Why a turn failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum TurnError {
    /// The model could not be reached or refused the request (after retries).
    #[error(transparent)]
    Model(#[from] LlmError),
    /// rein itself failed while running a tool.
    #[error("rein failed while running a tool: {0}")]
    Tool(String),
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
    registry: Arc<ToolRegistry>,
    tool_ctx: ToolContext,
    settings: AgentSettings,
    /// The next request: system prompt, tools and the whole history. Kept between rounds so
    /// nothing is rebuilt or copied; each round only appends messages.
    request: Request,
    usage: Usage,
    guard: LoopGuard,
    transcript: Option<Box<dyn Transcript>>,
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
    pub fn new(parts: AgentParts) -> Self {
        let tool_specs = parts
            .registry
            .specs()
            .into_iter()
            .map(|s| rein_llm::ToolSpec::new(s.name, s.description, s.parameters))
            .collect();
        let request = Request {
            model: parts.settings.model.clone(),
            system: parts.system_prompt,
            messages: parts.history,
            tools: tool_specs,
            temperature: parts.settings.temperature,
            max_tokens: parts.settings.max_tokens,
        };
        Agent {
            provider: parts.provider,
            registry: parts.registry,
            tool_ctx: parts.tool_ctx,
            settings: parts.settings,
            request,
            usage: Usage::default(),
            guard: LoopGuard::default(),
            transcript: parts.transcript,
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

    /// The model's name.
    pub fn model(&self) -> &str {
        &self.settings.model
    }

    /// The tools' shared state (files changed, current directory).
    pub fn tool_context(&self) -> &ToolContext {
        &self.tool_ctx
    }

    /// Runs one turn: the person's input, then model rounds and tool calls until the model is
    /// done. Cancelling `cancel` stops the stream or the running tools; the history stays valid
    /// (every tool call gets a result) whatever happens.
    pub async fn run_turn(
        &mut self,
        input: &str,
        sink: &dyn EventSink,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        self.push(
            Message {
                role: Role::User,
                parts: vec![Part::Text {
                    text: input.to_owned(),
                }],
            },
            sink,
        );
        let env = CallEnv {
            registry: Arc::clone(&self.registry),
            ctx: self.tool_ctx.with_cancel(cancel.clone()),
            cancel: cancel.clone(),
        };
        let mut outcome = TurnOutcome {
            stop: TurnStop::EndTurn,
            text: String::new(),
            rounds: 0,
            usage: Usage::default(),
            error: None,
        };
        loop {
            outcome.rounds += 1;
            let round = self.round(&env, sink, &cancel, &mut outcome).await;
            match round {
                RoundEnd::Continue if outcome.rounds >= self.settings.max_rounds => {
                    outcome.stop = TurnStop::MaxRounds;
                    break;
                }
                RoundEnd::Continue => {}
                RoundEnd::Stop(stop) => {
                    outcome.stop = stop;
                    break;
                }
            }
        }
        if outcome.stop == TurnStop::Cancelled {
            // Background processes of this turn's commands end with it.
            self.tool_ctx.processes().kill_all().await;
        }
        if let Some(t) = self.transcript.as_mut()
            && let Err(e) = t.record_turn_end(outcome.stop)
        {
            sink.emit(transcript_warning(&e));
        }
        sink.emit(AgentEvent::TurnFinished {
            stop_reason: outcome.stop,
        });
        outcome
    }

    /// One model response and its tool calls.
    async fn round(
        &mut self,
        env: &CallEnv,
        sink: &dyn EventSink,
        cancel: &CancellationToken,
        outcome: &mut TurnOutcome,
    ) -> RoundEnd {
        let mut stream = self.provider.stream(&self.request);
        let mut assembler = Assembler::new();
        let mut early = EarlyStarts::new();
        loop {
            let next = tokio::select! {
                biased;
                () = cancel.cancelled() => {
                    early.abandon("Not answered: the person interrupted the response.", sink);
                    // Keep what the person already saw; unfinished tool calls are dropped.
                    let text = assembler.text();
                    if !text.trim().is_empty() {
                        outcome.text.clone_from(&text);
                        self.push(Message { role: Role::Assistant, parts: vec![Part::Text { text }] }, sink);
                    }
                    return RoundEnd::Stop(TurnStop::Cancelled);
                }
                next = stream.next() => next,
            };
            let event = match next {
                None => break,
                Some(Ok(event)) => event,
                Some(Err(error)) => {
                    early.abandon("Not answered: the model's response failed.", sink);
                    outcome.error = Some(TurnError::Model(error));
                    return RoundEnd::Stop(TurnStop::Error);
                }
            };
            match &event {
                StreamEvent::TextDelta { text } => {
                    sink.emit(AgentEvent::TextDelta { text: text.clone() });
                }
                StreamEvent::ReasoningDelta { text } => {
                    sink.emit(AgentEvent::ReasoningDelta { text: text.clone() });
                }
                StreamEvent::Retry {
                    attempt,
                    wait,
                    reason,
                } => {
                    early.abandon(
                        "Dropped: the response was cut off and is being requested again.",
                        sink,
                    );
                    sink.emit(AgentEvent::Retry {
                        attempt: *attempt,
                        wait: *wait,
                        reason: reason.clone(),
                    });
                }
                StreamEvent::Waiting { elapsed } => {
                    sink.emit(AgentEvent::Waiting { elapsed: *elapsed });
                }
                StreamEvent::ReasoningSignature { .. }
                | StreamEvent::RedactedReasoning { .. }
                | StreamEvent::ToolCallDelta { .. }
                | StreamEvent::ToolCallEnd { .. }
                | StreamEvent::Usage(_)
                | StreamEvent::Finish { .. } => {}
            }
            for call in assembler.push(&event) {
                early.offer(env, call, sink);
            }
        }
        let response = match assembler.finish() {
            Ok(response) => response,
            Err(error) => {
                early.abandon("Not answered: the model's response failed.", sink);
                outcome.error = Some(TurnError::Model(error));
                return RoundEnd::Stop(TurnStop::Error);
            }
        };
        if let Some(usage) = response.usage {
            self.usage += usage;
            outcome.usage += usage;
            if let Some(t) = self.transcript.as_mut()
                && let Err(e) = t.record_usage(&self.settings.model, self.settings.provider, &usage)
            {
                sink.emit(transcript_warning(&e));
            }
            sink.emit(AgentEvent::Usage {
                call: usage,
                total: self.usage,
            });
        }
        let message = without_empty_parts(response.message);
        let calls: Vec<rein_llm::ToolCall> = message
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall(call) => Some(call.clone()),
                Part::Text { .. } | Part::Reasoning { .. } | Part::ToolResult(_) => None,
            })
            .collect();
        let text = text_of(&message);
        sink.emit(AgentEvent::ResponseFinished {
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
            self.push(message, sink);
        }
        if calls.is_empty() {
            return RoundEnd::Stop(match response.stop_reason {
                StopReason::MaxTokens => TurnStop::MaxTokens,
                StopReason::EndTurn | StopReason::ToolUse | StopReason::Other(_) => {
                    TurnStop::EndTurn
                }
            });
        }
        let outcomes = calls::run_calls(env, &calls, early, &mut self.guard, sink).await;
        let fatal = outcomes
            .iter()
            .find_map(|o| o.fatal.clone())
            .or_else(|| cancel.is_cancelled().then_some(Fatal::Cancelled));
        self.push(
            Message {
                role: Role::Tool,
                parts: outcomes
                    .into_iter()
                    .map(|o| Part::ToolResult(o.result))
                    .collect(),
            },
            sink,
        );
        match fatal {
            None => RoundEnd::Continue,
            Some(Fatal::Cancelled) => RoundEnd::Stop(TurnStop::Cancelled),
            Some(Fatal::Internal(message)) => {
                outcome.error = Some(TurnError::Tool(message));
                RoundEnd::Stop(TurnStop::Error)
            }
        }
    }

    /// Appends a finished message to the history and the transcript.
    fn push(&mut self, message: Message, sink: &dyn EventSink) {
        if let Some(t) = self.transcript.as_mut()
            && let Err(e) = t.record_message(&message)
        {
            sink.emit(transcript_warning(&e));
        }
        self.request.messages.push(message);
    }
}

enum RoundEnd {
    Continue,
    Stop(TurnStop),
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
        Part::ToolCall(_) | Part::ToolResult(_) => true,
    });
    message
}

fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            Part::Reasoning { .. } | Part::ToolCall(_) | Part::ToolResult(_) => None,
        })
        .collect()
}

fn transcript_warning(error: &std::io::Error) -> AgentEvent {
    AgentEvent::Warning {
        message: format!("could not write to the session file: {error}"),
    }
}
