//! Ctrl+C and the processes rein's commands start.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{
    Env, process_alive, run, signal, stderr, strict_mock, wait_for_file, wait_output,
};

fn assert_gone(pid: u32) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while process_alive(pid) {
        assert!(Instant::now() < deadline, "process {pid} is still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Each line of the session file is JSON, and its last event says how the turn ended.
fn assert_session_ended(env: &Env, stop: &str) {
    let files = env.session_files();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let lines: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let last = lines.last().unwrap();
    assert_eq!(last["kind"], "turn_finished", "{text}");
    assert_eq!(last["stop_reason"], stop);
}

#[test]
fn sigint_mid_stream_exits_130_with_a_valid_session() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new().reply(Turn::text("partial").chunks(["par", "tial"]).stall_after(2)),
    );
    let child = env
        .rein_openai(&server)
        .args(["-p", "talk"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    server
        .wait_for_requests(1, Duration::from_secs(30))
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    signal(child.id(), "INT");
    let out = wait_output(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_session_ended(&env, "cancelled");
}

#[test]
fn sigint_mid_stream_after_an_early_call_then_continue_sends_a_valid_history() {
    let env = Env::new();
    env.write("a.txt", "alpha\n");
    let read = |id: &str| {
        MockToolCall::new(id, "read_file", json!({"file_path": "a.txt"}).to_string()).split_every(8)
    };
    // Some narration (so the session holds more than the prompt and is kept), then r1
    // streams whole and starts at once (read-only); the stream then stalls inside r2.
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("Reading it.")
                .tool_call(read("r1").split_every(0))
                .tool_call(read("r2"))
                .stall_after(4),
        ),
    );
    let child = env
        .rein_openai(&server)
        .args(["-p", "read", "--output-format", "stream-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    server
        .wait_for_requests(1, Duration::from_secs(30))
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(child.id(), "INT");
    let out = wait_output(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_session_ended(&env, "cancelled");
    // Every call a reader saw start also ended.
    let events: Vec<serde_json::Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let ids = |kind: &str| -> Vec<String> {
        events
            .iter()
            .filter(|e| e["type"] == kind)
            .map(|e| e["id"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(ids("tool_call_started"), ["r1"]);
    assert_eq!(ids("tool_result"), ["r1"]);

    let strict = strict_mock("continued");
    let out = run(env.rein_openai(&strict).args(["-c", "-p", "go on"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "continued");
}

#[test]
fn sigint_mid_tool_kills_the_command_and_its_children() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::new().tool_call(MockToolCall::new(
        "slow",
        "bash",
        json!({"command": "sleep 60 & echo $! > child.pid; echo $$ > shell.pid; wait"}).to_string(),
    ))));
    let child = env
        .rein_openai(&server)
        .args(["-p", "run it", "--permission-mode", "yolo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let grandchild: u32 = wait_for_file(&env.work.join("child.pid"), Duration::from_secs(30))
        .trim()
        .parse()
        .unwrap();
    let shell: u32 = wait_for_file(&env.work.join("shell.pid"), Duration::from_secs(30))
        .trim()
        .parse()
        .unwrap();
    assert!(process_alive(grandchild));
    signal(child.id(), "INT");
    let out = wait_output(child, Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_gone(grandchild);
    assert_gone(shell);
    assert_session_ended(&env, "cancelled");

    // The interrupted call has its result: a strict API accepts the continued session.
    let strict = strict_mock("continued");
    let out = run(env.rein_openai(&strict).args(["-c", "-p", "go on"]));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn background_processes_end_when_rein_exits() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "bg",
                "bash",
                json!({"command": "sleep 60 > /dev/null 2>&1 & echo $! > server.pid"}).to_string(),
            )))
            .reply(Turn::text("started a background job")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "start it", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let pid: u32 = std::fs::read_to_string(env.work.join("server.pid"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert_gone(pid);
}

/// SIGTERM, SIGHUP and SIGQUIT mid-command: like Ctrl+C, every process rein started stops
/// (background jobs included), the session is saved and valid, and the status is 128 + N.
#[test]
fn term_hup_and_quit_stop_every_process_save_the_session_and_exit_128_plus_n() {
    for (sig, status) in [("TERM", 143), ("HUP", 129), ("QUIT", 131)] {
        let env = Env::new();
        let server = MockServer::start(Script::new().reply(Turn::new().tool_call(
            MockToolCall::new(
                "slow",
                "bash",
                json!({"command": "sleep 60 > /dev/null 2>&1 & echo $! > job.pid; echo $$ > shell.pid; sleep 60"})
                    .to_string(),
            ),
        )));
        let child = env
            .rein_openai(&server)
            .args([
                "-p",
                "run it",
                "--output-format",
                "json",
                "--permission-mode",
                "yolo",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let job: u32 = wait_for_file(&env.work.join("job.pid"), Duration::from_secs(30))
            .trim()
            .parse()
            .unwrap();
        let shell: u32 = wait_for_file(&env.work.join("shell.pid"), Duration::from_secs(30))
            .trim()
            .parse()
            .unwrap();
        signal(child.id(), sig);
        let out = wait_output(child, Duration::from_secs(15));
        assert_eq!(
            out.status.code(),
            Some(status),
            "SIG{sig}: {}",
            stderr(&out)
        );
        assert_gone(job);
        assert_gone(shell);
        assert_session_ended(&env, "cancelled");
        let report: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).unwrap();
        assert_eq!(report["stop_reason"], "cancelled", "SIG{sig}");

        let strict = strict_mock("continued");
        let out = run(env.rein_openai(&strict).args(["-c", "-p", "go on"]));
        assert!(out.status.success(), "SIG{sig}: {}", stderr(&out));
    }
}
