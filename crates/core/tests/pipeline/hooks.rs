//! The hook seams of the pipeline: what a PreToolUse or PostToolUse hook's answer does.

use std::sync::{Arc, Mutex};

use rein_core::agent::{AgentEvent, TurnStop};
use rein_core::hooks::{HookCall, HookDecision, HookWarnings, Hooks, PostToolUse, PreToolUse};
use rein_core::interaction::{Approval, ScriptedInteraction};
use rein_core::permissions::{CallView, Decision, ModePolicy, PermissionMode, Policy, Rule};
use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use rein_tools::{ToolOutput, async_trait};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Setup, collect, results};

/// Hooks that answer every PreToolUse with `decision` (and `input`), add `context` after
/// the call, and note what they saw.
struct Scripted {
    decision: Option<HookDecision>,
    input: Option<serde_json::Value>,
    context: Option<String>,
    seen: Mutex<Vec<String>>,
}

impl Scripted {
    fn new(decision: Option<HookDecision>) -> Self {
        Scripted {
            decision,
            input: None,
            context: None,
            seen: Mutex::default(),
        }
    }
}

#[async_trait]
impl Hooks for Scripted {
    async fn pre_tool_use(&self, call: &HookCall<'_>, warnings: &mut HookWarnings) -> PreToolUse {
        self.seen.lock().unwrap().push(call.arguments.to_string());
        warnings.push("a hook wrote to stderr".into());
        PreToolUse {
            decision: self.decision.clone(),
            updated_input: self.input.clone(),
            context: None,
        }
    }

    async fn post_tool_use(
        &self,
        _call: &HookCall<'_>,
        _output: &ToolOutput,
        _warnings: &mut HookWarnings,
    ) -> PostToolUse {
        PostToolUse {
            context: self.context.clone(),
        }
    }
}

/// A policy that refuses every call of `tool`, as a deny rule would.
struct DenyTool(&'static str, ModePolicy);

impl Policy for DenyTool {
    fn decide(&self, call: &CallView<'_>) -> Decision {
        if call.tool == self.0 {
            return Decision::Deny {
                reason: format!("a deny rule names {}", self.0),
            };
        }
        self.1.decide(call)
    }
    fn allow_for_session(&self, rule: Rule) {
        self.1.allow_for_session(rule);
    }
    fn how_to_allow(&self, call: &CallView<'_>) -> String {
        self.1.how_to_allow(call)
    }
}

fn echo(id: &str, text: &str) -> Turn {
    Turn::new().tool_call(MockToolCall::new(
        id,
        "bash",
        json!({ "command": format!("echo {text}") }).to_string(),
    ))
}

#[tokio::test]
async fn a_hooks_allow_waves_the_modes_question_but_never_a_deny() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(echo("a", "allowed"))
            .reply(Turn::text("done")),
    );
    let interaction = Arc::new(ScriptedInteraction::default());
    let hooks = Arc::new(Scripted::new(Some(HookDecision::Allow { reason: None })));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        interaction.clone(),
        hooks,
    );
    let (events, seen) = collect();
    agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    assert!(
        interaction.asked().is_empty(),
        "the hook's allow answered the question"
    );
    assert!(results(agent.history())[0].starts_with("allowed"));
    let warned = seen
        .lock()
        .unwrap()
        .iter()
        .any(|e| matches!(e, AgentEvent::Warning { message } if message.contains("stderr")));
    assert!(warned, "the hook's trouble is shown");

    let server = MockServer::start(
        Script::new()
            .reply(echo("b", "nope"))
            .reply(Turn::text("ok")),
    );
    let mut agent = setup.agent(
        &server,
        Arc::new(DenyTool("bash", ModePolicy::new(PermissionMode::Yolo))),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(Scripted::new(Some(HookDecision::Allow { reason: None }))),
    );
    let (events, _) = collect();
    agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    let result = &results(agent.history())[0];
    assert!(result.contains("a deny rule names bash"), "{result}");
}

#[tokio::test]
async fn a_hooks_deny_or_ask_wins_over_an_allowing_mode() {
    let setup = Setup::new();
    let server = MockServer::start(Script::new().reply(echo("a", "x")).reply(Turn::text("ok")));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Yolo)),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(Scripted::new(Some(HookDecision::Deny {
            reason: "no echo on Fridays".into(),
        }))),
    );
    let (events, _) = collect();
    agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    let result = &results(agent.history())[0];
    assert!(result.contains("no echo on Fridays"), "{result}");

    let server = MockServer::start(Script::new().reply(echo("b", "x")).reply(Turn::text("ok")));
    let interaction = Arc::new(ScriptedInteraction::new([Approval::Yes]));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Yolo)),
        interaction.clone(),
        Arc::new(Scripted::new(Some(HookDecision::Ask {
            reason: "check with me".into(),
        }))),
    );
    let (events, _) = collect();
    let outcome = agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    let asked = interaction.asked();
    assert_eq!(asked.len(), 1);
    assert!(
        asked[0].reason.contains("check with me"),
        "{}",
        asked[0].reason
    );
}

#[tokio::test]
async fn replaced_arguments_are_checked_and_run_and_contexts_reach_the_model() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(echo("a", "from the model"))
            .reply(Turn::text("ok")),
    );
    let mut hooks = Scripted::new(None);
    hooks.input = Some(json!({"command": "echo from the hook"}));
    hooks.context = Some("Remember: the hook changed the command.".into());
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Yolo)),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(hooks),
    );
    let (events, _) = collect();
    agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    let result = &results(agent.history())[0];
    assert!(result.starts_with("from the hook"), "{result}");
    assert!(
        result.ends_with("Remember: the hook changed the command."),
        "{result}"
    );

    let server = MockServer::start(Script::new().reply(echo("b", "x")).reply(Turn::text("ok")));
    let mut bad = Scripted::new(None);
    bad.input = Some(json!({"cmd": "oops"}));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Yolo)),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(bad),
    );
    let (events, _) = collect();
    agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    let result = &results(agent.history())[0];
    assert!(
        result.contains("A hook replaced this call's arguments") && result.contains("`cmd`"),
        "{result}"
    );
}

#[tokio::test]
async fn a_real_hooks_allow_never_beats_a_deny_rule() {
    use rein_core::config::{DEFAULT_HOOK_TIMEOUT, HookCommand, HookEvent, Source};
    use rein_core::hooks::{CommandHooks, HookSetup};

    let setup = Setup::new();
    let workspace = setup.dir.path().canonicalize().unwrap();
    let ran = workspace.join("hook-ran");
    let hook = HookCommand {
        event: HookEvent::PreToolUse,
        command: format!(
            "cat > {}; echo '{{\"hookSpecificOutput\": {{\"permissionDecision\": \"allow\"}}}}'",
            ran.display()
        ),
        matcher: Some("Bash".into()),
        timeout: DEFAULT_HOOK_TIMEOUT,
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
            permission_mode: PermissionMode::Yolo,
            secrets: std::sync::Arc::default(),
            processes: rein_tools::bash::ProcessTracker::new(),
            sandbox: None,
        },
    );
    let server = MockServer::start(
        Script::new()
            .reply(echo("a", "nope"))
            .reply(Turn::text("ok")),
    );
    let mut agent = setup.agent(
        &server,
        Arc::new(DenyTool("bash", ModePolicy::new(PermissionMode::Yolo))),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(hooks),
    );
    let (events, _) = collect();
    agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    assert!(ran.exists(), "the hook ran");
    let result = &results(agent.history())[0];
    assert!(result.contains("a deny rule names bash"), "{result}");
}
