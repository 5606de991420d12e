//! The settings the model client gets: where the key came from, the thinking budget, the
//! network's time limits.

use std::time::Duration;

use rein_core::agent::Events;
use rein_core::build::AgentBuilder;
use rein_core::config::{ApiKey, Source};
use rein_testkit::{MockServer, Script, Turn};
use tokio_util::sync::CancellationToken;

use super::Fixture;

/// The `max_tokens` the agent `fx`'s configuration describes sends in its first request.
async fn max_tokens_sent(fx: &Fixture, server: &MockServer) -> u64 {
    let config = fx.load();
    let mut agent = AgentBuilder::from_config(&config, &fx.cwd, Some(&fx.home), &|_| None)
        .build()
        .unwrap();
    let before = server.request_count();
    agent
        .run_turn("hi", &Events::new(|_| {}), CancellationToken::new())
        .await;
    let sent = &server.requests()[before];
    sent.body["max_tokens"].as_u64().unwrap()
}

#[tokio::test]
async fn an_unset_output_limit_is_the_models_own_in_the_request() {
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let fx = Fixture::new();
    let url = server.base_url();
    // The original Claude 3 models refuse more than 4096.
    fx.user_file(&format!(
        "base_url = \"{url}\"\nmodel = \"claude-3-opus-20240229\"\n"
    ));
    assert_eq!(max_tokens_sent(&fx, &server).await, 4096);

    fx.user_file(&format!(
        "base_url = \"{url}\"\nmodel = \"claude-sonnet-4-5\"\n"
    ));
    assert_eq!(max_tokens_sent(&fx, &server).await, 8192);

    // Thinking counts within the limit: room is made for the answer.
    fx.user_file(&format!(
        "base_url = \"{url}\"\nmodel = \"claude-sonnet-4-5\"\nthinking_budget = 10000\n"
    ));
    assert_eq!(max_tokens_sent(&fx, &server).await, 10_000 + 8192);

    // A configured limit is sent as it is.
    fx.user_file(&format!(
        "base_url = \"{url}\"\nmodel = \"claude-3-opus-20240229\"\nmax_tokens = 1000\n"
    ));
    assert_eq!(max_tokens_sent(&fx, &server).await, 1000);
}

#[test]
fn a_thinking_budget_leaves_room_for_the_answer_or_says_why_it_cannot() {
    let mut fx = Fixture::new();
    fx.set("ANTHROPIC_API_KEY", "sk-ant-1");
    assert_eq!(fx.load().thinking_budget_tokens, None);

    let file = fx.user_file("thinking_budget = 10000\n");
    let config = fx.load();
    assert_eq!(config.thinking_budget_tokens, Some(10_000));
    assert_eq!(config.source("thinking_budget"), &Source::UserFile(file));
    // The client makes room for the answer (see the request test below).
    assert_eq!(config.max_tokens, None);

    fx.set("REIN_THINKING_BUDGET", "2048");
    let config = fx.load();
    assert_eq!(config.thinking_budget_tokens, Some(2048));

    // A configured limit that leaves no room is an error naming both settings.
    fx.project_file("max_tokens = 2000\n");
    let err = fx.error();
    assert!(
        err.contains("max_tokens") && err.contains("thinking_budget") && err.contains("2048"),
        "{err}"
    );

    fx.set("REIN_THINKING_BUDGET", "100");
    let err = fx.error();
    assert!(
        err.contains("REIN_THINKING_BUDGET") && err.contains("1024"),
        "{err}"
    );
    fx.set("REIN_THINKING_BUDGET", "lots");
    assert!(fx.error().contains("lots"), "{}", fx.error());
}

#[test]
fn the_keys_origin_names_the_variable_file_or_flag_but_never_the_key() {
    let mut fx = Fixture::new();
    assert_eq!(fx.load().api_key_origin(), None);

    fx.set("OPENAI_API_KEY", "sk-secret-1");
    assert_eq!(
        fx.load().api_key_origin().as_deref(),
        Some("the environment variable OPENAI_API_KEY")
    );

    fx.unset("OPENAI_API_KEY");
    let dotenv = fx.write(&fx.project.join(".env"), "DEEPSEEK_API_KEY=sk-secret-2\n");
    assert_eq!(
        fx.load().api_key_origin(),
        Some(format!("DEEPSEEK_API_KEY in {}", dotenv.display()))
    );

    let file = fx.project_file("api_key_env = \"TEAM_KEY\"\n");
    fx.set("TEAM_KEY", "sk-secret-3");
    let origin = fx.load().api_key_origin().unwrap();
    assert_eq!(
        origin,
        format!(
            "the environment variable TEAM_KEY, the variable api_key_env names in {}",
            file.display()
        )
    );

    fx.flags.api_key = Some(ApiKey::new("sk-secret-4"));
    assert_eq!(fx.load().api_key_origin().as_deref(), Some("--api-key"));
}

#[test]
fn network_time_limits_come_from_files_and_the_environment() {
    let mut fx = Fixture::new();
    let config = fx.load();
    assert_eq!(config.connect_timeout, rein_llm::DEFAULT_CONNECT_TIMEOUT);
    assert_eq!(config.first_byte_timeout, None);
    assert_eq!(
        config.stream_idle_timeout,
        rein_llm::DEFAULT_STREAM_IDLE_TIMEOUT
    );
    assert_eq!(config.request_timeout, rein_llm::DEFAULT_REQUEST_TIMEOUT);

    let file = fx.user_file(
        "connect_timeout_secs = 3\nfirst_byte_timeout_secs = 900\n\
         stream_idle_timeout_secs = 30\nrequest_timeout_secs = 7200\n",
    );
    let config = fx.load();
    assert_eq!(config.connect_timeout, Duration::from_secs(3));
    assert_eq!(config.first_byte_timeout, Some(Duration::from_secs(900)));
    assert_eq!(config.stream_idle_timeout, Duration::from_secs(30));
    assert_eq!(config.request_timeout, Duration::from_secs(7200));
    assert_eq!(
        config.source("first_byte_timeout_secs"),
        &Source::UserFile(file)
    );

    fx.set("REIN_FIRST_BYTE_TIMEOUT_SECS", "20");
    let config = fx.load();
    assert_eq!(config.first_byte_timeout, Some(Duration::from_secs(20)));
    assert_eq!(
        config.source("first_byte_timeout_secs"),
        &Source::Env("REIN_FIRST_BYTE_TIMEOUT_SECS".into())
    );

    fx.set("REIN_FIRST_BYTE_TIMEOUT_SECS", "0");
    let err = fx.error();
    assert!(
        err.contains("REIN_FIRST_BYTE_TIMEOUT_SECS") && err.contains("1 to 86400"),
        "{err}"
    );
    fx.unset("REIN_FIRST_BYTE_TIMEOUT_SECS");
    fx.project_file("stream_idle_timeout_secs = \"long\"\n");
    let err = fx.error();
    assert!(
        err.contains("stream_idle_timeout_secs") && err.contains("integer"),
        "{err}"
    );
}
