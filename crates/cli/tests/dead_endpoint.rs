//! A dead or hung endpoint: one clear line per retry, one final error with what to do, and
//! no waiting in silence.

use rein_testkit::{MockServer, Reply, Script};

use crate::support::{Env, run, stderr, stdout};

/// A port on 127.0.0.1 that nothing listens on.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn a_local_server_that_is_not_running_is_said_so_once_without_retries() {
    let env = Env::new();
    let base = format!("http://127.0.0.1:{}/v1", closed_port());
    let out = run(env
        .rein()
        .env("REIN_BASE_URL", &base)
        .env("REIN_MODEL", "qwen2.5-coder")
        .args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert_eq!(
        message.trim(),
        // One line, no retry: a server that is not running will not start by itself.
        format!(
            "rein: could not connect to {base}/chat/completions: connection refused, so no \
             server is running there (start it, or check the base URL)"
        )
    );
}

#[test]
fn a_server_that_never_answers_gets_one_line_per_retry_and_one_final_error() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Reply::silent()).repeating());
    env.write(
        ".rein/config.toml",
        "first_byte_timeout_secs = 1\nretries = 1\n",
    );
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    let lines: Vec<&str> = message.lines().collect();
    assert_eq!(lines.len(), 2, "{message}");
    assert!(
        lines[0].starts_with("↻ retry 1 in ")
            && lines[0].ends_with("s: timed out: no response within 1 s (first_byte_timeout_secs)"),
        "{message}"
    );
    assert_eq!(
        lines[1],
        "rein: timed out: no response within 1 s (first_byte_timeout_secs)"
    );
    assert_eq!(server.request_count(), 2);
}

#[test]
fn a_long_wait_for_the_first_byte_is_shown() {
    let env = Env::new();
    // What a provider yields after ten seconds without an answer, then the answer.
    let cassette = env.write(
        "slow.jsonl",
        r#"{"events":[{"type":"waiting","elapsed":{"secs":10,"nanos":0}},{"type":"text_delta","text":"at last"},{"type":"finish","stop_reason":"end_turn"}]}"#,
    );
    let out = run(env
        .rein()
        .args(["--replay"])
        .arg(&cassette)
        .args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "at last");
    assert!(
        stderr(&out).contains("waiting for the model: no answer yet after 10 s"),
        "{}",
        stderr(&out)
    );

    let out = run(env.rein().args(["--replay"]).arg(&cassette).args([
        "-p",
        "hi",
        "--output-format",
        "stream-json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let waiting = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .find(|e| e["type"] == "waiting")
        .unwrap();
    assert_eq!(waiting["elapsed_ms"], 10_000);
}
