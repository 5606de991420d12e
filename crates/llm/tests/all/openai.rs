//! The Chat Completions client against the mock server: deltas, tool calls, usage, bodies.

use rein_llm::{Part, StopReason, StreamEvent, ToolArguments, Usage};
use rein_testkit::{MockServer, MockToolCall, MockUsage, Reply, Script, Turn, UsageChunk};
use serde_json::json;

use crate::support::{openai, request, run};

#[tokio::test]
async fn split_deltas_and_tool_calls_assemble_by_index() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::new()
                .reasoning_chunks(["Let me ", "look."])
                .chunks(["Rea", "ding ", "it."])
                .tool_call(
                    MockToolCall::new("call_a", "read_file", r#"{"file_path":"a.txt"}"#)
                        .split_every(3),
                )
                .tool_call(MockToolCall::new(
                    "call_b",
                    "read_file",
                    r#"{"file_path":"b.txt"}"#,
                ))
                .first_index(2)
                .usage(MockUsage::new(10, 5).cached(3)),
        ),
    );
    let outcome = run(&*openai(&server.openai_base_url()), &request("gpt-4o")).await;
    let response = outcome.response();

    assert_eq!(outcome.text(), "Reading it.");
    assert!(
        matches!(&response.message.parts[0], Part::Reasoning { text, .. } if text == "Let me look.")
    );
    let calls = outcome.calls();
    assert_eq!(calls.len(), 2);
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str()),
        ("call_a", "read_file")
    );
    assert_eq!(
        calls[0].arguments,
        ToolArguments::Json {
            value: json!({"file_path": "a.txt"})
        }
    );
    assert_eq!(
        calls[1].arguments,
        ToolArguments::Json {
            value: json!({"file_path": "b.txt"})
        }
    );
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Some(Usage {
            prompt_tokens: 10,
            completion_tokens: 5,
            cached_prompt_tokens: 3,
            cache_creation_tokens: 0,
            cost_usd: None,
        })
    );
    // Both calls were reported before the message was finished, in order.
    let early: Vec<&str> = outcome.early.iter().map(|c| c.id.as_str()).collect();
    assert_eq!(early, vec!["call_a", "call_b"]);
    assert!(
        outcome
            .events
            .contains(&StreamEvent::ToolCallEnd { index: 2 })
    );

    let sent = server.last_request().unwrap();
    assert_eq!(sent.path, "/v1/chat/completions");
    assert_eq!(sent.header("authorization"), Some("Bearer test-key"));
    assert_eq!(sent.body["model"], "gpt-4o");
    assert_eq!(sent.body["stream"], true);
    assert_eq!(sent.body["stream_options"]["include_usage"], true);
    assert_eq!(
        sent.body["messages"][0],
        json!({"role": "system", "content": "You are terse."})
    );
    assert_eq!(
        sent.body["messages"][1],
        json!({"role": "user", "content": "read a.txt"})
    );
    assert_eq!(sent.body["tools"][0]["type"], "function");
    assert_eq!(sent.body["tools"][0]["function"]["name"], "read_file");
}

#[tokio::test]
async fn usage_is_taken_from_whichever_chunk_carries_it() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("hi")
                .usage(MockUsage::new(7, 2).cached(1))
                .usage_chunk(UsageChunk::InFinishChunk),
        ),
    );
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    let usage = outcome.response().usage.unwrap();
    assert_eq!(
        (
            usage.prompt_tokens,
            usage.completion_tokens,
            usage.cached_prompt_tokens
        ),
        (7, 2, 1)
    );
}

#[tokio::test]
async fn malformed_arguments_are_kept_raw_and_flagged() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(
                MockToolCall::new("c1", "bash", r#"{"command": ls -la"#).split_every(4),
            )),
    );
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    match &outcome.calls()[0].arguments {
        ToolArguments::Invalid { raw, error } => {
            assert_eq!(raw, r#"{"command": ls -la"#);
            assert!(!error.is_empty());
        }
        other => panic!("expected invalid arguments, got {other:?}"),
    }
}

#[tokio::test]
async fn empty_arguments_mean_an_empty_object() {
    let server = MockServer::start(Script::new().reply(Turn::new().tool_call(MockToolCall::new(
        "c1",
        "todo_read",
        "",
    ))));
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    assert_eq!(
        outcome.calls()[0].arguments,
        ToolArguments::Json { value: json!({}) }
    );
}

#[tokio::test]
async fn a_non_streaming_json_reply_is_accepted() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("whole answer")
                .tool_call(MockToolCall::new("c1", "glob", r#"{"pattern":"*.rs"}"#))
                .usage(MockUsage::new(3, 4))
                .non_streaming(),
        ),
    );
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    assert_eq!(outcome.text(), "whole answer");
    assert_eq!(outcome.calls()[0].name, "glob");
    assert_eq!(outcome.response().usage.unwrap().completion_tokens, 4);
}

#[tokio::test]
async fn lines_that_are_not_sse_fields_are_ignored() {
    let server = MockServer::start(
        Script::new().reply(
            Turn::new()
                .chunks(["a", "b"])
                .malformed_line("this line has no colon")
                .malformed_line_at(2, ": a comment"),
        ),
    );
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    assert_eq!(outcome.text(), "ab");
    assert!(outcome.retries().is_empty());
}

#[tokio::test]
async fn consecutive_calls_reuse_the_connection() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("one"))
            .reply(Turn::text("two")),
    );
    let provider = openai(&server.openai_base_url());
    assert_eq!(run(&*provider, &request("m")).await.text(), "one");
    assert_eq!(run(&*provider, &request("m")).await.text(), "two");
    let connections: Vec<u64> = server.requests().iter().map(|r| r.connection).collect();
    assert_eq!(
        connections[0], connections[1],
        "a second TCP connection was opened"
    );
}

#[tokio::test]
async fn a_done_without_its_blank_line_still_ends_the_stream() {
    // No `finish_reason`: only `[DONE]` says the answer is complete, and the server ends the
    // body right after its line.
    let mut body: String = ["Hel", "lo"]
        .iter()
        .map(|text| {
            let chunk = json!({"choices": [{"index": 0, "delta": {"content": text}}]});
            format!("data: {chunk}\n\n")
        })
        .collect();
    body.push_str("data: [DONE]\n");
    let server = MockServer::start(
        Script::new()
            .reply(Reply::http(200, body).header("content-type", "text/event-stream"))
            .reply(Turn::text("a retry")),
    );
    let outcome = run(&*openai(&server.openai_base_url()), &request("m")).await;
    assert_eq!(outcome.text(), "Hello");
    assert!(outcome.retries().is_empty(), "{:?}", outcome.events);
    assert_eq!(server.request_count(), 1);
}
