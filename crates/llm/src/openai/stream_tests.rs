//! Decoding OpenAI streams and replies, and assembling the message.

use proptest::prelude::*;
use serde_json::json;

use crate::decode::test_support::{arb_pieces, decode, split, whole};
use crate::{
    Assembler, LlmError, Part, ProviderKind, StopReason, StreamDecoder, StreamEvent, ToolArguments,
    ToolCall, Usage,
};

fn sse(data: &[serde_json::Value]) -> String {
    data.iter().map(|d| format!("data: {d}\n\n")).collect()
}

fn openai_chunk(delta: serde_json::Value, finish: Option<&str>) -> serde_json::Value {
    json!({"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"m",
        "choices":[{"index":0,"delta":delta,"finish_reason":finish}]})
}

/// Text, reasoning, two tool calls starting at index 2 (id and name only in the first
/// fragment), usage in a trailing chunk with empty choices.
fn openai_stream(text: &[&str], args_1: &[&str], args_2: &str) -> String {
    let mut chunks = vec![openai_chunk(
        json!({"role":"assistant","reasoning_content":"think"}),
        None,
    )];
    for t in text {
        chunks.push(openai_chunk(json!({"content": t}), None));
    }
    chunks.push(openai_chunk(
        json!({"tool_calls":[{"index":2,"id":"call_a","type":"function","function":{"name":"read_file","arguments":""}}]}),
        None,
    ));
    for a in args_1 {
        chunks.push(openai_chunk(
            json!({"tool_calls":[{"index":2,"function":{"arguments":a}}]}),
            None,
        ));
    }
    chunks.push(openai_chunk(
        json!({"tool_calls":[{"index":3,"id":"call_b","type":"function","function":{"name":"glob","arguments":args_2}}]}),
        None,
    ));
    chunks.push(openai_chunk(json!({}), Some("tool_calls")));
    chunks.push(json!({"id":"chatcmpl-1","choices":[],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_tokens_details":{"cached_tokens":3}}}));
    let mut body = sse(&chunks);
    body.push_str("data: [DONE]\n\n");
    body
}

fn expected_openai_message(text: &str) -> Vec<Part> {
    vec![
        Part::Reasoning {
            text: "think".into(),
            signature: None,
            redacted: None,
        },
        Part::Text { text: text.into() },
        Part::ToolCall(ToolCall {
            id: "call_a".into(),
            name: "read_file".into(),
            arguments: ToolArguments::Json {
                value: json!({"file_path": "a.txt"}),
            },
        }),
        Part::ToolCall(ToolCall {
            id: "call_b".into(),
            name: "glob".into(),
            arguments: ToolArguments::Json {
                value: json!({"pattern": "*.rs"}),
            },
        }),
    ]
}

#[test]
fn openai_stream_assembles_text_reasoning_calls_and_usage() {
    let body = openai_stream(
        &["Hel", "lo ", "there"],
        &["{\"file_", "path\":", "\"a.txt\"}"],
        "{\"pattern\":\"*.rs\"}",
    );
    let (events, response) = decode(ProviderKind::OpenAi, &[body.as_bytes()]).unwrap();
    assert_eq!(
        response.message.parts,
        expected_openai_message("Hello there")
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
    // Each call is ended, the first as soon as the second starts, and Finish comes last.
    let ends: Vec<usize> = events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallEnd { index } => Some(*index),
            _ => None,
        })
        .collect();
    assert_eq!(ends, vec![2, 3]);
    assert!(matches!(events.last(), Some(StreamEvent::Finish { .. })));
}

#[test]
fn openai_calls_are_reported_as_soon_as_the_next_one_starts() {
    let body = openai_stream(
        &["x"],
        &["{\"file_path\":\"a.txt\"}"],
        "{\"pattern\":\"*.rs\"}",
    );
    let mut decoder = StreamDecoder::new(ProviderKind::OpenAi);
    let mut assembler = Assembler::new();
    let cut = body.find("call_b").unwrap();
    let mut events = Vec::new();
    decoder.feed(&body.as_bytes()[..cut], &mut events).unwrap();
    let early: Vec<ToolCall> = events.iter().flat_map(|e| assembler.push(e)).collect();
    assert!(early.is_empty(), "nothing is complete before call_b starts");
    events.clear();
    decoder.feed(&body.as_bytes()[cut..], &mut events).unwrap();
    let reported: Vec<String> = events
        .iter()
        .flat_map(|e| assembler.push(e))
        .map(|c| c.id)
        .collect();
    assert_eq!(reported, vec!["call_a", "call_b"]);
}

#[test]
fn openai_arguments_whole_in_one_chunk_and_empty_arguments() {
    let body = sse(&[
        openai_chunk(
            json!({"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"todo","arguments":""}}]}),
            None,
        ),
        openai_chunk(
            json!({"tool_calls":[{"index":1,"id":"c2","type":"function","function":{"name":"bash","arguments":"{\"command\":\"ls\"}"}}]}),
            Some("tool_calls"),
        ),
    ]) + "data: [DONE]\n\n";
    let response = whole(ProviderKind::OpenAi, &body).unwrap();
    let args: Vec<&ToolArguments> = response
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some(&c.arguments),
            _ => None,
        })
        .collect();
    assert_eq!(args[0], &ToolArguments::Json { value: json!({}) });
    assert_eq!(
        args[1],
        &ToolArguments::Json {
            value: json!({"command": "ls"})
        }
    );
}

#[test]
fn openai_malformed_arguments_are_kept_raw_and_flagged() {
    let body = sse(&[openai_chunk(
        json!({"tool_calls":[{"index":0,"id":"c1","function":{"name":"bash","arguments":"{\"command\": ls"}}]}),
        Some("tool_calls"),
    )]);
    let response = whole(ProviderKind::OpenAi, &body).unwrap();
    match &response.message.parts[0] {
        Part::ToolCall(ToolCall {
            arguments: ToolArguments::Invalid { raw, error },
            ..
        }) => {
            assert_eq!(raw, "{\"command\": ls");
            assert!(!error.is_empty());
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn openai_calls_without_index_or_id_still_assemble() {
    let body = sse(&[
        openai_chunk(
            json!({"tool_calls":[{"id":"a","function":{"name":"x","arguments":"{\"n\":"}}]}),
            None,
        ),
        openai_chunk(
            json!({"tool_calls":[{"function":{"arguments":"1}"}}]}),
            None,
        ),
        openai_chunk(
            json!({"tool_calls":[{"id":"b","function":{"name":"y","arguments":"{}"}}]}),
            None,
        ),
        openai_chunk(
            json!({"tool_calls":[{"index":5,"function":{"name":"z","arguments":"{}"}}]}),
            Some("stop"),
        ),
    ]);
    let response = whole(ProviderKind::OpenAi, &body).unwrap();
    let calls: Vec<(String, String)> = response
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some((c.id.clone(), c.name.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            ("a".into(), "x".into()),
            ("b".into(), "y".into()),
            ("call_rein_5".into(), "z".into())
        ]
    );
    // "stop" after tool calls is read as a request for tool results.
    assert_eq!(response.stop_reason, StopReason::ToolUse);
}

#[test]
fn openai_whole_calls_all_at_index_0_are_separate_calls() {
    // What Ollama streams: each call whole in one chunk, every one at index 0.
    let body = sse(&[
        openai_chunk(
            json!({"tool_calls":[{"index":0,"id":"call_x1","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":\"a.txt\"}"}}]}),
            None,
        ),
        openai_chunk(
            json!({"tool_calls":[{"index":0,"id":"call_x2","type":"function","function":{"name":"read_file","arguments":"{\"file_path\":\"b.txt\"}"}}]}),
            None,
        ),
        openai_chunk(json!({}), Some("tool_calls")),
    ]) + "data: [DONE]\n\n";
    let (events, response) = decode(ProviderKind::OpenAi, &[body.as_bytes()]).unwrap();
    let ends = events
        .iter()
        .filter(|e| matches!(e, StreamEvent::ToolCallEnd { index: 0 }))
        .count();
    assert_eq!(ends, 2, "each call is ended: {events:?}");
    let calls: Vec<(String, ToolArguments)> = response
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::ToolCall(c) => Some((c.id.clone(), c.arguments.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        calls,
        vec![
            (
                "call_x1".to_owned(),
                ToolArguments::Json {
                    value: json!({"file_path": "a.txt"})
                }
            ),
            (
                "call_x2".to_owned(),
                ToolArguments::Json {
                    value: json!({"file_path": "b.txt"})
                }
            ),
        ]
    );
}

#[test]
fn openai_thinking_blocks_from_litellm_keep_their_signatures() {
    // LiteLLM relaying Claude: each piece both in `reasoning_content` and in a block, the
    // signature alone in a block, a redacted block whole.
    let piece = |text: &str| {
        openai_chunk(
            json!({"reasoning_content": text, "thinking_blocks": [{"type": "thinking", "thinking": text, "signature": ""}]}),
            None,
        )
    };
    let body = sse(&[
        piece("Let me "),
        piece("read."),
        openai_chunk(
            json!({"reasoning_content": "", "thinking_blocks": [{"type": "thinking", "thinking": "", "signature": "sig-A"}]}),
            None,
        ),
        openai_chunk(
            json!({"thinking_blocks": [{"type": "redacted_thinking", "data": "opaque"}]}),
            None,
        ),
        openai_chunk(
            json!({"tool_calls":[{"index":0,"id":"toolu_1","type":"function","function":{"name":"read_file","arguments":"{}"}}]}),
            Some("tool_calls"),
        ),
    ]) + "data: [DONE]\n\n";
    let response = whole(ProviderKind::OpenAi, &body).unwrap();
    assert_eq!(
        response.message.parts[..2],
        [
            Part::Reasoning {
                text: "Let me read.".into(),
                signature: Some("sig-A".into()),
                redacted: None,
            },
            Part::Reasoning {
                text: String::new(),
                signature: None,
                redacted: Some("opaque".into()),
            },
        ]
    );
    // A whole reply lists the blocks in its message.
    let reply = json!({"choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"Hi",
        "reasoning_content":"onetwo",
        "thinking_blocks":[{"type":"thinking","thinking":"one","signature":"s1"},{"type":"thinking","thinking":"two","signature":"s2"}]}}]});
    let response = whole(ProviderKind::OpenAi, &reply.to_string()).unwrap();
    let signed: Vec<(&str, Option<&str>)> = response
        .message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Reasoning {
                text, signature, ..
            } => Some((text.as_str(), signature.as_deref())),
            _ => None,
        })
        .collect();
    assert_eq!(signed, [("one", Some("s1")), ("two", Some("s2"))]);
}

