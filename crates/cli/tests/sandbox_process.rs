//! The sandbox's hold on the process, through the real binary: it works for a non-root
//! user, takes every capability from root, hides the sockets of daemons outside it, and
//! (from Landlock ABI 6) refuses signals to processes outside it.
//!
//! Each rein run happens in a private mount namespace (and UTS namespace as root, so that a
//! failed `hostname` check cannot rename the machine) in which the real home directory is
//! read-only. What the machine cannot give is said on stderr as "SKIPPED ...".

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::support::{process_alive, require_python3, run, stderr, stdout};

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

/// A workspace, a fake home and rein's home under one temporary directory.
struct Lab {
    dir: tempfile::TempDir,
    work: PathBuf,
    home: PathBuf,
    rein_home: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let dir = tempfile::TempDir::new().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let lab = Lab {
            work: base.join("work"),
            home: base.join("home"),
            rein_home: base.join("rein-home"),
            dir,
        };
        for d in [&lab.work, &lab.home, &lab.rein_home] {
            std::fs::create_dir_all(d).unwrap();
        }
        lab
    }

    fn base(&self) -> PathBuf {
        self.dir.path().canonicalize().unwrap()
    }

    /// `rein ARGS` in the workspace, in a private mount namespace where the real home is
    /// read-only, with a clean environment.
    fn rein(&self) -> Command {
        let real_home = std::env::var("HOME").unwrap_or_else(|_| "/root".to_owned());
        let mut cmd = Command::new("unshare");
        if is_root() {
            cmd.arg("--uts");
        } else {
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

    /// `rein sandbox -- sh -c SCRIPT`.
    fn sandboxed(&self, script: &str) -> Output {
        run(self.rein().args(["sandbox", "--", "sh", "-c", script]))
    }

    /// `rein sandbox --explain`, when it says the sandbox is enforced; says why not.
    fn enforced(&self, test: &str) -> Option<String> {
        let explain = run(self.rein().args(["sandbox", "--explain"]));
        let text = stdout(&explain);
        if explain.status.success() && text.contains(", enforced") {
            return Some(text);
        }
        say(&format!(
            "SKIPPED {test}: the sandbox is not enforced here (or no private mount namespace \
             protects the real home): {text}{}",
            stderr(&explain)
        ));
        None
    }
}

/// The Landlock ABI `rein sandbox --explain` names.
fn landlock_abi(explain: &str) -> u32 {
    explain
        .split("Landlock ABI ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// The user the non-root test runs as.
const NOBODY: &str = "65534";

/// `cmd` run as uid and gid 65534 through setpriv, with no supplementary groups.
fn as_nobody(program: &Path) -> Command {
    let mut cmd = Command::new("setpriv");
    cmd.args([
        &format!("--reuid={NOBODY}"),
        &format!("--regid={NOBODY}"),
        "--clear-groups",
        "--",
    ])
    .arg(program);
    cmd
}

/// Whether uid 65534 can be switched to and can make a user namespace; says why not.
fn nobody_can_run(test: &str) -> bool {
    if !is_root() {
        say(&format!(
            "SKIPPED {test}: only root can switch to uid {NOBODY} (run as root, as CI does)"
        ));
        return false;
    }
    let probe = as_nobody(Path::new("unshare"))
        .args(["--user", "--map-current-user", "--mount", "true"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    match probe {
        Err(_) => {
            say(&format!("SKIPPED {test}: setpriv is not installed"));
            false
        }
        Ok(status) if !status.success() => {
            say(&format!(
                "SKIPPED {test}: this system gives unprivileged users no user namespace"
            ));
            false
        }
        Ok(_) => true,
    }
}

fn chown_nobody(path: &Path) {
    let status = Command::new("chown")
        .args(["-R", &format!("{NOBODY}:{NOBODY}")])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success(), "chown {}", path.display());
}

/// The review's repro: rein is not dumpable, so a non-root child could not write its
/// user-namespace maps and every sandboxed command in a git repository failed to start.
#[test]
fn a_non_root_user_runs_sandboxed_commands_in_a_git_repository() {
    let test = "a_non_root_user_runs_sandboxed_commands_in_a_git_repository";
    if !nobody_can_run(test) {
        return;
    }
    // Everything uid 65534 needs to reach: a 0755 directory holding a copy of the binary,
    // the workspace and the homes owned by it.
    let dir = tempfile::TempDir::new().unwrap();
    let base = dir.path().canonicalize().unwrap();
    std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rein = base.join("bin/rein");
    std::fs::create_dir_all(base.join("bin")).unwrap();
    std::fs::copy(env!("CARGO_BIN_EXE_rein"), &rein).unwrap();
    std::fs::set_permissions(&rein, std::fs::Permissions::from_mode(0o755)).unwrap();
    let (work, home, rein_home, outside) = (
        base.join("work"),
        base.join("home"),
        base.join("rein-home"),
        base.join("outside"),
    );
    for d in [&work, &home, &rein_home, &outside, &base.join("tmp")] {
        std::fs::create_dir_all(d).unwrap();
        chown_nobody(d);
    }
    std::fs::write(outside.join("secret.txt"), "canary\n").unwrap();
    chown_nobody(&outside);
    let nobody = |program: &Path| {
        let mut cmd = as_nobody(program);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &home)
            .env("REIN_HOME", &rein_home)
            .env("TMPDIR", base.join("tmp"))
            .current_dir(&work)
            .stdin(Stdio::null());
        cmd
    };
    let init = run(nobody(Path::new("git")).args(["init", "-q"]));
    assert!(init.status.success(), "git init: {}", stderr(&init));
    assert!(work.join(".git/hooks").is_dir());

    let explain = run(nobody(&rein).args(["sandbox", "--explain"]));
    if !stdout(&explain).contains(", enforced") {
        say(&format!(
            "SKIPPED {test}: the sandbox is not enforced here: {}",
            stdout(&explain)
        ));
        return;
    }
    let sandboxed = |script: &str| run(nobody(&rein).args(["sandbox", "--", "sh", "-c", script]));

    let ok = sandboxed("echo ok > f");
    assert!(ok.status.success(), "{}", stderr(&ok));
    assert_eq!(std::fs::read_to_string(work.join("f")).unwrap(), "ok\n");

    // Outside the workspace: refused by the sandbox, though uid 65534 owns the file.
    let line = format!("echo pwned > {}", outside.join("secret.txt").display());
    let out = sandboxed(&line);
    assert!(!out.status.success(), "{}", stdout(&out));
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "canary\n"
    );
    // And .git/hooks stays read-only: the mount namespace really was made.
    let hooks = sandboxed("echo x > .git/hooks/pre-commit");
    assert!(
        !hooks.status.success() && stderr(&hooks).contains("Read-only file system"),
        "{}",
        stderr(&hooks)
    );
}

/// Capability bits of this process's `/proc/self/status` line `field`, inside the sandbox.
fn caps_line(out: &str, field: &str) -> Option<u64> {
    out.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| u64::from_str_radix(v.trim(), 16).ok())
}

/// Run as root (containers, CI), a sandboxed command kept every capability: it could rename
/// the host, add addresses, signal anything, type into the terminal.
#[test]
fn a_sandboxed_command_has_no_capabilities_even_as_root() {
    let test = "a_sandboxed_command_has_no_capabilities_even_as_root";
    let lab = Lab::new();
    std::fs::create_dir_all(lab.work.join(".git/hooks")).unwrap();
    if lab.enforced(test).is_none() {
        return;
    }
    let out = lab.sandboxed(
        "grep -E '^Cap(Inh|Prm|Eff|Bnd|Amb):' /proc/self/status; \
         hostname rein-sandbox-renamed-this 2>&1; echo hostname=$(hostname)",
    );
    let text = stdout(&out);
    for field in ["CapInh:", "CapPrm:", "CapEff:", "CapAmb:"] {
        assert_eq!(caps_line(&text, field), Some(0), "{field}\n{text}");
    }
    if is_root() {
        assert_eq!(caps_line(&text, "CapBnd:"), Some(0), "{text}");
    } else {
        say(&format!(
            "{test}: not root; the bounding set of a non-root command is not checked"
        ));
    }
    assert!(
        !text.contains("hostname=rein-sandbox-renamed-this"),
        "{text}{}",
        stderr(&out)
    );

    // TIOCSTI on the command's own controlling terminal: refused by seccomp (EPERM, 1), where
    // without the filter it succeeds (root, or legacy_tiocsti) or fails with EIO.
    require_python3();
    let sti = run(lab.rein().args([
        "sandbox",
        "--",
        "python3",
        "-c",
        "import fcntl, os, termios\n\
         try: os.setsid()\n\
         except OSError: pass\n\
         m, s = os.openpty()\n\
         fcntl.ioctl(s, termios.TIOCSCTTY, 0)\n\
         try:\n    fcntl.ioctl(s, termios.TIOCSTI, b'x'); print('injected')\n\
         except OSError as e: print('errno', e.errno)\n",
    ]));
    assert_eq!(stdout(&sti).trim(), "errno 1", "{}", stderr(&sti));
}

/// A tmux server, the session bus, `systemd-run --user`: daemons listening under the
/// runtime directory run what they are asked outside the sandbox. Their directory is hidden.
#[test]
fn sockets_under_the_runtime_directory_are_hidden() {
    let test = "sockets_under_the_runtime_directory_are_hidden";
    let lab = Lab::new();
    let runtime = lab.base().join("run-user");
    std::fs::create_dir_all(&runtime).unwrap();
    std::fs::set_permissions(&runtime, std::fs::Permissions::from_mode(0o700)).unwrap();
    let socket = runtime.join("bus");
    let _listener = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    if lab.enforced(test).is_none() {
        return;
    }
    require_python3();
    let connect = "import os, socket\n\
                   s = socket.socket(socket.AF_UNIX)\n\
                   try:\n    s.connect(os.environ['XDG_RUNTIME_DIR'] + '/bus'); print('connected')\n\
                   except OSError as e: print('refused', e)\n";
    let explain = run(lab
        .rein()
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["sandbox", "--explain"]));
    assert!(
        stdout(&explain).contains(&format!(
            "{} (an empty read-only directory in its place)",
            runtime.display()
        )),
        "{}",
        stdout(&explain)
    );
    let inside = run(lab
        .rein()
        .env("XDG_RUNTIME_DIR", &runtime)
        .args(["sandbox", "--", "python3", "-c", connect]));
    assert!(
        stdout(&inside).starts_with("refused"),
        "{}{}",
        stdout(&inside),
        stderr(&inside)
    );
    // The test can fail: without the sandbox the same command connects.
    let without = run(lab.rein().env("XDG_RUNTIME_DIR", &runtime).args([
        "--sandbox",
        "off",
        "sandbox",
        "--",
        "python3",
        "-c",
        connect,
    ]));
    assert_eq!(stdout(&without).trim(), "connected", "{}", stderr(&without));
}

