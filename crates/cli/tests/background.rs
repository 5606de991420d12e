//! Background commands through the real binary: the finish notice reaches the model with
//! its next request, and nothing they started is left once the session ends, rein is
//! interrupted, or rein is killed with SIGKILL (checked, not assumed).

use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rein_testkit::{CapturedRequest, MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::json;

use crate::support::{Env, process_alive, run, signal, stderr, wait_for_file, wait_output};

fn bash(id: &str, command: &str) -> MockToolCall {
    MockToolCall::new(id, "bash", json!({ "command": command }).to_string())
}

fn background(id: &str, command: &str) -> MockToolCall {
    MockToolCall::new(
        id,
        "bash",
        json!({ "command": command, "run_in_background": true }).to_string(),
    )
}

fn pid_in(env: &Env, name: &str) -> u32 {
    wait_for_file(&env.work.join(name), Duration::from_secs(30))
        .trim()
        .parse()
        .unwrap()
}

fn assert_gone(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while process_alive(pid) {
        assert!(Instant::now() < deadline, "{what} ({pid}) is still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Ends a `sleep` the test started if an assertion failed before rein ended it.
struct Reap(u32);

impl Drop for Reap {
    fn drop(&mut self) {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", self.0)).unwrap_or_default();
        if self.0 > 1 && process_alive(self.0) && comm.trim() == "sleep" {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

fn mentions(request: &CapturedRequest, text: &str) -> bool {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m["content"].as_str().is_some_and(|c| c.contains(text)))
}

#[test]
fn the_model_hears_when_a_background_command_ends() {
    let env = Env::new();
    let round = AtomicUsize::new(0);
    // Start it, then keep the model busy until a request carries the notice.
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(move |request| {
                let n = round.fetch_add(1, Ordering::SeqCst);
                if n == 0 {
                    return Turn::new()
                        .tool_call(background("bg", "echo line one; echo line two; exit 4"))
                        .into();
                }
                if mentions(request, "<background>") || n > 200 {
                    return Turn::text("it ended").into();
                }
                Turn::new()
                    .tool_call(bash(&format!("wait{n}"), &format!("sleep 0.1; echo {n}")))
                    .into()
            }))
            .repeating(),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "build it", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let started = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "bg")
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        started.contains("Started in the background as bg1"),
        "{started}"
    );
    let told = requests.last().unwrap();
    let notice = told.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|m| m["content"].as_str())
        .find(|c| c.contains("<background>"))
        .unwrap()
        .to_owned();
    assert!(
        notice.contains("bg1 (`echo line one; echo line two; exit 4`) exited with code 4"),
        "{notice}"
    );
    assert!(notice.contains("line one\nline two"), "{notice}");
    assert!(
        notice.contains(&env.rein_home.join("tool-output").display().to_string()),
        "{notice}"
    );
    // Told once.
    let count = requests
        .iter()
        .map(|r| r.body.to_string().matches("<background>").count())
        .max()
        .unwrap();
    assert_eq!(count, 1);
}

#[test]
fn background_commands_end_with_the_session() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(background("bg", "sleep 300 & echo $! > child.pid; wait")))
            .reply(Turn::new().tool_call(bash(
                "wait",
                "while [ ! -s child.pid ]; do sleep 0.05; done",
            )))
            .reply(Turn::text("started")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "serve", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let child = pid_in(&env, "child.pid");
    let _reap = Reap(child);
    assert_gone(child, "the background command's child");
}

#[test]
fn interrupting_rein_stops_background_commands() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(background("bg", "sleep 300 & echo $! > child.pid; wait")))
            .reply(Turn::new().tool_call(bash("hold", "sleep 300"))),
    );
    let child = env
        .rein_openai(&server)
        .args(["-p", "serve", "--permission-mode", "yolo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let sleeper = pid_in(&env, "child.pid");
    let _reap = Reap(sleeper);
    server
        .wait_for_requests(2, Duration::from_secs(30))
        .unwrap();
    signal(child.id(), "INT");
    let out = wait_output(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_gone(sleeper, "the background command's child");
}

#[test]
fn nothing_is_left_after_rein_is_killed() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(background(
                "bg",
                "sleep 300 & echo $! > child.pid; echo $$ > shell.pid; wait",
            )))
            .reply(Turn::new().tool_call(bash("hold", "sleep 20"))),
    );
    let mut rein = env
        .rein_openai(&server)
        .args(["-p", "serve", "--permission-mode", "yolo"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let sleeper = pid_in(&env, "child.pid");
    let shell = pid_in(&env, "shell.pid");
    let _reap = Reap(sleeper);
    server
        .wait_for_requests(2, Duration::from_secs(30))
        .unwrap();
    rein.kill().unwrap();
    rein.wait().unwrap();
    assert_gone(sleeper, "the background command's child");
    assert_gone(shell, "the background shell");
}
