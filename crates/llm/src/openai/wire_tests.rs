use serde_json::{Value, json};

use super::*;
use crate::ToolSpec;
use crate::{ToolCall, ToolResult};

fn conversation() -> Vec<Message> {
    vec![
        Message {
            role: Role::User,
            parts: vec![Part::Text {
                text: "fix main.py".into(),
            }],
        },
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "look first".into(),
                    signature: None,
                    redacted: None,
                },
                Part::Text {
                    text: "Reading it.".into(),
                },
                Part::ToolCall(ToolCall {
                    id: "call_1".into(),
                    name: "read_file".into(),
                    arguments: ToolArguments::Json {
                        value: json!({"file_path": "main.py"}),
                    },
                }),
                Part::ToolCall(ToolCall {
                    id: "call_2".into(),
                    name: "grep".into(),
                    arguments: ToolArguments::Invalid {
                        raw: "{\"pattern\":".into(),
                        error: "EOF".into(),
                    },
                }),
            ],
        },
        Message {
            role: Role::Tool,
            parts: vec![
                Part::ToolResult(ToolResult {
                    call_id: "call_1".into(),
                    content: "import os".into(),
                    is_error: false,
                    images: Vec::new(),
                }),
                Part::ToolResult(ToolResult {
                    call_id: "call_2".into(),
                    content: "bad arguments".into(),
                    is_error: true,
                    images: Vec::new(),
                }),
            ],
        },
    ]
}

fn options(max_field: MaxTokensField) -> BodyOptions {
    BodyOptions {
        max_field,
        tool_format: ToolFormat::Native,
        num_ctx: None,
    }
}

fn body_of(request: &Request, field: MaxTokensField) -> Value {
    serde_json::from_slice(&request_body(request, options(field))).unwrap()
}

#[test]
fn maps_the_conversation_to_chat_completions() {
    let request = Request {
        model: "gpt-4o".into(),
        system: "be brief".into(),
        messages: conversation(),
        tools: vec![ToolSpec::new(
            "read_file",
            "Reads.",
            json!({"type": "object"}),
        )],
        temperature: Some(0.5),
        max_tokens: Some(100),
        cache_key: Some("rein-s1".into()),
    };
    let plain = request_body(&request, options(MaxTokensField::MaxTokens));
    let extras = Extras {
        usage: true,
        cache_key: request.cache_key.as_deref(),
    };
    let spliced = with_extras(&plain, extras);
    // The conversation's bytes are the same with and without the extras.
    assert!(spliced.starts_with(plain.strip_suffix(b"}").unwrap()));
    let body: Value = serde_json::from_slice(&spliced).unwrap();
    assert_eq!(body["prompt_cache_key"], "rein-s1");
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": "fix main.py"},
            {"role": "assistant", "content": "Reading it.", "reasoning_content": "look first", "tool_calls": [
                {"id": "call_1", "type": "function", "function": {"name": "read_file", "arguments": "{\"file_path\":\"main.py\"}"}},
                {"id": "call_2", "type": "function", "function": {"name": "grep", "arguments": "{\"pattern\":"}}
            ]},
            {"role": "tool", "tool_call_id": "call_1", "content": "import os"},
            {"role": "tool", "tool_call_id": "call_2", "content": "bad arguments"}
        ])
    );
    assert_eq!(body["stream"], true);
    assert_eq!(body["stream_options"], json!({"include_usage": true}));
    assert_eq!(body["max_tokens"], 100);
    assert_eq!(body["temperature"], 0.5);
    assert_eq!(body["tools"][0]["function"]["name"], "read_file");
}

#[test]
fn options_are_left_out_when_unset_or_refused() {
    let request = Request {
        model: "m".into(),
        max_tokens: Some(7),
        ..Request::default()
    };
    let body = body_of(&request, MaxTokensField::MaxCompletionTokens);
    // Which keys, not their order (serde_json's `preserve_order`, on in the rein binary,
    // keeps the wire struct's order).
    let mut keys: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        vec!["max_completion_tokens", "messages", "model", "stream"]
    );
    assert_eq!(body["messages"], json!([]));
}

#[test]
fn an_assistant_message_of_only_tool_calls_has_null_content() {
    let request = Request {
        messages: vec![Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: "c".into(),
                name: "glob".into(),
                arguments: ToolArguments::Json { value: json!({}) },
            })],
        }],
        ..Request::default()
    };
    let body = body_of(&request, MaxTokensField::MaxTokens);
    assert_eq!(body["messages"][0]["content"], Value::Null);
}

#[test]
fn round_trips_through_the_wire_format() {
    let request = Request {
        system: "sys".into(),
        messages: conversation(),
        ..Request::default()
    };
    let body = body_of(&request, MaxTokensField::MaxTokens);
    let (system, messages) = messages_from_openai(&body["messages"]).unwrap();
    assert_eq!(system, "sys");
    let mut expected = conversation();
    // Results carry no error flag.
    if let Part::ToolResult(r) = &mut expected[2].parts[1] {
        r.is_error = false;
    }
    if let Part::ToolCall(c) = &mut expected[1].parts[3] {
        c.arguments = crate::assemble::parse_arguments("{\"pattern\":");
    }
    assert_eq!(messages, expected);
}

