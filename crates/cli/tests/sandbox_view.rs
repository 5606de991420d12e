//! The machine outside the writable trees is a read-only view, and the credential stores
//! read as empty (issue 19): the probes that changed modes, times and extended attributes
//! outside the workspace, in `auto` and `yolo`, as root and as uid 65534; `hide`, `expose`
//! and the ssh-agent; the everyday work that must still run in `auto`.
//!
//! The canaries live in a temporary "root" and home, never on the real machine; root's runs
//! happen in a private mount namespace where the real home is read-only, uid 65534's can
//! change nothing of the machine's. What the machine cannot give is said as "SKIPPED ...".

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{require_python3, run, stderr, stdout};

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

/// Who runs rein.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum User {
    /// This test's user (root on CI), in a private mount namespace.
    Me,
    /// uid and gid 65534 through setpriv.
    Nobody,
}

const NOBODY: &str = "65534";

/// A fake root and home full of canaries, a workspace and rein's home, all under one
/// temporary directory; for uid 65534 everything is its own and rein is a copy it can run.
struct Lab {
    _dir: tempfile::TempDir,
    base: PathBuf,
    root: PathBuf,
    home: PathBuf,
    work: PathBuf,
    rein_home: PathBuf,
    rein: PathBuf,
    user: User,
}

/// The canaries, relative to the lab's base: (path, mode; a directory ends with `/`).
const CANARIES: [(&str, u32); 6] = [
    ("root/etc/shadow", 0o640),
    ("root/usr/local/bin/git", 0o755),
    ("home/.ssh/", 0o700),
    ("home/.ssh/id_rsa", 0o600),
    ("home/notes/todo.txt", 0o644),
    ("home/.bashrc", 0o644),
];

/// What a canary's inode says: mode, owner, group, modification and change times (any
/// chmod, chown, utime or xattr change moves the change time), and `user.canary`.
type Snapshot = Vec<(String, u32, u32, u32, i64, i64, i64, i64, String)>;

