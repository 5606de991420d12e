use serde_json::{Value, json};

use super::*;
use crate::ToolSpec;
use crate::{ToolCall, ToolResult};

fn body_of(request: &Request) -> Value {
    serde_json::from_slice(&request_body(request, WireOptions::default())).unwrap()
}

fn thinking(budget: u32) -> WireOptions {
    WireOptions {
        thinking_budget_tokens: Some(budget),
        ..WireOptions::default()
    }
}

fn call(id: &str, arguments: ToolArguments) -> Part {
    Part::ToolCall(ToolCall {
        id: id.into(),
        name: "read_file".into(),
        arguments,
    })
}

fn result(id: &str, is_error: bool) -> Part {
    Part::ToolResult(ToolResult {
        call_id: id.into(),
        content: format!("result of {id}"),
        is_error,
        images: Vec::new(),
    })
}

fn conversation() -> Vec<Message> {
    vec![
        Message {
            role: Role::User,
            parts: vec![Part::Text { text: "hi".into() }],
        },
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "think".into(),
                    signature: Some("sig".into()),
                    redacted: None,
                },
                Part::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some("opaque".into()),
                },
                Part::Text {
                    text: "Reading.".into(),
                },
                call(
                    "toolu_1",
                    ToolArguments::Json {
                        value: json!({"file_path": "a"}),
                    },
                ),
                call(
                    "toolu_2",
                    ToolArguments::Json {
                        value: json!({"file_path": "b"}),
                    },
                ),
            ],
        },
        Message {
            role: Role::Tool,
            parts: vec![result("toolu_1", false), result("toolu_2", true)],
        },
    ]
}

