//! The Anthropic Messages rendering.

use rein_testkit::{MockServer, MockToolCall, MockUsage, Script, Turn};
use serde_json::{Value, json};

use crate::client::{Client, Ending, Response, anthropic_stream_request};

async fn stream(turn: Turn, request: Value) -> Response {
    let server = MockServer::start(Script::new().reply(turn));
    let mut client = Client::connect(server.addr()).await;
    client.post("/v1/messages", &request).await
}

fn names(response: &Response) -> Vec<String> {
    response
        .sse()
        .into_iter()
        .map(|(name, _)| name.expect("every Anthropic event is named"))
        .collect()
}

#[tokio::test]
async fn text_streams_as_typed_events_with_usage() {
    let turn = Turn::text("Hello ")
        .chunks(["Hel", "lo "])
        .usage(MockUsage::new(100, 5).cached(60).cache_creation(30))
        .ping();
    let response = stream(turn, anthropic_stream_request()).await;
    assert_eq!(response.ending(), Ending::Complete);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert_eq!(
        names(&response),
        [
            "message_start",
            "ping",
            "content_block_start",
            "content_block_delta",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop",
        ]
    );
    for (name, data) in response.sse() {
        let data: Value = serde_json::from_str(&data).unwrap();
        assert_eq!(
            data["type"],
            name.unwrap(),
            "event name and data type agree"
        );
    }
    let events = response.sse_json();
    let message = &events[0]["message"];
    assert_eq!(message["model"], "claude-test");
    assert_eq!(message["role"], "assistant");
    assert_eq!(message["usage"]["input_tokens"], 10);
    assert_eq!(message["usage"]["cache_read_input_tokens"], 60);
    assert_eq!(message["usage"]["cache_creation_input_tokens"], 30);
    assert_eq!(
        events[2]["content_block"],
        json!({ "type": "text", "text": "" })
    );
    assert_eq!(
        events[3]["delta"],
        json!({ "type": "text_delta", "text": "Hel" })
    );
    assert_eq!(
        events[4]["delta"],
        json!({ "type": "text_delta", "text": "lo " })
    );
    assert_eq!(events[5]["index"], 0);
    assert_eq!(events[6]["delta"]["stop_reason"], "end_turn");
    assert_eq!(events[6]["usage"]["output_tokens"], 5);
}

#[tokio::test]
async fn thinking_then_tool_use_with_split_json() {
    let arguments = r#"{"command":"cargo test"}"#;
    let turn = Turn::new()
        .reasoning_chunks(["Let me ", "check."])
        .signature("sig-123")
        .tool_call(MockToolCall::new("toolu_1", "bash", arguments).split_every(4));
    let response = stream(turn, anthropic_stream_request()).await;
    let events = response.sse_json();
    assert_eq!(
        events[1]["content_block"],
        json!({ "type": "thinking", "thinking": "" })
    );
    assert_eq!(
        events[2]["delta"],
        json!({ "type": "thinking_delta", "thinking": "Let me " })
    );
    assert_eq!(
        events[3]["delta"],
        json!({ "type": "thinking_delta", "thinking": "check." })
    );
    assert_eq!(
        events[4]["delta"],
        json!({ "type": "signature_delta", "signature": "sig-123" })
    );
    assert_eq!(events[5]["type"], "content_block_stop");

    let start = &events[6];
    assert_eq!(start["index"], 1);
    assert_eq!(
        start["content_block"],
        json!({ "type": "tool_use", "id": "toolu_1", "name": "bash", "input": {} })
    );
    let fragments: Vec<&str> = events
        .iter()
        .filter(|event| event["delta"]["type"] == "input_json_delta")
        .map(|event| {
            assert_eq!(event["index"], 1);
            event["delta"]["partial_json"].as_str().unwrap()
        })
        .collect();
    assert_eq!(
        fragments[0], "",
        "the real API opens with an empty fragment"
    );
    assert_eq!(fragments.len(), 1 + arguments.len().div_ceil(4));
    assert_eq!(fragments.concat(), arguments);
    let delta = events
        .iter()
        .find(|event| event["type"] == "message_delta")
        .unwrap();
    assert_eq!(delta["delta"]["stop_reason"], "tool_use");
    assert_eq!(events.last().unwrap()["type"], "message_stop");
}

#[tokio::test]
async fn a_request_without_stream_gets_one_message_body() {
    let turn = Turn::text("Answer")
        .reasoning("why")
        .tool_call(MockToolCall::new(
            "toolu_2",
            "read_file",
            r#"{"file_path":"x"}"#,
        ))
        .tool_call(MockToolCall::new("toolu_3", "broken", "{not json"))
        .usage(MockUsage::new(50, 9).cached(20));
    let request = json!({ "model": "claude-test", "max_tokens": 10, "messages": [] });
    let response = stream(turn, request).await;
    assert_eq!(response.header("content-type"), Some("application/json"));
    let body = response.json();
    assert_eq!(body["type"], "message");
    assert_eq!(
        body["content"],
        json!([
            { "type": "thinking", "thinking": "why", "signature": rein_testkit::DEFAULT_THINKING_SIGNATURE },
            { "type": "text", "text": "Answer" },
            { "type": "tool_use", "id": "toolu_2", "name": "read_file", "input": { "file_path": "x" } },
            { "type": "tool_use", "id": "toolu_3", "name": "broken", "input": "{not json" },
        ])
    );
    assert_eq!(body["stop_reason"], "tool_use");
    assert_eq!(body["usage"]["input_tokens"], 30);
    assert_eq!(body["usage"]["cache_read_input_tokens"], 20);
    assert_eq!(body["usage"]["output_tokens"], 9);
}

#[tokio::test]
async fn the_format_follows_the_path_even_for_the_same_turn() {
    let turn = Turn::text("same");
    let server = MockServer::start(Script::new().reply(turn.clone()).reply(turn));
    let mut client = Client::connect(server.addr()).await;
    let anthropic = client
        .post("/v1/messages", &anthropic_stream_request())
        .await;
    let openai = client
        .post(
            "/v1/chat/completions",
            &crate::client::openai_stream_request(),
        )
        .await;
    assert_eq!(names(&anthropic)[0], "message_start");
    assert_eq!(openai.sse()[0].0, None);
    assert_eq!(openai.sse_json()[0]["object"], "chat.completion.chunk");
}

#[tokio::test]
async fn a_redacted_thinking_block_follows_the_thinking_block() {
    let turn = Turn::text("ok")
        .reasoning("hm")
        .signature("sig")
        .redacted_thinking("opaque");
    let response = stream(turn, anthropic_stream_request()).await;
    let starts: Vec<Value> = response
        .sse_json()
        .into_iter()
        .filter(|e| e["type"] == "content_block_start")
        .map(|e| e["content_block"].clone())
        .collect();
    assert_eq!(
        starts,
        [
            json!({"type": "thinking", "thinking": ""}),
            json!({"type": "redacted_thinking", "data": "opaque"}),
            json!({"type": "text", "text": ""}),
        ]
    );
}
