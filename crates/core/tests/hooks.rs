//! The configured hooks in the agent loop: a hook still running when the person interrupts
//! is stopped with its processes, and the turn ends at once.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_core::agent::{AgentEvent, Events, TurnStop};
use rein_core::build::AgentBuilder;
use rein_core::config::{HookCommand, HookEvent, Source};
use rein_core::hooks::{CommandHooks, HookSetup};
use rein_core::permissions::PermissionMode;
use rein_llm::{ProviderConfig, ProviderKind, build_provider};
use rein_testkit::{MockServer, Script, Turn};
use tokio_util::sync::CancellationToken;

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        !matches!(state, Some("Z" | "X") | None)
    })
}

#[tokio::test]
async fn interrupting_a_hanging_prompt_hook_stops_it_and_ends_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let workspace = dir.path().canonicalize().unwrap();
    let pid_file = workspace.join("pid");
    let hook = HookCommand {
        event: HookEvent::UserPromptSubmit,
        command: format!("sleep 300 & echo $! > {}; wait", pid_file.display()),
        matcher: None,
        timeout: Duration::from_secs(600),
        source: Source::Default,
    };
    let hooks = CommandHooks::new(
        &[hook],
        HookSetup {
            env_set: Vec::new(),
            workspace: workspace.clone(),
            project_dir: workspace.clone(),
            session_id: None,
            transcript_path: None,
            permission_mode: PermissionMode::Default,
            secrets: std::sync::Arc::default(),
            processes: rein_tools::bash::ProcessTracker::new(),
            sandbox: None,
        },
    );
    let server = MockServer::start(Script::new().reply(Turn::text("never asked")));
    let mut config = ProviderConfig::new(ProviderKind::OpenAi);
    config.base_url = Some(server.openai_base_url());
    config.api_key = Some("test-key".into());
    let mut agent = AgentBuilder::new(&workspace, "gpt-4o", ProviderKind::OpenAi)
        .provider(build_provider(&config).unwrap())
        .system_prompt("You are a test.")
        .hooks(Arc::new(hooks))
        .build()
        .unwrap();
    let cancel = CancellationToken::new();
    let interrupt = {
        let cancel = cancel.clone();
        let pid_file = pid_file.clone();
        tokio::spawn(async move {
            while std::fs::read_to_string(&pid_file).map_or(true, |t| t.trim().is_empty()) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            cancel.cancel();
        })
    };
    let started = Instant::now();
    let outcome = agent
        .run_turn("go", &Events::new(|_: AgentEvent| {}), cancel)
        .await;
    interrupt.await.unwrap();
    assert_eq!(outcome.stop(), TurnStop::Cancelled);
    assert!(started.elapsed() < Duration::from_secs(30));
    assert!(server.requests().is_empty());
    assert!(agent.history().is_empty(), "the prompt was not recorded");
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(Instant::now() < deadline, "the hook's sleep still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Hooks of `events`, each a command that does nothing.
fn hooks_on(events: &[HookEvent]) -> CommandHooks {
    let workspace = std::env::temp_dir();
    let hooks: Vec<HookCommand> = events
        .iter()
        .map(|event| HookCommand {
            event: *event,
            command: "true".into(),
            matcher: None,
            timeout: Duration::from_secs(5),
            source: Source::Default,
        })
        .collect();
    CommandHooks::new(
        &hooks,
        HookSetup {
            env_set: Vec::new(),
            workspace: workspace.clone(),
            project_dir: workspace,
            session_id: None,
            transcript_path: None,
            permission_mode: PermissionMode::Default,
            secrets: std::sync::Arc::default(),
            processes: rein_tools::bash::ProcessTracker::new(),
            sandbox: None,
        },
    )
}

/// Calls that only look skip the wait for the turn's checkpoint unless a tool hook, which may
/// change files, runs around them.
#[test]
fn only_tool_hooks_make_calls_that_look_wait_for_the_checkpoint() {
    use rein_core::hooks::{Hooks, NoHooks};
    assert!(!NoHooks.runs_on_tools());
    assert!(!hooks_on(&[HookEvent::Stop, HookEvent::UserPromptSubmit]).runs_on_tools());
    assert!(hooks_on(&[HookEvent::Stop, HookEvent::PostToolUse]).runs_on_tools());
    assert!(hooks_on(&[HookEvent::PreToolUse]).runs_on_tools());
}
