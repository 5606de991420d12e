//! The window the context must fit, where that figure came from, and what is left of it once
//! the answer has its room.

use serde::Serialize;

/// The window assumed for a model neither the configuration, the server nor rein's table
/// knows: small enough for most local servers, and said once so the person can set
/// `context_window`.
pub const UNKNOWN_WINDOW_TOKENS: u64 = 32_768;
/// The room kept for the answer when the request sets no `max_tokens` (less on a small
/// window: at most a fifth of it).
pub const DEFAULT_ANSWER_RESERVE_TOKENS: u64 = 8_192;

/// Where a window's figure came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WindowSource {
    /// The `context_window` setting.
    Config,
    /// The server that runs the model.
    Server {
        /// What it said, and where (`llama.cpp /props n_ctx`).
        said: String,
    },
    /// rein's table of models.
    Table,
    /// A refusal from the provider that named the real limit, or showed the window to be
    /// smaller than assumed.
    Refusal,
    /// Nothing knew it: [`UNKNOWN_WINDOW_TOKENS`].
    Default,
}

impl std::fmt::Display for WindowSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            WindowSource::Config => f.write_str("context_window in the configuration"),
            WindowSource::Server { said } => write!(f, "the server ({said})"),
            WindowSource::Table => f.write_str("rein's table of models"),
            WindowSource::Refusal => f.write_str("the provider's refusal of a longer request"),
            WindowSource::Default => f.write_str("a conservative default (the model is unknown)"),
        }
    }
}

/// A model's context window.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Window {
    /// Its size in tokens.
    pub tokens: u64,
    /// Where that came from.
    pub source: WindowSource,
}

impl Window {
    /// The room kept for the answer: the request's `max_tokens` (or
    /// [`DEFAULT_ANSWER_RESERVE_TOKENS`]), at most a fifth of the window.
    pub fn answer_reserve(&self, max_tokens: Option<u32>) -> u64 {
        max_tokens
            .map_or(DEFAULT_ANSWER_RESERVE_TOKENS, u64::from)
            .min(self.tokens / 5)
    }

    /// The window less the answer's reserve: what the request itself may take.
    pub fn usable(&self, max_tokens: Option<u32>) -> u64 {
        self.tokens - self.answer_reserve(max_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_keeps_at_most_a_fifth() {
        let small = Window {
            tokens: 8192,
            source: WindowSource::Config,
        };
        assert_eq!(small.answer_reserve(None), 1638);
        assert_eq!(small.answer_reserve(Some(1000)), 1000);
        assert_eq!(small.usable(Some(1000)), 7192);
        let large = Window {
            tokens: 200_000,
            source: WindowSource::Table,
        };
        assert_eq!(large.answer_reserve(None), DEFAULT_ANSWER_RESERVE_TOKENS);
        assert_eq!(large.answer_reserve(Some(64_000)), 40_000);
    }
}
