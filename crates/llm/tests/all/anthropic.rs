//! The Messages client against the mock server: events, headers, tool results, usage.

use rein_llm::{Message, Part, Role, StopReason, ToolArguments, ToolCall, ToolResult, Usage};
use rein_testkit::{MockServer, MockToolCall, MockUsage, Reply, Script, Turn};
use serde_json::json;

use crate::support::{anthropic, request, run};

#[tokio::test]
async fn streams_thinking_text_and_tool_use() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::new()
                .reasoning_chunks(["Hm, ", "a file."])
                .signature("sig-1")
                .chunks(["Rea", "ding."])
                .tool_call(
                    MockToolCall::new("toolu_1", "read_file", r#"{"file_path":"a.txt"}"#)
                        .split_every(4),
                )
                .usage(MockUsage::new(100, 20).cached(60).cache_creation(30))
                .ping(),
        ),
    );
    let outcome = run(
        &*anthropic(&server.base_url()),
        &request("claude-sonnet-4-5"),
    )
    .await;
    let response = outcome.response();
    assert_eq!(
        response.message.parts[0],
        Part::Reasoning {
            text: "Hm, a file.".into(),
            signature: Some("sig-1".into()),
            redacted: None,
        }
    );
    assert_eq!(outcome.text(), "Reading.");
    assert_eq!(
        outcome.calls()[0].arguments,
        ToolArguments::Json {
            value: json!({"file_path": "a.txt"})
        }
    );
    assert_eq!(
        outcome.early.len(),
        1,
        "the call is reported at its content_block_stop"
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Some(Usage {
            prompt_tokens: 100,
            completion_tokens: 20,
            cached_prompt_tokens: 60,
            cache_creation_tokens: 30,
            cost_usd: None,
        })
    );

    let sent = server.last_request().unwrap();
    assert_eq!(sent.path, "/v1/messages");
    assert_eq!(sent.header("x-api-key"), Some("test-key"));
    assert_eq!(sent.header("anthropic-version"), Some("2023-06-01"));
    assert!(sent.header("authorization").is_none());
    assert_eq!(sent.body["system"][0]["text"], "You are terse.");
    assert_eq!(sent.body["stream"], true);
    assert!(sent.body["max_tokens"].as_u64().unwrap() > 0);
    assert_eq!(sent.body["tools"][0]["input_schema"]["type"], "object");
    assert_eq!(
        sent.body["messages"],
        json!([{"role": "user", "content": [
            {"type": "text", "text": "read a.txt", "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}

#[tokio::test]
async fn tool_results_go_back_as_blocks_of_one_user_message() {
    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let mut req = request("claude-haiku-4-5");
    let call = |id: &str| {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: ToolArguments::Json {
                value: json!({"file_path": id}),
            },
        })
    };
    let result = |id: &str, is_error| {
        Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: format!("contents of {id}"),
            is_error,
            images: Vec::new(),
        })
    };
    req.messages.push(Message {
        role: Role::Assistant,
        parts: vec![call("toolu_1"), call("toolu_2")],
    });
    req.messages.push(Message {
        role: Role::Tool,
        parts: vec![result("toolu_1", false), result("toolu_2", true)],
    });
    let outcome = run(&*anthropic(&server.base_url()), &req).await;
    assert_eq!(outcome.text(), "done");

    let sent = server.last_request().unwrap();
    let messages = sent.body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 3);
    assert_eq!(
        messages[1]["content"][1],
        json!({"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"file_path": "toolu_2"}})
    );
    assert_eq!(
        messages[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "contents of toolu_1"},
            {"type": "tool_result", "tool_use_id": "toolu_2", "content": "contents of toolu_2", "is_error": true,
             "cache_control": {"type": "ephemeral"}}
        ]})
    );
}

#[tokio::test]
async fn a_non_streaming_reply_is_accepted() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("whole")
                .tool_call(MockToolCall::new("t1", "glob", r#"{"pattern":"*"}"#))
                .non_streaming(),
        ),
    );
    let outcome = run(
        &*anthropic(&server.base_url()),
        &request("claude-sonnet-4-5"),
    )
    .await;
    assert_eq!(outcome.text(), "whole");
    assert_eq!(outcome.calls()[0].id, "t1");
}

#[tokio::test]
async fn malformed_arguments_are_kept_raw_and_flagged() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::new()
                .tool_call(MockToolCall::new("t1", "bash", r#"{"command": "ls""#).split_every(3)),
        ),
    );
    let outcome = run(
        &*anthropic(&server.base_url()),
        &request("claude-sonnet-4-5"),
    )
    .await;
    assert!(
        matches!(&outcome.calls()[0].arguments, ToolArguments::Invalid { raw, .. } if raw == r#"{"command": "ls""#)
    );
}

#[tokio::test]
async fn a_non_streamed_tool_input_that_is_not_an_object_is_flagged() {
    // The mock sends arguments that are not JSON as a string `input`.
    let server = MockServer::start(
        Script::new().reply(
            Turn::new()
                .tool_call(MockToolCall::new("t1", "bash", r#"{"command": "ls""#))
                .non_streaming(),
        ),
    );
    let outcome = run(
        &*anthropic(&server.base_url()),
        &request("claude-sonnet-4-5"),
    )
    .await;
    match &outcome.calls()[0].arguments {
        ToolArguments::Invalid { raw, error } => {
            assert_eq!(raw, r#"{"command": "ls""#);
            assert!(!error.is_empty());
        }
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[tokio::test]
async fn a_message_stop_without_its_blank_line_still_ends_the_stream() {
    let events = [
        (
            "message_start",
            json!({"type": "message_start", "message": {"usage": {"input_tokens": 3, "output_tokens": 1}}}),
        ),
        (
            "content_block_start",
            json!({"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ),
        (
            "content_block_delta",
            json!({"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "Hello"}}),
        ),
        (
            "content_block_stop",
            json!({"type": "content_block_stop", "index": 0}),
        ),
        (
            "message_delta",
            json!({"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
        ),
        ("message_stop", json!({"type": "message_stop"})),
    ];
    let mut body: String = events
        .iter()
        .map(|(name, data)| format!("event: {name}\ndata: {data}\n\n"))
        .collect();
    // The server ends the body right after the last event's data line.
    body.pop();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::http(200, body).header("content-type", "text/event-stream"))
            .reply(Turn::text("a retry")),
    );
    let outcome = run(
        &*anthropic(&server.base_url()),
        &request("claude-sonnet-4-5"),
    )
    .await;
    assert_eq!(outcome.text(), "Hello");
    assert!(outcome.retries().is_empty(), "{:?}", outcome.events);
    assert_eq!(server.request_count(), 1);
    assert_eq!(outcome.response().stop_reason, StopReason::EndTurn);
}