/// From Landlock ABI 6 a sandboxed command may signal only processes it started.
#[test]
fn signals_to_processes_outside_the_sandbox_are_refused() {
    let test = "signals_to_processes_outside_the_sandbox_are_refused";
    let lab = Lab::new();
    let Some(explain) = lab.enforced(test) else {
        return;
    };
    if landlock_abi(&explain) < 6 {
        say(&format!(
            "SKIPPED {test}: Landlock ABI {} has no signal scope (ABI 6)",
            landlock_abi(&explain)
        ));
        return;
    }
    let mut victim = Command::new("sleep").arg("60").spawn().unwrap();
    let pid = victim.id();
    let kill = lab.sandboxed(&format!("kill -TERM {pid}"));
    let alive = process_alive(pid);
    // The test can fail: without the sandbox the same signal (0: only asked) is allowed.
    let without = run(lab.rein().args([
        "--sandbox",
        "off",
        "sandbox",
        "--",
        "sh",
        "-c",
        &format!("kill -0 {pid}"),
    ]));
    let _ = victim.kill();
    let _ = victim.wait();
    assert!(
        !kill.status.success() && alive,
        "the sandboxed kill: {}",
        stderr(&kill)
    );
    assert!(without.status.success(), "{}", stderr(&without));
    // Its own children it may still signal.
    let own = lab.sandboxed("sleep 30 & kill -TERM $! && wait $!; echo status=$?");
    assert_eq!(stdout(&own).trim(), "status=143", "{}", stderr(&own));
}
