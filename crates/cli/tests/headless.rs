//! One-shot and headless modes: output formats, stdin, the missing-key message.

use std::io::Write;
use std::process::Stdio;
use std::time::Duration;

use rein_testkit::{MockServer, MockToolCall, MockUsage, Reply, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, stderr, stdout, wait_output};

fn write_then_answer() -> Script {
    Script::new()
        .reply(
            Turn::new()
                .tool_call(MockToolCall::new(
                    "w1",
                    "write_file",
                    json!({"file_path": "notes/todo.txt", "content": "one\ntwo\n"}).to_string(),
                ))
                .tool_call(MockToolCall::new(
                    "r1",
                    "read_file",
                    json!({"file_path": "README"}).to_string(),
                ))
                .usage(MockUsage::new(1000, 50).cached(600)),
        )
        .reply(Turn::text("Wrote the notes.").usage(MockUsage::new(1200, 20).cached(1000)))
}

#[test]
fn json_output_is_one_object_with_the_documented_fields() {
    let env = Env::new();
    env.write("README", "hello\n");
    let server = MockServer::start(write_then_answer());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "take notes", "--output-format", "json"])
        .args(["--permission-mode", "accept-edits"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "exactly one line: {text}");
    let report = final_json(&out);
    assert_eq!(report["type"], "result");
    assert_eq!(report["result"], "Wrote the notes.");
    assert_eq!(report["stop_reason"], "end_turn");
    assert_eq!(report["rounds"], 2);
    assert_eq!(
        report["usage"],
        json!({"prompt_tokens": 2200, "completion_tokens": 70, "cached_prompt_tokens": 1600, "cache_creation_tokens": 0})
    );
    // gpt-4o is priced: a number, not null, in whole micro-dollars.
    let cost = report["cost_usd"].as_f64().unwrap();
    assert!(cost > 0.0);
    assert_eq!(cost, (cost * 1e6).round() / 1e6);
    assert!(
        report["cost_usd"].to_string().len() <= "0.123456".len(),
        "{}",
        report["cost_usd"]
    );
    assert_eq!(
        report["files_changed"],
        json!(["notes/todo.txt"]),
        "read files are not listed"
    );
    assert!(report["duration_ms"].as_u64().is_some());
    let id = report["session_id"].as_str().unwrap();
    assert!(
        env.session_files()
            .iter()
            .any(|p| p.file_stem().unwrap() == id)
    );
    assert_eq!(
        std::fs::read_to_string(env.work.join("notes/todo.txt")).unwrap(),
        "one\ntwo\n"
    );
}

