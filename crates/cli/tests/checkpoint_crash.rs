//! kill -9 at random moments of checkpoints and rewinds, 50 times: the workspace is never
//! left half-restored (the next start completes the journal), and a turn cut short is still
//! taken back exactly.

use std::collections::BTreeSet;
use std::hash::{BuildHasher, RandomState};
use std::process::Stdio;
use std::time::Duration;

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, run, stderr, stdout, wait_output};

const FILES: usize = 200;
const ROUNDS: u64 = 50;

/// A model whose answer to prompt `vN` writes `vN` into every file, then says "done".
fn version_writer() -> MockServer {
    MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                let messages = request.body["messages"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let last = messages.last().cloned().unwrap_or(Value::Null);
                if last["role"] == "tool" {
                    return Turn::text("done").into();
                }
                let version = last["content"].as_str().unwrap_or("v?").to_owned();
                let command = format!(
                    "for i in $(seq -w 0 {}); do echo {version} > f$i.txt; done",
                    FILES - 1
                );
                Turn::new()
                    .tool_call(MockToolCall::new(
                        format!("call-{}", request.index),
                        "bash",
                        json!({ "command": command }).to_string(),
                    ))
                    .into()
            }))
            .repeating(),
    )
}

/// The distinct contents of the files (one when the workspace is whole).
fn contents(env: &Env) -> BTreeSet<String> {
    (0..FILES)
        .map(|i| std::fs::read_to_string(env.work.join(format!("f{i:03}.txt"))).unwrap())
        .collect()
}

fn random_below(limit: u64) -> u64 {
    RandomState::new().hash_one(std::time::Instant::now()) % limit
}

/// Starts `rein` with `args`, kills it with SIGKILL after a random moment.
fn killed(env: &Env, server: &MockServer, args: &[&str]) {
    let child = env
        .rein_openai(server)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // A random moment, not a synchronisation: anywhere from start-up to the end.
    std::thread::sleep(Duration::from_millis(random_below(250)));
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &child.id().to_string()])
        .status();
    let _ = wait_output(child, Duration::from_secs(30));
}

/// Waits until no process runs a command line holding `needle` (a command rein started
/// goes on when rein is killed with SIGKILL).
fn wait_no_process_with(needle: &str) {
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    loop {
        let running = std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter_map(|e| std::fs::read(e.path().join("cmdline")).ok())
            .any(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle));
        if !running {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "{needle} still runs");
        std::thread::yield_now();
    }
}

fn turns(env: &Env) -> Vec<Value> {
    let out = run(env
        .rein()
        .args(["rewind", "--list", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    listed["turns"].as_array().unwrap().clone()
}

#[test]
fn kill_9_during_checkpoints_and_rewinds_never_leaves_a_half_restored_workspace() {
    let env = Env::new();
    for i in 0..FILES {
        env.write(&format!("f{i:03}.txt"), "v0\n");
    }
    let server = version_writer();
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "v1", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut state = "v1\n".to_owned();
    for round in 2..ROUNDS + 2 {
        let version = format!("v{round}");
        if round % 2 == 0 {
            // Killed during a turn: its checkpoint, its command or its record.
            killed(
                &env,
                &server,
                &["-c", "-p", &version, "--permission-mode", "yolo"],
            );
            wait_no_process_with(&format!("echo {version} > f"));
        } else {
            let out = run(env.rein_openai(&server).args([
                "-c",
                "-p",
                &version,
                "--permission-mode",
                "yolo",
            ]));
            assert!(out.status.success(), "{}", stderr(&out));
            assert_eq!(contents(&env), BTreeSet::from([format!("{version}\n")]));
            // Killed during the rewind of that turn.
            let last = turns(&env).len().to_string();
            killed(&env, &server, &["rewind", "--to", &last, "--code"]);
        }
        // The next start completes what a killed rewind began.
        let listed = turns(&env);
        assert!(
            !env.rein_home.join("checkpoints/journals").exists()
                || std::fs::read_dir(env.rein_home.join("checkpoints/journals"))
                    .unwrap()
                    .next()
                    .is_none(),
            "round {round}: a journal was left: {:?}",
            std::fs::read_dir(env.rein_home.join("checkpoints/journals"))
                .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
        );
        let now = contents(&env);
        if round % 2 == 1 {
            let allowed = [
                BTreeSet::from([state.clone()]),
                BTreeSet::from([format!("{version}\n")]),
            ];
            assert!(
                allowed.contains(&now),
                "round {round}: half-restored: {now:?}"
            );
        } else if listed
            .last()
            .is_some_and(|t| t["prompt"] == version.as_str())
        {
            // The cut-short turn was recorded: taking it back gives the state before it.
            let out = run(env
                .rein()
                .args(["rewind", "--to", &listed.len().to_string(), "--code"]));
            assert!(out.status.success(), "round {round}: {}", stderr(&out));
            assert_eq!(
                contents(&env),
                BTreeSet::from([state.clone()]),
                "round {round}: {}",
                stdout(&out)
            );
        } else {
            assert_eq!(now, BTreeSet::from([state.clone()]), "round {round}");
        }
        let now = contents(&env);
        assert_eq!(now.len(), 1, "round {round}: {now:?}");
        state = now.into_iter().next().unwrap();
    }
    // The session is still resumable.
    let out = run(env
        .rein_openai(&server)
        .args(["-c", "-p", "v999", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
}
