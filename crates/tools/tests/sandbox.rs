//! The OS sandbox with real processes: what a sandboxed command can and cannot change.
//!
//! Each test needs a kernel that enforces the sandbox (Landlock and seccomp); where it has
//! none, the test says so on stderr and passes without checking (the machines this project
//! builds on have it, so there the tests really run).

use std::io::Read as _;
use std::path::{Path, PathBuf};

use anyhow::{Result, ensure};
use rein_tools::bash::{BashArgs, BashTool};
use rein_tools::sandbox::{
    DEFAULT_CACHES, KernelProbe, Network, PolicyInputs, Sandbox, SandboxLevel, SandboxPolicy,
    SshAgent,
};
use rein_tools::{Display, Tool, ToolConfig, ToolContext, ToolOutput};

/// A workspace, a fake home with a canary, and a file outside both.
struct Fixture {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    home: PathBuf,
    outside: PathBuf,
    ctx: ToolContext,
}

fn fixture(level: SandboxLevel, network: Option<Network>, probe: KernelProbe) -> Result<Fixture> {
    fixture_with(level, network, probe, &|_| Ok(()))
}

/// A fixture whose workspace `prepare` fills before the sandbox is made.
fn fixture_with(
    level: SandboxLevel,
    network: Option<Network>,
    probe: KernelProbe,
    prepare: &dyn Fn(&Path) -> Result<()>,
) -> Result<Fixture> {
    let dir = tempfile::tempdir()?;
    let base = dir.path().canonicalize()?;
    let ws = base.join("ws");
    let home = base.join("home");
    let outside = base.join("outside");
    for d in [&ws, &home, &outside] {
        std::fs::create_dir_all(d)?;
    }
    prepare(&ws)?;
    std::fs::write(home.join(".bashrc"), "canary\n")?;
    std::fs::write(outside.join("secret.txt"), "canary\n")?;
    let offload = base.join("offload");
    let caches: Vec<PathBuf> = DEFAULT_CACHES.iter().map(PathBuf::from).collect();
    let policy = SandboxPolicy::resolve(&PolicyInputs {
        level,
        network,
        workspace: &ws,
        home_dir: Some(&home),
        rein_home: None,
        rein_files: &[],
        git_dirs: &[],
        caches: &caches,
        extra_writable: &[],
        not_writable: &[],
        tmp_dir: Some(&base.join("private-tmp")),
        rein_dirs: std::slice::from_ref(&offload),
        probe,
        hide: &[],
        expose: &[],
        ssh_agent: SshAgent::Hidden,
        ssh_auth_sock: None,
    });
    let mut config = ToolConfig::new(&ws, &offload);
    config.home_dir = Some(home.clone());
    config.sandbox = Sandbox::new(policy);
    Ok(Fixture {
        _dir: dir,
        ws,
        home,
        outside,
        ctx: ToolContext::new(config),
    })
}

/// Whether the sandbox is enforced here; says why not on stderr.
fn enforced(fx: &Fixture, test: &str) -> bool {
    let sandbox = &fx.ctx.config().sandbox;
    if sandbox.is_enforced() {
        return true;
    }
    #[expect(clippy::print_stderr, reason = "a skipped test must say so")]
    {
        eprintln!("SKIPPED {test}: {}", sandbox.describe());
    }
    false
}

async fn bash(ctx: &ToolContext, command: &str) -> Result<ToolOutput> {
    let args = BashArgs {
        command: command.to_owned(),
        timeout: Some(30),
        run_in_background: None,
    };
    BashTool
        .run(args, ctx)
        .await
        .map_err(|e| anyhow::anyhow!("{command}: {e:?}"))
}

fn refusal(output: &ToolOutput) -> Option<&str> {
    match &output.display {
        Display::Command {
            sandbox_refusal, ..
        } => sandbox_refusal.as_deref(),
        _ => None,
    }
}

fn intact(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|s| s == "canary\n")
}

