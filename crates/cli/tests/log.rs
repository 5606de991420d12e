//! `REIN_LOG`: rein's diagnostics in `$REIN_HOME/logs/`, with each request's timeline, its
//! retries and its tool calls, and never the API key.

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::json;

use crate::support::{Env, run, stderr, stdout};

const KEY: &str = "sk-log-test-0123456789abcdef";

#[test]
fn rein_log_debug_writes_the_request_timeline_and_never_the_key() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let server = MockServer::start(
        Script::new()
            .reply(Reply::overloaded())
            .reply(Turn::new().tool_call(MockToolCall::new(
                "call_1",
                "read_file",
                json!({ "file_path": "a.txt" }).to_string(),
            )))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .env("OPENAI_API_KEY", KEY)
        .env("REIN_LOG", "debug")
        .args(["-p", "read a"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "done");
    let log = std::fs::read_to_string(env.rein_home.join("logs/rein.log")).unwrap();
    for step in [
        "rein started",
        "request sent",
        "response headers",
        "first byte",
        "model call failed; retrying",
        "tool start",
        "tool end",
        "response complete",
    ] {
        assert!(log.contains(step), "{step} is missing from the log:\n{log}");
    }
    assert!(log.contains("read_file"), "{log}");
    assert!(!log.contains(KEY), "the key is in the log:\n{log}");
    assert!(
        !log.contains(&KEY[8..]),
        "part of the key is in the log:\n{log}"
    );
}

#[test]
fn without_rein_log_nothing_is_written_and_a_bad_level_is_said() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("hi")).repeating());
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.rein_home.join("logs").exists());

    let out = run(env
        .rein_openai(&server)
        .env("REIN_LOG", "loud")
        .args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("REIN_LOG=\"loud\" is not a level"),
        "{}",
        stderr(&out)
    );
}
