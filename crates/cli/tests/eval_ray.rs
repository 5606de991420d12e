//! `rein eval --ray`: the same suite on a Ray cluster of one node bound to 127.0.0.1 gives the
//! same scores as on this machine, and an attempt whose worker is killed runs again.
//!
//! Needs Ray for Python: `REIN_TEST_RAY_PYTHON` names a Python that has it (CI's `.ci/run`
//! installs one); otherwise the test makes a venv under the target directory and installs the
//! pinned Ray from PyPI. Where that cannot be done the test is skipped, with a message, unless
//! `REIN_REQUIRE_RAY=1` (as in CI), which makes it fail instead.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, stderr, stdout, wait_output};

/// The Ray release the tests pin.
const RAY_VERSION: &str = "2.60.0";

fn has_ray(python: &Path) -> bool {
    Command::new(python)
        .args(["-c", "import ray"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A Python with Ray, or why there is none.
fn ray_python() -> Result<PathBuf, String> {
    if let Some(python) = std::env::var_os("REIN_TEST_RAY_PYTHON") {
        let python = PathBuf::from(python);
        return if has_ray(&python) {
            Ok(python)
        } else {
            Err(format!(
                "REIN_TEST_RAY_PYTHON={} cannot import ray",
                python.display()
            ))
        };
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ray-venv");
    let python = venv.join("bin/python");
    if has_ray(&python) {
        return Ok(python);
    }
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status()
        .map_err(|e| format!("python3 -m venv: {e}"))?;
    if !made.success() {
        return Err("python3 -m venv failed".into());
    }
    let installed = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            &format!("ray=={RAY_VERSION}"),
        ])
        .status()
        .map_err(|e| format!("pip: {e}"))?;
    if installed.success() && has_ray(&python) {
        Ok(python)
    } else {
        Err(format!("pip install ray=={RAY_VERSION} failed"))
    }
}

/// A one-node Ray cluster on 127.0.0.1, stopped when dropped.
struct Cluster {
    dir: tempfile::TempDir,
    address: String,
    ray: PathBuf,
}

impl Cluster {
    fn start(python: &Path) -> Cluster {
        // Ray's socket paths must stay short.
        let dir = tempfile::Builder::new()
            .prefix("rr")
            .tempdir_in("/tmp")
            .unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let ray = python.with_file_name("ray");
        let out = Command::new(&ray)
            .args(["start", "--head", "--node-ip-address=127.0.0.1"])
            .arg(format!("--port={port}"))
            .args([
                "--num-cpus=4",
                "--include-dashboard=false",
                "--disable-usage-stats",
                "--object-store-memory=200000000",
            ])
            .arg(format!("--temp-dir={}", dir.path().display()))
            .env("RAY_USAGE_STATS_ENABLED", "0")
            // The workers' cache of the shipped binary goes with the cluster.
            .env("TMPDIR", dir.path())
            .output()
            .unwrap();
        let cluster = Cluster {
            dir,
            address: format!("127.0.0.1:{port}"),
            ray,
        };
        assert!(
            out.status.success(),
            "ray start failed: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        cluster
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        let _ = Command::new(&self.ray)
            .args(["stop", "--force"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        // Whatever `ray stop` missed of this cluster's processes.
        for pid in processes_with(&self.dir.path().display().to_string()) {
            let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        }
    }
}

fn processes_with(needle: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<u32>() else {
            continue;
        };
        if let Ok(cmdline) = std::fs::read(entry.path().join("cmdline"))
            && String::from_utf8_lossy(&cmdline)
                .replace('\0', " ")
                .contains(needle)
        {
            found.push(pid);
        }
    }
    found
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(1)?.parse().ok()
}

fn writes_done() -> Turn {
    Turn::new().tool_call(MockToolCall::new(
        "c1",
        "write_file",
        json!({"file_path": "done.txt", "content": "ok\n"}).to_string(),
    ))
}

/// A model for `rounds` runs of a task that writes done.txt; the first request waits
/// `first_delay`.
fn model(first_delay: Duration) -> MockServer {
    let first = Arc::new(AtomicUsize::new(0));
    MockServer::start(
        Script::new()
            .reply(Reply::dynamic(move |request| {
                let has_result = request.body["messages"]
                    .as_array()
                    .is_some_and(|m| m.iter().any(|m| m["role"] == "tool"));
                if has_result {
                    return Turn::text("Done.").into();
                }
                if first.fetch_add(1, Ordering::SeqCst) == 0 && !first_delay.is_zero() {
                    Reply::from(writes_done()).delay(first_delay)
                } else {
                    writes_done().into()
                }
            }))
            .repeating(),
    )
}

fn task(id: &str, server: &MockServer, validate: &str) -> String {
    format!(
        "[[task]]\nid = \"{id}\"\nprompt = \"Write done.txt.\"\nvalidate = \"{validate}\"\nenv = {{ OPENAI_API_KEY = \"sk-test\", REIN_BASE_URL = \"{}\", REIN_MODEL = \"gpt-4o\" }}\n",
        server.openai_base_url()
    )
}

fn scores(results: &Path) -> Vec<(String, String)> {
    let mut scores: Vec<(String, String)> = std::fs::read_to_string(results)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .map(|r| {
            (
                r["task"].as_str().unwrap().to_owned(),
                r["reason"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    scores.sort();
    scores
}

#[test]
fn a_suite_on_a_local_ray_cluster_scores_as_it_does_here_and_survives_a_dead_worker() {
    let python = match ray_python() {
        Ok(python) => python,
        Err(why) if std::env::var("REIN_REQUIRE_RAY").as_deref() == Ok("1") => {
            panic!("Ray is required (REIN_REQUIRE_RAY=1) but not available: {why}")
        }
        Err(why) => {
            eprintln!("skipped: Ray is not available here ({why})");
            return;
        }
    };
    let env = Env::new();
    // rein's usual retries: on a loaded machine a hiccup of the mocks must not score a task
    // as an agent error (the 500s of `error` are still given up after them).
    let pass = model(Duration::ZERO);
    let fail = MockServer::start(Script::new().reply(Turn::text("No.")).repeating());
    let broken = MockServer::start(Script::new().reply(Reply::server_error()).repeating());
    let hang = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "c1",
                "bash",
                json!({"command": "sleep 4322", "timeout": 600}).to_string(),
            )))
            .repeating(),
    );
    let suite = [
        task("pass", &pass, "test -f done.txt"),
        task("fail", &fail, "test -f done.txt"),
        task("error", &broken, "test -f done.txt"),
        task("hang", &hang, "test -f done.txt") + "timeout_secs = 3\n",
    ]
    .concat();
    env.write("suite.toml", &suite);
    let run_eval = |out: &str, extra: &[&str]| {
        let mut cmd = env.rein();
        cmd.args(["eval", "suite.toml", "--out", out]).args(extra);
        let child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_output(child, Duration::from_secs(150))
    };
    let local = run_eval("local", &["-j", "4"]);
    assert!(local.status.success(), "{}", stderr(&local));

    let cluster = Cluster::start(&python);
    let python_arg = python.display().to_string();
    let on_ray = run_eval("ray", &["--ray", &cluster.address, "--python", &python_arg]);
    assert!(
        on_ray.status.success(),
        "stdout: {}\nstderr: {}",
        stdout(&on_ray),
        stderr(&on_ray)
    );
    let expected = scores(&env.work.join("local/results.jsonl"));
    assert_eq!(
        expected,
        [
            ("error".to_owned(), "agent error".to_owned()),
            ("fail".to_owned(), "validate failed".to_owned()),
            ("hang".to_owned(), "timeout".to_owned()),
            ("pass".to_owned(), "passed".to_owned()),
        ],
        "{}",
        std::fs::read_to_string(env.work.join("local/results.jsonl")).unwrap()
    );
    assert_eq!(
        scores(&env.work.join("ray/results.jsonl")),
        expected,
        "{}",
        std::fs::read_to_string(env.work.join("ray/results.jsonl")).unwrap()
    );
    assert!(
        processes_with("sleep 4322").is_empty(),
        "a command outlived its attempt"
    );

    // A worker killed under an attempt: the attempt runs again and is marked.
    let slow = model(Duration::from_secs(90));
    env.write("suite.toml", &task("slow", &slow, "test -f done.txt"));
    let mut cmd = env.rein();
    cmd.args([
        "eval",
        "suite.toml",
        "--out",
        "killed",
        "--ray",
        &cluster.address,
        "--python",
        &python_arg,
    ]);
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    let worker = loop {
        let attempt = processes_with("--attempt slow:1");
        if let Some(worker) = attempt.iter().find_map(|&pid| parent_of(pid))
            && slow.request_count() == 1
        {
            break worker;
        }
        assert!(
            Instant::now() < deadline,
            "the attempt never started on the cluster"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    Command::new("kill")
        .args(["-9", &worker.to_string()])
        .status()
        .unwrap();
    let out = wait_output(child, Duration::from_secs(120));
    assert!(
        out.status.success(),
        "stdout: {}\nstderr: {}",
        stdout(&out),
        stderr(&out)
    );
    let record: Value = serde_json::from_str(
        std::fs::read_to_string(env.work.join("killed/results.jsonl"))
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(record["reason"], "passed", "{record}");
    assert_eq!(record["retried"], true, "{record}");
    assert_eq!(
        slow.request_count(),
        3,
        "the retry did not run the task again"
    );
}
