//! Transient failures are retried as a whole, with a `Retry` event; permanent ones are not.

use std::time::Duration;

use rein_llm::{LlmError, ProviderKind, StreamEvent, build_provider};
use rein_testkit::{MockServer, Reply, Script, StreamError, Turn};

use crate::support::{anthropic, config, openai, provider_for, request, run};

fn retry_waits(events: &[StreamEvent]) -> Vec<Duration> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Retry { wait, .. } => Some(*wait),
            _ => None,
        })
        .collect()
}

/// Both wire formats, for the tests where the provider must not matter.
const KINDS: [ProviderKind; 2] = [ProviderKind::OpenAi, ProviderKind::Anthropic];

/// Asserts the second request came after the wait the server asked for.
fn assert_retried_after(server: &MockServer, wait: Duration, kind: ProviderKind) {
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "{kind}");
    let gap = requests[1].received_at - requests[0].received_at;
    assert!(gap >= wait, "{kind}: retried after only {gap:?}");
}

#[tokio::test]
async fn a_429_with_retry_after_waits_as_asked() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .reply(Reply::rate_limited(1))
                .reply(Turn::text("ok")),
        );
        let outcome = run(&*provider_for(kind, &server), &request("m")).await;
        assert_eq!(outcome.text(), "ok", "{kind}");
        assert_eq!(
            retry_waits(&outcome.events),
            vec![Duration::from_secs(1)],
            "{kind}"
        );
        assert_retried_after(&server, Duration::from_secs(1), kind);
    }
}

#[tokio::test]
async fn a_503_with_retry_after_waits_as_asked() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .reply(
                    Reply::http(503, r#"{"error":{"message":"Service Unavailable"}}"#)
                        .header("retry-after", "1"),
                )
                .reply(Turn::text("ok")),
        );
        let outcome = run(&*provider_for(kind, &server), &request("m")).await;
        assert_eq!(outcome.text(), "ok", "{kind}");
        assert_eq!(
            retry_waits(&outcome.events),
            vec![Duration::from_secs(1)],
            "{kind}"
        );
        assert_retried_after(&server, Duration::from_secs(1), kind);
    }
}

#[tokio::test]
async fn a_500_then_success() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .reply(Reply::server_error())
                .reply(Turn::text("recovered")),
        );
        let outcome = run(&*provider_for(kind, &server), &request("m")).await;
        assert_eq!(outcome.text(), "recovered", "{kind}");
        match outcome.retries()[..] {
            [
                StreamEvent::Retry {
                    attempt: 1, reason, ..
                },
            ] => assert!(reason.contains("500"), "{kind}: {reason}"),
            ref other => panic!("{kind}: {other:?}"),
        }
        assert_eq!(server.request_count(), 2, "{kind}");
    }
}

#[tokio::test]
async fn a_tokens_per_minute_limit_is_retried_not_taken_for_a_long_prompt() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .reply(Reply::http(
                    429,
                    r#"{"error":{"message":"Rate limit reached: too many tokens per minute"}}"#,
                ))
                .reply(Turn::text("ok")),
        );
        let outcome = run(&*provider_for(kind, &server), &request("m")).await;
        assert_eq!(outcome.text(), "ok", "{kind}");
        assert_eq!(outcome.retries().len(), 1, "{kind}");
    }
}

#[tokio::test]
async fn a_529_overload_is_retried() {
    let server = MockServer::start(
        Script::new()
            .reply(Reply::overloaded())
            .reply(Turn::text("ok")),
    );
    let outcome = run(
        &*anthropic(&server.base_url()),
        &request("claude-sonnet-4-5"),
    )
    .await;
    assert_eq!(outcome.text(), "ok");
    assert_eq!(outcome.retries().len(), 1);
}

