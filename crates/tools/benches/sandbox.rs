//! What the sandbox costs a command's start: `true` spawned and waited for, bare and in
//! the workspace-write sandbox (Landlock ruleset built, read-only binds in a private mount
//! namespace, seccomp filters), and the same through the bash tool. Target (issue 15): the
//! sandbox adds at most 2 ms to the median.
//!
//! Run: `cargo bench -p rein-tools --bench sandbox`

use std::path::PathBuf;
use std::sync::LazyLock;

use rein_tools::bash::{BashArgs, BashTool};
use rein_tools::sandbox::{
    DEFAULT_CACHES, KernelProbe, PolicyInputs, Sandbox, SandboxLevel, SandboxPolicy, SshAgent,
};
use rein_tools::{Tool, ToolConfig, ToolContext};

fn main() {
    divan::main();
}

/// A workspace (with a `.git/hooks` and a `.rein` to protect, or none), a home, the
/// private TMPDIR.
struct Lab {
    _dir: tempfile::TempDir,
    ws: PathBuf,
    sandbox: Sandbox,
}

static LAB: LazyLock<Lab> = LazyLock::new(|| lab(true));
static PLAIN_LAB: LazyLock<Lab> = LazyLock::new(|| lab(false));

fn lab(with_git: bool) -> Lab {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("tempdir: {e}"));
    let base = dir.path().to_path_buf();
    let ws = base.join("ws");
    let home = base.join("home");
    std::fs::create_dir_all(&ws).unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    if with_git {
        for d in [ws.join(".git/hooks"), ws.join(".rein")] {
            std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    let caches: Vec<PathBuf> = DEFAULT_CACHES.iter().map(PathBuf::from).collect();
    let policy = SandboxPolicy::resolve(&PolicyInputs {
        level: SandboxLevel::WorkspaceWrite,
        network: None,
        workspace: &ws,
        home_dir: Some(&home),
        rein_home: None,
        rein_files: &[],
        git_dirs: &[],
        caches: &caches,
        extra_writable: &[],
        not_writable: &[],
        tmp_dir: Some(&base.join("tmp")),
        rein_dirs: &[base.join("offload")],
        probe: KernelProbe::Detect,
        hide: &[],
        expose: &[],
        ssh_agent: SshAgent::Hidden,
        ssh_auth_sock: None,
    });
    let sandbox = Sandbox::new(policy);
    assert!(sandbox.is_enforced(), "{}", sandbox.describe());
    Lab {
        _dir: dir,
        ws,
        sandbox,
    }
}

thread_local! {
    /// One runtime for every sample: building one per iteration would be measured too.
    static RUNTIME: tokio::runtime::Runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap_or_else(|e| panic!("runtime: {e}"));
}

fn block_on<F: std::future::Future>(future: F) -> F::Output {
    RUNTIME.with(|rt| rt.block_on(future))
}

/// Spawns `true` in `lab`'s workspace, in `lab`'s sandbox or bare, and waits for it.
fn spawn_true(lab: &Lab, sandboxed: bool) {
    block_on(async {
        let mut command = tokio::process::Command::new("true");
        command.current_dir(&lab.ws);
        if sandboxed {
            lab.sandbox
                .apply(&mut command)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let status = command.status().await.unwrap_or_else(|e| panic!("{e}"));
        assert!(status.success());
    });
}

/// `true`, bare.
#[divan::bench(sample_count = 200)]
fn true_bare() {
    spawn_true(&LAB, false);
}

/// `true` in the workspace-write sandbox, `.git/hooks` and `.rein` kept read-only (a mount
/// namespace).
#[divan::bench(sample_count = 200)]
fn true_sandboxed() {
    spawn_true(&LAB, true);
}

/// `true` in the workspace-write sandbox of a workspace with nothing to keep read-only (a
/// mount namespace only when this machine has daemon sockets to hide).
#[divan::bench(sample_count = 200)]
fn true_sandboxed_no_git() {
    spawn_true(&PLAIN_LAB, true);
}

fn bash_true(ctx: &ToolContext) {
    block_on(async {
        let args = BashArgs {
            command: "true".to_owned(),
            timeout: None,
            run_in_background: None,
        };
        let out = BashTool
            .run(args, ctx)
            .await
            .unwrap_or_else(|e| panic!("{e:?}"));
        assert!(!out.is_error, "{}", out.content);
    });
}

fn context(sandbox: Sandbox) -> ToolContext {
    let mut config = ToolConfig::new(&LAB.ws, LAB.ws.join("../offload"));
    config.sandbox = sandbox;
    ToolContext::new(config)
}

/// The bash tool running `true`, without a sandbox.
#[divan::bench(sample_count = 100)]
fn bash_tool_bare(bencher: divan::Bencher) {
    let ctx = context(Sandbox::off());
    bencher.bench_local(|| bash_true(&ctx));
}

/// The bash tool running `true` in the workspace-write sandbox.
#[divan::bench(sample_count = 100)]
fn bash_tool_sandboxed(bencher: divan::Bencher) {
    let ctx = context(LAB.sandbox.clone());
    bencher.bench_local(|| bash_true(&ctx));
}