#[test]
fn an_unpriced_model_has_a_null_cost() {
    let env = Env::new();
    let server =
        MockServer::start(Script::new().reply(Turn::text("hi").usage(MockUsage::new(10, 2))));
    let out = run(env.rein_openai(&server).args([
        "-m",
        "my-local-model",
        "-p",
        "hi",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["cost_usd"], serde_json::Value::Null);
    assert_eq!(server.requests()[0].body["model"], "my-local-model");
}

#[test]
fn stream_json_writes_every_event_then_the_result() {
    let env = Env::new();
    env.write("README", "hello\n");
    let server = MockServer::start(write_then_answer());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "take notes", "--output-format", "stream-json"])
        .args(["--permission-mode", "accept-edits"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    for expected in [
        "tool_call_started",
        "tool_result",
        "usage",
        "text_delta",
        "response_finished",
        "turn_finished",
    ] {
        assert!(
            types.contains(&expected),
            "{expected} missing from {types:?}"
        );
    }
    assert_eq!(*types.last().unwrap(), "result");
    // The session comes first, so a wrapper can resume or cancel before the run ends.
    assert_eq!(types[0], "session");
    assert_eq!(lines[0]["session_id"], lines.last().unwrap()["session_id"]);
    assert_eq!(lines[0]["model"], "gpt-4o");
    assert_eq!(lines[0]["resumed"], false);
    // One vocabulary for usage: the events and the final object use the same names.
    let usage_event = lines.iter().rfind(|l| l["type"] == "usage").unwrap();
    assert_eq!(usage_event["total"], lines.last().unwrap()["usage"]);
    let started = lines
        .iter()
        .find(|l| l["type"] == "tool_call_started")
        .unwrap();
    assert_eq!(started["name"], "write_file");
    assert_eq!(started["arguments"]["file_path"], "notes/todo.txt");
    let result = lines.iter().find(|l| l["type"] == "tool_result").unwrap();
    assert_eq!(result["is_error"], false);
    assert!(result["duration_ms"].is_u64());
    let last = lines.last().unwrap();
    assert_eq!(last["result"], "Wrote the notes.");
    assert_eq!(last["files_changed"], json!(["notes/todo.txt"]));
}

#[test]
fn the_prompt_can_come_from_stdin() {
    let env = Env::new();
    for args in [vec!["-p", "-"], vec![]] {
        let server = MockServer::start(Script::new().reply(Turn::text("ok")));
        let mut child = env
            .rein_openai(&server)
            .args(&args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"explain this diff\n")
            .unwrap();
        let out = wait_output(child, Duration::from_secs(30));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        assert_eq!(
            server.requests()[0].body["messages"][1]["content"],
            "explain this diff\n"
        );
    }
}

#[test]
fn a_silent_open_pipe_does_not_hold_up_a_given_prompt() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    // stdin is an inherited pipe that never sends and never closes (an orchestrator's).
    let mut child = env
        .rein_openai(&server)
        .args(["-p", "hi"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let _keep_open = child.stdin.take();
    let out = wait_output(child, Duration::from_secs(30));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "ok");
    assert!(
        stderr(&out).contains("going on without it"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.requests()[0].body["messages"][1]["content"], "hi");
}

/// Runs `rein -p PROMPT` with `input` piped to it, returning the user message it sent.
fn piped_request(env: &Env, prompt: &str, input: &[u8]) -> (String, String) {
    let server = MockServer::start(Script::new().reply(Turn::text("reviewed")));
    let mut child = env
        .rein_openai(&server)
        .args(["-p", prompt])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // A writer of its own: rein stops reading at its limit, and a big write must not block
    // the test.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let out = wait_output(child, Duration::from_secs(30));
    writer.join().unwrap();
    assert!(out.status.success(), "{}", stderr(&out));
    let content = server.requests()[0].body["messages"][1]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    (content, stderr(&out))
}

#[test]
fn piped_input_is_attached_to_a_given_prompt() {
    let env = Env::new();
    let diff = "diff --git a/x.py b/x.py\n-import helpers\n+import utils\n";
    let (content, _) = piped_request(&env, "review this", diff.as_bytes());
    assert_eq!(
        content,
        format!("review this\n\nInput piped to rein:\n```\n{diff}```")
    );
}

#[test]
fn big_piped_input_is_cut_and_says_so() {
    let env = Env::new();
    let big: Vec<u8> = "0123456789abcdef\n".repeat(20_000).into_bytes(); // 340 KB
    let (content, err) = piped_request(&env, "summarise", &big);
    assert!(content.len() < 270 * 1024, "{}", content.len());
    assert!(content.starts_with("summarise\n\nInput piped to rein:\n```\n0123"));
    assert!(
        content.ends_with("the rest was not read.)"),
        "{}",
        &content[content.len() - 200..]
    );
    assert!(err.contains("only its start is attached"), "{err}");
}

#[test]
fn without_a_key_rein_explains_what_to_set_and_exits_2() {
    let env = Env::new();
    let out = run(env.rein().args(["-p", "fix it"]));
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    for needle in [
        "OPENAI_API_KEY",
        "DEEPSEEK_API_KEY",
        "ANTHROPIC_API_KEY",
        "REIN_API_KEY",
        "http://localhost:11434/v1",
        "rein --demo",
    ] {
        assert!(
            message.contains(needle),
            "{needle} missing from:\n{message}"
        );
    }
    assert!(stdout(&out).is_empty());

    // Headless callers still get their one object, with the same message.
    let out = run(env.rein().args(["-p", "fix it", "--output-format", "json"]));
    assert_eq!(out.status.code(), Some(2));
    let report = final_json(&out);
    assert_eq!(report["type"], "result");
    assert_eq!(report["stop_reason"], "error");
    assert_eq!(report["rounds"], 0);
    assert!(report["error"].as_str().unwrap().contains("OPENAI_API_KEY"));
}

#[test]
fn a_blank_prompt_is_refused_before_any_request() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("should not be asked")));
    for prompt in ["", "  \n\t"] {
        let out = run(env.rein_openai(&server).args(["-p", prompt]));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        assert!(stderr(&out).contains("empty"), "{}", stderr(&out));
    }
    assert_eq!(server.request_count(), 0);
}

