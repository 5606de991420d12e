//! `stream_options.include_usage`: requested, dropped once when a server refuses it, and the
//! choice remembered.

use rein_llm::LlmError;
use rein_testkit::{CapturedRequest, MockServer, Reply, Script, Turn};

use crate::support::{openai, request, run};

fn refuses_stream_options(req: &CapturedRequest) -> Reply {
    if req.body.get("stream_options").is_some() {
        Reply::http(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: stream_options","type":"invalid_request_error"}}"#,
        )
    } else {
        Turn::text("ok").into()
    }
}

#[tokio::test]
async fn a_refused_stream_options_is_dropped_and_remembered() {
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(refuses_stream_options))
            .reply(Reply::dynamic(refuses_stream_options))
            .reply(Reply::dynamic(refuses_stream_options)),
    );
    let provider = openai(&server.openai_base_url());

    let first = run(&*provider, &request("m")).await;
    assert_eq!(first.text(), "ok");
    assert!(
        first.retries().is_empty(),
        "the fallback is not a transient retry"
    );
    let second = run(&*provider, &request("m")).await;
    assert_eq!(second.text(), "ok");

    let sent: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| r.body.get("stream_options").is_some())
        .collect();
    // The first call tried it and fell back; the second call did not send it at all.
    assert_eq!(sent, vec![true, false, false]);
}

#[tokio::test]
async fn a_400_for_another_reason_is_reported_and_not_remembered() {
    let bad = || Reply::http(400, r#"{"error":{"message":"messages: field required"}}"#);
    let server = MockServer::start(
        Script::new()
            .reply(bad())
            .reply(bad())
            .reply(Turn::text("fine")),
    );
    let provider = openai(&server.openai_base_url());

    let first = run(&*provider, &request("m")).await;
    assert!(
        matches!(first.error(), LlmError::BadRequest { status: 400, .. }),
        "{:?}",
        first.error()
    );
    let second = run(&*provider, &request("m")).await;
    assert_eq!(second.text(), "fine");

    let sent: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| r.body.get("stream_options").is_some())
        .collect();
    assert_eq!(sent, vec![true, false, true]);
}
