//! Reasoning that providers need back: DeepSeek's `reasoning_content`, Claude's signed and
//! redacted thinking blocks (natively and through LiteLLM's OpenAI endpoint), and the
//! thinking budget that turns Claude's thinking on.

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, run, stderr, stdout};

fn read(path: &str) -> MockToolCall {
    MockToolCall::new(
        "call_1",
        "read_file",
        json!({ "file_path": path }).to_string(),
    )
}

fn bad_request(message: &str) -> Reply {
    Reply::http(
        400,
        json!({"error": {"message": message, "type": "invalid_request_error"}}).to_string(),
    )
}

fn messages(body: &Value) -> &[Value] {
    body["messages"].as_array().map_or(&[], Vec::as_slice)
}

/// The index of the last user message: the current turn is what follows it.
fn last_user(messages: &[Value]) -> usize {
    messages
        .iter()
        .rposition(|m| m["role"] == "user")
        .unwrap_or(0)
}

/// DeepSeek's thinking mode: an assistant message with tool calls in the current turn needs
/// its `reasoning_content`; deepseek-reasoner refuses it in earlier turns.
fn deepseek_problem(body: &Value) -> Option<String> {
    let messages = messages(body);
    let current = last_user(messages);
    messages.iter().enumerate().find_map(|(i, m)| {
        let has_reasoning = m.get("reasoning_content").is_some();
        if m["role"] != "assistant" {
            None
        } else if i > current && m.get("tool_calls").is_some() && !has_reasoning {
            Some(format!(
                "Missing `reasoning_content` field in the assistant message at message index {i}"
            ))
        } else if i < current && has_reasoning {
            Some(format!(
                "reasoning_content of an earlier turn is not accepted (message index {i})"
            ))
        } else {
            None
        }
    })
}

fn deepseek(answer: Turn) -> Reply {
    Reply::dynamic(move |request| match deepseek_problem(&request.body) {
        None => answer.clone().into(),
        Some(problem) => bad_request(&problem),
    })
}

#[test]
fn deepseek_gets_its_reasoning_back_within_the_turn_and_not_after() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .reasoning("I should read a.txt.")
                    .tool_call(read("a.txt")),
            )
            .reply(deepseek(
                Turn::text("It says alpha.").reasoning("It says alpha."),
            ))
            .reply(deepseek(Turn::text("Still alpha."))),
    );
    let out = run(env
        .rein_openai(&server)
        .env("REIN_MODEL", "deepseek-reasoner")
        .args(["-p", "what is in a.txt?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "It says alpha.");
    let second = &server.requests()[1].body;
    let call_message = messages(second)
        .iter()
        .find(|m| m.get("tool_calls").is_some())
        .unwrap();
    assert_eq!(call_message["reasoning_content"], "I should read a.txt.");

    // The next turn drops the reasoning of the one before.
    let out = run(env
        .rein_openai(&server)
        .env("REIN_MODEL", "deepseek-reasoner")
        .args(["-c", "-p", "and now?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Still alpha.");
}

/// What Claude behind LiteLLM requires: the current turn's tool-call messages carry their
/// thinking blocks, signatures and redacted data unchanged.
fn litellm_problem(body: &Value, expected: &Value) -> Option<String> {
    let messages = messages(body);
    let current = last_user(messages);
    messages
        .iter()
        .enumerate()
        .skip(current)
        .find_map(|(i, m)| {
            (m.get("tool_calls").is_some() && &m["thinking_blocks"] != expected).then(|| {
                format!(
                    "litellm.BadRequestError: AnthropicException - messages.{i}.content.0.type: \
                 Expected `thinking` or `redacted_thinking`, but found `tool_use`. When \
                 `thinking` is enabled, a final `assistant` message must start with a thinking \
                 block"
                )
            })
        })
}

#[test]
fn thinking_blocks_through_litellm_go_back_with_their_signatures() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let expected = json!([
        {"type": "thinking", "thinking": "Read it first.", "signature": "sig-litellm"},
        {"type": "redacted_thinking", "data": "opaque-1"}
    ]);
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .reasoning_chunks(["Read it ", "first."])
                    .signature("sig-litellm")
                    .redacted_thinking("opaque-1")
                    .thinking_blocks()
                    .tool_call(read("a.txt")),
            )
            .reply(Reply::dynamic(move |request| {
                match litellm_problem(&request.body, &expected) {
                    None => Turn::text("alpha, via LiteLLM").into(),
                    Some(problem) => bad_request(&problem),
                }
            })),
    );
    let out = run(env
        .rein_openai(&server)
        .env("REIN_MODEL", "claude-sonnet-4-5")
        .args(["--provider", "openai", "-p", "what is in a.txt?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "alpha, via LiteLLM");
}

/// Claude with extended thinking: the assistant turn that called tools starts with its
/// thinking blocks, exactly as they came.
fn anthropic_problem(body: &Value) -> Option<String> {
    let messages = messages(body);
    let last = messages.iter().rposition(|m| m["role"] == "assistant")?;
    let expected = json!([
        {"type": "thinking", "thinking": "Plan: read a.txt.", "signature": "sig-claude"},
        {"type": "redacted_thinking", "data": "opaque-claude"}
    ]);
    let content = messages[last]["content"].as_array()?;
    (content.get(..2) != expected.as_array().map(Vec::as_slice)).then(|| {
        format!(
            "messages.{last}.content.0.type: Expected `thinking` or `redacted_thinking`, but \
             found `{}`.",
            content[0]["type"]
        )
    })
}

#[test]
fn claude_thinks_within_its_budget_and_gets_its_thinking_blocks_back() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    env.write(
        ".rein/config.toml",
        "thinking_budget = 2048\ntemperature = 0.3\n",
    );
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .reasoning("Plan: read a.txt.")
                    .signature("sig-claude")
                    .redacted_thinking("opaque-claude")
                    .tool_call(read("a.txt")),
            )
            .reply(Reply::dynamic(|request| {
                match anthropic_problem(&request.body) {
                    None => Turn::text("alpha, thought through").into(),
                    Some(problem) => Reply::http(
                        400,
                        json!({"type": "error", "error": {"type": "invalid_request_error", "message": problem}})
                            .to_string(),
                    ),
                }
            })),
    );
    let out = run(env
        .rein()
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("REIN_BASE_URL", server.base_url())
        .env("REIN_MODEL", "claude-sonnet-4-5")
        .args(["-p", "what is in a.txt?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "alpha, thought through");
    for request in server.requests() {
        let body = &request.body;
        assert_eq!(
            body["thinking"],
            json!({"type": "enabled", "budget_tokens": 2048})
        );
        assert!(body["max_tokens"].as_u64().unwrap() > 2048, "{body}");
        assert!(
            body.get("temperature").is_none(),
            "thinking refuses a temperature"
        );
    }
}