fn reasoning(text: &str, signature: Option<&str>, redacted: Option<&str>) -> Part {
    Part::Reasoning {
        text: text.into(),
        signature: signature.map(Into::into),
        redacted: redacted.map(Into::into),
    }
}

fn user(text: &str) -> Message {
    Message {
        role: Role::User,
        parts: vec![Part::Text { text: text.into() }],
    }
}

fn assistant(parts: Vec<Part>) -> Message {
    Message {
        role: Role::Assistant,
        parts,
    }
}

#[test]
fn reasoning_goes_back_only_within_the_current_turn() {
    let call = |id: &str| {
        Part::ToolCall(ToolCall {
            id: id.into(),
            name: "glob".into(),
            arguments: ToolArguments::Json { value: json!({}) },
        })
    };
    let result = |id: &str| Message {
        role: Role::Tool,
        parts: vec![Part::ToolResult(ToolResult {
            call_id: id.into(),
            content: "x".into(),
            is_error: false,
            images: Vec::new(),
        })],
    };
    let request = Request {
        messages: vec![
            user("first"),
            assistant(vec![reasoning("old thought", None, None), call("c1")]),
            result("c1"),
            assistant(vec![
                reasoning("old answer thought", None, None),
                Part::Text {
                    text: "done".into(),
                },
            ]),
            user("second"),
            assistant(vec![
                reasoning("new ", Some("sig-1"), None),
                reasoning("", None, Some("opaque")),
                reasoning("thought", Some("sig-2"), None),
                call("c2"),
            ]),
            result("c2"),
        ],
        ..Request::default()
    };
    let body = body_of(&request, MaxTokensField::MaxTokens);
    let messages = body["messages"].as_array().unwrap();
    for earlier in [&messages[1], &messages[3]] {
        assert!(earlier.get("reasoning_content").is_none(), "{earlier}");
        assert!(earlier.get("thinking_blocks").is_none(), "{earlier}");
    }
    let current = &messages[5];
    assert_eq!(current["reasoning_content"], "new thought");
    assert_eq!(
        current["thinking_blocks"],
        json!([
            {"type": "thinking", "thinking": "new ", "signature": "sig-1"},
            {"type": "redacted_thinking", "data": "opaque"},
            {"type": "thinking", "thinking": "thought", "signature": "sig-2"}
        ])
    );
    // Read back, the blocks are the reasoning, signatures and all.
    let (_, read) = messages_from_openai(&body["messages"]).unwrap();
    assert_eq!(
        read[5].parts[..3],
        [
            reasoning("new ", Some("sig-1"), None),
            reasoning("", None, Some("opaque")),
            reasoning("thought", Some("sig-2"), None),
        ]
    );
}

#[test]
fn reading_a_wire_list_rejects_what_is_not_one() {
    assert!(messages_from_openai(&json!({"role": "user"})).is_err());
    assert!(messages_from_openai(&json!([{"content": "x"}])).is_err());
    assert!(messages_from_openai(&json!([{"role": "wizard", "content": "x"}])).is_err());
}

#[test]
fn the_text_mode_describes_tools_and_writes_calls_and_results_as_text() {
    let request = Request {
        model: "local".into(),
        system: "be brief".into(),
        messages: conversation(),
        tools: vec![ToolSpec::new(
            "read_file",
            "Reads.",
            json!({"type": "object"}),
        )],
        ..Request::default()
    };
    let body: Value = serde_json::from_slice(&request_body(
        &request,
        BodyOptions {
            max_field: MaxTokensField::MaxTokens,
            tool_format: ToolFormat::Text,
            num_ctx: Some(16384),
        },
    ))
    .unwrap();
    assert!(body.get("tools").is_none(), "{body}");
    assert_eq!(body["options"], json!({"num_ctx": 16384}));
    let messages = body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.starts_with("be brief\n\n# Tools"), "{system}");
    assert!(system.contains("\"name\":\"read_file\""), "{system}");
    // No `tool` role and no `tool_calls`: only what a server without tools takes.
    for message in messages {
        assert!(["system", "user", "assistant"].contains(&message["role"].as_str().unwrap()));
        assert!(message.get("tool_calls").is_none(), "{message}");
    }
    let assistant = messages.iter().find(|m| m["role"] == "assistant").unwrap();
    let content = assistant["content"].as_str().unwrap();
    assert!(
        content.contains("<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\":\"main.py\"}}\n</tool_call>"),
        "{content}"
    );
    assert!(
        messages.iter().any(|m| m["role"] == "user"
            && m["content"]
                .as_str()
                .unwrap()
                .starts_with("<tool_response>\n")),
        "{messages:?}"
    );
}
