//! What one turn achieved, and why it ended.

use rein_llm::{LlmError, Usage};

use super::TurnStop;
use super::spend::{LimitReached, SpendLimit};

/// What one turn achieved.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnOutcome {
    /// Why the turn ended (with the error, when it failed).
    pub end: TurnEnd,
    /// The final answer: the text of the last response when it called no tools (or what
    /// streamed before an interruption); empty when the turn ended otherwise.
    pub text: String,
    /// Model responses in this turn (a request that got none does not count).
    pub rounds: u32,
    /// Tokens used in this turn, sub-agents' included.
    pub usage: Usage,
    /// Of those, what sub-agents used.
    pub subagent_usage: Usage,
    /// Of those, what compactions' summaries used.
    pub compaction_usage: Usage,
    /// Whether any call of the turn reported its usage: when none did, `usage` is unknown,
    /// not zero.
    pub usage_reported: bool,
    /// Output tokens of responses that ended before the server reported them (interrupted
    /// or failed), estimated from what streamed; not in `usage`.
    pub estimated_output_tokens: u64,
    /// The turn's cost in USD, whole micro-dollars; `None` when a call's price is unknown.
    pub cost_usd: Option<f64>,
}

impl TurnOutcome {
    pub(super) fn new() -> Self {
        TurnOutcome {
            end: TurnEnd::EndTurn,
            text: String::new(),
            rounds: 0,
            usage: Usage::default(),
            subagent_usage: Usage::default(),
            compaction_usage: Usage::default(),
            usage_reported: false,
            estimated_output_tokens: 0,
            cost_usd: Some(0.0),
        }
    }

    /// Why the turn ended, as JSON output and session files name it.
    pub fn stop(&self) -> TurnStop {
        self.end.stop()
    }

    /// What went wrong, when the turn failed.
    pub fn error(&self) -> Option<&TurnError> {
        match &self.end {
            TurnEnd::Failed(error) => Some(error),
            TurnEnd::EndTurn
            | TurnEnd::MaxTokens
            | TurnEnd::MaxRounds
            | TurnEnd::RepeatedCalls
            | TurnEnd::Cancelled
            | TurnEnd::PromptBlocked { .. }
            | TurnEnd::SpendingLimit(_) => None,
        }
    }
}

/// How a turn ended; only a failure carries an error.
#[derive(Debug, Clone, PartialEq)]
pub enum TurnEnd {
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
    /// A UserPromptSubmit hook blocked the request: it was neither sent nor recorded.
    PromptBlocked {
        /// Why, for the person (the hook's stderr or reason).
        reason: String,
    },
    /// The next request would have crossed a spending limit: it was not sent.
    SpendingLimit(LimitReached),
    /// The model could not be reached or refused the request, or rein itself failed.
    Failed(TurnError),
}

impl TurnEnd {
    /// The name of this ending.
    pub fn stop(&self) -> TurnStop {
        match self {
            TurnEnd::EndTurn => TurnStop::EndTurn,
            TurnEnd::MaxTokens => TurnStop::MaxTokens,
            TurnEnd::MaxRounds => TurnStop::MaxRounds,
            TurnEnd::RepeatedCalls => TurnStop::RepeatedCalls,
            TurnEnd::Cancelled => TurnStop::Cancelled,
            TurnEnd::PromptBlocked { .. } => TurnStop::PromptBlocked,
            TurnEnd::SpendingLimit(reached) => match reached.limit {
                SpendLimit::Cost => TurnStop::MaxCost,
                SpendLimit::Tokens => TurnStop::MaxSessionTokens,
            },
            TurnEnd::Failed(_) => TurnStop::Error,
        }
    }
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
