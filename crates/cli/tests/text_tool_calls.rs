//! Tool calls a model writes as text (servers without a tool parser), and servers that take
//! no `tools` at all.

use rein_testkit::{MockServer, Reply, Script, Turn};
use serde_json::Value;

use crate::support::{Env, openai_history_is_valid, run, stderr, stdout};

const NOTES: &str = "the secret word is marmalade\n";

/// Every format, each with `read_file` of notes.txt.
const FORMATS: &[(&str, &str)] = &[
    (
        "hermes",
        "Reading it.\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"notes.txt\"}}\n</tool_call>",
    ),
    (
        "mistral",
        "[TOOL_CALLS][{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"notes.txt\"}}]",
    ),
    (
        "llama3",
        "<|python_tag|>{\"name\": \"read_file\", \"parameters\": {\"file_path\": \"notes.txt\"}}",
    ),
    (
        "bare",
        "{\"name\": \"read_file\", \"parameters\": {\"file_path\": \"notes.txt\"}}",
    ),
    (
        "deepseek",
        "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>function<｜tool▁sep｜>read_file\n```json\n{\"file_path\": \"notes.txt\"}\n```<｜tool▁call▁end｜><｜tool▁calls▁end｜>",
    ),
    (
        "fenced",
        "```json\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"notes.txt\"}}\n```",
    ),
];

fn tool_results(body: &Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn each_text_format_runs_the_tool_and_the_next_request_is_native_and_valid() {
    for (format, markup) in FORMATS {
        let env = Env::new();
        env.write("notes.txt", NOTES);
        let server = MockServer::start(
            Script::new()
                .reply(
                    Turn::text(*markup)
                        .chunks(markup.split_inclusive(['\n', '"']).collect::<Vec<_>>()),
                )
                .reply(Turn::text("It says marmalade.")),
        );
        let out = run(env
            .rein_openai(&server)
            .args(["-p", "what does notes.txt say?"]));
        assert!(out.status.success(), "{format}: {}", stderr(&out));
        assert_eq!(stdout(&out).trim(), "It says marmalade.", "{format}");
        let requests = server.requests();
        assert_eq!(requests.len(), 2, "{format}");
        let second = &requests[1].body;
        openai_history_is_valid(second).unwrap_or_else(|e| panic!("{format}: {e}"));
        let results = tool_results(second);
        assert_eq!(results.len(), 1, "{format}: {second}");
        assert!(results[0].contains("marmalade"), "{format}: {}", results[0]);
        // Recorded natively: the markup is not sent back as the assistant's text.
        let assistant = second["messages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["role"] == "assistant")
            .unwrap();
        assert_eq!(assistant["tool_calls"][0]["function"]["name"], "read_file");
        let content = assistant["content"].as_str().unwrap_or_default();
        assert!(!content.contains("notes.txt"), "{format}: {content}");
    }
}

#[test]
fn the_text_mode_describes_tools_and_sends_results_as_text() {
    let env = Env::new();
    env.write("notes.txt", NOTES);
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "tool_format = \"text\"\n",
    )
    .unwrap();
    let (_, hermes) = FORMATS[0];
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text(hermes))
            .reply(Turn::text("It says marmalade.")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "what does notes.txt say?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "It says marmalade.");
    let requests = server.requests();
    assert_eq!(requests.len(), 2);
    for request in &requests {
        text_mode_request(&request.body);
    }
    let messages = requests[1].body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "user");
    let content = last["content"].as_str().unwrap();
    assert!(
        content.starts_with("<tool_response>") && content.contains("marmalade"),
        "{content}"
    );
    let assistant = &messages[messages.len() - 2];
    assert!(
        assistant["content"]
            .as_str()
            .unwrap()
            .contains("<tool_call>\n{\"name\": \"read_file\""),
        "{assistant}"
    );
}

/// A request a server without tools takes: no `tools`, no `tool` messages, no `tool_calls`,
/// and the tools described in the system prompt.
fn text_mode_request(body: &Value) {
    assert!(body.get("tools").is_none(), "{body}");
    let messages = body["messages"].as_array().unwrap();
    let system = messages[0]["content"].as_str().unwrap();
    assert!(system.contains("<tools>") && system.contains("\"read_file\""));
    for message in messages {
        assert_ne!(message["role"], "tool", "{message}");
        assert!(message.get("tool_calls").is_none(), "{message}");
    }
}

#[test]
fn a_server_that_refuses_tools_switches_the_session_to_text_once() {
    let env = Env::new();
    env.write("notes.txt", NOTES);
    let (_, hermes) = FORMATS[0];
    let refusal = serde_json::json!({"error": {"code": 400, "message": "tools param requires --jinja flag", "type": "invalid_request_error"}});
    let server = MockServer::start(
        Script::new()
            .reply(Reply::http(400, refusal.to_string()))
            .reply(Turn::text(hermes))
            .reply(Turn::text("It says marmalade.")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "what does notes.txt say?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "It says marmalade.");
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests[0].body.get("tools").is_some());
    // Once refused, never offered natively again in the session.
    text_mode_request(&requests[1].body);
    text_mode_request(&requests[2].body);
    assert!(requests[2].body_text().contains("marmalade"));
}

#[test]
fn a_call_mentioned_in_prose_is_not_run() {
    let env = Env::new();
    env.write("notes.txt", NOTES);
    let answer = "A model that cannot call tools natively writes this:\n\n```\n<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": \"notes.txt\"}}\n</tool_call>\n```\n\nrein runs it for you.";
    let server = MockServer::start(Script::new().reply(Turn::text(answer)));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "how do text tool calls look?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), answer);
    assert_eq!(server.requests().len(), 1);
}

#[test]
fn an_unknown_tool_and_bad_json_go_back_to_the_model_as_errors() {
    let env = Env::new();
    env.write("notes.txt", NOTES);
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text(
                "<tool_call>\n{\"name\": \"read_notes\", \"arguments\": {\"file_path\": \"notes.txt\"}}\n</tool_call>",
            ))
            .reply(Turn::text(
                "<tool_call>\n{\"name\": \"read_file\", \"arguments\": {\"file_path\": notes.txt}}\n</tool_call>",
            ))
            .reply(Turn::text("Giving up.")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "read notes.txt"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let unknown = tool_results(&requests[1].body);
    assert!(unknown[0].contains("read_notes"), "{unknown:?}");
    assert!(!unknown[0].contains("marmalade"));
    openai_history_is_valid(&requests[2].body).unwrap();
    let bad = tool_results(&requests[2].body);
    assert!(bad[1].to_lowercase().contains("json"), "{bad:?}");
    assert!(!bad[1].contains("marmalade"));
}