impl Lab {
    fn new(user: User) -> Lab {
        let dir = tempfile::TempDir::new().unwrap();
        let base = dir.path().canonicalize().unwrap();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        for (path, mode) in CANARIES {
            let full = base.join(path);
            if path.ends_with('/') {
                std::fs::create_dir_all(&full).unwrap();
            } else {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, "canary\n").unwrap();
            }
            std::fs::set_permissions(&full, std::fs::Permissions::from_mode(mode)).unwrap();
        }
        let lab = Lab {
            root: base.join("root"),
            home: base.join("home"),
            work: base.join("work"),
            rein_home: base.join("rein-home"),
            rein: base.join("bin/rein"),
            base,
            user,
            _dir: dir,
        };
        for d in [&lab.work, &lab.rein_home, &lab.base.join("tmp")] {
            std::fs::create_dir_all(d).unwrap();
        }
        std::fs::create_dir_all(lab.base.join("bin")).unwrap();
        std::fs::copy(env!("CARGO_BIN_EXE_rein"), &lab.rein).unwrap();
        std::fs::set_permissions(&lab.rein, std::fs::Permissions::from_mode(0o755)).unwrap();
        set_xattr(&lab.home.join("notes/todo.txt"), "1");
        if user == User::Nobody {
            let status = Command::new("chown")
                .args(["-R", &format!("{NOBODY}:{NOBODY}")])
                .arg(&lab.base)
                .status()
                .unwrap();
            assert!(status.success());
        }
        lab
    }

    /// `rein` as the lab's user, in the workspace, with a clean environment.
    fn rein(&self) -> Command {
        let mut cmd = match self.user {
            User::Me => {
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
                    .arg(&self.rein);
                cmd
            }
            User::Nobody => {
                let mut cmd = Command::new("setpriv");
                cmd.args([
                    &format!("--reuid={NOBODY}"),
                    &format!("--regid={NOBODY}"),
                    "--clear-groups",
                    "--",
                ])
                .arg(&self.rein);
                cmd
            }
        };
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("REIN_HOME", &self.rein_home)
            .env("TMPDIR", self.base.join("tmp"))
            .current_dir(&self.work)
            .stdin(Stdio::null());
        cmd
    }

    /// Whether the sandbox is enforced with the read-only view here; says why not.
    fn ready(&self, test: &str) -> bool {
        if self.user == User::Nobody && !is_root() {
            say(&format!(
                "SKIPPED {test}: only root can switch to uid {NOBODY}"
            ));
            return false;
        }
        let explain = run(self.rein().args(["sandbox", "--explain"]));
        let text = stdout(&explain);
        if text.contains(", enforced") && text.contains("a read-only view") {
            return true;
        }
        say(&format!(
            "SKIPPED {test} ({:?}): no enforced sandbox with a read-only view here: {text}{}",
            self.user,
            stderr(&explain)
        ));
        false
    }

    /// One bash call of `command` through the agent in permission mode `mode`, headless;
    /// the tool result the model got.
    fn agent(&self, mode: &str, command: &str, extra: &[&str]) -> String {
        let server = MockServer::start(
            Script::new()
                .reply(Turn::new().tool_call(MockToolCall::new(
                    "b1",
                    "bash",
                    json!({ "command": command, "timeout": 300 }).to_string(),
                )))
                .reply(Turn::text("Done.")),
        );
        let out = run(self
            .rein()
            .env("OPENAI_API_KEY", "sk-test")
            .env("REIN_BASE_URL", server.openai_base_url())
            .env("REIN_MODEL", "gpt-4o")
            .args([
                "-p",
                "go",
                "--output-format",
                "json",
                "--permission-mode",
                mode,
            ])
            .args(extra));
        assert!(out.status.success(), "{}", stderr(&out));
        let requests = server.requests();
        assert!(requests.len() >= 2, "{}", stderr(&out));
        requests[1].body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .unwrap_or_default()
            .to_owned()
    }

    fn snapshot(&self) -> Snapshot {
        CANARIES
            .iter()
            .map(|(path, _)| {
                let full = self.base.join(path);
                let meta = std::fs::metadata(&full).unwrap();
                (
                    (*path).to_owned(),
                    meta.mode(),
                    meta.uid(),
                    meta.gid(),
                    meta.mtime(),
                    meta.mtime_nsec(),
                    meta.ctime(),
                    meta.ctime_nsec(),
                    get_xattr(&full),
                )
            })
            .collect()
    }
}

/// `user.canary` of `path`, through python (std has no xattr calls).
fn get_xattr(path: &Path) -> String {
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, sys\ntry: print(os.getxattr(sys.argv[1], 'user.canary').decode())\nexcept OSError: print('-')",
        ])
        .arg(path)
        .output()
        .unwrap();
    stdout(&out).trim().to_owned()
}

fn set_xattr(path: &Path, value: &str) {
    let out = Command::new("python3")
        .args([
            "-c",
            "import os, sys; os.setxattr(sys.argv[1], 'user.canary', sys.argv[2].encode())",
        ])
        .arg(path)
        .arg(value)
        .output()
        .unwrap();
    assert!(out.status.success(), "setxattr: {}", stderr(&out));
}

/// The probes of the issue, one per line (each runs whatever the others did), against the
/// lab's root and home. The shell forms only with `shell`: permission mode auto refuses
/// them before they run (a `touch` of a file outside, or one it can only know at run
/// time), and the Python forms are what got past it.
fn probes(lab: &Lab, shell: bool) -> String {
    let root = lab.root.display();
    let home = lab.home.display();
    let mut lines = vec![
        format!("python3 -c \"import os; os.chmod('{root}/e'+'tc/shadow', 0o666)\""),
        format!("python3 -c \"import os; os.chmod('{root}/usr/lo'+'cal/bin/git', 0o4755)\""),
        format!("python3 -c \"import os; os.chmod('{home}/.ssh', 0o777)\""),
        format!("python3 -c \"import os; os.utime('{home}/notes/todo.txt', (0, 0))\""),
        format!(
            "python3 -c \"import os; os.setxattr('{home}/notes/todo.txt', 'user.canary', b'pwned')\""
        ),
        format!(
            "python3 -c \"import os; os.chown('{home}/.bash'+'rc', os.getuid(), os.getgid())\""
        ),
        format!(
            "python3 -c \"import os\nfor d, _, fs in os.walk('{home}'):\n  for f in fs:\n    try: os.chmod(os.path.join(d, f), 0)\n    except OSError as e: print(e)\""
        ),
    ];
    if shell {
        lines.push(format!("touch -d 2001-01-01 {home}/.bashrc"));
        lines.push(format!("chmod 666 {root}/etc/shadow"));
    }
    lines.push("echo probes-done".to_owned());
    lines.join("\n")
}

