//! The `rein-mock` binary.

use std::{
    io::{BufRead, BufReader},
    net::SocketAddr,
    path::Path,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use serde_json::{Value, json};

use crate::client::{Client, Ending, openai_stream_request};

/// Kills the spawned server when the test ends, however it ends.
struct Running {
    child: Child,
    addr: SocketAddr,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn spawn(script: &Path, extra: &[&str]) -> Running {
    let mut child = Command::new(env!("CARGO_BIN_EXE_rein-mock"))
        .arg("--script")
        .arg(script)
        .args(extra)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut first_line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first_line)
        .unwrap();
    let url = first_line.trim();
    let addr = url
        .strip_prefix("http://")
        .unwrap_or_else(|| panic!("first line is not a base URL: {first_line:?}"))
        .parse()
        .unwrap();
    Running { child, addr }
}

/// Reads the log until it has `count` lines, or fails after a while.
fn log_lines(path: &Path, count: usize) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let text = std::fs::read_to_string(path).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        if lines.len() >= count || Instant::now() > deadline {
            return lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test]
async fn serves_a_script_file_and_logs_each_request() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!({
            "replies": [
                { "turn": { "text": ["Hel", "lo"] } },
                { "error": { "kind": "rate_limited", "retry_after_secs": 2 } },
            ]
        })
        .to_string(),
    )
    .unwrap();
    let log = dir.path().join("requests.jsonl");
    let server = spawn(&script, &["--log", log.to_str().unwrap()]);
    assert_eq!(server.addr.ip().to_string(), "127.0.0.1");

    let mut client = Client::connect(server.addr).await;
    let request = openai_stream_request();
    let first = client.post("/v1/chat/completions", &request).await;
    assert_eq!(first.ending(), Ending::Complete);
    assert_eq!(first.sse_json()[1]["choices"][0]["delta"]["content"], "Hel");
    let second = client.post("/v1/messages", &request).await;
    assert_eq!(second.status, 429);
    assert_eq!(second.header("retry-after"), Some("2"));
    let exhausted = client.post("/v1/messages", &request).await;
    assert_eq!(exhausted.status, 500);

    let lines = log_lines(&log, 3);
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["path"], "/v1/chat/completions");
    assert_eq!(lines[1]["path"], "/v1/messages");
    for line in &lines {
        assert_eq!(line["body_bytes"], request.to_string().len());
        let received = line["received_unix_nanos"].as_u64().unwrap();
        let responded = line["responded_unix_nanos"].as_u64().unwrap();
        assert!(received > 1_600_000_000_000_000_000, "{line}");
        assert!(responded >= received, "{line}");
    }
}

#[tokio::test]
async fn repeat_serves_the_script_forever() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"[{"turn": {"text": ["again"]}}]"#).unwrap();
    let server = spawn(&script, &["--repeat"]);
    let mut client = Client::connect(server.addr).await;
    for _ in 0..3 {
        let response = client
            .post("/v1/chat/completions", &openai_stream_request())
            .await;
        assert_eq!(response.status, 200);
        assert_eq!(
            response.sse_json()[1]["choices"][0]["delta"]["content"],
            "again"
        );
    }
}

#[test]
fn a_bad_script_is_refused_with_the_file_and_field_named() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.json");
    std::fs::write(&script, r#"[{"turn": {"texts": ["x"]}}]"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_rein-mock"))
        .arg("--script")
        .arg(&script)
        .output()
        .unwrap();
    assert!(!output.status.success());
    assert!(
        output.stdout.is_empty(),
        "no URL is printed for a server that did not start"
    );
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("bad.json") && stderr.contains("texts"),
        "{stderr}"
    );

    let missing = Command::new(env!("CARGO_BIN_EXE_rein-mock"))
        .args(["--script", "/nonexistent/script.json"])
        .output()
        .unwrap();
    assert!(!missing.status.success());
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read the script"));
}

#[tokio::test]
async fn the_shipped_example_script_serves_a_tool_round() {
    let script =
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/tool-round.json");
    let server = spawn(&script, &[]);
    let mut client = Client::connect(server.addr).await;
    let request = openai_stream_request();
    let first = client.post("/v1/chat/completions", &request).await;
    let chunks = first.sse_json();
    assert_eq!(
        chunks[chunks.len() - 1]["choices"][0]["finish_reason"],
        "tool_calls"
    );
    let second = client.post("/v1/chat/completions", &request).await;
    assert_eq!(
        second.sse_json().last().unwrap()["choices"][0]["finish_reason"],
        "stop"
    );
    let again = client.post("/v1/chat/completions", &request).await;
    assert_eq!(
        again.sse_json().last().unwrap()["choices"][0]["finish_reason"],
        "tool_calls",
        "the file says repeat"
    );
}
