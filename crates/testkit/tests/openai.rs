//! The OpenAI Chat Completions rendering.

use rein_testkit::{MockServer, MockStopReason, MockToolCall, MockUsage, Script, Turn, UsageChunk};
use serde_json::{Value, json};

use crate::client::{Client, Ending, openai_stream_request};

async fn stream(turn: Turn, request: Value) -> crate::client::Response {
    let server = MockServer::start(Script::new().reply(turn));
    let mut client = Client::connect(server.addr()).await;
    client.post("/v1/chat/completions", &request).await
}

fn deltas(chunks: &[Value]) -> Vec<Value> {
    chunks
        .iter()
        .filter(|chunk| !chunk["choices"].as_array().unwrap().is_empty())
        .map(|chunk| chunk["choices"][0]["delta"].clone())
        .collect()
}

#[tokio::test]
async fn text_streams_as_one_chunk_per_piece_then_done() {
    let response = stream(
        Turn::text("Hello ").chunks(["Hel", "lo "]),
        openai_stream_request(),
    )
    .await;
    assert_eq!(response.status, 200);
    assert_eq!(response.ending(), Ending::Complete);
    assert_eq!(response.header("content-type"), Some("text/event-stream"));
    assert_eq!(response.header("transfer-encoding"), Some("chunked"));
    // Every frame is exactly `data: <json>\n\n`, sent in its own HTTP chunk.
    for chunk in &response.chunks {
        let text = std::str::from_utf8(chunk).unwrap();
        assert!(
            text.starts_with("data: ") && text.ends_with("\n\n"),
            "{text:?}"
        );
        assert_eq!(text.matches('\n').count(), 2, "{text:?}");
    }
    let events = response.sse();
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks = response.sse_json();
    assert_eq!(chunks.len(), 4, "role, two pieces, finish: {chunks:#?}");
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], "gpt-test");
        assert!(chunk.get("usage").is_none(), "usage was not asked for");
    }
    let deltas = deltas(&chunks);
    assert_eq!(deltas[0]["role"], "assistant");
    assert_eq!(deltas[1], json!({ "content": "Hel" }));
    assert_eq!(deltas[2], json!({ "content": "lo " }));
    assert_eq!(chunks[3]["choices"][0]["finish_reason"], "stop");
    assert!(
        chunks[..3]
            .iter()
            .all(|chunk| chunk["choices"][0]["finish_reason"].is_null())
    );
}

#[tokio::test]
async fn usage_comes_in_its_own_chunk_when_asked() {
    let mut request = openai_stream_request();
    request["stream_options"] = json!({ "include_usage": true });
    let response = stream(
        Turn::text("x").usage(MockUsage::new(10, 5).cached(3)),
        request.clone(),
    )
    .await;
    let chunks = response.sse_json();
    let usage_chunk = chunks.last().unwrap();
    assert_eq!(usage_chunk["choices"], json!([]));
    assert_eq!(
        usage_chunk["usage"],
        json!({
            "prompt_tokens": 10,
            "completion_tokens": 5,
            "total_tokens": 15,
            "prompt_tokens_details": { "cached_tokens": 3 },
        })
    );
    let priced = stream(
        Turn::text("x").usage(MockUsage::new(10, 5).cost(0.0125)),
        request,
    )
    .await;
    let chunks_with_cost = priced.sse_json();
    assert_eq!(
        chunks_with_cost.last().unwrap()["usage"]["cost"],
        json!(0.0125),
        "a gateway's usage carries the price"
    );
    // Like OpenAI, the other chunks carry `"usage": null` once usage was asked for.
    assert!(
        chunks[..chunks.len() - 1]
            .iter()
            .all(|chunk| chunk["usage"].is_null() && chunk.get("usage").is_some())
    );
}

#[tokio::test]
async fn usage_placement_can_mimic_other_servers() {
    let mut asked = openai_stream_request();
    asked["stream_options"] = json!({ "include_usage": true });
    let never = stream(
        Turn::text("x").usage_chunk(UsageChunk::Never),
        asked.clone(),
    )
    .await;
    assert!(
        never
            .sse_json()
            .iter()
            .all(|chunk| chunk["usage"].is_null())
    );

    let in_finish = stream(
        Turn::text("x")
            .usage(MockUsage::new(4, 2))
            .usage_chunk(UsageChunk::InFinishChunk),
        openai_stream_request(),
    )
    .await;
    let chunks = in_finish.sse_json();
    let finish = chunks.last().unwrap();
    assert_eq!(finish["choices"][0]["finish_reason"], "stop");
    assert_eq!(finish["usage"]["total_tokens"], 6);

    let always = stream(
        Turn::text("x").usage_chunk(UsageChunk::Always),
        openai_stream_request(),
    )
    .await;
    assert_eq!(always.sse_json().last().unwrap()["choices"], json!([]));
}