#[test]
fn openai_non_streaming_reply_is_accepted() {
    let body = json!({"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"Hi","reasoning_content":"r",
        "tool_calls":[{"id":"c1","type":"function","function":{"name":"glob","arguments":"{\"pattern\":\"*\"}"}}]},"finish_reason":"tool_calls"}],
        "usage":{"prompt_tokens":4,"completion_tokens":2,"prompt_cache_hit_tokens":1}}).to_string();
    let response = whole(ProviderKind::OpenAi, &format!("\n{body}")).unwrap();
    assert_eq!(response.message.parts.len(), 3);
    assert_eq!(response.usage.unwrap().cached_prompt_tokens, 1);
    assert_eq!(response.stop_reason, StopReason::ToolUse);
}

#[test]
fn openai_stream_cut_before_the_end_is_a_retryable_error() {
    let body = openai_stream(&["Hello"], &["{}"], "{}");
    let cut = body.find("\"finish_reason\":\"tool_calls\"").unwrap() - 40;
    let err = decode(ProviderKind::OpenAi, &[&body.as_bytes()[..cut]]).unwrap_err();
    assert!(matches!(err, LlmError::Connection(_)), "{err:?}");
    assert!(err.is_retryable());
}

#[test]
fn openai_done_without_its_blank_line_ends_the_stream() {
    let body = sse(&[openai_chunk(json!({"content": "Hi"}), None)]) + "data: [DONE]\n";
    let response = whole(ProviderKind::OpenAi, &body).unwrap();
    assert_eq!(
        response.message.parts,
        vec![Part::Text { text: "Hi".into() }]
    );
    assert_eq!(response.stop_reason, StopReason::EndTurn);
}

