//! Proxies and connection failures; no address but 127.0.0.1 is ever contacted.

use rein_llm::{LlmError, NetworkConfig, ProviderKind, RetryPolicy, build_provider};
use rein_testkit::{MockServer, Script, Turn};

use crate::support::{config, request, run};

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[tokio::test]
async fn an_http_proxy_from_the_environment_carries_the_request() {
    // The mock server plays the proxy: it receives the absolute-form target and answers.
    let server = MockServer::start(Script::new().reply(Turn::text("via proxy")));
    let env = [("HTTP_PROXY", server.base_url())];
    let network = NetworkConfig::from_env_vars(|name| {
        env.iter().find(|(k, _)| *k == name).map(|(_, v)| v.clone())
    });
    let mut cfg = config(ProviderKind::OpenAi, "http://models.example.invalid/v1");
    cfg.network = network;
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert_eq!(outcome.text(), "via proxy");
    let sent = server.last_request().unwrap();
    assert_eq!(
        sent.target,
        "http://models.example.invalid/v1/chat/completions"
    );
}

#[tokio::test]
async fn no_proxy_hosts_are_reached_directly() {
    let server = MockServer::start(Script::new().reply(Turn::text("direct")));
    let mut cfg = config(ProviderKind::OpenAi, &server.openai_base_url());
    cfg.network.http_proxy = Some(format!("http://127.0.0.1:{}", closed_port()));
    cfg.network.no_proxy = Some("localhost,127.0.0.1".into());
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert_eq!(outcome.text(), "direct");
    assert_eq!(
        server.last_request().unwrap().target,
        "/v1/chat/completions"
    );
}

#[tokio::test]
async fn a_refused_connection_is_a_connection_error_after_retries() {
    let mut cfg = config(
        ProviderKind::Anthropic,
        &format!("http://127.0.0.1:{}", closed_port()),
    );
    cfg.retry = RetryPolicy {
        max_retries: 1,
        ..crate::support::fast_retry()
    };
    let outcome = run(
        &*build_provider(&cfg).unwrap(),
        &request("claude-haiku-4-5"),
    )
    .await;
    match outcome.error() {
        LlmError::Connection(message) => assert!(message.contains("connect"), "{message}"),
        other => panic!("{other:?}"),
    }
    assert_eq!(outcome.retries().len(), 1);
}
