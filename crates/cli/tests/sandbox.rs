//! The OS sandbox through the real binary: hostile commands against a fake home, the
//! everyday work that must still run, permission mode auto, and a kernel without Landlock.
//!
//! Every rein run here happens inside a private mount namespace in which the real home
//! directory is mounted read-only, so that a test gone wrong can never touch it. Where the
//! machine cannot give that namespace, or the kernel has no Landlock, the tests say so on
//! stderr and check nothing (this project's machines have both).

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{final_json, run, stderr, stdout};

/// A fake home full of canaries, a workspace beside it, and a directory outside both.
struct Lab {
    _root: Option<tempfile::TempDir>,
    home: PathBuf,
    rein_home: PathBuf,
    work: PathBuf,
    outside: PathBuf,
}

/// The files that must survive, relative to the lab's base, and their content.
const CANARIES: [&str; 4] = [
    "home/.bashrc",
    "home/.ssh/id_rsa",
    "home/notes/todo.txt",
    "outside/secret.txt",
];

impl Lab {
    /// A lab under the system's temporary directory.
    fn new() -> Lab {
        let root = tempfile::TempDir::new().unwrap();
        let base = root.path().canonicalize().unwrap();
        Lab::at(base, Some(root))
    }

    /// A lab in `base` (for tests that need it outside /tmp).
    fn at(base: PathBuf, root: Option<tempfile::TempDir>) -> Lab {
        let lab = Lab {
            _root: root,
            home: base.join("home"),
            rein_home: base.join("rein-home"),
            work: base.join("work"),
            outside: base.join("outside"),
        };
        for canary in CANARIES {
            let path = base.join(canary);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "canary\n").unwrap();
        }
        std::fs::create_dir_all(&lab.work).unwrap();
        std::fs::create_dir_all(&lab.rein_home).unwrap();
        std::fs::write(lab.work.join("list"), format!("{}\n", lab.home.display())).unwrap();
        lab
    }

    fn base(&self) -> &Path {
        self.home.parent().unwrap()
    }

    /// The canaries that no longer hold what they held.
    fn damaged(&self) -> Vec<&'static str> {
        CANARIES
            .into_iter()
            .filter(|c| {
                std::fs::read_to_string(self.base().join(c)).ok().as_deref() != Some("canary\n")
            })
            .collect()
    }

    /// `rein ARGS` in the workspace, in a private mount namespace where the real home is
    /// read-only, with a clean environment.
    fn rein(&self) -> Command {
        let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
        let mut cmd = Command::new("unshare");
        if !is_root() {
            cmd.arg("--map-root-user");
        }
        cmd.args(["--mount", "--propagation", "private", "--", "sh", "-c"])
            .arg(
                "mount --bind \"$1\" \"$1\" && mount -o remount,bind,ro \"$1\" && shift && exec \"$@\"",
            )
            .arg("sh")
            .arg(&real_home)
            .arg(env!("CARGO_BIN_EXE_rein"));
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("REIN_HOME", &self.rein_home)
            .env("TMPDIR", self.base())
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    /// `rein` pointed at the mock, one-shot, with the final JSON.
    fn rein_prompt(&self, server: &MockServer, extra: &[&str]) -> Command {
        let mut cmd = self.rein();
        cmd.env("OPENAI_API_KEY", "sk-test")
            .env("REIN_BASE_URL", server.openai_base_url())
            .env("REIN_MODEL", "gpt-4o")
            .args(["-p", "go", "--output-format", "json"])
            .args(extra);
        cmd
    }
}

