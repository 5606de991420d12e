//! The tool pipeline, seen from outside: the order of its steps, approvals and their
//! answers, and the events of calls that run on their own tasks.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rein_core::agent::{Agent, AgentEvent, Events, TurnStop};
use rein_core::build::AgentBuilder;
use rein_core::hooks::{HookCall, HookWarnings, Hooks, NoHooks, PostToolUse, PreToolUse};
use rein_core::interaction::{Approval, ApprovalRequest, Interaction, ScriptedInteraction};
use rein_core::permissions::{CallView, Decision, ModePolicy, PermissionMode, Policy, Rule};
use rein_llm::{Message, Part, ProviderConfig, ProviderKind, RetryPolicy, Role, build_provider};
use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use serde_json::json;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// What happened, in order, across the pipeline's steps.
type Log = Arc<Mutex<Vec<String>>>;

fn note(log: &Log, step: impl Into<String>) {
    log.lock().unwrap().push(step.into());
}

/// An edit tool whose argument check, run and output are all visible in the log.
struct Loud {
    log: Log,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct LoudArgs {
    /// How many characters of output to give.
    size: usize,
}

#[async_trait]
impl Tool for Loud {
    type Args = LoudArgs;
    fn name(&self) -> &'static str {
        "loud"
    }
    fn description(&self) -> &'static str {
        "Writes a lot."
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }
    async fn run(&self, args: LoudArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        note(&self.log, "run");
        Ok(ToolOutput::success("x\n".repeat(args.size / 2)))
    }
}

struct LoggingPolicy {
    log: Log,
    inner: ModePolicy,
}

impl Policy for LoggingPolicy {
    fn decide(&self, call: &CallView<'_>) -> Decision {
        note(&self.log, "decide");
        self.inner.decide(call)
    }
    fn allow_for_session(&self, rule: Rule) {
        self.inner.allow_for_session(rule);
    }
    fn how_to_allow(&self, call: &CallView<'_>) -> String {
        self.inner.how_to_allow(call)
    }
}

struct LoggingHooks {
    log: Log,
}

#[async_trait]
impl Hooks for LoggingHooks {
    async fn pre_tool_use(&self, _call: &HookCall<'_>, _warnings: &mut HookWarnings) -> PreToolUse {
        note(&self.log, "pre-hook");
        PreToolUse::default()
    }
    async fn post_tool_use(
        &self,
        _call: &HookCall<'_>,
        output: &ToolOutput,
        _warnings: &mut HookWarnings,
    ) -> PostToolUse {
        note(
            &self.log,
            format!("post-hook saw {} chars", output.content.len()),
        );
        PostToolUse::default()
    }
}

struct LoggingInteraction {
    log: Log,
    inner: ScriptedInteraction,
}

#[async_trait]
impl Interaction for LoggingInteraction {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        note(&self.log, "ask");
        self.inner.approve(request).await
    }
}

struct Setup {
    dir: TempDir,
    log: Log,
    /// The environment commands inherit (its secret-looking values are masked).
    env: Vec<(String, String)>,
}

impl Setup {
    fn new() -> Self {
        Setup {
            dir: TempDir::new().unwrap(),
            log: Log::default(),
            env: Vec::new(),
        }
    }

    fn agent(
        &self,
        server: &MockServer,
        policy: Arc<dyn Policy>,
        interaction: Arc<dyn Interaction>,
        hooks: Arc<dyn Hooks>,
    ) -> Agent {
        let mut config = ProviderConfig::new(ProviderKind::OpenAi);
        config.base_url = Some(server.openai_base_url());
        config.api_key = Some("test-key".into());
        config.retry = RetryPolicy {
            base_delay: Duration::from_millis(5),
            ..RetryPolicy::default()
        };
        let workspace = self.dir.path().canonicalize().unwrap();
        AgentBuilder::new(&workspace, "gpt-4o", ProviderKind::OpenAi)
            .provider(build_provider(&config).unwrap())
            .tool(Arc::new(Loud {
                log: Arc::clone(&self.log),
            }))
            .tool_config(|tools| {
                tools.offload_dir = workspace.join(".offload");
                tools.output_budget_chars = 1_000;
            })
            .system_prompt("You are a test.")
            .policy(policy)
            .interaction(interaction)
            .hooks(hooks)
            .environment(self.env.clone())
            .build()
            .unwrap()
    }

    fn logged(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }
}

fn collect() -> (Events, Arc<Mutex<Vec<AgentEvent>>>) {
    let seen: Arc<Mutex<Vec<AgentEvent>>> = Arc::default();
    let sink = Arc::clone(&seen);
    (
        Events::new(move |e: AgentEvent| sink.lock().unwrap().push(e)),
        seen,
    )
}

/// The content of every tool result in the history, in order.
fn results(history: &[Message]) -> Vec<String> {
    history
        .iter()
        .filter(|m| m.role == Role::Tool)
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::ToolResult(r) => Some(r.content.clone()),
            _ => None,
        })
        .collect()
}

fn loud(id: &str, args: serde_json::Value) -> Turn {
    Turn::new().tool_call(MockToolCall::new(id, "loud", args.to_string()))
}

