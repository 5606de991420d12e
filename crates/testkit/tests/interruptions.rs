//! Streams that stop early or carry garbage: cut, stall, error events, malformed lines, delays.

use std::time::{Duration, Instant};

use rein_testkit::{MockServer, Reply, Script, StreamError, Turn};

use crate::client::{
    Client, Ending, RESPONSE_TIMEOUT, anthropic_stream_request, openai_stream_request,
};

/// How long a test watches a stalled stream for bytes that must not come.
const STALL_WATCH: Duration = Duration::from_millis(300);

#[tokio::test]
async fn a_cut_stream_closes_after_n_events_without_the_terminator() {
    let server = MockServer::start(
        Script::new().reply(Turn::text("abc").chunks(["a", "b", "c"]).cut_after(2)),
    );
    let mut client = Client::connect(server.addr()).await;
    let response = client
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    assert_eq!(
        response.ending(),
        Ending::Closed,
        "the chunked body never ends"
    );
    let events = response.sse();
    assert_eq!(events.len(), 2, "{events:?}");
    assert!(events.iter().all(|(_, data)| data != "[DONE]"));
    assert_eq!(
        response.sse_json()[1]["choices"][0]["delta"]["content"],
        "a"
    );
    let captured = server.wait_for_requests(1, RESPONSE_TIMEOUT).unwrap();
    assert!(
        captured[0].responded_at.is_some(),
        "a deliberate cut counts as written"
    );
}

#[tokio::test]
async fn a_cut_past_the_end_still_withholds_the_terminator() {
    let server = MockServer::start(Script::new().reply(Turn::text("x").cut_after(usize::MAX)));
    let mut client = Client::connect(server.addr()).await;
    let response = client
        .post("/v1/messages", &anthropic_stream_request())
        .await;
    assert_eq!(response.ending(), Ending::Closed);
    let names: Vec<String> = response
        .sse()
        .into_iter()
        .map(|(name, _)| name.unwrap())
        .collect();
    assert_eq!(names.last().unwrap(), "message_delta");
}

#[tokio::test]
async fn a_stalled_stream_stays_open_and_silent() {
    let server = MockServer::start(
        Script::new().reply(Turn::text("abc").chunks(["a", "b", "c"]).stall_after(1)),
    );
    let mut client = Client::connect(server.addr()).await;
    client
        .send_post("/v1/chat/completions", &[], &openai_stream_request())
        .await;
    let response = client.read_first(1).await;
    assert_eq!(response.status, 200);
    assert_eq!(response.sse().len(), 1, "the role chunk");
    assert!(
        !client.gets_more_within(STALL_WATCH).await,
        "nothing after the stall"
    );
    assert!(
        !client.is_closed_by_server(STALL_WATCH).await,
        "the connection stays open"
    );
    assert_eq!(server.requests()[0].responded_at, None);

    // Others are still served while one connection stalls.
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("stuck").stall_after(0))
            .reply(Turn::text("free")),
    );
    let mut stuck = Client::connect(server.addr()).await;
    stuck
        .send_post("/v1/messages", &[], &anthropic_stream_request())
        .await;
    server
        .wait_for_requests_async(1, RESPONSE_TIMEOUT)
        .await
        .unwrap();
    let mut other = Client::connect(server.addr()).await;
    let free = other
        .post("/v1/messages", &anthropic_stream_request())
        .await;
    assert_eq!(free.ending(), Ending::Complete);
}

#[tokio::test]
async fn a_silent_reply_accepts_the_request_and_never_answers() {
    let server = MockServer::start(
        Script::new()
            .reply(Reply::silent())
            .reply(Turn::text("next")),
    );
    let mut client = Client::connect(server.addr()).await;
    client
        .send_post("/v1/chat/completions", &[], &openai_stream_request())
        .await;
    server
        .wait_for_requests_async(1, RESPONSE_TIMEOUT)
        .await
        .unwrap();
    assert!(
        !client.gets_more_within(STALL_WATCH).await,
        "not even a status line"
    );
    assert!(!client.is_closed_by_server(STALL_WATCH).await);
    assert_eq!(server.requests()[0].responded_at, None);
    let mut other = Client::connect(server.addr()).await;
    let next = other
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    assert_eq!(next.ending(), Ending::Complete);
}