/// Each probe, in auto and yolo, as the lab's user: every canary's mode, owner, times and
/// xattr unchanged, and the model told the sandbox refused.
fn metadata_outside_is_refused(user: User, test: &str) {
    require_python3();
    for mode in ["auto", "yolo"] {
        let lab = Lab::new(user);
        if !lab.ready(test) {
            return;
        }
        let before = lab.snapshot();
        let result = lab.agent(mode, &probes(&lab, mode == "yolo"), &[]);
        assert!(result.contains("probes-done"), "{mode}: {result}");
        assert_eq!(lab.snapshot(), before, "{mode} as {user:?}: {result}");
        assert!(
            result.contains("Read-only file system"),
            "{mode} as {user:?}: {result}"
        );
    }
}

#[test]
fn metadata_outside_the_workspace_is_refused_in_auto_and_yolo_as_root() {
    let test = "metadata_outside_the_workspace_is_refused_in_auto_and_yolo_as_root";
    metadata_outside_is_refused(User::Me, test);
    // The test can fail: without the sandbox the same probes change every canary.
    let lab = Lab::new(User::Me);
    if !lab.ready(test) {
        return;
    }
    let before = lab.snapshot();
    let result = lab.agent("yolo", &probes(&lab, true), &["--sandbox", "off"]);
    assert!(result.contains("probes-done"), "{result}");
    let after = lab.snapshot();
    for (was, is) in before.iter().zip(&after) {
        assert_ne!(was, is, "unchanged without the sandbox: {result}");
    }
}

#[test]
fn metadata_outside_the_workspace_is_refused_in_auto_and_yolo_as_an_unprivileged_user() {
    metadata_outside_is_refused(
        User::Nobody,
        "metadata_outside_the_workspace_is_refused_in_auto_and_yolo_as_an_unprivileged_user",
    );
}

/// Inside the workspace metadata changes still work: the view is read-only outside only.
#[test]
fn metadata_inside_the_workspace_still_changes() {
    let test = "metadata_inside_the_workspace_still_changes";
    require_python3();
    for user in [User::Me, User::Nobody] {
        let lab = Lab::new(user);
        if !lab.ready(test) {
            continue;
        }
        let out = run(lab.rein().args([
            "sandbox",
            "--",
            "sh",
            "-c",
            "echo x > s.sh && chmod +x s.sh && touch -d 2001-01-01 s.sh && \
             python3 -c \"import os; os.setxattr('s.sh', 'user.a', b'1')\" && ./s.sh; \
             stat -c '%a %Y' s.sh",
        ]));
        assert_eq!(
            stdout(&out).trim(),
            "755 978307200",
            "{user:?}: {}",
            stderr(&out)
        );
    }
}

/// Reads each store's file and prints its size: `name=size` per line.
const READ_STORES: &str = "for f in .ssh/id_rsa .aws/credentials .netrc .docker/config.json \
                           .config/gcloud/credentials.db .vault/token notes/todo.txt; do \
                           printf '%s=' $f; cat ~/$f 2>/dev/null | wc -c; done";

fn sizes(out: &Output) -> Vec<(String, usize)> {
    stdout(out)
        .lines()
        .filter_map(|l| {
            let (name, size) = l.split_once('=')?;
            Some((name.to_owned(), size.trim().parse().ok()?))
        })
        .collect()
}

