//! How many tokens a model can take in one request (its context window), for the models
//! rein knows: every model of the pricing table, plus families by name prefix.
//!
//! A local server's loaded window can be smaller than the model's own (llama.cpp `-c`,
//! Ollama's `num_ctx`): what the server says wins over this table (see
//! [`crate::Provider::context_window`]), and a configured `context_window` over both.

/// Windows of exact model names, as the providers' APIs spell them (the names of the pricing
/// table, and a few more).
const WINDOWS_TOKENS: &[(&str, u64)] = &[
    // OpenAI
    ("gpt-4o", 128_000),
    ("gpt-4o-mini", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4.1-mini", 1_047_576),
    ("gpt-4.1-nano", 1_047_576),
    ("gpt-5", 400_000),
    ("gpt-5-mini", 400_000),
    ("gpt-5-nano", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o3-mini", 200_000),
    ("o4-mini", 200_000),
    // Anthropic (the 1M-token window of some models needs a beta header rein does not send)
    ("claude-opus-4-1", 200_000),
    ("claude-opus-4", 200_000),
    ("claude-opus-4-5", 200_000),
    ("claude-sonnet-4-5", 200_000),
    ("claude-sonnet-4", 200_000),
    ("claude-3-7-sonnet", 200_000),
    ("claude-haiku-4-5", 200_000),
    ("claude-3-5-haiku", 200_000),
    // DeepSeek (V3.2)
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    // Qwen (Alibaba Cloud international); where a model's later snapshots grew, the smaller
    // window: compacting a little early costs less than a refused request.
    ("qwen3-max", 262_144),
    ("qwen-max", 32_768),
    ("qwen-plus", 131_072),
    ("qwen-turbo", 131_072),
    ("qwen3-coder-plus", 262_144),
    // Kimi (Moonshot)
    ("kimi-k2-0905-preview", 262_144),
    ("kimi-k2-0711-preview", 131_072),
    ("kimi-k2-thinking", 262_144),
    ("kimi-k2-turbo-preview", 262_144),
    // GLM (Z.ai)
    ("glm-4.6", 200_000),
    ("glm-4.5", 131_072),
    ("glm-4.5-air", 131_072),
];

/// Windows of model families, for names the exact table lacks (a new snapshot, a variant);
/// the longest matching prefix wins.
const FAMILY_WINDOWS_TOKENS: &[(&str, u64)] = &[
    ("gpt-4o", 128_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-5", 400_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("claude-", 200_000),
    ("deepseek-chat", 128_000),
    ("deepseek-reasoner", 128_000),
    ("kimi-k2", 131_072),
    ("glm-4.6", 200_000),
    ("glm-4.5", 131_072),
];

/// The context window of `model` in tokens, when rein knows it: an exact name (after removing
/// a router's `vendor/` prefix and a date or `-latest` suffix, as for prices), else the family
/// its name starts with. `None` for a model rein does not know (most local models: ask the
/// server).
pub fn context_window_for(model: &str) -> Option<u64> {
    let lower = model.trim().to_ascii_lowercase();
    let name = lower.rsplit_once('/').map_or(lower.as_str(), |(_, n)| n);
    let exact = |name: &str| {
        WINDOWS_TOKENS
            .iter()
            .find(|(n, _)| *n == name)
            .map(|&(_, tokens)| tokens)
    };
    exact(name)
        .or_else(|| crate::pricing::strip_version_suffix(name).and_then(exact))
        .or_else(|| {
            FAMILY_WINDOWS_TOKENS
                .iter()
                .filter(|(prefix, _)| name.starts_with(prefix))
                .max_by_key(|(prefix, _)| prefix.len())
                .map(|&(_, tokens)| tokens)
        })
}

/// The context window a server said it has loaded the model with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerWindow {
    /// The window, in tokens.
    pub tokens: u64,
    /// Which server said so, and where: `llama.cpp /props n_ctx`.
    pub source: &'static str,
    /// Whether the model runs with this window. `false` for a guess: the server has not loaded
    /// the model yet and did not say how it will (ask again once it answered a request).
    pub settled: bool,
    /// Whether this is the window Ollama has loaded the model with (`/api/ps`): Ollama cuts a
    /// longer prompt without a word, so the person must hear when it is too small.
    pub ollama_loaded: bool,
}

/// The window a "context too long" error names, when it names one: `maximum context length
/// is 8192 tokens` (OpenAI, vLLM, DeepSeek), `210000 tokens > 200000 maximum` (Anthropic),
/// `available context size (4096 tokens)` (llama.cpp).
pub fn context_limit_in_message(message: &str) -> Option<u64> {
    let lower = message.to_ascii_lowercase();
    if let Some(rest) = after(&lower, "maximum context length is") {
        return leading_number(rest);
    }
    if let Some(rest) = after(&lower, "context size (") {
        return leading_number(rest);
    }
    if let Some(rest) = after(&lower, "context length of") {
        return leading_number(rest);
    }
    // "... 210000 tokens > 200000 maximum"
    let before = lower.find(" maximum").map(|at| &lower[..at])?;
    let start = before
        .rfind(|c: char| !c.is_ascii_digit())
        .map_or(0, |i| i + 1);
    before[start..].parse().ok().filter(|&n: &u64| n > 0)
}

fn after<'a>(text: &'a str, needle: &str) -> Option<&'a str> {
    text.find(needle).map(|at| &text[at + needle.len()..])
}

/// The number at the start of `text` (after spaces), ignoring thousands separators.
fn leading_number(text: &str) -> Option<u64> {
    let digits: String = text
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',')
        .filter(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|&n: &u64| n > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_priced_model_has_a_window() {
        for model in crate::pricing::priced_models() {
            assert!(context_window_for(model).is_some(), "{model}");
        }
    }

    #[test]
    fn names_are_matched_like_prices_then_by_family() {
        assert_eq!(
            context_window_for("openai/GPT-4o-2024-08-06"),
            Some(128_000)
        );
        assert_eq!(context_window_for("gpt-4.1-mini"), Some(1_047_576));
        assert_eq!(
            context_window_for("claude-sonnet-4-5-20250929"),
            Some(200_000)
        );
        assert_eq!(context_window_for("claude-opus-5"), Some(200_000));
        assert_eq!(context_window_for("qwen-max-latest"), Some(32_768));
        // Local models are not guessed from a similar name: their server knows.
        for unknown in [
            "qwen2.5-coder:7b",
            "deepseek-r1:8b",
            "my-model",
            "llama3.1",
            "",
        ] {
            assert_eq!(context_window_for(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn limits_are_read_from_the_usual_wordings() {
        for (message, limit) in [
            (
                "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",
                Some(8192),
            ),
            (
                "prompt is too long: 210000 tokens > 200000 maximum",
                Some(200_000),
            ),
            (
                "request (5000 tokens) exceeds the available context size (4096 tokens), try increasing it",
                Some(4096),
            ),
            ("maximum context length is 128,000 tokens", Some(128_000)),
            ("the request exceeds the available context size", None),
            ("context_length_exceeded", None),
        ] {
            assert_eq!(context_limit_in_message(message), limit, "{message}");
        }
    }
}
