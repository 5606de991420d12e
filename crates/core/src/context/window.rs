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
/// The smallest window a refusal can make rein assume.
pub const MIN_LEARNED_WINDOW_TOKENS: u64 = 1024;

/// Where a window's figure came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, strum::Display)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WindowSource {
    /// The `context_window` setting.
    #[strum(to_string = "context_window in the configuration")]
    Config,
    /// The server that runs the model.
    #[strum(to_string = "the server: {said}")]
    Server {
        /// What it said, and where (`llama.cpp /props n_ctx`).
        said: String,
    },
    /// rein's table of models.
    #[strum(to_string = "rein's table of models")]
    Table,
    /// A refusal from the provider that named the real limit, or showed the window to be
    /// smaller than assumed.
    #[strum(to_string = "the provider's refusal of a longer request")]
    Refusal,
    /// Nothing knew it: [`UNKNOWN_WINDOW_TOKENS`].
    #[strum(to_string = "a conservative default: the model is unknown")]
    Default,
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

    /// The window a refusal of a request of `sent` tokens (the prompt and the answer's room)
    /// shows, if it shows a smaller one: `named` when the refusal names the limit; else a
    /// tenth below what was sent. `before` is the window as known before any refusal.
    ///
    /// A refusal that names no limit is weak evidence: a proxy's limit on the body's bytes,
    /// a rate limit worded like a size error, or a server that refuses everything reads the
    /// same. So it is believed only when it fits a window somewhat smaller than assumed:
    /// what was sent was within the window rein assumed (a request over it is refused by
    /// rein's own mistake, not by a smaller window), and a tenth below it is still at least
    /// half of `before`. However many such refusals come, the window stays at half of
    /// `before` or more, each one lowers it or leaves it (no loop), and a request far
    /// smaller than the window that is refused cannot shrink it at all. A limit the
    /// refusal names is the server's own word and is taken as it is, down to
    /// [`MIN_LEARNED_WINDOW_TOKENS`].
    pub fn after_refusal(&self, named: Option<u64>, sent: u64, before: u64) -> Option<Window> {
        let learned = match named {
            Some(limit) => limit.max(MIN_LEARNED_WINDOW_TOKENS),
            None if sent <= self.tokens => {
                let guess = sent * 9 / 10;
                if guess < (before / 2).max(MIN_LEARNED_WINDOW_TOKENS) {
                    return None;
                }
                guess
            }
            None => return None,
        };
        (learned < self.tokens).then_some(Window {
            tokens: learned,
            source: WindowSource::Refusal,
        })
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

    #[test]
    fn a_refusal_naming_its_limit_is_believed() {
        let window = Window {
            tokens: 100_000,
            source: WindowSource::Config,
        };
        let learned = window.after_refusal(Some(8192), 9000, 100_000).unwrap();
        assert_eq!(learned.tokens, 8192);
        assert_eq!(learned.source, WindowSource::Refusal);
        // A limit above the window tells nothing new.
        assert_eq!(window.after_refusal(Some(200_000), 9000, 100_000), None);
        assert_eq!(
            window
                .after_refusal(Some(10), 9000, 100_000)
                .unwrap()
                .tokens,
            MIN_LEARNED_WINDOW_TOKENS
        );
    }

    #[test]
    fn refusals_naming_no_limit_cannot_ruin_the_window() {
        let mut window = Window {
            tokens: 32_768,
            source: WindowSource::Default,
        };
        // A request near the window, refused: a tenth below it.
        window = window.after_refusal(None, 30_000, 32_768).unwrap();
        assert_eq!(window.tokens, 27_000);
        // Refused again and again, each request a little smaller: the window goes down to
        // half of what it was, never below, and then stays.
        let mut steps = 0;
        while let Some(next) = window.after_refusal(None, window.tokens * 95 / 100, 32_768) {
            assert!(next.tokens < window.tokens);
            window = next;
            steps += 1;
            assert!(steps < 20, "it does not settle");
        }
        assert!(window.tokens >= 32_768 / 2, "{}", window.tokens);
        // A small request refused (a proxy, a rate limit worded like a size error) says
        // nothing of the window.
        let large = Window {
            tokens: 128_000,
            source: WindowSource::Table,
        };
        assert_eq!(large.after_refusal(None, 3_000, 128_000), None);
        // Nor does a request over the window rein assumed: that one is rein's own doing.
        assert_eq!(large.after_refusal(None, 130_000, 128_000), None);
    }
}
