//! A server that is slow to answer, or never does: the first-byte limit with its notices, and
//! the whole call's limit.

use std::time::Duration;

use rein_llm::{LlmError, ProviderKind, StreamEvent, build_provider};
use rein_testkit::{MockServer, Reply, Script, Turn};

use crate::support::{config, request, run};

/// A provider for `server` whose limits are short enough for a test.
fn hurried(server: &MockServer, first_byte: Duration, retries: u32) -> rein_llm::ProviderConfig {
    let mut cfg = config(ProviderKind::OpenAi, &server.openai_base_url());
    cfg.network.first_byte_timeout = Some(first_byte);
    cfg.network.waiting_notice_interval = Duration::from_millis(50);
    cfg.retry.max_retries = retries;
    cfg
}

fn waits(events: &[StreamEvent]) -> Vec<Duration> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::Waiting { elapsed } => Some(*elapsed),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_server_that_never_answers_is_announced_then_given_up_on() {
    let server = MockServer::start(Script::new().reply(Reply::silent()).repeating());
    let cfg = hurried(&server, Duration::from_secs(1), 1);
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;

    let retry_at = outcome
        .events
        .iter()
        .position(|e| matches!(e, StreamEvent::Retry { .. }))
        .unwrap();
    let before = waits(&outcome.events[..retry_at]);
    assert!(!before.is_empty(), "the wait is announced");
    assert!(
        before.windows(2).all(|w| w[0] < w[1]),
        "each notice later than the last: {before:?}"
    );
    assert!(before.iter().all(|w| *w < Duration::from_secs(1)));
    match &outcome.events[retry_at] {
        StreamEvent::Retry { reason, .. } => assert_eq!(
            reason,
            "timed out: no response within 1 s (first_byte_timeout_secs)"
        ),
        other => panic!("{other:?}"),
    }
    assert!(
        !waits(&outcome.events[retry_at..]).is_empty(),
        "the retry is announced as it waits too"
    );
    assert_eq!(
        outcome.error(),
        &LlmError::Timeout("no response within 1 s (first_byte_timeout_secs)".into())
    );
    assert_eq!(server.request_count(), 2);
}

#[tokio::test]
async fn headers_without_a_body_count_as_no_answer() {
    // Some gateways send their headers at once and the body when the model answers.
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("stuck").stall_after(0))
            .reply(Turn::text("next")),
    );
    let cfg = hurried(&server, Duration::from_secs(1), 1);
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert_eq!(outcome.text(), "next");
    assert_eq!(outcome.retries().len(), 1);
}

#[tokio::test]
async fn the_whole_call_has_a_limit_retries_included() {
    let server = MockServer::start(Script::new().reply(Reply::silent()).repeating());
    let mut cfg = hurried(&server, Duration::from_secs(30), 4);
    cfg.network.request_timeout = Duration::from_millis(500);
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert_eq!(
        outcome.error(),
        &LlmError::Timeout(
            "the model call took more than 0.5 s in all (request_timeout_secs)".into()
        )
    );
    assert!(
        outcome.retries().is_empty(),
        "no retry starts past the limit"
    );
    assert_eq!(server.request_count(), 1);
}
