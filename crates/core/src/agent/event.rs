//! What the agent tells the outside world. Core never prints: front-ends render these.

use std::sync::Arc;
use std::time::Duration;

use rein_llm::Usage;

use crate::context::{CompactionInfo, CompactionLayer};
use rein_tools::{Display, FileChange, Progress};
use serde::Serialize;

/// One thing that happened during a turn, in the order it happened.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum AgentEvent {
    /// A piece of the model's answer.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ReasoningDelta {
        /// The new reasoning text.
        text: String,
    },
    /// The model call failed and is being retried: text streamed since the last request
    /// started must be discarded.
    Retry {
        /// The number of the retry about to run, from 1.
        attempt: u32,
        /// How long rein waits before it.
        #[serde(rename = "wait_ms", serialize_with = "as_millis")]
        wait: Duration,
        /// What went wrong.
        reason: String,
    },
    /// The model has not started answering yet: this long into the request (repeated every
    /// few seconds until it does).
    Waiting {
        /// How long the request has waited.
        #[serde(rename = "elapsed_ms", serialize_with = "as_millis")]
        elapsed: Duration,
    },
    /// A model response finished; the next events belong to its tool calls.
    ResponseFinished {
        /// The round this response was, from 1.
        round: u32,
        /// The text of the response (empty when it only called tools).
        text: String,
        /// How many tool calls it made.
        tool_calls: usize,
    },
    /// A tool call started running.
    ToolCallStarted {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The arguments: the JSON the model sent, or its raw text when it was not JSON.
        arguments: serde_json::Value,
    },
    /// A call needs the person's approval; the question goes to the [`crate::Interaction`].
    ApprovalRequested {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// Why rein asks.
        reason: String,
    },
    /// A call was not allowed to run (by the policy, a hook, the person, or because no one
    /// could be asked); its result tells the model why.
    PermissionDenied {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// The call's arguments.
        arguments: serde_json::Value,
        /// Why it was refused, for the person (the model's result says more), with how to
        /// allow it when no one could be asked.
        reason: String,
    },
    /// A running call reported how it is getting on (a long command's output so far).
    ToolProgress {
        /// The call's id.
        id: String,
        /// What it reported.
        progress: Progress,
    },
    /// A tool call finished.
    ToolResult {
        /// The call's id.
        id: String,
        /// The tool's name.
        name: String,
        /// A one-line summary for display.
        summary: String,
        /// The full result the model sees.
        content: String,
        /// Whether the call failed.
        is_error: bool,
        /// How long the call ran.
        #[serde(rename = "duration_ms", serialize_with = "as_millis")]
        duration: Duration,
        /// What a renderer shows: typed facts (lines read, a diff, an exit code), never to be
        /// parsed out of `content`.
        display: Display,
        /// The files the call changed, with their content before and after identified.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        changes: Vec<FileChange>,
    },
    /// Tokens used by one model call, and the sum over the session so far.
    Usage {
        /// This call.
        call: Usage,
        /// Every call of this agent so far.
        total: Usage,
    },
    /// The conversation is being summarised to fit the model's context window (the model
    /// is asked for a summary, which takes a moment); its `Compaction` follows, unless the
    /// person interrupts.
    CompactionStarted {
        /// Which layer summarises.
        layer: CompactionLayer,
        /// The context's size now, in tokens.
        tokens: u64,
        /// The usable window (the window less the answer's reserve).
        usable_window: u64,
    },
    /// The conversation was compacted to fit the model's context window: what was done,
    /// and what was kept.
    Compaction(CompactionInfo),
    /// The todo list was replaced: the whole new list.
    Todos {
        /// Its items, in order.
        todos: Vec<crate::tools::TodoItem>,
    },
    /// A nested AGENTS.md (or CLAUDE.md) was added to the context: the first file below it
    /// was read or edited.
    InstructionsLoaded {
        /// The file.
        path: std::path::PathBuf,
    },
    /// Something the person should know that is not an error of the turn.
    Warning {
        /// What happened.
        message: String,
    },
    /// The turn ended.
    TurnFinished {
        /// Why it ended.
        stop_reason: TurnStop,
    },
    /// An event of a sub-agent, written as the event itself with `parent_call_id` and
    /// `agent` beside its fields.
    #[serde(untagged)]
    Nested(NestedEvent),
}

/// An event of a sub-agent, and the `agent` call that runs it.
#[derive(Debug, Clone, PartialEq)]
pub struct NestedEvent {
    /// The id of the parent's `agent` call.
    pub parent_call_id: String,
    /// The sub-agent's type.
    pub agent: String,
    /// What happened in it.
    pub event: Box<AgentEvent>,
}

impl Serialize for NestedEvent {
    /// The event's own object, with `parent_call_id` and `agent` added (through a JSON value:
    /// serde's `flatten` would make the type recursive).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut value = serde_json::to_value(&*self.event).map_err(serde::ser::Error::custom)?;
        if let serde_json::Value::Object(fields) = &mut value {
            fields.insert(
                "parent_call_id".to_owned(),
                serde_json::Value::String(self.parent_call_id.clone()),
            );
            fields.insert(
                "agent".to_owned(),
                serde_json::Value::String(self.agent.clone()),
            );
        }
        value.serialize(s)
    }
}

/// Why a turn ended.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, strum::IntoStaticStr,
)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum TurnStop {
    /// The model answered without calling a tool.
    EndTurn,
    /// The model's answer was cut at its output token limit.
    MaxTokens,
    /// The round limit was reached.
    MaxRounds,
    /// The model kept making the same call with the same result.
    RepeatedCalls,
    /// The person interrupted.
    Cancelled,
    /// A UserPromptSubmit hook blocked the request; it was not sent.
    PromptBlocked,
    /// The next request would have crossed the cost limit (`--max-cost`).
    MaxCost,
    /// The next request would have crossed the session's token limit (`--max-tokens`).
    // Named as the flag is; the exit status (3, not 0) tells it from an answer cut at the
    // model's output limit.
    #[strum(serialize = "max_tokens")]
    MaxSessionTokens,
    /// The model could not be reached or refused the request, or rein itself failed.
    Error,
}

/// Where the agent sends its events.
pub trait EventSink: Send + Sync {
    /// Receives one event; must not block for long (the agent waits for it).
    fn emit(&self, event: AgentEvent);
}

impl<F: Fn(AgentEvent) + Send + Sync> EventSink for F {
    fn emit(&self, event: AgentEvent) {
        self(event);
    }
}

/// The owned end events go out through: cheap to clone and `Send + 'static`, so spawned
/// tool calls, tools and sub-agents emit as well as the loop does.
#[derive(Clone)]
pub struct Events {
    sink: Arc<dyn EventSink>,
}

impl Events {
    /// Events delivered to `sink`.
    pub fn new(sink: impl EventSink + 'static) -> Self {
        Events {
            sink: Arc::new(sink),
        }
    }

    /// Events delivered to a shared sink.
    pub fn shared(sink: Arc<dyn EventSink>) -> Self {
        Events { sink }
    }

    /// Sends one event.
    pub fn emit(&self, event: AgentEvent) {
        self.sink.emit(event);
    }

    /// Sends a [`AgentEvent::Warning`].
    pub fn warn(&self, message: impl Into<String>) {
        self.emit(AgentEvent::Warning {
            message: message.into(),
        });
    }
}

impl std::fmt::Debug for Events {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Events")
    }
}

fn as_millis<S: serde::Serializer>(duration: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(duration.as_millis()).unwrap_or(u64::MAX))
}
