//! Proxies and connection failures; no address but 127.0.0.1 is ever contacted.

use rein_llm::{LlmError, NetworkConfig, ProviderKind, build_provider};
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
async fn a_refused_local_connection_says_the_server_is_not_running_at_once() {
    let url = format!("http://127.0.0.1:{}", closed_port());
    for kind in [
        ProviderKind::OpenAi,
        ProviderKind::Anthropic,
        ProviderKind::OpenAiResponses,
    ] {
        let base = match kind {
            ProviderKind::OpenAi | ProviderKind::OpenAiResponses => format!("{url}/v1"),
            ProviderKind::Anthropic => url.clone(),
        };
        let cfg = config(kind, &base);
        let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
        let endpoint = match kind {
            ProviderKind::OpenAi => format!("{url}/v1/chat/completions"),
            ProviderKind::Anthropic => format!("{url}/v1/messages"),
            ProviderKind::OpenAiResponses => format!("{url}/v1/responses"),
        };
        assert_eq!(
            outcome.error(),
            &LlmError::NotRunning {
                url: endpoint.clone()
            },
            "{kind}"
        );
        assert!(
            outcome.retries().is_empty(),
            "{kind}: it will not start by itself"
        );
        let message = outcome.error().to_string();
        assert!(
            message.contains(&endpoint) && message.contains("no server is running"),
            "{message}"
        );
    }
}