#[tokio::test]
async fn tool_call_arguments_arrive_in_fragments_with_id_and_name_first() {
    let arguments = r#"{"file_path":"a.txt"}"#;
    let turn = Turn::new()
        .tool_call(MockToolCall::new("call_1", "read_file", arguments).split_every(5))
        .tool_call(MockToolCall::new("call_2", "glob", r#"{"pattern":"*"}"#))
        .first_index(2);
    let response = stream(turn, openai_stream_request()).await;
    let chunks = response.sse_json();
    let calls: Vec<Value> = deltas(&chunks)
        .iter()
        .filter_map(|delta| delta.get("tool_calls"))
        .map(|calls| {
            assert_eq!(calls.as_array().unwrap().len(), 1);
            calls[0].clone()
        })
        .collect();
    let first: Vec<&Value> = calls.iter().filter(|call| call["index"] == 2).collect();
    assert_eq!(first.len(), arguments.len().div_ceil(5));
    assert_eq!(first[0]["id"], "call_1");
    assert_eq!(first[0]["type"], "function");
    assert_eq!(first[0]["function"]["name"], "read_file");
    for later in &first[1..] {
        assert!(
            later.get("id").is_none() && later["function"].get("name").is_none(),
            "{later}"
        );
    }
    let joined: String = first
        .iter()
        .map(|call| call["function"]["arguments"].as_str().unwrap())
        .collect();
    assert_eq!(joined, arguments);
    assert!(first.iter().all(|call| {
        call["function"]["arguments"]
            .as_str()
            .unwrap()
            .chars()
            .count()
            <= 5
    }));

    let second: Vec<&Value> = calls.iter().filter(|call| call["index"] == 3).collect();
    assert_eq!(second.len(), 1);
    assert_eq!(second[0]["id"], "call_2");
    assert_eq!(second[0]["function"]["arguments"], r#"{"pattern":"*"}"#);
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls"
    );
}

#[tokio::test]
async fn calls_sharing_one_index_stream_whole_with_their_ids() {
    let turn = Turn::new()
        .tool_call(MockToolCall::new("call_1", "read_file", r#"{"file_path":"a"}"#).split_every(2))
        .tool_call(MockToolCall::new("call_2", "glob", r#"{"pattern":"*"}"#))
        .calls_share_index();
    let response = stream(turn, openai_stream_request()).await;
    let calls: Vec<Value> = deltas(&response.sse_json())
        .iter()
        .filter_map(|delta| delta.get("tool_calls"))
        .map(|calls| calls[0].clone())
        .collect();
    assert_eq!(
        calls,
        vec![
            json!({"index": 0, "id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": r#"{"file_path":"a"}"#}}),
            json!({"index": 0, "id": "call_2", "type": "function",
                "function": {"name": "glob", "arguments": r#"{"pattern":"*"}"#}}),
        ]
    );
}

#[tokio::test]
async fn explicit_fragments_and_reasoning_content() {
    let turn = Turn::text("done")
        .reasoning_chunks(["think ", "hard"])
        .tool_call(MockToolCall::new("c", "bash", "").chunks([r#"{"comm"#, r#"and":"ls"}"#]))
        .stop_reason(MockStopReason::MaxTokens);
    let response = stream(turn, openai_stream_request()).await;
    let deltas = deltas(&response.sse_json());
    assert_eq!(deltas[1], json!({ "reasoning_content": "think " }));
    assert_eq!(deltas[2], json!({ "reasoning_content": "hard" }));
    assert_eq!(deltas[3], json!({ "content": "done" }));
    assert_eq!(
        deltas[4]["tool_calls"][0]["function"]["arguments"],
        r#"{"comm"#
    );
    assert_eq!(
        deltas[5]["tool_calls"][0]["function"]["arguments"],
        r#"and":"ls"}"#
    );
    let chunks = response.sse_json();
    assert_eq!(
        chunks.last().unwrap()["choices"][0]["finish_reason"],
        "length"
    );
}

#[tokio::test]
async fn a_request_without_stream_gets_one_completion_body() {
    let turn = Turn::text("Hi there")
        .reasoning("hmm")
        .tool_call(MockToolCall::new("call_9", "glob", r#"{"pattern":"*.rs"}"#).split_every(2))
        .usage(MockUsage::new(7, 3).cached(1));
    let request = json!({ "model": "m", "messages": [] });
    let response = stream(turn.clone(), request).await;
    assert_eq!(response.header("content-type"), Some("application/json"));
    let body = response.json();
    assert_eq!(body["object"], "chat.completion");
    let message = &body["choices"][0]["message"];
    assert_eq!(message["content"], "Hi there");
    assert_eq!(message["reasoning_content"], "hmm");
    assert_eq!(message["tool_calls"][0]["id"], "call_9");
    assert_eq!(
        message["tool_calls"][0]["function"]["arguments"],
        r#"{"pattern":"*.rs"}"#
    );
    assert_eq!(body["choices"][0]["finish_reason"], "tool_calls");
    assert_eq!(body["usage"]["prompt_tokens_details"]["cached_tokens"], 1);

    // non_streaming() wins over `"stream": true`.
    let forced = stream(turn.non_streaming(), openai_stream_request()).await;
    assert_eq!(forced.json()["object"], "chat.completion");
}

#[tokio::test]
async fn thinking_blocks_stream_as_litellm_relays_claude() {
    let turn = Turn::text("ok")
        .reasoning_chunks(["a", "b"])
        .signature("sig")
        .redacted_thinking("opaque")
        .thinking_blocks();
    let response = stream(turn, openai_stream_request()).await;
    let reasoning: Vec<Value> = deltas(&response.sse_json())
        .into_iter()
        .filter(|d| d.get("thinking_blocks").is_some())
        .collect();
    assert_eq!(
        reasoning,
        [
            json!({"reasoning_content": "a", "thinking_blocks": [{"type": "thinking", "thinking": "a", "signature": ""}]}),
            json!({"reasoning_content": "b", "thinking_blocks": [{"type": "thinking", "thinking": "b", "signature": ""}]}),
            json!({"reasoning_content": "", "thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "sig"}]}),
            json!({"thinking_blocks": [{"type": "redacted_thinking", "data": "opaque"}]}),
        ]
    );
}