#[test]
fn openai_error_inside_the_stream_is_classified() {
    let body = "data: {\"error\":{\"message\":\"This model's maximum context length is 8192 tokens\",\"code\":\"context_length_exceeded\"}}\n\n";
    let err = whole(ProviderKind::OpenAi, body).unwrap_err();
    assert!(matches!(err, LlmError::ContextTooLong(_)), "{err:?}");
    let body =
        "event: error\ndata: {\"message\":\"upstream overloaded\",\"type\":\"server_error\"}\n\n";
    assert!(
        whole(ProviderKind::OpenAi, body)
            .unwrap_err()
            .is_retryable()
    );
}

#[test]
fn openai_garbage_data_is_a_protocol_error_not_a_panic() {
    let err = whole(ProviderKind::OpenAi, "data: {not json\n\n").unwrap_err();
    assert!(matches!(err, LlmError::Protocol(_)), "{err:?}");
    let err = whole(ProviderKind::OpenAi, "{\"choices\":[]}").unwrap_err();
    assert!(matches!(err, LlmError::Protocol(_)), "{err:?}");
}

proptest! {
    #[test]
    fn any_split_of_an_openai_stream_yields_the_same_message(
        text in arb_pieces(),
        arg_cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..4),
        cuts in proptest::collection::vec(any::<prop::sample::Index>(), 0..16),
    ) {
        let args = "{\"file_path\":\"a.txt\"}";
        let arg_pieces: Vec<&str> = split(args.as_bytes(), &arg_cuts)
            .into_iter()
            .map(|b| std::str::from_utf8(b).unwrap())
            .collect();
        let text_refs: Vec<&str> = text.iter().map(String::as_str).collect();
        let body = openai_stream(&text_refs, &arg_pieces, "{\"pattern\":\"*.rs\"}");
        let (_, response) = decode(ProviderKind::OpenAi, &split(body.as_bytes(), &cuts)).unwrap();
        let joined: String = text.concat();
        let mut expected = expected_openai_message(&joined);
        if joined.is_empty() {
            expected.remove(1);
        }
        prop_assert_eq!(response.message.parts, expected);
        prop_assert_eq!(response.usage.map(|u| u.cached_prompt_tokens), Some(3));
    }
}
