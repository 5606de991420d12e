//! Decoding Anthropic streams and replies, and assembling the message.

use proptest::prelude::*;
use serde_json::json;

use crate::decode::test_support::{arb_pieces, decode, split, whole};
use crate::{
    LlmError, Part, ProviderKind, StopReason, StreamEvent, ToolArguments, ToolCall, Usage,
};

fn anthropic_event(name: &str, data: serde_json::Value) -> String {
    format!("event: {name}\ndata: {data}\n\n")
}

fn anthropic_stream(text: &[&str], args: &[&str]) -> String {
    let mut s = anthropic_event(
        "message_start",
        json!({"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],
        "usage":{"input_tokens":20,"cache_read_input_tokens":30,"cache_creation_input_tokens":5,"output_tokens":1}}}),
    );
    s += &anthropic_event(
        "content_block_start",
        json!({"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":""}}),
    );
    s += &anthropic_event(
        "content_block_delta",
        json!({"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"let me see"}}),
    );
    s += &anthropic_event(
        "content_block_delta",
        json!({"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"sig=="}}),
    );
    s += &anthropic_event(
        "content_block_stop",
        json!({"type":"content_block_stop","index":0}),
    );
    s += &anthropic_event(
        "content_block_start",
        json!({"type":"content_block_start","index":1,"content_block":{"type":"redacted_thinking","data":"EmwKAhgBEgy"}}),
    );
    s += &anthropic_event(
        "content_block_stop",
        json!({"type":"content_block_stop","index":1}),
    );
    s += &anthropic_event("ping", json!({"type":"ping"}));
    s += &anthropic_event(
        "content_block_start",
        json!({"type":"content_block_start","index":2,"content_block":{"type":"text","text":""}}),
    );
    for t in text {
        s += &anthropic_event(
            "content_block_delta",
            json!({"type":"content_block_delta","index":2,"delta":{"type":"text_delta","text":t}}),
        );
    }
    s += &anthropic_event(
        "content_block_stop",
        json!({"type":"content_block_stop","index":2}),
    );
    s += &anthropic_event(
        "content_block_start",
        json!({"type":"content_block_start","index":3,"content_block":{"type":"tool_use","id":"toolu_1","name":"read_file","input":{}}}),
    );
    for a in args {
        s += &anthropic_event(
            "content_block_delta",
            json!({"type":"content_block_delta","index":3,"delta":{"type":"input_json_delta","partial_json":a}}),
        );
    }
    s += &anthropic_event(
        "content_block_stop",
        json!({"type":"content_block_stop","index":3}),
    );
    s += &anthropic_event(
        "message_delta",
        json!({"type":"message_delta","delta":{"stop_reason":"tool_use","stop_sequence":null},"usage":{"output_tokens":42}}),
    );
    s += &anthropic_event("message_stop", json!({"type":"message_stop"}));
    s
}

fn expected_anthropic_message(text: &str) -> Vec<Part> {
    vec![
        Part::Reasoning {
            text: "let me see".into(),
            signature: Some("sig==".into()),
            redacted: None,
        },
        Part::Reasoning {
            text: String::new(),
            signature: None,
            redacted: Some("EmwKAhgBEgy".into()),
        },
        Part::Text { text: text.into() },
        Part::ToolCall(ToolCall {
            id: "toolu_1".into(),
            name: "read_file".into(),
            arguments: ToolArguments::Json {
                value: json!({"file_path": "a.txt"}),
            },
        }),
    ]
}

#[test]
fn anthropic_stream_assembles_thinking_text_tool_use_and_usage() {
    let body = anthropic_stream(&["Hel", "lo"], &["", "{\"file_path\"", ": \"a.txt\"}"]);
    let (events, response) = decode(ProviderKind::Anthropic, &[body.as_bytes()]).unwrap();
    assert_eq!(response.message.parts, expected_anthropic_message("Hello"));
    assert_eq!(response.stop_reason, StopReason::ToolUse);
    assert_eq!(
        response.usage,
        Some(Usage {
            prompt_tokens: 55,
            completion_tokens: 42,
            cached_prompt_tokens: 30,
            cache_creation_tokens: 5,
            cost_usd: None,
        })
    );
    assert!(events.contains(&StreamEvent::ToolCallEnd { index: 3 }));
}

#[test]
fn anthropic_error_event_is_classified() {
    let mut body = anthropic_stream(&["Hi"], &["{}"]);
    body.truncate(body.find("event: message_delta").unwrap());
    body += &anthropic_event(
        "error",
        json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}),
    );
    let err = whole(ProviderKind::Anthropic, &body).unwrap_err();
    assert!(matches!(err, LlmError::Overloaded { .. }), "{err:?}");
}

#[test]
fn anthropic_stream_without_message_stop_is_cut() {
    let mut body = anthropic_stream(&["Hi"], &["{}"]);
    body.truncate(body.find("event: message_stop").unwrap());
    let err = whole(ProviderKind::Anthropic, &body).unwrap_err();
    assert!(matches!(err, LlmError::Connection(_)), "{err:?}");
}

#[test]
fn anthropic_message_stop_without_its_blank_line_ends_the_stream() {
    let mut body = anthropic_stream(&["Hi"], &["{\"file_path\": \"a.txt\"}"]);
    assert_eq!(body.pop(), Some('\n'));
    let response = whole(ProviderKind::Anthropic, &body).unwrap();
    assert_eq!(response.message.parts, expected_anthropic_message("Hi"));
}

#[test]
fn anthropic_events_without_event_lines_and_unknown_types_are_handled() {
    let body: String = anthropic_stream(&["Hi"], &["{}"])
        .lines()
        .filter(|l| !l.starts_with("event:"))
        .map(|l| format!("{l}\n"))
        .collect::<String>()
        + "data: {\"type\":\"brand_new_event\"}\n\n";
    let response = whole(ProviderKind::Anthropic, &body).unwrap();
    assert_eq!(response.message.parts.len(), 4);
}

#[test]
fn anthropic_non_streaming_reply_is_accepted() {
    let body = json!({"id":"msg_1","type":"message","role":"assistant","content":[
        {"type":"text","text":"Reading."},
        {"type":"tool_use","id":"toolu_9","name":"read_file","input":{"file_path":"a.txt"}}],
        "stop_reason":"tool_use","usage":{"input_tokens":7,"output_tokens":3}})
    .to_string();
    let response = whole(ProviderKind::Anthropic, &body).unwrap();
    assert_eq!(response.message.parts.len(), 2);
    assert_eq!(response.usage.unwrap().prompt_tokens, 7);
    let err = whole(
        ProviderKind::Anthropic,
        r#"{"type":"error","error":{"type":"authentication_error","message":"bad key"}}"#,
    )
    .unwrap_err();
    assert!(matches!(err, LlmError::Auth(_)));
}

#[test]
fn anthropic_non_streaming_tool_input_that_is_not_an_object_is_kept_raw() {
    let reply = |input: serde_json::Value| {
        json!({"type":"message","role":"assistant","content":[
            {"type":"tool_use","id":"toolu_9","name":"bash","input":input}],
            "stop_reason":"tool_use","usage":{"input_tokens":7,"output_tokens":3}})
        .to_string()
    };
    let arguments = |input| {
        let response = whole(ProviderKind::Anthropic, &reply(input)).unwrap();
        match response.message.parts.as_slice() {
            [Part::ToolCall(call)] => call.arguments.clone(),
            other => panic!("{other:?}"),
        }
    };
    match arguments(json!("{\"command\": ls")) {
        ToolArguments::Invalid { raw, error } => {
            assert_eq!(raw, "{\"command\": ls");
            assert!(!error.is_empty());
        }
        other => panic!("expected invalid arguments, got {other:?}"),
    }
    assert_eq!(
        arguments(json!({"command": "ls"})),
        ToolArguments::Json {
            value: json!({"command": "ls"})
        }
    );
    assert_eq!(
        arguments(json!({})),
        ToolArguments::Json { value: json!({}) }
    );
}

proptest! {
    #[test]
    fn any_split_of_an_anthropic_stream_yields_the_same_message(
        text in arb_pieces(),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..16),
    ) {
        let text_refs: Vec<&str> = text.iter().map(String::as_str).collect();
        let body = anthropic_stream(&text_refs, &["{\"file_", "path\": \"a.txt\"}"]);
        let (_, response) = decode(ProviderKind::Anthropic, &split(body.as_bytes(), &cuts)).unwrap();
        let joined: String = text.concat();
        let mut expected = expected_anthropic_message(&joined);
        if joined.is_empty() {
            expected.remove(2);
        }
        prop_assert_eq!(response.message.parts, expected);
    }
}
