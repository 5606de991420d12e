//! HTTP errors, script exhaustion, dynamic replies and bad requests.

use std::time::Duration;

use rein_testkit::{ApiErrorKind, MockServer, Reply, Script, Turn};
use serde_json::json;

use crate::client::{Client, RESPONSE_TIMEOUT, openai_stream_request};

const OPENAI: &str = "/v1/chat/completions";
const ANTHROPIC: &str = "/v1/messages";

#[tokio::test]
async fn literal_http_errors_keep_their_status_body_and_headers() {
    let server = MockServer::start(
        Script::new()
            .reply(
                Reply::http(429, r#"{"error":{"message":"slow down"}}"#).header("retry-after", "1"),
            )
            .reply(Reply::http(503, "plain").header("content-type", "text/plain")),
    );
    let mut client = Client::connect(server.addr()).await;
    let limited = client.post(OPENAI, &json!({})).await;
    assert_eq!(limited.status, 429);
    assert_eq!(limited.header("retry-after"), Some("1"));
    assert_eq!(limited.header("content-type"), Some("application/json"));
    assert_eq!(limited.json()["error"]["message"], "slow down");
    let plain = client.post(OPENAI, &json!({})).await;
    assert_eq!(plain.status, 503);
    assert_eq!(plain.header("content-type"), Some("text/plain"));
    assert_eq!(plain.text(), "plain");
}

#[tokio::test]
async fn common_errors_speak_the_request_format() {
    let replies = [
        Reply::rate_limited(7),
        Reply::overloaded(),
        Reply::server_error(),
        Reply::context_too_long(),
        Reply::unauthorized(),
    ];
    let server = MockServer::start(
        replies
            .iter()
            .cloned()
            .chain(replies.iter().cloned())
            .collect(),
    );
    let mut client = Client::connect(server.addr()).await;

    let mut openai = Vec::new();
    for _ in 0..replies.len() {
        openai.push(client.post(OPENAI, &json!({"model": "m"})).await);
    }
    let statuses: Vec<u16> = openai.iter().map(|response| response.status).collect();
    assert_eq!(statuses, [429, 529, 500, 400, 401]);
    assert_eq!(openai[0].header("retry-after"), Some("7"));
    assert_eq!(openai[3].json()["error"]["code"], "context_length_exceeded");
    assert_eq!(openai[4].json()["error"]["code"], "invalid_api_key");
    assert!(
        openai
            .iter()
            .all(|response| response.json()["error"]["message"].is_string())
    );

    let mut anthropic = Vec::new();
    for _ in 0..replies.len() {
        anthropic.push(client.post(ANTHROPIC, &json!({"model": "m"})).await);
    }
    let types: Vec<String> = anthropic
        .iter()
        .map(|response| {
            let body = response.json();
            assert_eq!(body["type"], "error");
            body["error"]["type"].as_str().unwrap().to_owned()
        })
        .collect();
    assert_eq!(
        types,
        [
            "rate_limit_error",
            "overloaded_error",
            "api_error",
            "invalid_request_error",
            "authentication_error"
        ]
    );
    assert_eq!(anthropic[0].header("retry-after"), Some("7"));
    let too_long = anthropic[3].json();
    assert!(
        too_long["error"]["message"]
            .as_str()
            .unwrap()
            .contains("prompt is too long")
    );
}

#[tokio::test]
async fn a_rate_limit_without_retry_after_sends_no_header() {
    let server = MockServer::start(Script::new().reply(Reply::error(ApiErrorKind::RateLimited {
        retry_after_secs: None,
    })));
    let mut client = Client::connect(server.addr()).await;
    let response = client.post(OPENAI, &json!({})).await;
    assert_eq!(response.status, 429);
    assert_eq!(response.header("retry-after"), None);
}

#[tokio::test]
async fn an_exhausted_script_answers_500() {
    let server = MockServer::start(Script::new().reply(Turn::text("only one")));
    let mut client = Client::connect(server.addr()).await;
    assert_eq!(
        client.post(OPENAI, &openai_stream_request()).await.status,
        200
    );
    let exhausted = client.post(OPENAI, &openai_stream_request()).await;
    assert_eq!(exhausted.status, 500);
    assert!(
        exhausted.text().contains("script exhausted"),
        "{}",
        exhausted.text()
    );
}

#[tokio::test]
async fn a_repeating_script_starts_over() {
    let server = MockServer::start(
        Script::new()
            .reply(Reply::server_error())
            .reply(Turn::text("ok"))
            .repeating(),
    );
    let mut client = Client::connect(server.addr()).await;
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(client.post(OPENAI, &json!({})).await.status);
    }
    assert_eq!(statuses, [500, 200, 500, 200, 500]);
}

