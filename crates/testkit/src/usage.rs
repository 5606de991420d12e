//! The token counts (and price) a scripted turn reports.

use serde::{Deserialize, Serialize};

/// Token counts reported for a turn.
///
/// `prompt_tokens` counts every input token, cached ones included (OpenAI's convention). The
/// Anthropic rendering reports `input_tokens = prompt - cached - cache_creation`,
/// `cache_read_input_tokens = cached` and `cache_creation_input_tokens = cache_creation`, so a
/// client that adds those three back gets `prompt_tokens` again.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MockUsage {
    /// Input tokens, cached ones included.
    pub prompt_tokens: u64,
    /// Output tokens.
    pub completion_tokens: u64,
    /// Input tokens read from the prompt cache.
    pub cached_tokens: u64,
    /// Input tokens written to the prompt cache (Anthropic only).
    pub cache_creation_tokens: u64,
    /// The call's price in USD, sent as `usage.cost` as gateways do (OpenAI route only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

impl MockUsage {
    /// `prompt` input tokens (cached included) and `completion` output tokens.
    pub fn new(prompt: u64, completion: u64) -> Self {
        Self {
            prompt_tokens: prompt,
            completion_tokens: completion,
            ..Self::default()
        }
    }

    /// Sets how many of the input tokens were read from the cache.
    pub fn cached(mut self, tokens: u64) -> Self {
        self.cached_tokens = tokens;
        self
    }

    /// Reports the call's price, `usage.cost` in USD, as LiteLLM and OpenRouter do.
    pub fn cost(mut self, usd: f64) -> Self {
        self.cost_usd = Some(usd);
        self
    }

    /// Sets how many of the input tokens were written to the cache (Anthropic).
    pub fn cache_creation(mut self, tokens: u64) -> Self {
        self.cache_creation_tokens = tokens;
        self
    }

    /// Anthropic's `input_tokens`: the input that was neither read from nor written to the cache.
    pub(crate) fn uncached_input_tokens(&self) -> u64 {
        self.prompt_tokens
            .saturating_sub(self.cached_tokens)
            .saturating_sub(self.cache_creation_tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn anthropic_input_tokens_exclude_the_cache() {
        let usage = MockUsage::new(100, 5).cached(60).cache_creation(30);
        assert_eq!(usage.uncached_input_tokens(), 10);
        assert_eq!(MockUsage::new(5, 1).cached(9).uncached_input_tokens(), 0);
    }
}
