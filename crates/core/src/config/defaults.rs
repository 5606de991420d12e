//! Built-in defaults, documented in `docs/config.md`. The providers' own endpoints are
//! rein-llm's ([`rein_llm::ProviderKind::default_base_url`]).

/// The model used with OpenAI when none is configured.
pub const OPENAI_DEFAULT_MODEL: &str = "gpt-4o";
/// DeepSeek's API, used when the key comes from `DEEPSEEK_API_KEY`.
pub const DEEPSEEK_BASE_URL: &str = "https://api.deepseek.com/v1";
/// The model used with DeepSeek when none is configured.
pub const DEEPSEEK_DEFAULT_MODEL: &str = "deepseek-chat";
/// The model used with Anthropic when none is configured.
pub const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";
/// The context window of a model missing from the table.
pub const DEFAULT_CONTEXT_WINDOW_TOKENS: u64 = 128_000;

/// Context windows by model-name prefix; the longest matching prefix wins.
const CONTEXT_WINDOWS_TOKENS: &[(&str, u64)] = &[
    ("gpt-4o", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-", 200_000),
    ("deepseek-", 128_000),
];

/// The context window of `model`, from a small table (a provider prefix such as
/// `openai/` is ignored), else [`DEFAULT_CONTEXT_WINDOW_TOKENS`].
pub fn context_window_for_model(model: &str) -> u64 {
    let name = model
        .rsplit('/')
        .next()
        .unwrap_or(model)
        .to_ascii_lowercase();
    CONTEXT_WINDOWS_TOKENS
        .iter()
        .filter(|(prefix, _)| name.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(DEFAULT_CONTEXT_WINDOW_TOKENS, |&(_, tokens)| tokens)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_window_comes_from_the_longest_prefix() {
        assert_eq!(context_window_for_model("gpt-4o-mini"), 128_000);
        assert_eq!(context_window_for_model("gpt-4.1-mini"), 1_047_576);
        assert_eq!(
            context_window_for_model("claude-sonnet-4-5-20250929"),
            200_000
        );
        assert_eq!(
            context_window_for_model("anthropic/claude-opus-4-1"),
            200_000
        );
        assert_eq!(
            context_window_for_model("qwen2.5-coder:7b"),
            DEFAULT_CONTEXT_WINDOW_TOKENS
        );
    }
}