#[tokio::test]
async fn dynamic_replies_decide_from_the_request() {
    let server = MockServer::start(
        Script::new()
            .reply(
                Reply::dynamic(|request| {
                    if request.body.get("stream_options").is_some() {
                        Reply::http(
                            400,
                            r#"{"error":{"message":"stream_options not supported"}}"#,
                        )
                    } else {
                        Turn::text("fine").into()
                    }
                })
                .header("x-decided", "yes"),
            )
            .reply(Reply::dynamic(|request| {
                Turn::text(request.path.clone()).into()
            })),
    );
    let mut client = Client::connect(server.addr()).await;
    let mut request = openai_stream_request();
    request["stream_options"] = json!({ "include_usage": true });
    let refused = client.post(OPENAI, &request).await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.header("x-decided"), Some("yes"));
    let echoed = client.post(OPENAI, &json!({ "stream": false })).await;
    assert_eq!(echoed.json()["choices"][0]["message"]["content"], OPENAI);
}

#[tokio::test]
async fn delays_hold_the_response_back() {
    let delay = Duration::from_millis(150);
    let server = MockServer::start(
        Script::new()
            .reply(Reply::overloaded().delay(delay))
            .reply(Turn::text("late").response_delay(delay)),
    );
    let mut client = Client::connect(server.addr()).await;
    for _ in 0..2 {
        let started = std::time::Instant::now();
        let response = client.post(OPENAI, &openai_stream_request()).await;
        assert!(response.status == 529 || response.status == 200);
        assert!(
            started.elapsed() >= delay,
            "answered after {:?}",
            started.elapsed()
        );
    }
}

#[tokio::test]
async fn a_scripted_header_that_would_break_framing_is_a_clear_500() {
    let server =
        MockServer::start(Script::new().reply(Reply::http(200, "{}").header("x", "a\r\nevil: 1")));
    let mut client = Client::connect(server.addr()).await;
    let response = client.post(OPENAI, &json!({})).await;
    assert_eq!(response.status, 500);
    assert!(
        response.text().contains("mock script error"),
        "{}",
        response.text()
    );
    assert_eq!(response.header("evil"), None);
}

#[tokio::test]
async fn a_malformed_request_gets_400_and_the_server_keeps_serving() {
    let server = MockServer::start(Script::new().reply(Turn::text("still here")));
    let mut broken = Client::connect(server.addr()).await;
    broken.send_raw(b"NOT HTTP AT ALL\r\n\r\n").await;
    let response = broken.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(response.status, 400);
    assert!(
        response.text().contains("malformed request line"),
        "{}",
        response.text()
    );
    assert!(broken.is_closed_by_server(RESPONSE_TIMEOUT).await);

    let mut client = Client::connect(server.addr()).await;
    let fine = client.post(OPENAI, &openai_stream_request()).await;
    assert_eq!(fine.status, 200, "the bad request used up no reply");
    assert_eq!(
        server.request_count(),
        1,
        "a request that could not be parsed is not captured"
    );
}

#[tokio::test]
async fn a_body_that_is_not_json_gets_400_without_using_a_reply() {
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let mut client = Client::connect(server.addr()).await;
    client
        .send_raw(b"POST /v1/messages HTTP/1.1\r\nContent-Length: 9\r\n\r\n{not json")
        .await;
    let refused = client.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(refused.status, 400);
    assert_eq!(refused.json()["error"]["type"], "invalid_request_error");
    let captured = server.requests();
    assert_eq!(captured[0].raw_body, b"{not json");
    assert!(captured[0].body.is_null());
    let fine = client.post(ANTHROPIC, &json!({ "stream": false })).await;
    assert_eq!(fine.json()["content"][0]["text"], "ok");
}