fn size_of(sizes: &[(String, usize)], name: &str) -> usize {
    sizes
        .iter()
        .find(|(n, _)| n == name)
        .map_or(usize::MAX, |(_, s)| *s)
}

#[test]
fn credential_stores_read_as_empty_and_hide_and_expose_move_them() {
    let test = "credential_stores_read_as_empty_and_hide_and_expose_move_them";
    for user in [User::Me, User::Nobody] {
        let lab = Lab::new(user);
        for store in [
            ".aws/credentials",
            ".netrc",
            ".docker/config.json",
            ".config/gcloud/credentials.db",
            ".vault/token",
        ] {
            let path = lab.home.join(store);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, "secret-value\n").unwrap();
        }
        if user == User::Nobody {
            let _ = Command::new("chown")
                .args(["-R", &format!("{NOBODY}:{NOBODY}")])
                .arg(&lab.home)
                .status();
        }
        if !lab.ready(test) {
            continue;
        }
        let out = run(lab.rein().args(["sandbox", "--", "sh", "-c", READ_STORES]));
        let seen = sizes(&out);
        for hidden in [
            ".ssh/id_rsa",
            ".aws/credentials",
            ".netrc",
            ".docker/config.json",
            ".config/gcloud/credentials.db",
        ] {
            assert_eq!(size_of(&seen, hidden), 0, "{user:?} {hidden}: {seen:?}");
        }
        assert_eq!(size_of(&seen, ".vault/token"), 13, "{seen:?}");
        assert_eq!(size_of(&seen, "notes/todo.txt"), 7, "{seen:?}");
        // Without the sandbox each is there: the test can fail.
        let off =
            run(lab
                .rein()
                .args(["--sandbox", "off", "sandbox", "--", "sh", "-c", READ_STORES]));
        assert_eq!(size_of(&sizes(&off), ".aws/credentials"), 13);

        // `expose` gives one back; `hide` takes one more.
        std::fs::write(
            lab.rein_home.join("config.toml"),
            "[sandbox]\nexpose = [\"~/.aws\"]\nhide = [\"~/.vault\"]\n",
        )
        .unwrap();
        let out = run(lab.rein().args(["sandbox", "--", "sh", "-c", READ_STORES]));
        let seen = sizes(&out);
        assert_eq!(size_of(&seen, ".aws/credentials"), 13, "{seen:?}");
        assert_eq!(size_of(&seen, ".vault/token"), 0, "{seen:?}");
        assert_eq!(size_of(&seen, ".netrc"), 0, "{seen:?}");
    }
}

/// The ssh-agent: hidden by default (its socket covered, `SSH_AUTH_SOCK` unset); with
/// `ssh_agent = true` reachable, with `known_hosts`, and the keys still hidden.
#[test]
fn the_ssh_agent_is_reachable_only_when_allowed() {
    let test = "the_ssh_agent_is_reachable_only_when_allowed";
    require_python3();
    let lab = Lab::new(User::Me);
    std::fs::write(lab.home.join(".ssh/known_hosts"), "host key\n").unwrap();
    let socket = lab.base.join("agent/sock");
    std::fs::create_dir_all(socket.parent().unwrap()).unwrap();
    let _agent = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    if !lab.ready(test) {
        return;
    }
    let probe = format!(
        "import os, socket\n\
         print('env', os.environ.get('SSH_AUTH_SOCK', 'unset'))\n\
         s = socket.socket(socket.AF_UNIX)\n\
         try:\n    s.connect('{}'); print('connected')\n\
         except OSError as e: print('refused', e)\n\
         for f in ['known_hosts', 'id_rsa']:\n    \
         try: print(f, len(open(os.path.expanduser('~/.ssh/' + f)).read()))\n    \
         except OSError: print(f, 'missing')\n",
        socket.display()
    );
    let inside = |lab: &Lab| {
        run(lab
            .rein()
            .env("SSH_AUTH_SOCK", &socket)
            .args(["sandbox", "--", "python3", "-c", &probe]))
    };
    let hidden = inside(&lab);
    let text = stdout(&hidden);
    assert!(text.contains("env unset"), "{text}{}", stderr(&hidden));
    assert!(text.contains("refused"), "{text}");
    assert!(text.contains("id_rsa missing"), "{text}");

    std::fs::write(
        lab.rein_home.join("config.toml"),
        "[sandbox]\nssh_agent = true\n",
    )
    .unwrap();
    let allowed = inside(&lab);
    let text = stdout(&allowed);
    assert!(
        text.contains(&format!("env {}", socket.display())),
        "{text}{}",
        stderr(&allowed)
    );
    assert!(text.contains("connected"), "{text}");
    assert!(text.contains("known_hosts 9"), "{text}");
    assert!(text.contains("id_rsa missing"), "{text}");
}