#[tokio::test]
async fn a_cut_stream_is_retried_whole_and_the_partial_text_discarded() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .reply(Turn::new().chunks(["one ", "two ", "three"]).cut_after(3))
                .reply(Turn::new().chunks(["one ", "two ", "three"])),
        );
        let outcome = run(&*provider_for(kind, &server), &request("m")).await;
        let retry_at = outcome
            .events
            .iter()
            .position(|e| matches!(e, StreamEvent::Retry { .. }));
        let retry_at =
            retry_at.unwrap_or_else(|| panic!("{kind}: no retry in {:?}", outcome.events));
        assert!(
            outcome.events[..retry_at]
                .iter()
                .any(|e| matches!(e, StreamEvent::TextDelta { .. })),
            "{kind}: some text streamed before the cut"
        );
        assert_eq!(outcome.text(), "one two three", "{kind}");
        assert_eq!(server.request_count(), 2);
    }
}

#[tokio::test]
async fn an_error_event_mid_stream_is_retried() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().chunks(["a", "b"]).error_after(3))
            .reply(Turn::new().chunks(["a", "b"]))
            .reply(
                Turn::new()
                    .chunks(["x"])
                    .stream_error_after(1, StreamError::new("api_error", "Internal server error")),
            )
            .reply(Turn::new().chunks(["x"])),
    );
    let outcome = run(
        &*anthropic(&server.base_url()),
        &request("claude-sonnet-4-5"),
    )
    .await;
    assert_eq!(outcome.text(), "ab");
    assert_eq!(outcome.retries().len(), 1);
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    assert_eq!(outcome.text(), "x");
    assert_eq!(outcome.retries().len(), 1);
}

#[tokio::test]
async fn a_silent_stream_times_out_and_is_retried() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().chunks(["a", "b"]).stall_after(2))
            .reply(Turn::new().chunks(["a", "b"])),
    );
    let mut cfg = config(ProviderKind::OpenAi, &server.openai_base_url());
    cfg.network.stream_idle_timeout = Duration::from_millis(300);
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert_eq!(outcome.text(), "ab");
    match outcome.retries()[..] {
        [StreamEvent::Retry { reason, .. }] => assert!(reason.contains("timed out"), "{reason}"),
        ref other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn context_too_long_is_classified_and_not_retried() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .reply(Reply::context_too_long())
                .reply(Turn::text("unused")),
        );
        let outcome = run(&*provider_for(kind, &server), &request("m")).await;
        assert!(
            matches!(outcome.error(), LlmError::ContextTooLong(_)),
            "{kind}: {:?}",
            outcome.error()
        );
        assert!(outcome.retries().is_empty());
        assert_eq!(server.request_count(), 1, "{kind}");
    }
}

#[tokio::test]
async fn auth_errors_are_not_retried() {
    for kind in KINDS {
        let server = MockServer::start(
            Script::new()
                .reply(Reply::unauthorized())
                .reply(Turn::text("unused")),
        );
        let outcome = run(&*provider_for(kind, &server), &request("m")).await;
        assert!(
            matches!(outcome.error(), LlmError::Auth(_)),
            "{kind}: {:?}",
            outcome.error()
        );
        assert!(outcome.retries().is_empty(), "{kind}");
        assert_eq!(server.request_count(), 1, "{kind}");
    }
}

#[tokio::test]
async fn retries_give_up_after_the_configured_count() {
    let server = MockServer::start(Script::new().reply(Reply::server_error()).repeating());
    let mut cfg = config(ProviderKind::OpenAi, &server.openai_base_url());
    cfg.retry.max_retries = 2;
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert!(
        matches!(outcome.error(), LlmError::Server { status: 500, .. }),
        "{:?}",
        outcome.error()
    );
    assert_eq!(outcome.retries().len(), 2);
    assert_eq!(server.request_count(), 3);
}

#[tokio::test]
async fn a_wait_longer_than_allowed_is_reported_instead() {
    let server = MockServer::start(
        Script::new()
            .reply(Reply::rate_limited(3600))
            .reply(Turn::text("unused")),
    );
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    match outcome.error() {
        LlmError::RateLimited { retry_after, .. } => {
            assert_eq!(*retry_after, Some(Duration::from_secs(3600)));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(server.request_count(), 1);
}
