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
async fn a_400_for_another_reason_is_reported_once_and_not_remembered() {
    for message in [
        "No connected db.",
        "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`",
    ] {
        let bad = Reply::http(400, format!(r#"{{"error":{{"message":"{message}"}}}}"#));
        let server = MockServer::start(Script::new().reply(bad).reply(Turn::text("fine")));
        let provider = openai(&server.openai_base_url());

        let first = run(&*provider, &request("m")).await;
        match first.error() {
            LlmError::BadRequest {
                status: 400,
                message: said,
            } => assert_eq!(said, message),
            other => panic!("{other:?}"),
        }
        let second = run(&*provider, &request("m")).await;
        assert_eq!(second.text(), "fine");

        let sent: Vec<bool> = server
            .requests()
            .iter()
            .map(|r| r.body.get("stream_options").is_some())
            .collect();
        // Not sent twice, and stream_options still asked for.
        assert_eq!(sent, vec![true, true], "{message}");
    }
}

#[tokio::test]
async fn a_refusal_of_another_unknown_parameter_is_not_remembered() {
    let refuses_thinking = || {
        Reply::http(
            400,
            r#"{"error":{"message":"Unrecognized request argument supplied: thinking"}}"#,
        )
    };
    let server = MockServer::start(
        Script::new()
            .reply(refuses_thinking())
            .reply(refuses_thinking())
            .reply(Turn::text("fine")),
    );
    let provider = openai(&server.openai_base_url());
    let first = run(&*provider, &request("m")).await;
    assert!(
        matches!(first.error(), LlmError::BadRequest { message, .. } if message.contains("thinking")),
        "{:?}",
        first.error()
    );
    assert_eq!(run(&*provider, &request("m")).await.text(), "fine");
    let sent: Vec<bool> = server
        .requests()
        .iter()
        .map(|r| r.body.get("stream_options").is_some())
        .collect();
    // Tried once without it, which did not help: the next call asks for usage again.
    assert_eq!(sent, vec![true, false, true]);
}