#[test]
fn maps_the_conversation_to_messages() {
    let request = Request {
        model: "claude-sonnet-4-5".into(),
        system: "be brief".into(),
        messages: conversation(),
        tools: vec![ToolSpec::new(
            "read_file",
            "Reads.",
            json!({"type": "object"}),
        )],
        ..Request::default()
    };
    let body = body_of(&request);
    assert_eq!(
        body["system"],
        json!([{"type": "text", "text": "be brief", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["stream"], true);
    assert_eq!(body["tools"][0]["input_schema"], json!({"type": "object"}));
    assert_eq!(
        body["messages"],
        json!([
            {"role": "user", "content": [{"type": "text", "text": "hi", "cache_control": {"type": "ephemeral"}}]},
            {"role": "assistant", "content": [
                {"type": "thinking", "thinking": "think", "signature": "sig"},
                {"type": "redacted_thinking", "data": "opaque"},
                {"type": "text", "text": "Reading."},
                {"type": "tool_use", "id": "toolu_1", "name": "read_file", "input": {"file_path": "a"}},
                {"type": "tool_use", "id": "toolu_2", "name": "read_file", "input": {"file_path": "b"}}
            ]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "result of toolu_1"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "result of toolu_2", "is_error": true,
                 "cache_control": {"type": "ephemeral"}}
            ]}
        ])
    );
}

#[test]
fn results_and_following_text_share_one_user_message_results_first() {
    let request = Request {
        messages: vec![
            Message {
                role: Role::Assistant,
                parts: vec![call("t", ToolArguments::Json { value: json!({}) })],
            },
            Message {
                role: Role::User,
                parts: vec![Part::Text {
                    text: "also".into(),
                }],
            },
            Message {
                role: Role::Tool,
                parts: vec![result("t", false)],
            },
        ],
        ..Request::default()
    };
    let body = body_of(&request);
    let messages = body["messages"].as_array().unwrap();
    assert_eq!(messages.len(), 2);
    assert_eq!(messages[1]["content"][0]["type"], "tool_result");
    assert_eq!(messages[1]["content"][1]["text"], "also");
}

#[test]
fn drops_what_the_api_would_reject() {
    let request = Request {
        model: "claude-3-haiku-20240307".into(),
        messages: vec![
            Message {
                role: Role::User,
                parts: vec![Part::Text {
                    text: String::new(),
                }],
            },
            Message {
                role: Role::Assistant,
                parts: vec![
                    Part::Reasoning {
                        text: "unsigned".into(),
                        signature: None,
                        redacted: None,
                    },
                    call(
                        "t",
                        ToolArguments::Invalid {
                            raw: "{oops".into(),
                            error: "e".into(),
                        },
                    ),
                ],
            },
        ],
        ..Request::default()
    };
    let body = body_of(&request);
    assert_eq!(body["max_tokens"], 4096);
    assert!(body.get("system").is_none());
    assert_eq!(
        body["messages"],
        json!([{"role": "assistant", "content": [
            {"type": "tool_use", "id": "t", "name": "read_file", "input": {}, "cache_control": {"type": "ephemeral"}}
        ]}])
    );
}

#[test]
fn a_thinking_budget_turns_thinking_on_within_the_apis_rules() {
    let request = Request {
        model: "claude-sonnet-4-5".into(),
        messages: conversation(),
        temperature: Some(0.2),
        max_tokens: Some(4000),
        ..Request::default()
    };
    let body: Value = serde_json::from_slice(&request_body(&request, thinking(2048))).unwrap();
    assert_eq!(
        body["thinking"],
        json!({"type": "enabled", "budget_tokens": 2048})
    );
    assert_eq!(body["max_tokens"], 4000);
    assert!(
        body.get("temperature").is_none(),
        "thinking refuses a temperature"
    );
    // The output limit must exceed the budget.
    let body: Value = serde_json::from_slice(&request_body(&request, thinking(4000))).unwrap();
    assert_eq!(body["max_tokens"], 4000 + 8192);
    // Without a budget, nothing changes.
    let body = body_of(&request);
    assert!(body.get("thinking").is_none());
    assert_eq!(body["max_tokens"], 4000);
    assert!((body["temperature"].as_f64().unwrap() - 0.2).abs() < 1e-6);
}

#[test]
fn round_trips_through_the_wire_format() {
    let request = Request {
        system: "sys".into(),
        messages: conversation(),
        ..Request::default()
    };
    let body = body_of(&request);
    let (system, messages) = messages_from_anthropic(&body["system"], &body["messages"]).unwrap();
    assert_eq!(system, "sys");
    assert_eq!(messages, conversation());
}

#[test]
fn reading_a_wire_list_rejects_what_is_not_one() {
    assert!(messages_from_anthropic(&Value::Null, &json!("x")).is_err());
    assert!(messages_from_anthropic(&Value::Null, &json!([{"role": "user"}])).is_err());
    assert!(
        messages_from_anthropic(&Value::Null, &json!([{"role": "bot", "content": "x"}])).is_err()
    );
}

/// Every `cache_control` in a body, as JSON pointers.
fn breakpoints(body: &Value) -> Vec<String> {
    fn walk(value: &Value, at: &str, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    if key == "cache_control" {
                        out.push(at.to_owned());
                    } else {
                        walk(inner, &format!("{at}/{key}"), out);
                    }
                }
            }
            Value::Array(items) => {
                for (i, inner) in items.iter().enumerate() {
                    walk(inner, &format!("{at}/{i}"), out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(body, "", &mut out);
    out
}

/// A conversation of `rounds` tool rounds after the first request.
fn long_conversation(rounds: usize) -> Vec<Message> {
    let mut messages = vec![Message {
        role: Role::User,
        parts: vec![Part::Text { text: "go".into() }],
    }];
    for i in 0..rounds {
        let id = format!("t{i}");
        messages.push(Message {
            role: Role::Assistant,
            parts: vec![call(&id, ToolArguments::Json { value: json!({}) })],
        });
        messages.push(Message {
            role: Role::Tool,
            parts: vec![result(&id, false)],
        });
    }
    messages
}

#[test]
fn breakpoints_mark_the_stable_prefix_and_move_with_the_conversation() {
    let tools = vec![
        ToolSpec::new("a", "A.", json!({"type": "object"})),
        ToolSpec::new("b", "B.", json!({"type": "object"})),
    ];
    for rounds in 0..6 {
        let request = Request {
            model: "claude-sonnet-4-5".into(),
            system: "sys".into(),
            messages: long_conversation(rounds),
            tools: tools.clone(),
            ..Request::default()
        };
        let body = body_of(&request);
        let marks = breakpoints(&body);
        assert!(marks.len() <= crate::MAX_CACHE_BREAKPOINTS, "{marks:?}");
        assert!(marks.contains(&"/tools/1".to_owned()), "{marks:?}");
        assert!(marks.contains(&"/system/0".to_owned()), "{marks:?}");
        let last = body["messages"].as_array().unwrap().len() - 1;
        assert!(marks.contains(&format!("/messages/{last}/content/0")));
        if rounds > 0 {
            // The previous request's newest message, whose prefix it wrote to the cache.
            assert!(
                marks.contains(&format!("/messages/{}/content/0", last - 2)),
                "{marks:?}"
            );
        }
    }
    // Without tools or a system prompt, only the conversation is marked.
    let body = body_of(&Request {
        messages: long_conversation(2),
        ..Request::default()
    });
    assert_eq!(
        breakpoints(&body),
        vec!["/messages/2/content/0", "/messages/4/content/0"]
    );
}

#[test]
fn a_breakpoint_never_lands_on_a_thinking_block() {
    let request = Request {
        messages: vec![Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text { text: "a".into() },
                Part::Reasoning {
                    text: "t".into(),
                    signature: Some("s".into()),
                    redacted: None,
                },
            ],
        }],
        ..Request::default()
    };
    assert_eq!(
        breakpoints(&body_of(&request)),
        vec!["/messages/0/content/0"]
    );
}

#[test]
fn a_one_hour_cache_says_so_on_every_breakpoint() {
    let request = Request {
        system: "sys".into(),
        messages: long_conversation(1),
        tools: vec![ToolSpec::new("a", "A.", json!({"type": "object"}))],
        ..Request::default()
    };
    let options = WireOptions {
        cache_ttl: crate::CacheTtl::OneHour,
        ..WireOptions::default()
    };
    let body: Value = serde_json::from_slice(&request_body(&request, options)).unwrap();
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert_eq!(
        body["tools"][0]["cache_control"],
        json!({"type": "ephemeral", "ttl": "1h"})
    );
    assert_eq!(breakpoints(&body).len(), 4);
}
