//! Sessions: resume, continue after a crash, and the lock.

use std::process::Stdio;
use std::time::Duration;

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{
    Env, final_json, run, signal, stderr, stdout, strict_mock, wait_for_file, wait_output,
};

#[test]
fn resume_by_id_sends_the_earlier_history_with_the_sessions_model() {
    let env = Env::new();
    let first = MockServer::start(Script::new().reply(Turn::text("The answer is 42.")));
    let out = run(env.rein_openai(&first).args([
        "-m",
        "model-one",
        "-p",
        "what is the answer?",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let id = final_json(&out)["session_id"].as_str().unwrap().to_owned();

    let second = MockServer::start(Script::new().reply(Turn::text("You asked about the answer.")));
    // REIN_MODEL says gpt-4o, but a resumed session keeps its model unless -m is given.
    let out = run(env
        .rein_openai(&second)
        .args(["-r", &id, "-p", "what did I ask?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &second.requests()[0].body;
    assert_eq!(body["model"], "model-one");
    let contents: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .map(|m| m["content"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        contents,
        [
            "what is the answer?",
            "The answer is 42.",
            "what did I ask?"
        ]
    );

    let out = run(env
        .rein_openai(&second)
        .args(["-r", "../../etc/passwd", "-p", "x"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("session"), "{}", stderr(&out));
}

#[test]
fn continue_after_kill_9_mid_tool_sends_a_valid_history() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::new().tool_call(MockToolCall::new(
        "slow",
        "bash",
        json!({"command": "echo $$ > started.pid; sleep 3"}).to_string(),
    ))));
    let child = env
        .rein_openai(&server)
        .args(["-p", "run the slow thing", "--permission-mode", "yolo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rein_pid = child.id();
    wait_for_file(&env.work.join("started.pid"), Duration::from_secs(30));
    signal(rein_pid, "KILL");
    let _ = wait_output(child, Duration::from_secs(10));

    let strict = strict_mock("resumed fine");
    let out = run(env.rein_openai(&strict).args(["-c", "-p", "go on"]));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "resumed fine");
    let body = &strict.requests()[0].body;
    let tool_result = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool_result["content"]
            .as_str()
            .unwrap()
            .contains("interrupted"),
        "{tool_result}"
    );
}

#[test]
fn continue_without_a_session_says_so() {
    let env = Env::new();
    let server = MockServer::start(Script::new());
    let out = run(env.rein_openai(&server).args(["-c", "-p", "go on"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no session to continue"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_session_in_use_is_refused() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("thinking...").stall_after(1)));
    let first = env
        .rein_openai(&server)
        .args(["-p", "think long"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    server
        .wait_for_requests(1, Duration::from_secs(30))
        .unwrap();
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    let id = files[0].file_stem().unwrap().to_str().unwrap().to_owned();

    let other = MockServer::start(Script::new().reply(Turn::text("no")));
    let out = run(env.rein_openai(&other).args(["-r", &id, "-p", "me too"]));
    assert_eq!(out.status.code(), Some(1));
    assert!(stderr(&out).contains("in use"), "{}", stderr(&out));
    assert_eq!(other.request_count(), 0);

    signal(first.id(), "INT");
    let out = wait_output(first, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130));
}

#[test]
fn an_unknown_session_id_is_bad_usage_with_a_usable_hint() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("unused")));
    let out = run(env
        .rein_openai(&server)
        .args(["-r", "20990101-000000-nosuch", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2));
    let message = stderr(&out);
    assert!(message.contains("nosuch"), "{message}");
    assert!(message.contains("rein -c"), "{message}");
    assert!(!message.contains("rein sessions"), "{message}");
    let out = run(env
        .rein_openai(&server)
        .args(["-r", "../../etc/passwd", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid session id"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.request_count(), 0);
}

#[test]
fn continuing_resumes_the_model_with_the_provider_it_was_used_through() {
    let env = Env::new();
    // One server speaks both wire formats; the path of each request shows which was used.
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("from claude"))
            .reply(Turn::text("from gpt"))
            .reply(Turn::text("gpt again")),
    );
    let base = server.base_url();
    let openai_base = server.openai_base_url();
    let step = |args: &[&str]| {
        let out = run(env
            .rein()
            .env("ANTHROPIC_API_KEY", "sk-ant-test")
            .env("OPENAI_API_KEY", "sk-test")
            .args(args));
        assert!(out.status.success(), "{}", stderr(&out));
    };
    step(&["-m", "claude-sonnet-4-5", "--base-url", &base, "-p", "a"]);
    step(&["-c", "-m", "gpt-4o", "--base-url", &openai_base, "-p", "b"]);
    // No -m: the session's last model, gpt-4o, and with it the OpenAI wire format.
    step(&["-c", "--base-url", &openai_base, "-p", "c"]);
    let requests = server.requests();
    let sent: Vec<(&str, &str)> = requests
        .iter()
        .map(|r| (r.path.as_str(), r.body["model"].as_str().unwrap()))
        .collect();
    assert_eq!(
        sent,
        [
            ("/v1/messages", "claude-sonnet-4-5"),
            ("/v1/chat/completions", "gpt-4o"),
            ("/v1/chat/completions", "gpt-4o"),
        ]
    );
}

#[test]
fn a_mangled_byte_in_the_session_file_keeps_the_prompt_on_resume() {
    let env = Env::new();
    let first = MockServer::start(Script::new().reply(Turn::text("Noted.")));
    let out = run(env
        .rein_openai(&first)
        .args(["-p", "remember the word apple"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let file = env.session_files().pop().unwrap();
    let bytes = std::fs::read(&file).unwrap();
    let at = bytes.windows(5).position(|w| w == b"apple").unwrap();
    let mut mangled = bytes.clone();
    mangled[at] = 0xFF;
    std::fs::write(&file, mangled).unwrap();

    let second = strict_mock("You said apple.");
    let out = run(env.rein_openai(&second).args(["-c", "-p", "which word?"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let body = &second.requests()[0].body;
    let users: Vec<&str> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["remember the word \u{FFFD}pple", "which word?"]);
    assert!(stderr(&out).contains("not UTF-8"), "{}", stderr(&out));
}
