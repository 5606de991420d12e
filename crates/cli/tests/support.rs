//! Runs the real binary in a temp workspace with its own REIN_HOME and HOME.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use tempfile::TempDir;

/// A workspace, a home and a rein home, all temporary.
pub(crate) struct Env {
    _root: TempDir,
    pub(crate) home: PathBuf,
    pub(crate) rein_home: PathBuf,
    pub(crate) work: PathBuf,
}

impl Env {
    pub(crate) fn new() -> Self {
        let root = TempDir::new().unwrap();
        let base = root.path().canonicalize().unwrap();
        let home = base.join("home");
        let rein_home = base.join("rein-home");
        let work = home.join("project");
        std::fs::create_dir_all(&work).unwrap();
        Env {
            _root: root,
            home,
            rein_home,
            work,
        }
    }

    pub(crate) fn write(&self, name: &str, content: &str) -> PathBuf {
        let path = self.work.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).unwrap();
        }
        std::fs::write(&path, content).unwrap();
        path
    }

    /// Trusts the project with its config files as they are now (its config file applies
    /// whole), as `rein trust` would.
    pub(crate) fn trust(&self) {
        rein_core::trust::TrustStore::new(&self.rein_home, Some(&self.home))
            .trust(&self.work)
            .unwrap();
    }

    pub(crate) fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.work.join(name)).unwrap()
    }

    /// `rein` with a clean environment: only PATH, HOME, REIN_HOME and TMPDIR are set.
    pub(crate) fn rein(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_rein"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("REIN_HOME", &self.rein_home)
            .env("TMPDIR", self.home.parent().unwrap())
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    /// `rein` pointed at an OpenAI-compatible mock.
    pub(crate) fn rein_openai(&self, server: &rein_testkit::MockServer) -> Command {
        let mut cmd = self.rein();
        cmd.env("OPENAI_API_KEY", "sk-test")
            .env("REIN_BASE_URL", server.openai_base_url())
            .env("REIN_MODEL", "gpt-4o");
        cmd
    }

    /// The session files written so far.
    pub(crate) fn session_files(&self) -> Vec<PathBuf> {
        let dir = self.rein_home.join("sessions");
        let Ok(entries) = std::fs::read_dir(dir) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        files
    }
}

/// Runs a command to completion, failing the test if it takes longer than a minute.
pub(crate) fn run(cmd: &mut Command) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_output(child, Duration::from_secs(60))
}

/// Waits for `child` with a time limit, killing it if it overruns. Its pipes are read while
/// it runs: a child that prints more than a pipe holds (64 KiB) would otherwise block on a
/// full pipe and look hung.
pub(crate) fn wait_output(mut child: std::process::Child, limit: Duration) -> Output {
    use std::io::Read;
    fn drain(pipe: Option<impl Read + Send + 'static>) -> std::thread::JoinHandle<Vec<u8>> {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_end(&mut bytes);
            }
            bytes
        })
    }
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let deadline = Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            let out = stdout.join().unwrap_or_default();
            let err = stderr.join().unwrap_or_default();
            panic!(
                "rein did not finish in {limit:?}\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&out),
                String::from_utf8_lossy(&err)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

pub(crate) fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

pub(crate) fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The last line of stdout, parsed as JSON.
pub(crate) fn final_json(out: &Output) -> serde_json::Value {
    let text = stdout(out);
    let last = text
        .lines()
        .last()
        .unwrap_or_else(|| panic!("no output; stderr: {}", stderr(out)));
    serde_json::from_str(last).unwrap_or_else(|e| panic!("not JSON ({e}): {last}"))
}

/// Whether a process is still running (a zombie counts as gone).
pub(crate) fn process_alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            let state = stat.rsplit_once(") ").map(|(_, rest)| rest.chars().next());
            !matches!(state, Some(Some('Z' | 'X')))
        }
        Err(_) => false,
    }
}

/// Sends a signal to a process.
pub(crate) fn signal(pid: u32, sig: &str) {
    let status = Command::new("kill")
        .arg(format!("-{sig}"))
        .arg(pid.to_string())
        .status()
        .unwrap();
    assert!(status.success());
}

