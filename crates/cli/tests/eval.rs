//! `rein eval`: suites scored end to end with the real binary as the agent, each task's model
//! played by its own mock (named in the task's `env`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, process_alive, run, stderr, stdout, wait_output};

/// The model of a task that writes `done.txt` and says so.
fn writes_done() -> MockServer {
    MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "c1",
                "write_file",
                json!({"file_path": "done.txt", "content": "ok\n"}).to_string(),
            )))
            .reply(Turn::text("Wrote done.txt.")),
    )
}

/// `env = { ... }` pointing a task at `server`.
fn env_for(server: &MockServer) -> String {
    format!(
        "env = {{ OPENAI_API_KEY = \"sk-test\", REIN_BASE_URL = \"{}\", REIN_MODEL = \"gpt-4o\" }}",
        server.openai_base_url()
    )
}

fn task(id: &str, server: &MockServer, extra: &str) -> String {
    format!(
        "[[task]]\nid = \"{id}\"\nprompt = \"Write done.txt.\"\nvalidate = \"test -f done.txt\"\n{}\n{extra}\n",
        env_for(server)
    )
}

/// A test environment whose rein home says `retries = 0` (each attempt's home gets a copy).
fn eval_env() -> Env {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(env.rein_home.join("config.toml"), "retries = 0\n").unwrap();
    env
}

fn eval(env: &Env, suite: &str, args: &[&str]) -> std::process::Output {
    env.write("suite.toml", suite);
    let out = env.work.join("out");
    let mut cmd = env.rein();
    cmd.args(["eval", "suite.toml", "--out"])
        .arg(&out)
        .args(args);
    run(&mut cmd)
}

fn records(env: &Env) -> Vec<Value> {
    let text = std::fs::read_to_string(env.work.join("out/results.jsonl")).unwrap_or_default();
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn by_task<'a>(records: &'a [Value], id: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["task"] == id).collect()
}

/// Processes whose command line holds `needle`.
fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(needle) && process_alive(pid) {
            found.push(pid);
        }
    }
    found
}