/// Says on stderr what a test skipped or narrowed, so it is seen.
#[expect(
    clippy::print_stderr,
    reason = "a skipped or narrowed test must say so"
)]
fn say(message: &str) {
    eprintln!("{message}");
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

/// Whether these tests can run here; says why not on stderr.
fn can_run(test: &str) -> bool {
    let lab = Lab::new();
    let namespace = lab
        .rein()
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    let explain = lab.rein().args(["sandbox", "--explain"]).output();
    let enforced = explain
        .as_ref()
        .is_ok_and(|o| stdout(o).contains(", enforced"));
    if namespace && enforced {
        return true;
    }
    say(&format!(
        "SKIPPED {test}: {}",
        if namespace {
            format!(
                "the sandbox is not enforced here: {}",
                explain.map(|o| stdout(&o)).unwrap_or_default()
            )
        } else {
            "no private mount namespace (`unshare --mount`) to protect the real home".to_owned()
        },
    ));
    false
}

/// The commands that deleted or overwrote a fake home through rein's bash tool before the
/// sandbox (issue 15), `{outside}` standing for the directory outside the workspace.
const HOSTILE: [&str; 13] = [
    "d=$(echo ~); rm -rf \"$d\"",
    "rm -rf ${X:-~}",
    "read d < list; rm -rf \"$d\"",
    "alias r='rm -rf'; r ~",
    "f(){ rm -rf \"$1\"; }; f ~",
    "printf 'rm -rf ~' > x.sh; bash x.sh",
    "python3 -c 'import os; os.system(\"rm -rf ~\")'",
    "git -c alias.x='!rm -rf ~' x",
    "echo cm0gLXJmIH4= | base64 -d | bash",
    "ln -s ~ hl; rm -rf hl/",
    "> ~/.bashrc",
    "echo pwned > ../outside/secret.txt",
    "dd if=/dev/zero of={outside}/secret.txt bs=1 count=8 conv=notrunc",
];

fn hostile(command: &str, lab: &Lab) -> String {
    command.replace("{outside}", &lab.outside.display().to_string())
}

/// Through `rein sandbox -- bash -c`, no text check in the way: the kernel alone.
#[test]
fn every_hostile_command_is_stopped_by_the_sandbox_alone_and_not_without_it() {
    if !can_run("every_hostile_command_is_stopped_by_the_sandbox_alone_and_not_without_it") {
        return;
    }
    let mut damaged_without = 0;
    for command in HOSTILE {
        let lab = Lab::new();
        let line = hostile(command, &lab);
        let out = run(lab.rein().args(["sandbox", "--", "bash", "-c", &line]));
        assert_eq!(
            lab.damaged(),
            Vec::<&str>::new(),
            "{command}: {}",
            stderr(&out)
        );

        let lab = Lab::new();
        let line = hostile(command, &lab);
        let out = run(lab
            .rein()
            .args(["--sandbox", "off", "sandbox", "--", "bash", "-c", &line]));
        if !lab.damaged().is_empty() {
            damaged_without += 1;
        } else {
            // Only a command bash itself does not run as written may leave them: an alias
            // is not expanded in `bash -c`.
            assert!(
                command.starts_with("alias"),
                "{command} harmless without the sandbox: {}",
                stderr(&out)
            );
        }
    }
    assert_eq!(damaged_without, HOSTILE.len() - 1, "the test can fail");
}

/// Through the agent in yolo mode: each canary survives, and the model is told the sandbox
/// refused (or the hard deny list refused before anything ran); with `--sandbox off`, the
/// commands the deny list does not catch destroy them again.
#[test]
fn hostile_commands_through_the_agent_leave_the_home_and_say_why() {
    if !can_run("hostile_commands_through_the_agent_leave_the_home_and_say_why") {
        return;
    }
    for command in HOSTILE {
        let lab = Lab::new();
        let line = hostile(command, &lab);
        let server = MockServer::start(
            Script::new()
                .reply(Turn::new().tool_call(MockToolCall::new(
                    "b1",
                    "bash",
                    json!({ "command": line }).to_string(),
                )))
                .reply(Turn::text("Done.")),
        );
        let out = run(&mut lab.rein_prompt(&server, &["--permission-mode", "yolo"]));
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        assert_eq!(lab.damaged(), Vec::<&str>::new(), "{command}");
        let report = final_json(&out);
        let result = server.requests()[1].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        let denied = report["permission_denials"].as_array().is_some_and(|d| {
            d.iter().any(|d| {
                d["reason"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("hard deny list")
            })
        });
        let harmless = command.starts_with("alias");
        assert!(
            denied || harmless || result.contains("the sandbox refused a write to"),
            "{command}: {result}"
        );
        if denied || harmless {
            continue;
        }
        // The same command without the sandbox: the test can fail.
        let lab = Lab::new();
        let line = hostile(command, &lab);
        let server = MockServer::start(
            Script::new()
                .reply(Turn::new().tool_call(MockToolCall::new(
                    "b1",
                    "bash",
                    json!({ "command": line }).to_string(),
                )))
                .reply(Turn::text("Done.")),
        );
        let out =
            run(&mut lab.rein_prompt(&server, &["--permission-mode", "yolo", "--sandbox", "off"]));
        assert!(out.status.success(), "{command}: {}", stderr(&out));
        assert!(
            !lab.damaged().is_empty(),
            "{command} did no harm without the sandbox"
        );
    }
}

/// A lab outside /tmp, so that /tmp itself is writable as it is for most people.
fn lab_outside_tmp() -> (tempfile::TempDir, Lab) {
    let holder = tempfile::Builder::new()
        .prefix("sandbox-lab")
        .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
        .unwrap();
    let base = holder.path().canonicalize().unwrap();
    (holder, Lab::at(base, None))
}

fn sh(lab: &Lab, script: &str) -> Output {
    let mut cmd = lab.rein();
    // The toolchain stays where it is; cargo's own caches move to the fake home.
    for var in ["RUSTUP_HOME", "RUSTUP_TOOLCHAIN"] {
        if let Some(value) = std::env::var_os(var) {
            cmd.env(var, value);
        }
    }
    if std::env::var_os("RUSTUP_HOME").is_none()
        && let Some(home) = std::env::var_os("HOME")
    {
        cmd.env("RUSTUP_HOME", PathBuf::from(home).join(".rustup"));
    }
    cmd.env("CARGO_HOME", lab.home.join(".cargo"))
        .args(["sandbox", "--", "bash", "-c", script]);
    run(&mut cmd)
}

#[test]
fn everyday_work_runs_under_workspace_write() {
    if !can_run("everyday_work_runs_under_workspace_write") {
        return;
    }
    let (_holder, lab) = lab_outside_tmp();
    let work = &lab.work;
    std::fs::create_dir_all(lab.home.join(".cargo/registry")).unwrap();
    // A crate with a vendored dependency, built offline.
    std::fs::create_dir_all(work.join("app/src")).unwrap();
    std::fs::create_dir_all(work.join("app/vendor/util/src")).unwrap();
    std::fs::write(
        work.join("app/Cargo.toml"),
        "[package]\nname = \"app\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[dependencies]\nutil = { path = \"vendor/util\" }\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        work.join("app/src/main.rs"),
        "fn main() { println!(\"{}\", util::two()); }\n",
    )
    .unwrap();
    std::fs::write(
        work.join("app/vendor/util/Cargo.toml"),
        "[package]\nname = \"util\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    std::fs::write(
        work.join("app/vendor/util/src/lib.rs"),
        "pub fn two() -> u32 { 2 }\n",
    )
    .unwrap();
    let out = sh(
        &lab,
        "cd app && cargo build --offline --quiet && ./target/debug/app",
    );
    assert!(
        out.status.success() && stdout(&out).contains('2'),
        "cargo: {}{}",
        stdout(&out),
        stderr(&out)
    );

    // A small Python project's tests.
    std::fs::create_dir_all(work.join("py")).unwrap();
    std::fs::write(
        work.join("py/calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    std::fs::write(
        work.join("py/test_calc.py"),
        "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 2), 4)\n\ndef test_add():\n    assert add(1, 2) == 3\n",
    )
    .unwrap();
    let has_pytest = Command::new("python3")
        .args(["-m", "pytest", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let runner = if has_pytest {
        "python3 -m pytest -q -p no:cacheprovider"
    } else {
        say("pytest is not installed: the Python project runs with python3 -m unittest");
        "python3 -m unittest -q"
    };
    let out = sh(&lab, &format!("cd py && {runner}"));
    assert!(
        out.status.success(),
        "python: {}{}",
        stdout(&out),
        stderr(&out)
    );

    // git commit, npm --version, /tmp.
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(work)
            .env("HOME", &lab.home)
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let out = sh(
        &lab,
        "git add py && git -c user.name=t -c user.email=t@example.com commit -qm first && git log --oneline | wc -l",
    );
    assert!(
        out.status.success() && stdout(&out).trim() == "1",
        "git: {}{}",
        stdout(&out),
        stderr(&out)
    );
    let has_npm = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if has_npm {
        let out = sh(&lab, "npm --version");
        assert!(
            out.status.success(),
            "npm: {}{}",
            stdout(&out),
            stderr(&out)
        );
    } else {
        say("npm is not installed: `npm --version` is not checked");
    }
    // Landlock grants whole trees: /tmp is writable only when neither the workspace nor the
    // home lies under it, which a checkout (and its test directories) under /tmp breaks.
    if Path::new(env!("CARGO_MANIFEST_DIR")).starts_with("/tmp") {
        say("this checkout lies under /tmp: writing /tmp is not checked");
    } else {
        let out = sh(
            &lab,
            "f=/tmp/rein-sandbox-test-$$; echo x > $f && cat $f && rm $f",
        );
        assert!(
            out.status.success(),
            "/tmp: {}{}",
            stdout(&out),
            stderr(&out)
        );
    }
    // And still nothing outside.
    assert_eq!(lab.damaged(), Vec::<&str>::new());
    let hooks = sh(&lab, "echo 'rm -rf ~' > .git/hooks/pre-commit");
    assert!(!hooks.status.success() && !work.join(".git/hooks/pre-commit").exists());
}

#[test]
fn auto_runs_inside_without_asking_and_lists_what_the_sandbox_refused() {
    if !can_run("auto_runs_inside_without_asking_and_lists_what_the_sandbox_refused") {
        return;
    }
    let lab = Lab::new();
    std::fs::write(lab.work.join("main.py"), "import helpers\n").unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r1",
                "read_file",
                json!({"file_path": "main.py"}).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "e1",
                "edit_file",
                json!({"file_path": "main.py", "old_string": "import helpers", "new_string": "import utils"})
                    .to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({"command": "echo built > out.txt && python3 -c \"import os; open(os.path.expanduser('~/.bashrc'), 'a').write('x')\""}).to_string(),
            )))
            .reply(Turn::text("Done.")),
    );
    let out = run(&mut lab.rein_prompt(&server, &["--permission-mode", "auto"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(lab.work.join("main.py")).unwrap(),
        "import utils\n"
    );
    assert_eq!(
        std::fs::read_to_string(lab.work.join("out.txt")).unwrap(),
        "built\n"
    );
    assert_eq!(lab.damaged(), Vec::<&str>::new());
    let report = final_json(&out);
    let denials = report["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{report}");
    let reason = denials[0]["reason"].as_str().unwrap();
    let bashrc = lab.home.join(".bashrc");
    assert!(
        reason.contains(&format!(
            "the sandbox refused a write to {}",
            bashrc.display()
        )),
        "{reason}"
    );
}

#[test]
fn without_landlock_rein_says_so_once_and_never_pretends() {
    let lab = Lab::new();
    std::fs::write(
        lab.rein_home.join("config.toml"),
        "[sandbox]\nlandlock = false\n",
    )
    .unwrap();
    let explain = run(lab.rein().args(["sandbox", "--explain"]));
    let text = stdout(&explain);
    assert!(
        text.contains("NOTHING is enforced") && text.contains("no Landlock"),
        "{text}"
    );
    // The setting is named: the kernel is not blamed for it.
    assert!(text.contains("`[sandbox] landlock = false`"), "{text}");
    assert!(!text.contains("Linux 5.13"), "{text}");
    assert!(text.contains("auto: unavailable"), "{text}");

    let server = MockServer::start(Script::new().reply(Turn::text("Done.")));
    let auto = run(&mut lab.rein_prompt(&server, &["--permission-mode", "auto"]));
    assert_eq!(auto.status.code(), Some(2), "{}", stderr(&auto));
    assert!(
        stderr(&auto).contains("auto permission mode needs the OS sandbox"),
        "{}",
        stderr(&auto)
    );
    assert!(server.requests().is_empty(), "auto must not start");

    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({"command": "echo hi"}).to_string(),
            )))
            .reply(Turn::text("Done.")),
    );
    let out = run(&mut lab.rein_prompt(&server, &["--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warned = stderr(&out).matches("cannot be enforced here").count();
    assert_eq!(warned, 1, "{}", stderr(&out));
    let report = final_json(&out);
    assert!(
        report["warnings"]
            .to_string()
            .contains("permission checks alone"),
        "{report}"
    );
}

/// Hooks are the person's own code: outside the sandbox by default, inside with
/// `[sandbox] hooks = true`.
#[test]
fn hooks_run_sandboxed_only_when_asked() {
    if !can_run("hooks_run_sandboxed_only_when_asked") {
        return;
    }
    for sandboxed in [false, true] {
        let lab = Lab::new();
        std::fs::write(
            lab.rein_home.join("config.toml"),
            format!(
                "[sandbox]\nhooks = {sandboxed}\n\n[[hooks.SessionStart]]\ncommand = \"echo hook > ~/.bashrc\"\n"
            ),
        )
        .unwrap();
        let server = MockServer::start(Script::new().reply(Turn::text("Done.")));
        let out = run(&mut lab.rein_prompt(&server, &[]));
        assert!(out.status.success(), "{}", stderr(&out));
        let bashrc = std::fs::read_to_string(lab.home.join(".bashrc")).unwrap();
        let expected = if sandboxed { "canary\n" } else { "hook\n" };
        assert_eq!(bashrc, expected, "hooks = {sandboxed}: {}", stderr(&out));
    }
}

/// `config.toml` for the lab: `[sandbox]` lines, then a stdio MCP server (with its own
/// lines) that tries to write the fake home's `.bashrc` and a file in the workspace before
/// it serves.
fn mcp_config(lab: &Lab, sandbox: &str, server: &str) {
    let fake = PathBuf::from(env!("CARGO_BIN_EXE_rein")).with_file_name("rein-mcp-fake");
    assert!(fake.exists(), "{} is missing", fake.display());
    std::fs::write(
        lab.rein_home.join("config.toml"),
        format!(
            "[sandbox]\n{sandbox}\n\n[mcp_servers.writer]\ncommand = \"bash\"\n\
             args = [\"-c\", \"echo mcp > ~/.bashrc; echo mcp > inside.txt; exec {}\"]\n{server}\n",
            fake.display()
        ),
    )
    .unwrap();
}

/// stdio MCP servers are the person's own code: outside the sandbox by default, inside with
/// `[sandbox] mcp = true` or the server's own `sandbox = true` (which may also leave one out).
#[test]
fn mcp_servers_run_sandboxed_only_when_asked() {
    if !can_run("mcp_servers_run_sandboxed_only_when_asked") {
        return;
    }
    for (sandbox, server, sandboxed) in [
        ("", "", false),
        ("mcp = true", "", true),
        ("", "sandbox = true", true),
        ("mcp = true", "sandbox = false", false),
    ] {
        let lab = Lab::new();
        mcp_config(&lab, sandbox, server);
        let out = run(lab.rein().args(["mcp", "list"]));
        let case = format!("[sandbox] {sandbox:?}, server {server:?}");
        let text = stdout(&out);
        assert!(out.status.success(), "{case}: {text}{}", stderr(&out));
        let line = text
            .lines()
            .find(|l| l.starts_with("writer"))
            .unwrap_or_else(|| panic!("{case}: {text}"));
        assert!(line.contains("ready"), "{case}: {line}");
        assert_eq!(line.contains("sandboxed"), sandboxed, "{case}: {line}");
        // It ran, and could write inside the workspace either way.
        assert_eq!(
            std::fs::read_to_string(lab.work.join("inside.txt")).unwrap(),
            "mcp\n",
            "{case}"
        );
        let bashrc = std::fs::read_to_string(lab.home.join(".bashrc")).unwrap();
        let expected = if sandboxed { "canary\n" } else { "mcp\n" };
        assert_eq!(bashrc, expected, "{case}: {text}");
    }
}

/// Where the sandbox cannot be enforced, a server configured for it runs without it, and
/// rein says so rather than pretend.
#[test]
fn an_mcp_server_without_landlock_runs_unsandboxed_and_rein_says_so() {
    let lab = Lab::new();
    mcp_config(&lab, "landlock = false", "sandbox = true");
    let out = run(lab.rein().args(["mcp", "list"]));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    let warning = stderr(&out);
    assert!(
        warning.contains("cannot be enforced here")
            && warning.contains("MCP server writer configured to run in it runs without it"),
        "{warning}"
    );
    assert!(!text.contains("sandboxed"), "{text}");
    assert_eq!(
        std::fs::read_to_string(lab.home.join(".bashrc")).unwrap(),
        "mcp\n"
    );
}

/// `git ARGS` in `dir`, outside the sandbox, with an identity and no user config.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = run(Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1"));
    assert!(out.status.success(), "git {args:?}: {}", stderr(&out));
    stdout(&out)
}

/// A workspace that is not the top of its repository: its git directory lies outside it.
#[test]
fn git_commit_runs_from_a_repository_subdirectory_and_a_linked_worktree() {
    if !can_run("git_commit_runs_from_a_repository_subdirectory_and_a_linked_worktree") {
        return;
    }
    let lab = Lab::new();
    git_in(&lab.work, &["init", "-q", "-b", "main"]);
    std::fs::create_dir_all(lab.work.join("sub")).unwrap();
    std::fs::write(lab.work.join("sub/a"), "a\n").unwrap();
    git_in(&lab.work, &["add", "."]);
    git_in(&lab.work, &["commit", "-qm", "one"]);
    let worktree = lab.base().join("wt");
    git_in(
        &lab.work,
        &[
            "worktree",
            "add",
            "-q",
            &worktree.to_string_lossy(),
            "-b",
            "w",
        ],
    );
    let git_dir = lab.work.join(".git");
    for (dir, name) in [(lab.work.join("sub"), "sub"), (worktree.clone(), "wt")] {
        let script = format!(
            "echo {name} > {name}.txt && git add {name}.txt && git commit -qm {name} && \
             git checkout -qb {name}-branch && echo committed; \
             echo 'rm -rf ~' > {hooks}/pre-commit; git config core.fsmonitor x",
            hooks = git_dir.join("hooks").display(),
        );
        let out = run(lab
            .rein()
            .current_dir(&dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .args(["sandbox", "--", "bash", "-c", &script]));
        assert!(
            stdout(&out).contains("committed"),
            "{name}: {}{}",
            stdout(&out),
            stderr(&out)
        );
        assert!(
            git_in(&dir, &["log", "--format=%s"]).starts_with(&format!("{name}\n")),
            "{name}"
        );
        assert!(!git_dir.join("hooks/pre-commit").exists(), "{name}");
        assert!(
            !std::fs::read_to_string(git_dir.join("config"))
                .unwrap()
                .contains("fsmonitor"),
            "{name}"
        );
    }
    assert_eq!(lab.damaged(), Vec::<&str>::new());
}

/// Every path under `dir`, sorted.
fn listing(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(next) = todo.pop() {
        for entry in std::fs::read_dir(&next).unwrap().flatten() {
            let path = entry.path();
            if path.is_dir() && !path.is_symlink() {
                todo.push(path.clone());
            }
            found.push(path);
        }
    }
    found.sort();
    found
}

#[test]
fn explain_runs_nothing_and_makes_nothing() {
    if !can_run("explain_runs_nothing_and_makes_nothing") {
        return;
    }
    let lab = Lab::new();
    // With ~/.cargo there, a command would get ~/.cargo/git and ~/.cargo/registry made.
    std::fs::create_dir_all(lab.home.join(".cargo")).unwrap();
    let before = listing(lab.base());
    let out = run(lab.rein().args(["sandbox", "--explain"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("enforced"), "{}", stdout(&out));
    assert_eq!(listing(lab.base()), before);
    // In a repository, it says what keeps git from being redirected.
    git_in(&lab.work, &["init", "-q"]);
    let out = run(lab.rein().args(["sandbox", "--explain"]));
    let text = stdout(&out);
    assert!(
        text.contains("kept in place") && text.contains(".git/commondir"),
        "{text}"
    );
}
