//! API keys: which variable wins, what the flag does, and that the key never shows.

use super::*;

#[test]
fn api_keys_are_taken_in_the_documented_order() {
    let mut fx = Fixture::new();
    fx.set("REIN_API_KEY", "rein")
        .set("OPENAI_API_KEY", "openai")
        .set("DEEPSEEK_API_KEY", "deepseek")
        .set("ANTHROPIC_API_KEY", "anthropic");
    let config = fx.load();
    assert_eq!(
        (config.provider, config.api_key()),
        (ProviderKind::OpenAi, Some("rein"))
    );

    fx.unset("REIN_API_KEY");
    let config = fx.load();
    assert_eq!(config.api_key(), Some("openai"));
    assert_eq!(config.base_url, "https://api.openai.com/v1");

    fx.unset("OPENAI_API_KEY");
    let config = fx.load();
    assert_eq!(config.api_key(), Some("deepseek"));
    assert_eq!(config.base_url, "https://api.deepseek.com/v1");
    assert_eq!(config.model, "deepseek-chat");

    fx.unset("DEEPSEEK_API_KEY");
    let config = fx.load();
    assert_eq!(config.provider, ProviderKind::Anthropic);
    assert_eq!(config.api_key(), Some("anthropic"));
    assert_eq!(config.model, "claude-sonnet-4-5");
    assert_eq!(config.base_url, "https://api.anthropic.com");
    // Left to the client, which sends the model's own default (see model_client.rs).
    assert_eq!(config.max_tokens, None);

    // For Anthropic, REIN_API_KEY still comes first.
    fx.set("REIN_API_KEY", "rein");
    fx.flags.provider = Some(ProviderKind::Anthropic);
    assert_eq!(fx.load().api_key(), Some("rein"));
    assert_eq!(
        fx.load().api_key_variables(),
        ["REIN_API_KEY", "ANTHROPIC_API_KEY"]
    );

    // OpenAI never takes the Anthropic key.
    fx.unset("REIN_API_KEY");
    fx.flags.provider = Some(ProviderKind::OpenAi);
    let config = fx.load();
    assert_eq!(config.api_key(), None);
    assert_eq!(
        config.api_key_variables(),
        ["REIN_API_KEY", "OPENAI_API_KEY", "DEEPSEEK_API_KEY"]
    );
}

#[test]
fn api_key_env_and_the_flag_override_the_order() {
    let mut fx = Fixture::new();
    fx.set("REIN_API_KEY", "rein").set("MY_KEY", "mine");
    fx.user_file("api_key_env = \"MY_KEY\"\n");
    let config = fx.load();
    assert_eq!(config.api_key(), Some("mine"));
    assert_eq!(config.api_key_variables(), ["MY_KEY"]);

    // A named variable that is unset means no key, not some other key.
    fx.unset("MY_KEY");
    assert_eq!(fx.load().api_key(), None);

    fx.flags.api_key = Some(ApiKey::new("from-flag"));
    let config = fx.load();
    assert_eq!(config.api_key(), Some("from-flag"));
    assert_eq!(config.source("api_key"), &Source::Flag("--api-key"));
}

#[test]
fn the_key_never_shows_in_debug_output() {
    let mut fx = Fixture::new();
    fx.set("OPENAI_API_KEY", "sk-very-secret");
    let config = fx.load();
    assert_eq!(config.api_key(), Some("sk-very-secret"));
    let debug = format!("{config:?}");
    assert!(!debug.contains("sk-very-secret"), "{debug}");
    assert!(debug.contains("<redacted>"), "{debug}");
}
