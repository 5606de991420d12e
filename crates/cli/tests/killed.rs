//! Nothing a command started outlives rein killed with SIGKILL (no handler of rein's runs):
//! the command's bash, its children and the processes that left its session, foreground and
//! background, are gone within moments.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, process_alive, signal, wait_for_file};

/// The pid written to `path` (waited for).
fn pid_in(path: &Path) -> u32 {
    wait_for_file(path, Duration::from_secs(30))
        .trim()
        .parse()
        .unwrap()
}

/// Kills the leftover processes of a failed test, by pid, only if they are still `sleep`
/// or `bash` (a reused pid is never hit).
struct Reap(Vec<u32>);

impl Drop for Reap {
    fn drop(&mut self) {
        for &pid in &self.0 {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if pid > 1 && process_alive(pid) && matches!(comm.trim(), "sleep" | "bash") {
                signal(pid, "KILL");
            }
        }
    }
}

fn bash(id: &str, command: &str, background: bool) -> MockToolCall {
    MockToolCall::new(
        id,
        "bash",
        json!({ "command": command, "run_in_background": background }).to_string(),
    )
}

#[test]
fn kill_9_of_rein_leaves_no_command_running() {
    for mode in ["yolo", "auto"] {
        let env = Env::new();
        let server = MockServer::start(
            Script::new()
                .reply(Turn::new().tool_call(bash(
                    "bg",
                    "echo $$ > bg-bash.pid; setsid sleep 300 > /dev/null 2>&1 & \
                     echo $! > bg-setsid.pid; sleep 300",
                    true,
                )))
                .reply(Turn::new().tool_call(bash(
                    "fg",
                    "echo $$ > fg-bash.pid; setsid sleep 300 > /dev/null 2>&1 & \
                     echo $! > fg-setsid.pid; sleep 300 & echo $! > fg-child.pid; wait",
                    false,
                ))),
        );
        let mut rein = env
            .rein_openai(&server)
            .args(["-p", "run them", "--permission-mode", mode])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let names = [
            "bg-bash.pid",
            "bg-setsid.pid",
            "fg-bash.pid",
            "fg-setsid.pid",
            "fg-child.pid",
        ];
        let pids: Vec<u32> = names.iter().map(|n| pid_in(&env.work.join(n))).collect();
        let _reap = Reap(pids.clone());
        for (name, pid) in names.iter().zip(&pids) {
            assert!(process_alive(*pid), "{mode}: {name} ({pid}) did not start");
        }
        signal(rein.id(), "KILL");
        let _ = rein.wait();
        let killed = Instant::now();
        let deadline = killed + Duration::from_secs(10);
        for (name, pid) in names.iter().zip(&pids) {
            while process_alive(*pid) {
                assert!(
                    Instant::now() < deadline,
                    "{mode}: {name} ({pid}) still runs {:?} after rein was killed",
                    killed.elapsed()
                );
                std::thread::sleep(Duration::from_millis(20));
            }
        }
    }
}