#[tokio::test]
async fn the_workspace_is_writable_and_the_rest_is_not() -> Result<()> {
    let fx = fixture(SandboxLevel::WorkspaceWrite, None, KernelProbe::Detect)?;
    if !enforced(&fx, "the_workspace_is_writable_and_the_rest_is_not") {
        return Ok(());
    }
    let ok = bash(
        &fx.ctx,
        "echo made > made.txt && mkdir -p a/b && echo $TMPDIR > a/b/t && touch \"$TMPDIR/x\"",
    )
    .await?;
    ensure!(!ok.is_error, "{}", ok.content);
    ensure!(fx.ws.join("made.txt").exists());

    let home = fx.home.display();
    let bashrc = bash(&fx.ctx, &format!("> {home}/.bashrc")).await?;
    ensure!(bashrc.is_error, "{}", bashrc.content);
    ensure!(intact(&fx.home.join(".bashrc")), "the home canary changed");
    let said = refusal(&bashrc).unwrap_or_default();
    ensure!(
        said == format!("the sandbox refused a write to {home}/.bashrc"),
        "{said:?}\n{}",
        bashrc.content
    );
    ensure!(
        bashrc.content.contains("the sandbox refused a write"),
        "{}",
        bashrc.content
    );

    let outside = bash(&fx.ctx, "echo pwned > ../outside/secret.txt").await?;
    ensure!(outside.is_error && intact(&fx.outside.join("secret.txt")));
    ensure!(refusal(&outside).is_some(), "{}", outside.content);
    Ok(())
}

