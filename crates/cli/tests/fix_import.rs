//! The headline job end to end: rein reads main.py, fixes its import and runs it.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, run, stderr, stdout};

const MAIN_PY: &str = include_str!("../demo/project/main.py");
const UTILS_PY: &str = include_str!("../demo/project/utils.py");

fn call(id: &str, name: &str, args: serde_json::Value) -> MockToolCall {
    MockToolCall::new(id, name, args.to_string()).split_every(9)
}

fn fix_import_script() -> Script {
    Script::new()
        .reply(
            Turn::text("Reading both files.")
                .tool_call(call("c1", "read_file", json!({"file_path": "main.py"})))
                .tool_call(call("c2", "read_file", json!({"file_path": "utils.py"}))),
        )
        .reply(
            Turn::new()
                .tool_call(call(
                    "c3",
                    "edit_file",
                    json!({"file_path": "main.py", "old_string": "from helpers import greet, shout", "new_string": "from utils import greet, shout"}),
                ))
                .tool_call(call("c4", "bash", json!({"command": "python3 main.py"}))),
        )
        .reply(Turn::text("Fixed the import: greet and shout live in utils.py.").chunks(["Fixed the import: ", "greet and shout live in utils.py."]))
}

fn project(env: &Env) {
    crate::support::require_python3();
    env.write("main.py", MAIN_PY);
    env.write("utils.py", UTILS_PY);
    env.write("AGENTS.md", "Run programs with python3.\n");
}

fn python_output(env: &Env) -> String {
    let out = std::process::Command::new("python3")
        .arg("main.py")
        .current_dir(&env.work)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn openai_wire_format() {
    let env = Env::new();
    project(&env);
    let server = MockServer::start(fix_import_script());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "read main.py and fix the broken import"])
        .args(["--permission-mode", "yolo"]));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        "Fixed the import: greet and shout live in utils.py."
    );
    assert!(
        env.read("main.py")
            .contains("from utils import greet, shout")
    );
    assert_eq!(python_output(&env), "Hello, rein!\nTHE IMPORT WORKS!\n");

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert_eq!(requests[0].header("authorization"), Some("Bearer sk-test"));
    let first = &requests[0].body;
    assert_eq!(first["model"], "gpt-4o");
    let system = first["messages"][0]["content"].as_str().unwrap();
    assert!(
        system.contains("Run programs with python3."),
        "AGENTS.md is in the system prompt"
    );
    assert_eq!(
        first["messages"][1]["content"],
        "read main.py and fix the broken import"
    );
    let last = requests[2].body.to_string();
    assert!(
        last.contains("Hello, rein!"),
        "the program's output went back to the model"
    );
    // The system prompt is byte-identical across rounds.
    for request in &requests[1..] {
        assert_eq!(
            request.body["messages"][0]["content"].as_str().unwrap(),
            system
        );
    }
    let progress = stderr(&out);
    assert!(
        progress.contains("edit_file") && progress.contains("+from utils import greet, shout"),
        "{progress}"
    );
}

#[test]
fn anthropic_wire_format() {
    let env = Env::new();
    project(&env);
    let server = MockServer::start(fix_import_script());
    let out = run(env
        .rein()
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .args(["--base-url", &server.base_url(), "-m", "claude-sonnet-4-5"])
        .args(["-p", "read main.py and fix the broken import"])
        .args(["--permission-mode", "yolo"]));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(python_output(&env), "Hello, rein!\nTHE IMPORT WORKS!\n");
    assert!(stdout(&out).contains("Fixed the import"));

    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    assert!(requests.iter().all(|r| r.path == "/v1/messages"));
    assert_eq!(requests[0].header("x-api-key"), Some("sk-ant-test"));
    assert!(requests[0].header("anthropic-version").is_some());
    let first = &requests[0].body;
    assert!(
        first["system"]
            .to_string()
            .contains("Run programs with python3.")
    );
    // The tool results of one response travel in one user message.
    let third = &requests[2].body["messages"];
    let results_message = third
        .as_array()
        .unwrap()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap();
    let blocks = results_message["content"].as_array().unwrap();
    assert_eq!(
        blocks.iter().filter(|b| b["type"] == "tool_result").count(),
        2
    );
}
