//! What a provider's stream yields, and what a finished response reports.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// One event of a streamed model response, the same for every provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A piece of the answer's text.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of the model's reasoning.
    ReasoningDelta {
        /// The new reasoning text.
        text: String,
    },
    /// The signature closing a reasoning block (Anthropic thinking).
    ReasoningSignature {
        /// The opaque signature.
        signature: String,
    },
    /// A whole redacted reasoning block (Anthropic `redacted_thinking`): encrypted, shown to
    /// no one, and sent back unchanged.
    RedactedReasoning {
        /// The opaque data.
        data: String,
    },
    /// A piece of a tool call; id and name may come only with the first piece of an index.
    ToolCallDelta {
        /// Which call this piece belongs to (not necessarily starting at 0).
        index: usize,
        /// The call's id, when this piece carries it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
        /// The tool's name, when this piece carries it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
        /// More of the JSON arguments.
        arguments_fragment: String,
    },
    /// The call at `index` has received all of its arguments.
    ToolCallEnd {
        /// Which call is complete.
        index: usize,
    },
    /// Token usage of the call so far, from whichever chunk carried it; a later one
    /// replaces an earlier one.
    Usage(Usage),
    /// The attempt failed and is being retried; anything streamed so far must be discarded.
    Retry {
        /// The number of the retry about to run, from 1.
        attempt: u32,
        /// How long rein waits before it.
        wait: Duration,
        /// What went wrong, for the person.
        reason: String,
    },
    /// Still waiting for the first byte of the response, this long into the attempt (sent
    /// every few seconds until it comes): slow, not dead.
    Waiting {
        /// How long the attempt has waited so far.
        elapsed: Duration,
    },
    /// The response is complete.
    Finish {
        /// Why the model stopped.
        stop_reason: StopReason,
    },
}

/// Why the model stopped producing output.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// A natural end of the answer.
    EndTurn,
    /// The model wants tool results.
    ToolUse,
    /// The output token limit was reached.
    MaxTokens,
    /// Any other reason the provider gave, verbatim.
    Other(String),
}

/// Tokens counted by the provider for one call, or a sum over calls. Missing fields read as
/// zero, so a hand-written cassette can give only what it cares about.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    /// Input tokens, including cached ones.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Input tokens served from the provider's prompt cache.
    pub cached_prompt_tokens: u64,
    /// Input tokens written to the provider's prompt cache (Anthropic).
    pub cache_creation_tokens: u64,
    /// What the provider says the call cost, in USD, when it says (gateways such as LiteLLM
    /// and OpenRouter report `usage.cost`); a sum adds up the costs reported. Written in
    /// whole micro-dollars.
    #[serde(
        skip_serializing_if = "Option::is_none",
        serialize_with = "micro_dollars_or_none"
    )]
    pub cost_usd: Option<f64>,
}

fn micro_dollars_or_none<S: serde::Serializer>(
    cost: &Option<f64>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    cost.map(crate::micro_dollars).serialize(serializer)
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Self) {
        self.prompt_tokens += other.prompt_tokens;
        self.completion_tokens += other.completion_tokens;
        self.cached_prompt_tokens += other.cached_prompt_tokens;
        self.cache_creation_tokens += other.cache_creation_tokens;
        self.cost_usd = match (self.cost_usd, other.cost_usd) {
            (Some(a), Some(b)) => Some(a + b),
            (a, b) => a.or(b),
        };
    }
}
