//! Processes a command orphans (`setsid cmd &`, double forks) do not outlive rein: rein adopts
//! them, stops them on Ctrl+C and at exit, and reaps those that end on their own.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, process_alive, run, signal, stderr, wait_for_file, wait_output};

/// Waits for `pid` to be gone (a zombie counts as gone).
fn assert_gone(pid: u32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_alive(pid) {
        assert!(Instant::now() < deadline, "{what} ({pid}) is still running");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The parent of `pid`, if it exists.
fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit(')')
        .next()?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

fn pid_in(path: &Path) -> u32 {
    wait_for_file(path, Duration::from_secs(30))
        .trim()
        .parse()
        .unwrap()
}

/// Ends a test's leftover `sleep` or `sh` if an assertion failed before rein ended it:
/// checked by name, so a reused pid is never hit.
struct Reap(u32);

impl Drop for Reap {
    fn drop(&mut self) {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", self.0)).unwrap_or_default();
        if self.0 > 1 && process_alive(self.0) && matches!(comm.trim(), "sleep" | "sh") {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

fn bash(id: &str, command: &str) -> MockToolCall {
    MockToolCall::new(id, "bash", json!({ "command": command }).to_string())
}

#[test]
fn a_process_in_its_own_session_ends_with_rein() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash(
                "bg",
                "setsid sleep 60 > /dev/null 2>&1 & echo $! > orphan.pid",
            )))
            .reply(Turn::text("started it")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "start it", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let pid = pid_in(&env.work.join("orphan.pid"));
    let _reap = Reap(pid);
    assert_gone(pid, "the setsid process");
}

#[test]
fn an_orphan_that_cleared_its_environment_ends_with_rein() {
    let env = Env::new();
    // A double fork with a clean environment: nothing marks it as the command's, and its
    // parent is gone before the call ends. Only the subreaper can find it.
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash(
                "bg",
                "(setsid env -i sleep 60 > /dev/null 2>&1 & echo $! > orphan.pid)",
            )))
            .reply(Turn::text("started it")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "start it", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let pid = pid_in(&env.work.join("orphan.pid"));
    let _reap = Reap(pid);
    assert_gone(pid, "the orphan with a clean environment");
}

#[test]
fn ctrl_c_stops_a_process_in_its_own_session() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::new().tool_call(bash(
        "slow",
        "setsid sleep 60 > /dev/null 2>&1 & echo $! > orphan.pid; sleep 60",
    ))));
    let child = env
        .rein_openai(&server)
        .args(["-p", "run it", "--permission-mode", "yolo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = pid_in(&env.work.join("orphan.pid"));
    let _reap = Reap(pid);
    assert!(process_alive(pid));
    signal(child.id(), "INT");
    let out = wait_output(child, Duration::from_secs(15));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_gone(pid, "the setsid process");
}

#[test]
fn rein_adopts_orphans_and_reaps_them_when_they_end() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash(
                "orphan",
                "(setsid sh -c 'while [ ! -e release ]; do sleep 0.05; done' > /dev/null 2>&1 & \
                 echo $! > orphan.pid)",
            )))
            // rein stays busy until the test is done looking.
            .reply(Turn::new().tool_call(bash("hold", "while [ ! -e go ]; do sleep 0.05; done")))
            .reply(Turn::text("done")),
    );
    let mut child = env
        .rein_openai(&server)
        .args(["-p", "go", "--permission-mode", "yolo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rein = child.id();
    let pid = pid_in(&env.work.join("orphan.pid"));
    let _reap = Reap(pid);

    // Its parents exited: it is rein's now, not init's.
    let deadline = Instant::now() + Duration::from_secs(10);
    while parent_of(pid) != Some(rein) {
        assert!(
            Instant::now() < deadline,
            "the orphan's parent is {:?}, not rein ({rein})",
            parent_of(pid)
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // It ends by itself; rein reaps it, so it does not stay a zombie.
    std::fs::write(env.work.join("release"), "").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while Path::new(&format!("/proc/{pid}")).exists() && parent_of(pid) == Some(rein) {
        assert!(
            Instant::now() < deadline,
            "the orphan stayed a zombie of rein: {}",
            std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(child.try_wait().unwrap().is_none(), "rein ended too early");

    std::fs::write(env.work.join("go"), "").unwrap();
    let out = wait_output(child, Duration::from_secs(30));
    assert!(out.status.success(), "{}", stderr(&out));
}