fn wait_until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn pass_fail_agent_error_and_timeout_are_each_scored_and_nothing_is_left_running() {
    let env = eval_env();
    let pass = writes_done();
    let fail = MockServer::start(Script::new().reply(Turn::text("Nothing to do.")));
    let broken = MockServer::start(Script::new().reply(Reply::server_error()).repeating());
    let hang = MockServer::start(Script::new().reply(Turn::new().tool_call(MockToolCall::new(
        "c1",
        "bash",
        json!({"command": "sleep 4321", "timeout": 600}).to_string(),
    ))));
    let suite = [
        task("pass", &pass, ""),
        task("fail", &fail, ""),
        task("error", &broken, ""),
        task("hang", &hang, "timeout_secs = 3"),
    ]
    .concat();
    let out = eval(&env, &suite, &["-j", "4"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let records = records(&env);
    assert_eq!(records.len(), 4, "{records:?}");
    let reason = |id: &str| {
        by_task(&records, id)[0]["reason"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(reason("pass"), "passed");
    assert_eq!(by_task(&records, "pass")[0]["passed"], true);
    assert_eq!(reason("fail"), "validate failed");
    assert_eq!(reason("error"), "agent error");
    assert_eq!(reason("hang"), "timeout");
    for record in &records {
        for key in [
            "task",
            "attempt",
            "passed",
            "reason",
            "rounds",
            "usage",
            "cost_usd",
            "duration_ms",
            "stop_reason",
            "permission_denials",
            "session_id",
            "session_file",
            "workspace",
        ] {
            assert!(record.get(key).is_some(), "{key} missing in {record}");
        }
    }
    let passed = by_task(&records, "pass")[0];
    assert_eq!(passed["rounds"], 2);
    assert_eq!(passed["stop_reason"], "end_turn");
    let session = passed["session_file"].as_str().unwrap();
    assert!(Path::new(session).is_file(), "{session}");
    let workspace = PathBuf::from(passed["workspace"].as_str().unwrap());
    assert_eq!(
        std::fs::read_to_string(workspace.join("done.txt")).unwrap(),
        "ok\n"
    );
    // The person's own sessions are untouched.
    assert!(env.session_files().is_empty());
    let error = by_task(&records, "error")[0];
    assert!(error["detail"].as_str().unwrap().contains("500"), "{error}");
    assert!(
        processes_with("sleep 4321").is_empty(),
        "the hanging command outlived its attempt"
    );
    let table = stdout(&out);
    assert!(table.contains("pass@1 25.0%"), "{table}");
}

#[test]
fn repeat_reports_pass_at_1_and_pass_at_k() {
    let env = eval_env();
    // Attempts 1 and 3 write done.txt, attempt 2 only talks.
    let requests = Arc::new(AtomicUsize::new(0));
    let seen = requests.clone();
    let flaky = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(move |request| {
                let has_result = request.body["messages"]
                    .as_array()
                    .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
                if has_result {
                    return Turn::text("Done.").into();
                }
                match seen.fetch_add(1, Ordering::SeqCst) {
                    1 => Turn::text("I will not.").into(),
                    _ => Turn::new()
                        .tool_call(MockToolCall::new(
                            "c1",
                            "write_file",
                            json!({"file_path": "done.txt", "content": "ok\n"}).to_string(),
                        ))
                        .into(),
                }
            }))
            .repeating(),
    );
    let out = eval(
        &env,
        &task("flaky", &flaky, ""),
        &["-j", "1", "--repeat", "3"],
    );
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let records = records(&env);
    let attempts: Vec<(u64, bool)> = records
        .iter()
        .map(|r| {
            (
                r["attempt"].as_u64().unwrap(),
                r["passed"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(attempts, [(1, true), (2, false), (3, true)]);
    let table = stdout(&out);
    assert!(table.contains("pass@1 66.7%"), "{table}");
    assert!(table.contains("pass@3 100.0%"), "{table}");
}

#[test]
fn four_jobs_run_four_attempts_at_once() {
    let env = eval_env();
    let servers: Vec<MockServer> = (0..4)
        .map(|_| {
            MockServer::start(Script::new().reply(
                Reply::from(Turn::text("Thinking it over.")).delay(Duration::from_millis(1500)),
            ))
        })
        .collect();
    let suite: String = servers
        .iter()
        .enumerate()
        .map(|(i, s)| task(&format!("t{i}"), s, ""))
        .collect();
    let out = eval(&env, &suite, &["-j", "4"]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let records = records(&env);
    assert_eq!(records.len(), 4);
    let last_start = records
        .iter()
        .map(|r| r["started_at_ms"].as_u64().unwrap())
        .max()
        .unwrap();
    let first_end = records
        .iter()
        .map(|r| r["ended_at_ms"].as_u64().unwrap())
        .min()
        .unwrap();
    assert!(
        last_start < first_end,
        "the four attempts did not overlap: {records:?}"
    );
}

#[test]
fn resume_after_a_kill_redoes_only_what_was_unfinished() {
    let env = eval_env();
    let quick = writes_done();
    // The first request of `slow` hangs until the run is killed; later ones answer.
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = calls.clone();
    let slow = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(move |request| {
                let has_result = request.body["messages"]
                    .as_array()
                    .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
                if has_result {
                    return Turn::text("Done.").into();
                }
                let write = Turn::new().tool_call(MockToolCall::new(
                    "c1",
                    "write_file",
                    json!({"file_path": "done.txt", "content": "ok\n"}).to_string(),
                ));
                if counted.fetch_add(1, Ordering::SeqCst) == 0 {
                    Reply::from(write).delay(Duration::from_secs(120))
                } else {
                    write.into()
                }
            }))
            .repeating(),
    );
    let suite = [task("a-quick", &quick, ""), task("b-slow", &slow, "")].concat();
    env.write("suite.toml", &suite);
    let out_dir = env.work.join("out");
    let mut cmd = env.rein();
    cmd.args(["eval", "suite.toml", "-j", "1", "--out"])
        .arg(&out_dir)
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let mut child = cmd.spawn().unwrap();
    let results = out_dir.join("results.jsonl");
    wait_until(
        Duration::from_secs(60),
        "the first result and the slow request",
        || {
            std::fs::read_to_string(&results).is_ok_and(|t| t.lines().count() == 1)
                && slow.request_count() == 1
        },
    );
    let agents_before = processes_with("b-slow-1/");
    child.kill().unwrap();
    child.wait().unwrap();
    // The killed run's agent stops with it (it dies with its parent).
    wait_until(
        Duration::from_secs(10),
        "the killed run's agent to stop",
        || {
            processes_with("Write done.txt.")
                .iter()
                .all(|pid| !agents_before.contains(pid))
                && processes_with("Write done.txt.").is_empty()
        },
    );

    let mut cmd = env.rein();
    cmd.args(["eval", "suite.toml", "-j", "1", "--resume", "--out"])
        .arg(&out_dir);
    let out = run(&mut cmd);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let records = records(&env);
    assert_eq!(by_task(&records, "a-quick").len(), 1, "{records:?}");
    assert_eq!(by_task(&records, "b-slow").len(), 1, "{records:?}");
    assert_eq!(by_task(&records, "b-slow")[0]["passed"], true);
    assert_eq!(quick.request_count(), 2, "the finished task ran again");
    assert!(
        stderr(&out).contains("1 attempts done, 1 to run"),
        "{}",
        stderr(&out)
    );

    // Without --resume, a directory that holds results is not overwritten.
    let mut cmd = env.rein();
    cmd.args(["eval", "suite.toml", "--out"]).arg(&out_dir);
    let out = run(&mut cmd);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--resume"), "{}", stderr(&out));
}

#[test]
fn a_failing_setup_is_scored_and_the_suite_goes_on() {
    let env = eval_env();
    let never = MockServer::start(Script::new());
    let pass = writes_done();
    let suite = [
        task("broken-setup", &never, "setup = \"echo preparing; exit 7\""),
        task("fine", &pass, "setup = \"echo ready > ready.txt\"\n"),
    ]
    .concat();
    let out = eval(&env, &suite, &[]);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let records = records(&env);
    let broken = by_task(&records, "broken-setup")[0];
    assert_eq!(broken["reason"], "setup failed");
    assert!(
        broken["detail"].as_str().unwrap().contains("exited with 7"),
        "{broken}"
    );
    assert_eq!(
        never.request_count(),
        0,
        "the agent ran after a failed setup"
    );
    assert_eq!(by_task(&records, "fine")[0]["reason"], "passed");
    let log = env.work.join("out/logs/broken-setup-1/setup.log");
    assert_eq!(std::fs::read_to_string(log).unwrap(), "preparing\n");
}

#[test]
fn bad_input_exits_2_naming_the_problem() {
    let env = eval_env();
    let server = writes_done();
    for (suite, args, expected) in [
        (
            "[[task]]\nid = \"a\"\nvalidate = \"true\"\n".to_owned(),
            vec![],
            "task 1 (\"a\") has no prompt",
        ),
        (
            "[[task]]\nid = \"a\"\nprompt = \"p\"\nvalidate = \"checks/missing.sh\"\n".to_owned(),
            vec![],
            "names a script",
        ),
        (task("a", &server, ""), vec!["-j", "0"], "-j 0"),
        (
            task("a", &server, ""),
            vec!["--fail-under", "80"],
            "between 0 and 1",
        ),
        (
            task("a", &server, ""),
            vec!["--filter", "zz*"],
            "matches no task",
        ),
        (
            "[[task]]\nid = \"a\"\nprompt = \"p\"\nvalidate = \"true\"\nmodle = \"x\"\n".to_owned(),
            vec![],
            "did you mean \"model\"?",
        ),
    ] {
        let out = eval(&env, &suite, &args);
        assert_eq!(out.status.code(), Some(2), "{expected}: {}", stderr(&out));
        assert!(
            stderr(&out).contains(expected),
            "{expected}: {}",
            stderr(&out)
        );
    }
    let mut cmd = env.rein();
    let out = run(cmd.args(["eval", "no-such-suite.toml"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("no suite at no-such-suite.toml"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.request_count(), 0);
}

#[test]
fn fail_under_and_compare() {
    let env = eval_env();
    let fail = MockServer::start(Script::new().reply(Turn::text("No.")));
    let out = eval(&env, &task("only", &fail, ""), &["--fail-under", "0.5"]);
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("under --fail-under"),
        "{}",
        stderr(&out)
    );
    let a = env.work.join("out/results.jsonl");

    let pass = writes_done();
    env.write("suite.toml", &task("only", &pass, ""));
    let b_dir = env.work.join("out-b");
    let mut cmd = env.rein();
    let out = run(cmd
        .args(["eval", "suite.toml", "--fail-under", "1", "--out"])
        .arg(&b_dir));
    assert!(out.status.success(), "{}", stderr(&out));

    let mut cmd = env.rein();
    let out = run(cmd
        .args(["eval", "--compare"])
        .arg(&a)
        .arg(b_dir.join("results.jsonl")));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains("better"), "{text}");
    assert!(text.contains("1 better, 0 worse"), "{text}");
}

/// The smoke suite that ships with rein passes offline, from its recordings.
#[test]
fn the_smoke_suite_passes_from_its_recordings() {
    crate::support::require_python3();
    let env = Env::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../evals/smoke");
    let out_dir = env.work.join("smoke");
    let mut cmd = env.rein();
    cmd.arg("eval")
        .arg(&root)
        .arg("--replay")
        .arg(root.join("recordings"))
        .arg("--out")
        .arg(&out_dir)
        .args(["--fail-under", "1", "--report"])
        .arg(env.work.join("report.md"));
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child, Duration::from_secs(170));
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    let text = std::fs::read_to_string(out_dir.join("results.jsonl")).unwrap();
    assert!(text.lines().count() >= 6);
    let report = std::fs::read_to_string(env.work.join("report.md")).unwrap();
    assert!(report.contains("pass@1 100.0%"), "{report}");
}