/// What people do every day still runs in auto, through the agent: git commit, a Python
/// project's tests, `cargo build --offline` of a crate with no dependencies, `npm --version`.
#[test]
fn everyday_work_runs_in_auto() {
    let test = "everyday_work_runs_in_auto";
    let lab = Lab::new(User::Me);
    if !lab.ready(test) {
        return;
    }
    let work = &lab.work;
    std::fs::create_dir_all(work.join("tiny/src")).unwrap();
    std::fs::write(
        work.join("tiny/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n\n[workspace]\n",
    )
    .unwrap();
    std::fs::write(
        work.join("tiny/src/main.rs"),
        "fn main() { println!(\"tiny-ran\"); }\n",
    )
    .unwrap();
    std::fs::create_dir_all(work.join("py")).unwrap();
    std::fs::write(
        work.join("py/calc.py"),
        "def add(a, b):\n    return a + b\n",
    )
    .unwrap();
    std::fs::write(
        work.join("py/test_calc.py"),
        "import unittest\nfrom calc import add\n\nclass T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 2), 4)\n",
    )
    .unwrap();
    std::fs::create_dir_all(lab.home.join(".cargo/registry")).unwrap();
    let has_npm = Command::new("npm")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_npm {
        say(&format!(
            "{test}: npm is not installed: `npm --version` is not checked"
        ));
    }
    let script = format!(
        "set -e\n\
         git init -q && git add py && git -c user.name=t -c user.email=t@example.com commit -qm first\n\
         echo commits=$(git log --oneline | wc -l)\n\
         (cd py && python3 -m unittest -q) && echo python-ok\n\
         (cd tiny && cargo build --offline --quiet && ./target/debug/tiny)\n\
         {}\n\
         echo everyday-done",
        if has_npm {
            "npm --version >/dev/null && echo npm-ok"
        } else {
            "true"
        }
    );
    let mut extra_env: Vec<(String, std::ffi::OsString)> = Vec::new();
    for var in ["RUSTUP_HOME", "RUSTUP_TOOLCHAIN"] {
        if let Some(value) = std::env::var_os(var) {
            extra_env.push((var.to_owned(), value));
        }
    }
    if std::env::var_os("RUSTUP_HOME").is_none()
        && let Some(home) = std::env::var_os("HOME")
    {
        extra_env.push((
            "RUSTUP_HOME".to_owned(),
            PathBuf::from(home).join(".rustup").into_os_string(),
        ));
    }
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({ "command": script, "timeout": 300 }).to_string(),
            )))
            .reply(Turn::text("Done.")),
    );
    let mut cmd = lab.rein();
    cmd.envs(extra_env)
        .env("CARGO_HOME", lab.home.join(".cargo"))
        .env("OPENAI_API_KEY", "sk-test")
        .env("REIN_BASE_URL", server.openai_base_url())
        .env("REIN_MODEL", "gpt-4o")
        .args([
            "-p",
            "go",
            "--output-format",
            "json",
            "--permission-mode",
            "auto",
        ]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = server.requests()[1].body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    for said in ["commits=1", "python-ok", "tiny-ran", "everyday-done"] {
        assert!(result.contains(said), "{said}: {result}");
    }
    if has_npm {
        assert!(result.contains("npm-ok"), "{result}");
    }
}
