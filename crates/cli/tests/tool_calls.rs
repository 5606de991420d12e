//! Tool calls as servers really send them: whole calls all at `index: 0`, duplicate ids,
//! empty names. Each must reach the history in a shape the next request is accepted with.

use std::collections::HashSet;

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, openai_history_is_valid, run, stderr, stdout};

/// What the real APIs refuse in a history, with a 400 like theirs.
fn history_problem(body: &Value) -> Option<String> {
    if let Err(problem) = openai_history_is_valid(body) {
        return Some(problem);
    }
    let mut seen = HashSet::new();
    let calls = body["messages"]
        .as_array()?
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten();
    for call in calls {
        let id = call["id"].as_str().unwrap_or_default();
        if !seen.insert(id.to_owned()) {
            return Some(format!("duplicate tool call id {id:?}"));
        }
        let name = call["function"]["name"].as_str().unwrap_or_default();
        if name.trim().is_empty() {
            return Some(format!("tool call {id:?} has an empty function name"));
        }
        let arguments = call["function"]["arguments"].as_str().unwrap_or_default();
        if serde_json::from_str::<Value>(arguments).is_err() {
            return Some(format!(
                "tool call {id:?} has invalid arguments {arguments:?}"
            ));
        }
    }
    None
}

/// Answers `answer` to a valid history, 400 otherwise.
fn strict(answer: &'static str) -> Reply {
    Reply::dynamic(move |request| match history_problem(&request.body) {
        None => Turn::text(answer).into(),
        Some(problem) => Reply::http(
            400,
            json!({"error": {"message": problem, "type": "invalid_request_error"}}).to_string(),
        ),
    })
}

fn read(id: &str, path: &str) -> MockToolCall {
    MockToolCall::new(id, "read_file", json!({ "file_path": path }).to_string())
}

/// The tool calls of the assistant message in the last request.
fn sent_calls(server: &MockServer) -> Vec<Value> {
    let request = server.last_request().unwrap();
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["tool_calls"].as_array())
        .flatten()
        .cloned()
        .collect()
}

#[test]
fn whole_calls_that_all_say_index_0_run_as_separate_calls() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    env.write("b.txt", "beta\n");
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(read("call_x1", "a.txt"))
                    .tool_call(read("call_x2", "b.txt"))
                    .calls_share_index(),
            )
            .reply(strict("read both")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "read a and b"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "read both");
    let calls = sent_calls(&server);
    let sent: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["function"]["arguments"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        sent,
        [
            ("call_x1", r#"{"file_path":"a.txt"}"#),
            ("call_x2", r#"{"file_path":"b.txt"}"#)
        ]
    );
    let body = server.last_request().unwrap().body_text();
    assert!(
        body.contains("alpha") && body.contains("beta"),
        "both files were read"
    );
}

#[test]
fn duplicate_ids_and_empty_names_are_repaired_before_the_next_request() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    env.write("b.txt", "beta\n");
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(read("call_1", "a.txt"))
                    .tool_call(read("call_1", "b.txt"))
                    .tool_call(MockToolCall::new("call_2", "", "{}")),
            )
            .reply(strict("done")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "read a and b"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "done");
    let calls = sent_calls(&server);
    let sent: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| {
            (
                c["id"].as_str().unwrap(),
                c["function"]["name"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        sent,
        [
            ("call_1", "read_file"),
            ("call_1_2", "read_file"),
            ("call_2", rein_llm::UNNAMED_TOOL)
        ]
    );
    // The model is told the call named no tool.
    let messages = server.last_request().unwrap().body["messages"].clone();
    let answer = messages
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "call_2")
        .unwrap();
    assert!(
        answer["content"]
            .as_str()
            .unwrap()
            .contains("had no tool name"),
        "{answer}"
    );
    // Later requests, and a later `rein -c`, keep sending a valid history.
    let next = MockServer::start(Script::new().reply(strict("continued")));
    let out = run(env.rein_openai(&next).args(["-c", "-p", "go on"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "continued");
}

#[test]
fn an_id_reused_in_a_later_round_is_renamed_too() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(read("call_0", "a.txt")))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "call_0",
                "glob",
                json!({"pattern": "*.txt"}).to_string(),
            )))
            .reply(strict("done")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "look twice"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let ids: Vec<String> = sent_calls(&server)
        .iter()
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(ids, ["call_0", "call_0_2"]);
}