#[test]
fn narration_is_not_printed_as_the_answer_when_the_turn_fails() {
    let env = Env::new();
    env.write("notes.txt", "hello\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("Let me look.").tool_call(MockToolCall::new(
                "r1",
                "read_file",
                json!({"file_path": "notes.txt"}).to_string(),
            )))
            .reply(Reply::unauthorized()),
    );
    let out = run(env.rein_openai(&server).args(["-p", "look"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), "", "stdout holds only a final answer");
    let progress = stderr(&out);
    assert!(progress.contains("Let me look."), "{progress}");
    assert!(
        progress.contains("401") || progress.to_lowercase().contains("auth"),
        "{progress}"
    );
}

#[test]
fn a_local_server_needs_no_key() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("local ok")));
    let out = run(env.rein().args([
        "--base-url",
        &server.openai_base_url(),
        "-m",
        "qwen2.5-coder",
        "-p",
        "hi",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "local ok");
    assert_eq!(server.requests()[0].header("authorization"), None);
}

#[test]
fn bad_usage_exits_2() {
    let env = Env::new();
    let out = run(env.rein().args(["--output-format", "yaml", "-p", "x"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("yaml"));
    let out = run(env.rein().args(["-v"]));
    assert!(out.status.success());
    assert!(stdout(&out).contains(env!("CARGO_PKG_VERSION")));
}

#[test]
fn record_then_replay_needs_no_network() {
    let env = Env::new();
    env.write("README", "hello\n");
    let cassette = env.home.join("run.jsonl");
    let server = MockServer::start(write_then_answer());
    let out = run(env
        .rein_openai(&server)
        .args([
            "-p",
            "take notes",
            "--permission-mode",
            "accept-edits",
            "--record",
        ])
        .arg(&cassette));
    assert!(out.status.success(), "{}", stderr(&out));
    drop(server);
    std::fs::remove_dir_all(env.work.join("notes")).unwrap();

    // No key, no server: the cassette plays the model's side.
    let out = run(env
        .rein()
        .args(["-p", "take notes", "--output-format", "json"])
        .args(["--permission-mode", "accept-edits", "--replay"])
        .arg(&cassette));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(final_json(&out)["result"], "Wrote the notes.");
    assert_eq!(
        std::fs::read_to_string(env.work.join("notes/todo.txt")).unwrap(),
        "one\ntwo\n"
    );
}

#[test]
fn escape_sequences_in_the_answer_are_shown_harmlessly() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new().reply(Turn::text("Done.\u{1b}]0;pwned\u{7}\u{1b}[2J All good.")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Done.␛]0;pwned␇␛[2J All good.\n");

    // JSON output keeps the text exactly, escaped by JSON's rules.
    let server = MockServer::start(Script::new().reply(Turn::text("Done.\u{1b}]0;pwned\u{7}")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "hi", "--output-format", "json"]));
    assert!(
        stdout(&out).contains(r"Done.\u001b]0;pwned\u0007"),
        "{}",
        stdout(&out)
    );
    assert_eq!(final_json(&out)["result"], "Done.\u{1b}]0;pwned\u{7}");
}
