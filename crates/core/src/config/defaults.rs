//! Built-in defaults, documented in `docs/config.md`. The providers' own endpoints are
//! rein-llm's ([`rein_llm::ProviderKind::default_base_url`]).

/// Rounds (model responses) in one turn unless configured otherwise.
pub const DEFAULT_MAX_ROUNDS: u32 = 50;
/// The model used with OpenAI when none is configured.
pub const OPENAI_DEFAULT_MODEL: &str = "gpt-4o";
/// DeepSeek's API, used when the key comes from `DEEPSEEK_API_KEY`.
pub const DEEPSEEK_BASE_URL: &str = "https://api.deepseek.com/v1";
/// The model used with DeepSeek when none is configured.
pub const DEEPSEEK_DEFAULT_MODEL: &str = "deepseek-chat";
/// The model used with Anthropic when none is configured.
pub const ANTHROPIC_DEFAULT_MODEL: &str = "claude-sonnet-4-5";
