//! Prompt caching on the wire: Anthropic's breakpoints, OpenAI's `prompt_cache_key` (dropped
//! once, and remembered, by a server that refuses it) and a byte-stable prefix.

use rein_llm::{Message, Part, ProviderKind, Role, build_provider};
use rein_testkit::{CapturedRequest, MockServer, Reply, Script, Turn};

use crate::support::{config, openai, request, run};

fn keyed(model: &str) -> rein_llm::Request {
    let mut request = request(model);
    request.cache_key = Some("rein-20261122-101502-k3x9qa".into());
    request
}

fn refuses_cache_key(req: &CapturedRequest) -> Reply {
    if req.body.get("prompt_cache_key").is_some() {
        Reply::http(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: prompt_cache_key","type":"invalid_request_error"}}"#,
        )
    } else {
        Turn::text("ok").into()
    }
}

#[tokio::test]
async fn the_cache_key_is_sent_and_a_refusal_naming_it_drops_it_for_good() {
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(refuses_cache_key))
            .reply(Reply::dynamic(refuses_cache_key))
            .reply(Reply::dynamic(refuses_cache_key)),
    );
    let provider = openai(&server.openai_base_url());
    assert_eq!(run(&*provider, &keyed("m")).await.text(), "ok");
    assert_eq!(run(&*provider, &keyed("m")).await.text(), "ok");
    let sent: Vec<(Option<String>, bool)> = server
        .requests()
        .iter()
        .map(|r| {
            (
                r.body["prompt_cache_key"].as_str().map(str::to_owned),
                r.wants_usage_chunk(),
            )
        })
        .collect();
    // Only the key was dropped: usage is still asked for.
    assert_eq!(
        sent,
        vec![
            (Some("rein-20261122-101502-k3x9qa".to_owned()), true),
            (None, true),
            (None, true),
        ]
    );
}

#[tokio::test]
async fn an_endpoint_that_takes_the_key_keeps_getting_it() {
    let server = MockServer::start(Script::new().reply(Turn::text("a")).reply(Turn::text("b")));
    let provider = openai(&server.openai_base_url());
    run(&*provider, &keyed("m")).await;
    run(&*provider, &keyed("m")).await;
    for r in server.requests() {
        assert_eq!(r.body["prompt_cache_key"], "rein-20261122-101502-k3x9qa");
    }
}

/// The messages part of a raw body: everything before `"tools"`.
fn messages_bytes(raw: &[u8]) -> &[u8] {
    let text = std::str::from_utf8(raw).unwrap();
    let end = text.find(r#"],"tools""#).unwrap();
    &raw[..end]
}

#[tokio::test]
async fn each_round_repeats_the_previous_requests_bytes_as_its_prefix() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("one"))
            .reply(Turn::text("two")),
    );
    let provider = openai(&server.openai_base_url());
    let mut request = keyed("m");
    run(&*provider, &request).await;
    request.messages.push(Message {
        role: Role::Assistant,
        parts: vec![Part::Text { text: "one".into() }],
    });
    request.messages.push(Message {
        role: Role::User,
        parts: vec![Part::Text {
            text: "more".into(),
        }],
    });
    run(&*provider, &request).await;
    let requests = server.requests();
    let first = messages_bytes(&requests[0].raw_body);
    let second = messages_bytes(&requests[1].raw_body);
    assert!(second.starts_with(first), "the prefix changed");
}

#[tokio::test]
async fn anthropic_requests_carry_breakpoints_and_the_ttl_configured() {
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let mut config = config(ProviderKind::Anthropic, &server.base_url());
    config.cache_ttl = rein_llm::CacheTtl::OneHour;
    let provider = build_provider(&config).unwrap();
    run(&*provider, &request("claude-sonnet-4-5")).await;
    let body = &server.requests()[0].body;
    let one_hour = serde_json::json!({"type": "ephemeral", "ttl": "1h"});
    assert_eq!(body["system"][0]["text"], "You are terse.");
    assert_eq!(body["system"][0]["cache_control"], one_hour);
    assert_eq!(body["tools"][0]["cache_control"], one_hour);
    assert_eq!(body["messages"][0]["content"][0]["cache_control"], one_hour);
}