#[tokio::test]
async fn an_anthropic_error_event_ends_the_stream_mid_way() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("partial").error_after(3))
            .reply(Turn::text("next")),
    );
    let mut client = Client::connect(server.addr()).await;
    let response = client
        .post("/v1/messages", &anthropic_stream_request())
        .await;
    assert_eq!(
        response.ending(),
        Ending::Complete,
        "the error is a proper end of the body"
    );
    let events = response.sse();
    assert_eq!(events.len(), 4);
    let (name, data) = &events[3];
    assert_eq!(name.as_deref(), Some("error"));
    let data: serde_json::Value = serde_json::from_str(data).unwrap();
    assert_eq!(
        data,
        serde_json::json!({ "type": "error", "error": { "type": "overloaded_error", "message": "Overloaded" } })
    );
    // The connection is still good for the next request.
    let next = client
        .post("/v1/messages", &anthropic_stream_request())
        .await;
    assert_eq!(next.ending(), Ending::Complete);
}

#[tokio::test]
async fn an_openai_stream_error_is_a_data_line_with_an_error_object() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("x").stream_error_after(1, StreamError::new("api_error", "boom"))),
    );
    let mut client = Client::connect(server.addr()).await;
    let response = client
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    let chunks = response.sse_json();
    assert_eq!(chunks.len(), 2);
    assert_eq!(chunks[1]["error"]["type"], "api_error");
    assert_eq!(chunks[1]["error"]["message"], "boom");
}

#[tokio::test]
async fn malformed_lines_are_injected_where_asked() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("ok")
                .malformed_line("data: {not json")
                .malformed_line_at(2, ": a comment")
                .malformed_line_at(99, "data: after the end"),
        ),
    );
    let mut client = Client::connect(server.addr()).await;
    let response = client
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    assert_eq!(response.ending(), Ending::Complete);
    let text = response.text();
    assert!(text.starts_with("data: {not json\n\ndata: {"), "{text:?}");
    let frames: Vec<&str> = text.split_terminator("\n\n").collect();
    assert_eq!(
        frames[3], ": a comment",
        "before event 2 (after role and content): {frames:?}"
    );
    assert_eq!(frames[frames.len() - 2], "data: [DONE]");
    assert_eq!(frames[frames.len() - 1], "data: after the end");
}

#[tokio::test]
async fn chunk_delays_space_the_events() {
    let delay = Duration::from_millis(40);
    let server = MockServer::start(
        Script::new().reply(Turn::text("abc").chunks(["a", "b", "c"]).chunk_delay(delay)),
    );
    let mut client = Client::connect(server.addr()).await;
    let started = Instant::now();
    let response = client
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    let events = response.sse().len();
    assert_eq!(events, 6);
    // A delay before each event after the first.
    let floor = delay * u32::try_from(events - 1).unwrap();
    assert!(
        started.elapsed() >= floor,
        "took {:?}, expected at least {floor:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn a_non_streamed_answer_can_be_cut_or_stalled_mid_body() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("a long enough answer").cut_after(10))
            .reply(Turn::text("a long enough answer").stall_after(10)),
    );
    let mut client = Client::connect(server.addr()).await;
    let cut = client.post("/v1/messages", &serde_json::json!({})).await;
    assert_eq!(cut.ending(), Ending::Closed);
    assert_eq!(cut.body.len(), 10);

    let mut client = Client::connect(server.addr()).await;
    client
        .send_post("/v1/messages", &[], &serde_json::json!({}))
        .await;
    let stalled = client.read_first(10).await;
    assert_eq!(stalled.body.len(), 10);
    assert!(
        !client.gets_more_within(STALL_WATCH).await,
        "nothing after the stall"
    );
    assert!(
        stalled
            .header("content-length")
            .unwrap()
            .parse::<usize>()
            .unwrap()
            > 10
    );
}

#[tokio::test]
async fn a_non_streamed_answer_with_an_error_becomes_an_http_error() {
    let server = MockServer::start(Script::new().reply(Turn::text("x").error_after(0)));
    let mut client = Client::connect(server.addr()).await;
    let response = client.post("/v1/messages", &serde_json::json!({})).await;
    assert_eq!(response.status, 529);
    assert_eq!(response.json()["error"]["type"], "overloaded_error");
}
