//! The OpenAI Responses API (`--provider openai-responses`) end to end against the mock.

use std::process::Command;

use rein_testkit::{MockServer, MockToolCall, MockUsage, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, final_json, run, stderr, stdout};

const MAIN_PY: &str = include_str!("../demo/project/main.py");
const UTILS_PY: &str = include_str!("../demo/project/utils.py");

fn rein_responses(env: &Env, server: &MockServer) -> Command {
    let mut cmd = env.rein();
    cmd.env("OPENAI_API_KEY", "sk-test")
        .env("REIN_BASE_URL", server.openai_base_url())
        .env("REIN_MODEL", "gpt-5-codex")
        .args(["--provider", "openai-responses"]);
    cmd
}

fn call(id: &str, name: &str, args: Value) -> MockToolCall {
    MockToolCall::new(id, name, args.to_string()).split_every(7)
}

fn items<'a>(body: &'a Value, kind: &str) -> Vec<&'a Value> {
    body["input"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|item| item["type"] == kind)
        .collect()
}

#[test]
fn fix_import_end_to_end_with_parallel_calls_reasoning_round_tripped_and_exact_usage() {
    crate::support::require_python3();
    let env = Env::new();
    env.write("main.py", MAIN_PY);
    env.write("utils.py", UTILS_PY);
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::text("Reading both files.")
                    .reasoning("The import looks wrong.")
                    .signature("enc-reasoning-1")
                    .tool_call(call("c1", "read_file", json!({"file_path": "main.py"})))
                    .tool_call(call("c2", "read_file", json!({"file_path": "utils.py"})))
                    .usage(MockUsage::new(1000, 50).cached(600)),
            )
            .reply(
                Turn::new()
                    .tool_call(call(
                        "c3",
                        "edit_file",
                        json!({"file_path": "main.py", "old_string": "from helpers import greet, shout", "new_string": "from utils import greet, shout"}),
                    ))
                    .tool_call(call("c4", "bash", json!({"command": "python3 main.py"})))
                    .usage(MockUsage::new(1500, 40).cached(1000)),
            )
            .reply(
                Turn::text("Fixed the import: greet and shout live in utils.py.")
                    .chunks(["Fixed the import: ", "greet and shout live in utils.py."])
                    .usage(MockUsage::new(1700, 20)),
            ),
    );
    let out = run(rein_responses(&env, &server).args([
        "-p",
        "read main.py and fix the broken import",
        "--permission-mode",
        "yolo",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(
        report["result"],
        "Fixed the import: greet and shout live in utils.py."
    );
    assert!(
        env.read("main.py")
            .contains("from utils import greet, shout")
    );
    assert_eq!(
        report["usage"],
        json!({"prompt_tokens": 4200, "completion_tokens": 110, "cached_prompt_tokens": 1600, "cache_creation_tokens": 0})
    );

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for request in &requests {
        assert!(request.path.ends_with("/v1/responses"), "{}", request.path);
        let body = &request.body;
        assert_eq!(body["store"], false);
        assert_eq!(body["include"], json!(["reasoning.encrypted_content"]));
        assert!(body.get("previous_response_id").is_none());
        assert!(body["instructions"].as_str().unwrap().len() > 100);
        assert!(
            body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .any(|t| t["name"] == "read_file" && t["type"] == "function")
        );
    }
    // The reasoning item goes back as received, before the calls it led to.
    let second = &requests[1].body;
    let reasoning = items(second, "reasoning");
    assert_eq!(reasoning.len(), 1, "{second}");
    assert_eq!(reasoning[0]["encrypted_content"], "enc-reasoning-1");
    assert_eq!(reasoning[0]["id"], "rs_mock_0");
    // Both parallel calls, then both outputs.
    let calls = items(second, "function_call");
    assert_eq!(
        calls
            .iter()
            .map(|c| c["call_id"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["c1", "c2"]
    );
    assert_eq!(calls[0]["arguments"], r#"{"file_path":"main.py"}"#);
    let outputs = items(second, "function_call_output");
    assert_eq!(outputs.len(), 2);
    assert_eq!(outputs[0]["call_id"], "c1");
    assert!(outputs[1]["output"].as_str().unwrap().contains("def shout"));
    let third = &requests[2].body;
    let outputs = items(third, "function_call_output");
    assert!(outputs.iter().any(
        |o| o["call_id"] == "c4" && o["output"].as_str().unwrap().contains("THE IMPORT WORKS!")
    ));
}

#[test]
fn a_429_and_a_cut_stream_are_retried() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::rate_limited(0))
            .reply(
                Turn::text("Half an ans")
                    .chunks(["Half ", "an ", "ans"])
                    .cut_after(3),
            )
            .reply(Turn::text("The whole answer.")),
    );
    let out = run(rein_responses(&env, &server).args(["-p", "hello"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "The whole answer.");
    assert_eq!(server.requests().len(), 3);
}

#[test]
fn a_session_resumes_with_c_from_reins_own_file() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("Noted: marmalade."))
            .reply(Turn::text("The word was marmalade.")),
    );
    let out = run(rein_responses(&env, &server).args(["-p", "remember the word marmalade"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(rein_responses(&env, &server).args(["-c", "-p", "which word?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "The word was marmalade.");
    let second = &server.requests()[1].body;
    assert!(second.get("previous_response_id").is_none());
    let input = second["input"].as_array().unwrap();
    let texts: Vec<String> = input.iter().map(Value::to_string).collect();
    assert!(
        texts[0].contains("remember the word marmalade"),
        "{texts:?}"
    );
    assert!(texts[1].contains("Noted: marmalade.") && input[1]["role"] == "assistant");
    assert!(texts.last().unwrap().contains("which word?"));
}