/// Waits until `path` exists and holds something.
pub(crate) fn wait_for_file(path: &Path, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && !text.trim().is_empty()
        {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "{} did not appear",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A mock that answers `answer` only to requests whose history is valid, like the real
/// APIs, and 400 with the problem otherwise.
pub(crate) fn strict_mock(answer: &'static str) -> rein_testkit::MockServer {
    use rein_testkit::{MockServer, Reply, Script, Turn};
    MockServer::start(Script::new().reply(Reply::dynamic(move |request| {
        match openai_history_is_valid(&request.body) {
            Ok(()) => Turn::text(answer).into(),
            Err(problem) => Reply::http(
                400,
                serde_json::json!({"error": {"message": format!("invalid history: {problem}"), "type": "invalid_request_error"}})
                    .to_string(),
            ),
        }
    })))
}

/// Every tool call in an OpenAI request body has a result right after it.
pub(crate) fn openai_history_is_valid(body: &serde_json::Value) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("no messages")?;
    for (i, message) in messages.iter().enumerate() {
        let Some(calls) = message["tool_calls"].as_array() else {
            continue;
        };
        for (k, call) in calls.iter().enumerate() {
            let id = &call["id"];
            let answer = messages.get(i + 1 + k).ok_or("a tool call has no result")?;
            if answer["role"] != "tool" || &answer["tool_call_id"] != id {
                return Err(format!("tool call {id} is not answered in order: {answer}"));
            }
        }
    }
    Ok(())
}

/// Fails with a clear message when python3 is missing: some tests run a small Python
/// program, as the demo does (the README lists python3 as a prerequisite).
pub(crate) fn require_python3() {
    let found = Command::new("python3")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        found,
        "this test runs python3, which is not on PATH: install Python 3 (see the README's prerequisites)"
    );
}

/// Whether `rein sandbox --explain` says the OS sandbox is enforced here; says on stderr why
/// `test` is skipped when not.
pub(crate) fn sandbox_enforced(env: &Env, test: &str) -> bool {
    let explain = env.rein().args(["sandbox", "--explain"]).output().unwrap();
    let text = String::from_utf8_lossy(&explain.stdout).into_owned();
    if text.contains(", enforced") {
        return true;
    }
    #[expect(clippy::print_stderr, reason = "a skipped test must say so")]
    {
        eprintln!("SKIPPED {test}: the sandbox is not enforced here: {text}");
    }
    false
}

/// The npm packages pinned in `tests/<name>/package-lock.json`, installed once with `npm ci`
/// in `<target>/<name>` (test processes take turns through a lock file), with the `extra`
/// files of that directory copied beside them at every run. `ready` names files an install
/// leaves. `None`, said on stderr, without node and npm, unless `REIN_REQUIRE_NODE=1` (CI),
/// where that fails the test; `what` names the tests that need them.
pub(crate) fn npm_packages(
    name: &str,
    ready: &[&str],
    extra: &[&str],
    what: &str,
) -> Option<PathBuf> {
    let found = |tool: &str| {
        Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if !found("node") || !found("npm") {
        // CI has node: there a missing one is a broken setup, not a reason to skip.
        assert!(
            std::env::var_os("REIN_REQUIRE_NODE").is_none_or(|v| v != "1"),
            "REIN_REQUIRE_NODE=1 but node or npm is not on PATH: the {what} cannot run"
        );
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "SKIPPED: node and npm are not on PATH, so the {what} did not run (install \
                 Node.js 18 or later to run them)\n"
            )
            .as_bytes(),
        );
        return None;
    }
    let source = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests")
        .join(name);
    let rein = PathBuf::from(env!("CARGO_BIN_EXE_rein"));
    let dir = rein.parent().unwrap().parent().unwrap().join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let lock = std::fs::File::create(dir.join(".install-lock")).unwrap();
    lock.lock().unwrap();
    let wanted = std::fs::read_to_string(source.join("package-lock.json")).unwrap();
    let installed = std::fs::read_to_string(dir.join("package-lock.json")).unwrap_or_default();
    if installed != wanted || !ready.iter().all(|file| dir.join(file).exists()) {
        for file in ["package.json", "package-lock.json"] {
            std::fs::copy(source.join(file), dir.join(file)).unwrap();
        }
        let out = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "npm ci in {} failed (the {what} need the npm registry once): {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    for file in extra {
        std::fs::copy(source.join(file), dir.join(file)).unwrap();
    }
    drop(lock);
    Some(dir)
}
