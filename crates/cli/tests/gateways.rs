//! Gateways (LiteLLM, OpenRouter) report what the provider behind them said: the wait a
//! rate limit asks for, and what a call cost.

use std::time::Duration;

use rein_testkit::{ApiErrorKind, MockServer, MockUsage, Reply, Script, Turn};

use crate::support::{Env, final_json, run, stderr, stdout};

#[test]
fn a_litellm_429_waits_as_long_as_the_provider_behind_it_asked() {
    let env = Env::new();
    // LiteLLM relays the upstream's wait as `llm_provider-retry-after`, with no
    // `retry-after` of its own.
    let server = MockServer::start(
        Script::new()
            .reply(
                Reply::error(ApiErrorKind::RateLimited {
                    retry_after_secs: None,
                })
                .header("llm_provider-retry-after", "1"),
            )
            .reply(Turn::text("after the wait")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "after the wait");
    let progress = stderr(&out);
    assert!(progress.contains("retry 1 in 1.0 s"), "{progress}");
    let requests = server.requests();
    let gap = requests[1].received_at - requests[0].received_at;
    assert!(gap >= Duration::from_secs(1), "retried after only {gap:?}");
}

#[test]
fn a_gateway_alias_gets_the_cost_the_gateway_reported() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new().reply(Turn::text("hi").usage(MockUsage::new(1200, 80).cost(0.0123))),
    );
    // A LiteLLM model alias: in no price table.
    let out = run(env.rein_openai(&server).args([
        "-m",
        "team-claude",
        "-p",
        "hi",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["cost_usd"].as_f64(), Some(0.0123), "{report}");
}