#[tokio::test]
async fn read_only_keeps_even_the_workspace() -> Result<()> {
    let fx = fixture(SandboxLevel::ReadOnly, None, KernelProbe::Detect)?;
    if !enforced(&fx, "read_only_keeps_even_the_workspace") {
        return Ok(());
    }
    let out = bash(&fx.ctx, "cat /etc/hostname >/dev/null; echo x > made.txt").await?;
    ensure!(
        out.is_error && !fx.ws.join("made.txt").exists(),
        "{}",
        out.content
    );
    let tmp = bash(&fx.ctx, "echo x > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"").await?;
    ensure!(!tmp.is_error, "{}", tmp.content);
    Ok(())
}

#[tokio::test]
async fn git_hooks_and_project_config_stay_read_only() -> Result<()> {
    let fx = fixture(SandboxLevel::WorkspaceWrite, None, KernelProbe::Detect)?;
    if !enforced(&fx, "git_hooks_and_project_config_stay_read_only") {
        return Ok(());
    }
    std::fs::create_dir_all(fx.ws.join(".git/hooks"))?;
    std::fs::create_dir_all(fx.ws.join(".rein"))?;
    std::fs::write(fx.ws.join(".rein/config.toml"), "canary\n")?;
    if !fx.ctx.config().sandbox.support().mount_namespace {
        let text = fx.ctx.config().sandbox.describe();
        ensure!(text.contains("NOT protected"), "{text}");
        return Ok(());
    }
    let out = bash(
        &fx.ctx,
        "echo 'rm -rf ~' > .git/hooks/pre-commit; echo pwned > .rein/config.toml; echo ok > .git/HEAD2",
    )
    .await?;
    ensure!(
        out.content.contains("Read-only file system"),
        "{}",
        out.content
    );
    ensure!(
        !fx.ws.join(".git/hooks/pre-commit").exists(),
        "{}",
        out.content
    );
    ensure!(intact(&fx.ws.join(".rein/config.toml")));
    ensure!(
        fx.ws.join(".git/HEAD2").exists(),
        "the rest of .git stays writable"
    );
    Ok(())
}

/// `git ARGS` in `dir`, outside the sandbox, with an identity and no user config.
fn git(dir: &Path, args: &[&str]) -> Result<String> {
    let out = std::process::Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()?;
    ensure!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// A repository with one commit, a submodule's git directory and a linked worktree's.
fn repository(ws: &Path) -> Result<()> {
    git(ws, &["init", "-q", "-b", "main"])?;
    std::fs::write(ws.join("f"), "one\n")?;
    git(ws, &["add", "f"])?;
    git(ws, &["commit", "-qm", "one"])?;
    let module = ws.join(".git/modules/lib");
    git(ws, &["init", "-q", "--bare", &module.to_string_lossy()])?;
    std::fs::create_dir_all(ws.join(".git/worktrees/w"))?;
    std::fs::write(ws.join(".git/worktrees/w/commondir"), "../..\n")?;
    Ok(())
}

/// The environment a sandboxed git command gets here: no user config, an identity.
const GIT_ENV: &str = "export GIT_CONFIG_GLOBAL=/dev/null GIT_CONFIG_NOSYSTEM=1 \
    GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@example.com; ";

#[tokio::test]
async fn git_cannot_be_made_to_run_code_outside_the_sandbox() -> Result<()> {
    let fx = fixture_with(
        SandboxLevel::WorkspaceWrite,
        None,
        KernelProbe::Detect,
        &repository,
    )?;
    if !enforced(&fx, "git_cannot_be_made_to_run_code_outside_the_sandbox")
        || !fx.ctx.config().sandbox.support().mount_namespace
    {
        return Ok(());
    }
    let config = std::fs::read_to_string(fx.ws.join(".git/config"))?;
    // Each of these planted code that the person's next git command would run.
    let attempts = [
        // (The name is hidden from rein's command checks, which refuse `mv .git`.)
        "printf 'mv .git .git-old && cp -a .git-old .git && echo x > .git/hooks/pre-commit' > m.sh \
         && bash m.sh",
        "git config core.fsmonitor 'rm -rf ~'",
        "echo /tmp/evil > .git/commondir",
        "printf '[core]\\n\\tfsmonitor = rm -rf ~\\n' > .git/config.worktree",
        "echo 'rm -rf ~' > .git/modules/lib/hooks/pre-commit",
        "echo '[core] fsmonitor = x' >> .git/modules/lib/config",
        "echo /tmp/evil > .git/worktrees/w/commondir",
        // The directories between .git and a protected path cannot be moved either.
        "printf 'mv .git/modules .git/m2 && cp -a .git/m2 .git/modules && \
         echo x > .git/modules/lib/hooks/pre-commit' > m.sh && bash m.sh",
        "printf 'mv .git/hooks .git/h2; mkdir -p .git/hooks && echo x > .git/hooks/pre-commit' \
         > m.sh && bash m.sh",
    ];
    for attempt in attempts {
        let out = bash(&fx.ctx, &format!("{GIT_ENV}{attempt}")).await?;
        ensure!(
            fx.ws.join(".git/HEAD").is_file(),
            "{attempt}: {}",
            out.content
        );
        for moved in [".git-old", ".git/m2", ".git/h2"] {
            ensure!(!fx.ws.join(moved).exists(), "{attempt}: {moved}");
        }
        ensure!(
            std::fs::read_to_string(fx.ws.join(".git/config"))? == config,
            "{attempt}: {}",
            out.content
        );
        for planted in [
            ".git/hooks/pre-commit",
            ".git/commondir",
            ".git/config.worktree",
            ".git/modules/lib/hooks/pre-commit",
        ] {
            ensure!(
                !fx.ws.join(planted).exists(),
                "{attempt}: {planted} planted: {}",
                out.content
            );
        }
        ensure!(
            std::fs::read_to_string(fx.ws.join(".git/worktrees/w/commondir"))? == "../..\n",
            "{attempt}: {}",
            out.content
        );
        ensure!(
            !std::fs::read_to_string(fx.ws.join(".git/modules/lib/config"))?.contains("fsmonitor"),
            "{attempt}"
        );
    }
    // What could not be bind-mounted is removed, and the result says so.
    let out = bash(&fx.ctx, "echo /tmp/evil > .git/commondir").await?;
    ensure!(
        out.content.contains("rein removed")
            && out
                .content
                .contains(".git/commondir that the command created")
            && out
                .content
                .contains("it would make git run code from elsewhere"),
        "{}",
        out.content
    );
    // A missing hooks directory may not be made either.
    std::fs::remove_dir_all(fx.ws.join(".git/hooks"))?;
    let out = bash(
        &fx.ctx,
        "mkdir .git/hooks && echo 'rm -rf ~' > .git/hooks/pre-commit",
    )
    .await?;
    ensure!(!fx.ws.join(".git/hooks").exists(), "{}", out.content);
    ensure!(out.content.contains("rein removed"), "{}", out.content);
    Ok(())
}

#[tokio::test]
async fn a_background_command_s_planted_redirect_is_removed_when_it_ends() -> Result<()> {
    let fx = fixture_with(
        SandboxLevel::WorkspaceWrite,
        None,
        KernelProbe::Detect,
        &repository,
    )?;
    if !enforced(&fx, "a_background_command_s_planted_redirect_is_removed") {
        return Ok(());
    }
    let args = BashArgs {
        command: "echo /tmp/evil > .git/commondir".to_owned(),
        timeout: None,
        run_in_background: Some(true),
    };
    let started = BashTool
        .run(args, &fx.ctx)
        .await
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    ensure!(!started.is_error, "{}", started.content);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let notices = loop {
        let notices = fx.ctx.background().take_finish_notices();
        if !notices.is_empty() {
            break notices;
        }
        ensure!(
            std::time::Instant::now() < deadline,
            "the background command never finished"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    ensure!(!fx.ws.join(".git/commondir").exists(), "{notices:?}");
    ensure!(
        notices[0].contains("rein removed") && notices[0].contains(".git/commondir"),
        "{notices:?}"
    );
    Ok(())
}

#[tokio::test]
async fn everyday_git_runs_in_the_sandbox() -> Result<()> {
    let fx = fixture_with(
        SandboxLevel::WorkspaceWrite,
        None,
        KernelProbe::Detect,
        &repository,
    )?;
    if !enforced(&fx, "everyday_git_runs_in_the_sandbox") {
        return Ok(());
    }
    let script = "echo two > f && git commit -qam two && git checkout -qb x && echo three > f \
         && git stash -q && git stash pop -q && git commit -qam three && git checkout -q main \
         && echo other > g && git add g && git commit -qm other && git checkout -q x \
         && git rebase -q main && git log --format=%s | tr '\\n' ' '";
    let out = bash(&fx.ctx, &format!("{GIT_ENV}{script}")).await?;
    ensure!(!out.is_error, "{}", out.content);
    ensure!(
        out.content.starts_with("three other two one"),
        "{}",
        out.content
    );
    ensure!(!out.content.contains("rein removed"), "{}", out.content);
    Ok(())
}

/// A listener on 127.0.0.1 that accepts one connection in the background.
fn listener() -> Result<(u16, std::thread::JoinHandle<bool>)> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    listener.set_nonblocking(true)?;
    let handle = std::thread::spawn(move || {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while std::time::Instant::now() < deadline {
            if let Ok((mut stream, _)) = listener.accept() {
                let mut buf = [0u8; 1];
                let _ = stream.read(&mut buf);
                return true;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        false
    });
    Ok((port, handle))
}

#[tokio::test]
async fn network_off_refuses_sockets_and_on_connects() -> Result<()> {
    let off = fixture(
        SandboxLevel::WorkspaceWrite,
        Some(Network::Blocked),
        KernelProbe::Detect,
    )?;
    if !enforced(&off, "network_off_refuses_sockets_and_on_connects") {
        return Ok(());
    }
    let connect = |port: u16| {
        format!(
            "python3 -c 'import socket; socket.create_connection((\"127.0.0.1\", {port}), timeout=5).close(); print(\"connected\")'"
        )
    };
    let (port, _accepting) = listener()?;
    let refused = bash(&off.ctx, &connect(port)).await?;
    ensure!(
        refused.is_error && !refused.content.contains("connected\n"),
        "{}",
        refused.content
    );
    let said = refusal(&refused).unwrap_or_default();
    ensure!(
        said.contains("network off"),
        "{said:?}\n{}",
        refused.content
    );
    // Unix sockets still work with the network off.
    let unix = bash(
        &off.ctx,
        "python3 -c 'import socket; socket.socketpair(socket.AF_UNIX)'",
    )
    .await?;
    ensure!(!unix.is_error, "{}", unix.content);

    let on = fixture(
        SandboxLevel::WorkspaceWrite,
        Some(Network::Allowed),
        KernelProbe::Detect,
    )?;
    let (port, accepted) = listener()?;
    let connected = bash(&on.ctx, &connect(port)).await?;
    ensure!(
        !connected.is_error && connected.content.contains("connected"),
        "{}",
        connected.content
    );
    ensure!(accepted.join().unwrap_or(false));
    Ok(())
}

#[tokio::test]
async fn escapes_are_refused() -> Result<()> {
    let fx = fixture(SandboxLevel::WorkspaceWrite, None, KernelProbe::Detect)?;
    if !enforced(&fx, "escapes_are_refused") {
        return Ok(());
    }
    // A new user namespace would give the command the right to mount over the home.
    let out = bash(&fx.ctx, "unshare -rm true && echo escaped").await?;
    ensure!(
        out.is_error && !out.content.contains("escaped"),
        "{}",
        out.content
    );
    let no_new_privs = bash(&fx.ctx, "grep NoNewPrivs /proc/self/status").await?;
    ensure!(
        no_new_privs.content.contains("NoNewPrivs:\t1"),
        "{}",
        no_new_privs.content
    );
    Ok(())
}

#[tokio::test]
async fn a_kernel_without_landlock_is_said_and_nothing_claimed() -> Result<()> {
    let fx = fixture(
        SandboxLevel::WorkspaceWrite,
        None,
        KernelProbe::AssumeNoLandlock,
    )?;
    let sandbox = &fx.ctx.config().sandbox;
    ensure!(!sandbox.is_enforced());
    let text = sandbox.describe();
    ensure!(
        text.contains("NOTHING is enforced") && text.contains("Landlock"),
        "{text}"
    );
    // The command runs, with the permission checks alone.
    let out = bash(
        &fx.ctx,
        &format!("echo changed > {}/.bashrc", fx.home.display()),
    )
    .await?;
    ensure!(
        !out.is_error && !intact(&fx.home.join(".bashrc")),
        "{}",
        out.content
    );
    Ok(())
}

#[tokio::test]
async fn background_commands_run_in_the_sandbox_too() -> Result<()> {
    let fx = fixture(SandboxLevel::WorkspaceWrite, None, KernelProbe::Detect)?;
    if !enforced(&fx, "background_commands_run_in_the_sandbox_too") {
        return Ok(());
    }
    let secret = fx.outside.join("secret.txt");
    let command = format!(
        "echo pwned > {} ; echo pwned > {}/.bashrc ; echo $? > finished",
        secret.display(),
        fx.home.display()
    );
    let args = BashArgs {
        command,
        timeout: None,
        run_in_background: Some(true),
    };
    let started = BashTool
        .run(args, &fx.ctx)
        .await
        .map_err(|e| anyhow::anyhow!("{e:?}"))?;
    ensure!(!started.is_error, "{}", started.content);
    let finished = fx.ws.join("finished");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !finished.exists() {
        ensure!(
            std::time::Instant::now() < deadline,
            "the background command never finished"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    ensure!(
        intact(&secret),
        "a background command wrote outside the workspace"
    );
    ensure!(
        intact(&fx.home.join(".bashrc")),
        "a background command wrote in the home directory"
    );
    let status = std::fs::read_to_string(&finished)?;
    ensure!(status.trim() != "0", "the refused write looked successful");
    Ok(())
}

/// Answers yes for `localhost` and no for anything else, counting the questions.
#[derive(Debug, Default)]
struct LocalhostOnly {
    asked: std::sync::Mutex<Vec<String>>,
}

#[rein_tools::async_trait]
impl rein_tools::sandbox::HostGate for LocalhostOnly {
    async fn allow(&self, host: &str, port: u16) -> rein_tools::sandbox::HostAnswer {
        self.asked
            .lock()
            .map(|mut asked| asked.push(format!("{host}:{port}")))
            .ok();
        if host == "localhost" {
            rein_tools::sandbox::HostAnswer::Allowed
        } else {
            rein_tools::sandbox::HostAnswer::Refused
        }
    }
}

#[tokio::test]
async fn the_proxy_asks_about_unlisted_hosts_once_and_the_result_says_who_refused() -> Result<()> {
    let fx = fixture(
        SandboxLevel::WorkspaceWrite,
        Some(Network::Proxy),
        KernelProbe::Detect,
    )?;
    if !enforced(&fx, "the_proxy_asks_about_unlisted_hosts_once") {
        return Ok(());
    }
    let gate = std::sync::Arc::new(LocalhostOnly::default());
    fx.ctx.config().sandbox.set_host_gate(gate.clone());
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    let port = listener.local_addr()?.port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let mut buffer = [0u8; 4096];
            let _ = stream.read(&mut buffer);
            let _ = std::io::Write::write_all(
                &mut stream,
                b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\nConnection: close\r\n\r\nhello\n",
            );
        }
    });
    let curl = |host: &str| format!("curl -sS --max-time 10 http://{host}:{port}/");
    let allowed = bash(&fx.ctx, &curl("localhost")).await?;
    ensure!(allowed.content.contains("hello"), "{}", allowed.content);
    let again = bash(&fx.ctx, &curl("localhost")).await?;
    ensure!(again.content.contains("hello"), "{}", again.content);
    let refused = bash(&fx.ctx, &curl("127.0.0.1")).await?;
    ensure!(!refused.content.contains("hello"), "{}", refused.content);
    ensure!(
        refused.content.contains(&format!(
            "the person refused this command's connection to 127.0.0.1:{port}"
        )),
        "{}",
        refused.content
    );
    // The person refused it: nothing more to ask about (no sandbox refusal to leave).
    ensure!(refusal(&refused).is_none(), "{}", refused.content);
    let asked = gate.asked.lock().map(|a| a.clone()).unwrap_or_default();
    ensure!(
        asked == [format!("localhost:{port}"), format!("127.0.0.1:{port}")],
        "{asked:?}"
    );
    Ok(())
}