#[tokio::test]
async fn steps_run_in_order_and_invalid_arguments_never_reach_the_policy() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(loud("bad", json!({"size": "big"})))
            .reply(loud("good", json!({"size": 5000})))
            .reply(Turn::text("done")),
    );
    let log = Arc::clone(&setup.log);
    let mut agent = setup.agent(
        &server,
        Arc::new(LoggingPolicy {
            log: Arc::clone(&log),
            inner: ModePolicy::new(PermissionMode::Default),
        }),
        Arc::new(LoggingInteraction {
            log: Arc::clone(&log),
            inner: ScriptedInteraction::new([Approval::Yes]),
        }),
        Arc::new(LoggingHooks {
            log: Arc::clone(&log),
        }),
    );
    let (events, _) = collect();
    let outcome = agent
        .run_turn("go", &events, CancellationToken::new())
        .await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    assert_eq!(
        setup.logged(),
        [
            // The call with invalid arguments: nothing at all.
            "pre-hook",
            "decide",
            "ask",
            "run",
            "post-hook saw 5000 chars",
        ]
    );
    let results = results(agent.history());
    assert!(
        results[0].contains("Invalid arguments for loud") && results[0].contains("`size`"),
        "{}",
        results[0]
    );
    // The budget comes after the post-hook, which saw the whole output.
    assert!(results[1].chars().count() <= 1_000, "{}", results[1].len());
    assert!(results[1].contains("characters cut"), "{}", results[1]);
}

#[tokio::test]
async fn events_of_calls_on_their_own_tasks_arrive_in_the_documented_order() {
    let setup = Setup::new();
    std::fs::write(setup.dir.path().join("a.txt"), "a\n").unwrap();
    std::fs::write(setup.dir.path().join("b.txt"), "b\n").unwrap();
    let read = |id: &str, path: &str| {
        MockToolCall::new(id, "read_file", json!({ "file_path": path }).to_string())
    };
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(read("r1", "a.txt"))
                    .tool_call(read("r2", "b.txt"))
                    .tool_call(read("r3", "missing.txt")),
            )
            .reply(Turn::text("read")),
    );
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(NoHooks),
    );
    let (events, seen) = collect();
    agent
        .run_turn("read", &events, CancellationToken::new())
        .await;
    let seen = seen.lock().unwrap().clone();
    let position = |wanted: &dyn Fn(&AgentEvent) -> bool| seen.iter().position(wanted).unwrap();
    let mut result_order = Vec::new();
    for id in ["r1", "r2", "r3"] {
        let started =
            position(&|e| matches!(e, AgentEvent::ToolCallStarted { id: i, .. } if i == id));
        let ended = position(&|e| matches!(e, AgentEvent::ToolResult { id: i, .. } if i == id));
        assert!(started < ended, "{id} starts before its result");
        result_order.push(ended);
    }
    assert!(
        result_order.windows(2).all(|w| w[0] < w[1]),
        "results in call order"
    );
    let finished = position(&|e| matches!(e, AgentEvent::TurnFinished { .. }));
    assert!(finished > result_order[2]);
    // Reads need no approval in the default mode: nothing was asked, nothing refused.
    assert!(!seen.iter().any(|e| matches!(
        e,
        AgentEvent::ApprovalRequested { .. } | AgentEvent::PermissionDenied { .. }
    )));
}

#[tokio::test]
async fn a_long_command_reports_progress_between_its_start_and_its_result() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new().tool_call(MockToolCall::new(
                    "slow",
                    "bash",
                    json!({"command": "for i in 1 2 3 4 5; do echo step $i; sleep 0.3; done"})
                        .to_string(),
                )),
            )
            .reply(Turn::text("done")),
    );
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Yolo)),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(NoHooks),
    );
    let (events, seen) = collect();
    agent
        .run_turn("run it", &events, CancellationToken::new())
        .await;
    let seen = seen.lock().unwrap().clone();
    let started = seen
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolCallStarted { .. }))
        .unwrap();
    let ended = seen
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolResult { .. }))
        .unwrap();
    let progress: Vec<(usize, u64, String)> = seen
        .iter()
        .enumerate()
        .filter_map(|(i, e)| match e {
            AgentEvent::ToolProgress {
                id,
                progress:
                    rein_tools::Progress::Output {
                        lines, last_line, ..
                    },
            } if id == "slow" => Some((i, *lines, last_line.clone())),
            _ => None,
        })
        .collect();
    assert!(progress.len() >= 2, "{progress:?}");
    assert!(progress.iter().all(|(i, _, _)| started < *i && *i < ended));
    assert!(
        progress.windows(2).all(|w| w[0].1 < w[1].1),
        "lines grow: {progress:?}"
    );
    assert!(progress[0].2.starts_with("step "), "{progress:?}");
}

#[tokio::test]
async fn a_cancelled_calls_partial_output_passes_the_budget_and_unknown_tools_are_named() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new("u", "nope", "{}")))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "big",
                "bash",
                json!({"command": "seq 1 100000; touch printed; sleep 30"}).to_string(),
            )))
            .reply(Turn::text("never")),
    );
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Yolo)),
        Arc::new(ScriptedInteraction::default()),
        Arc::new(NoHooks),
    );
    let cancel = CancellationToken::new();
    let printed = setup.dir.path().join("printed");
    let stopper = {
        let cancel = cancel.clone();
        tokio::spawn(async move {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
            while !printed.exists() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            // Past the deadline too: the turn must end, and the asserts then say why.
            cancel.cancel();
        })
    };
    let (events, _) = collect();
    let outcome = agent.run_turn("go", &events, cancel).await;
    stopper.await.unwrap();
    assert_eq!(outcome.stop(), TurnStop::Cancelled);
    let results = results(agent.history());
    assert!(
        results[0].starts_with("There is no tool named `nope`") && results[0].contains("read_file"),
        "{}",
        results[0]
    );
    assert!(results[1].starts_with("Cancelled"), "{}", &results[1][..80]);
    assert!(results[1].chars().count() <= 1_000, "{}", results[1].len());
    assert!(results[1].contains("characters cut"), "{}", results[1]);
}

mod approvals;
mod hooks;
mod subagents;
