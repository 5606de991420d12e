//! The agent loop against the mock model server, with real tools in a temp directory.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rein_core::agent::{Agent, AgentEvent, Events, TurnStop};
use rein_core::build::AgentBuilder;
use rein_core::permissions::PermissionMode;
use rein_llm::{Message, Part, ProviderConfig, ProviderKind, RetryPolicy, Role, build_provider};
use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use serde_json::Value;
use tempfile::TempDir;
use tokio_util::sync::CancellationToken;

/// A read-only tool that sleeps, recording when each call ran.
#[derive(Default)]
struct SlowLook {
    spans: Arc<Mutex<Vec<(String, Instant, Instant)>>>,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SlowLookArgs {
    label: String,
    millis: u64,
}

#[async_trait]
impl Tool for SlowLook {
    type Args = SlowLookArgs;
    fn name(&self) -> &'static str {
        "slow_look"
    }
    fn description(&self) -> &'static str {
        "Looks slowly."
    }
    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }
    async fn run(&self, args: SlowLookArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let start = Instant::now();
        tokio::time::sleep(Duration::from_millis(args.millis)).await;
        self.spans
            .lock()
            .unwrap()
            .push((args.label.clone(), start, Instant::now()));
        Ok(ToolOutput::success(format!("looked at {}", args.label)))
    }
}

struct Fixture {
    dir: TempDir,
    events: Arc<Mutex<Vec<AgentEvent>>>,
    spans: Arc<Mutex<Vec<(String, Instant, Instant)>>>,
}

impl Fixture {
    fn new() -> Self {
        Fixture {
            dir: TempDir::new().unwrap(),
            events: Arc::default(),
            spans: Arc::default(),
        }
    }

    fn agent(&self, server: &MockServer, max_rounds: u32) -> Agent {
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
            .tool(Arc::new(SlowLook {
                spans: Arc::clone(&self.spans),
            }))
            .tool_config(|tools| tools.offload_dir = workspace.join(".offload"))
            .system_prompt("You are a test.")
            .mode(PermissionMode::Yolo)
            .settings(|s| s.max_rounds = max_rounds)
            .build()
            .unwrap()
    }

    async fn run(
        &self,
        agent: &mut Agent,
        input: &str,
        cancel: CancellationToken,
    ) -> rein_core::agent::TurnOutcome {
        let events = Arc::clone(&self.events);
        let sink = Events::new(move |e: AgentEvent| events.lock().unwrap().push(e));
        agent.run_turn(input, &sink, cancel).await
    }

    fn events(&self) -> Vec<AgentEvent> {
        self.events.lock().unwrap().clone()
    }
}

fn call(id: &str, name: &str, args: Value) -> MockToolCall {
    MockToolCall::new(id, name, args.to_string()).split_every(7)
}

/// Every tool call in the history is answered exactly once, right after it.
fn assert_history_valid(history: &[Message]) {
    for (i, message) in history.iter().enumerate() {
        let calls: Vec<&str> = message
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall(c) => Some(c.id.as_str()),
                _ => None,
            })
            .collect();
        if calls.is_empty() {
            continue;
        }
        let next = history
            .get(i + 1)
            .expect("tool calls without a results message");
        assert_eq!(next.role, Role::Tool);
        let answered: Vec<&str> = next
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolResult(r) => Some(r.call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(answered, calls, "each call answered once, in call order");
    }
    for message in history {
        assert!(
            !message.parts.is_empty(),
            "an empty message was kept: {history:#?}"
        );
    }
}

fn tool_results(history: &[Message]) -> Vec<(String, bool)> {
    history
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|p| match p {
            Part::ToolResult(r) => Some((r.content.clone(), r.is_error)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn read_only_calls_run_together_and_answer_in_call_order() {
    let fx = Fixture::new();
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(call(
                        "c1",
                        "slow_look",
                        serde_json::json!({"label": "one", "millis": 400}),
                    ))
                    .tool_call(call(
                        "c2",
                        "slow_look",
                        serde_json::json!({"label": "two", "millis": 50}),
                    ))
                    .tool_call(call(
                        "c3",
                        "slow_look",
                        serde_json::json!({"label": "three", "millis": 200}),
                    )),
            )
            .reply(Turn::text("done")),
    );
    let mut agent = fx.agent(&server, 10);
    let outcome = fx.run(&mut agent, "look", CancellationToken::new()).await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    assert_eq!(outcome.text, "done");
    assert_eq!(outcome.rounds, 2);

    let spans = fx.spans.lock().unwrap().clone();
    assert_eq!(spans.len(), 3);
    let latest_start = spans.iter().map(|s| s.1).max().unwrap();
    let earliest_end = spans.iter().map(|s| s.2).min().unwrap();
    assert!(
        latest_start < earliest_end,
        "all three calls were running at once: {spans:?}"
    );

    let results = tool_results(agent.history());
    let contents: Vec<&str> = results.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        contents,
        ["looked at one", "looked at two", "looked at three"]
    );
    assert_history_valid(agent.history());

    // The second request carries the results, in call order.
    let second = &server.requests()[1].body;
    let tool_ids: Vec<&str> = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(tool_ids, ["c1", "c2", "c3"]);
}

#[tokio::test]
async fn at_most_eight_read_only_calls_run_at_once() {
    let fx = Fixture::new();
    let mut turn = Turn::new();
    for i in 0..12 {
        turn = turn.tool_call(call(
            &format!("c{i}"),
            "slow_look",
            serde_json::json!({"label": format!("n{i}"), "millis": 150}),
        ));
    }
    let server = MockServer::start(Script::new().reply(turn).reply(Turn::text("done")));
    let mut agent = fx.agent(&server, 10);
    let outcome = fx.run(&mut agent, "look", CancellationToken::new()).await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);

    let spans = fx.spans.lock().unwrap().clone();
    assert_eq!(spans.len(), 12);
    // The most calls running at any moment: count the spans covering each start.
    let busiest = spans
        .iter()
        .map(|(_, start, _)| {
            spans
                .iter()
                .filter(|(_, s, e)| s <= start && start < e)
                .count()
        })
        .max()
        .unwrap();
    assert_eq!(busiest, 8, "{spans:?}");
    let results = tool_results(agent.history());
    let expected: Vec<String> = (0..12).map(|i| format!("looked at n{i}")).collect();
    let contents: Vec<String> = results.into_iter().map(|r| r.0).collect();
    assert_eq!(contents, expected);
    assert_history_valid(agent.history());
}

#[tokio::test]
async fn a_read_only_call_starts_before_the_response_finishes() {
    let fx = Fixture::new();
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::text("Looking.")
                    .tool_call(call(
                        "c1",
                        "slow_look",
                        serde_json::json!({"label": "a", "millis": 10}),
                    ))
                    .tool_call(call(
                        "c2",
                        "slow_look",
                        serde_json::json!({"label": "b", "millis": 10}),
                    ))
                    .chunk_delay(Duration::from_millis(30)),
            )
            .reply(Turn::text("ok")),
    );
    let mut agent = fx.agent(&server, 10);
    fx.run(&mut agent, "look", CancellationToken::new()).await;
    let events = fx.events();
    let first_start = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ToolCallStarted { id, .. } if id == "c1"))
        .unwrap();
    let finished = events
        .iter()
        .position(|e| matches!(e, AgentEvent::ResponseFinished { round: 1, .. }))
        .unwrap();
    assert!(
        first_start < finished,
        "c1 started while the response streamed: {events:#?}"
    );
}

#[tokio::test]
async fn edits_run_alone_and_in_order() {
    let fx = Fixture::new();
    std::fs::write(fx.dir.path().join("a.txt"), "old line\n").unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("r1", "read_file", serde_json::json!({"file_path": "a.txt"}))))
            .reply(
                Turn::new()
                    .tool_call(call(
                        "e1",
                        "edit_file",
                        serde_json::json!({"file_path": "a.txt", "old_string": "old line", "new_string": "new line"}),
                    ))
                    .tool_call(call("r2", "read_file", serde_json::json!({"file_path": "a.txt"})))
                    .tool_call(call("b1", "bash", serde_json::json!({"command": "cat a.txt"}))),
            )
            .reply(Turn::text("edited")),
    );
    let mut agent = fx.agent(&server, 10);
    let outcome = fx.run(&mut agent, "edit", CancellationToken::new()).await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    assert_eq!(
        std::fs::read_to_string(fx.dir.path().join("a.txt")).unwrap(),
        "new line\n"
    );
    let results = tool_results(agent.history());
    assert!(
        results[2].0.contains("new line"),
        "the read after the edit sees it: {results:?}"
    );
    assert!(
        results[3].0.contains("new line"),
        "bash after the edit sees it: {results:?}"
    );
    assert_eq!(agent.tool_context().changed_files().len(), 1);
    assert_history_valid(agent.history());
}

#[tokio::test]
async fn the_round_limit_stops_the_turn_with_every_call_answered() {
    let fx = Fixture::new();
    let look = || {
        Turn::new().tool_call(call(
            "c",
            "slow_look",
            serde_json::json!({"label": "x", "millis": 1}),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(look())
            .reply(look())
            .reply(look())
            .reply(look()),
    );
    let mut agent = fx.agent(&server, 3);
    let outcome = fx.run(&mut agent, "loop", CancellationToken::new()).await;
    assert_eq!(outcome.stop(), TurnStop::MaxRounds);
    assert_eq!(outcome.rounds, 3);
    assert_eq!(server.request_count(), 3);
    assert_history_valid(agent.history());
    assert!(matches!(
        fx.events().last(),
        Some(AgentEvent::TurnFinished {
            stop_reason: TurnStop::MaxRounds
        })
    ));
}

#[tokio::test]
async fn malformed_arguments_and_unknown_tools_are_explained_to_the_model() {
    let fx = Fixture::new();
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(MockToolCall::new(
                        "c1",
                        "read_file",
                        r#"{"file_path": "a.txt""#,
                    ))
                    .tool_call(call("c2", "teleport", serde_json::json!({"to": "mars"}))),
            )
            .reply(Turn::text("sorry")),
    );
    let mut agent = fx.agent(&server, 10);
    let outcome = fx.run(&mut agent, "go", CancellationToken::new()).await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    let results = tool_results(agent.history());
    assert!(
        results[0].1 && results[0].0.contains("not valid JSON"),
        "{results:?}"
    );
    assert!(
        results[0].0.contains(r#"{"file_path": "a.txt""#),
        "the raw text is shown: {results:?}"
    );
    assert!(
        results[1].1 && results[1].0.contains("read_file"),
        "the tools are listed: {results:?}"
    );
    assert_history_valid(agent.history());
}

#[tokio::test]
async fn a_call_failing_three_times_gets_a_change_approach_note() {
    let fx = Fixture::new();
    let missing = || {
        Turn::new().tool_call(call(
            "c",
            "read_file",
            serde_json::json!({"file_path": "nope.txt"}),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(missing())
            .reply(missing())
            .reply(missing())
            .reply(Turn::text("giving up")),
    );
    let mut agent = fx.agent(&server, 10);
    fx.run(&mut agent, "read", CancellationToken::new()).await;
    let results = tool_results(agent.history());
    assert_eq!(results.len(), 3);
    assert!(
        !results[1].0.contains("change your approach")
            && !results[1].0.contains("Change your approach")
    );
    assert!(
        results[2].1 && results[2].0.contains("Change your approach"),
        "{results:?}"
    );
}

#[tokio::test]
async fn cancelling_mid_stream_keeps_the_history_valid() {
    let fx = Fixture::new();
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("partial answer")
                .chunks(["partial ", "answer"])
                .stall_after(2),
        ),
    );
    let mut agent = fx.agent(&server, 10);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = fx.run(&mut agent, "talk", cancel).await;
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(outcome.stop(), TurnStop::Cancelled);
    assert_history_valid(agent.history());
    assert_eq!(agent.history().last().unwrap().role, Role::Assistant);
}

#[tokio::test]
async fn cancelling_mid_tool_kills_the_command_and_answers_every_call() {
    let fx = Fixture::new();
    let server = MockServer::start(
        Script::new().reply(
            Turn::new()
                .tool_call(call(
                    "b1",
                    "bash",
                    serde_json::json!({"command": "echo started; sleep 30"}),
                ))
                .tool_call(call(
                    "r1",
                    "read_file",
                    serde_json::json!({"file_path": "x"}),
                )),
        ),
    );
    let mut agent = fx.agent(&server, 10);
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(500)).await;
        trigger.cancel();
    });
    let started = Instant::now();
    let outcome = fx.run(&mut agent, "run", cancel).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "the sleep was killed"
    );
    assert_eq!(outcome.stop(), TurnStop::Cancelled);
    let results = tool_results(agent.history());
    assert_eq!(results.len(), 2);
    assert!(
        results[0].1 && results[0].0.contains("started"),
        "partial output kept: {results:?}"
    );
    assert!(
        results[1].1 && results[1].0.contains("Not run"),
        "{results:?}"
    );
    assert_history_valid(agent.history());
}

#[tokio::test]
async fn a_model_error_ends_the_turn_with_the_error() {
    let fx = Fixture::new();
    let server = MockServer::start(Script::new().reply(Reply::unauthorized()));
    let mut agent = fx.agent(&server, 10);
    let outcome = fx.run(&mut agent, "hi", CancellationToken::new()).await;
    assert_eq!(outcome.stop(), TurnStop::Error);
    assert!(matches!(
        outcome.error(),
        Some(rein_core::agent::TurnError::Model(
            rein_llm::LlmError::Auth(_)
        ))
    ));
    assert_eq!(server.request_count(), 1, "auth errors are not retried");
}

#[tokio::test]
async fn empty_responses_are_never_sent_back() {
    let fx = Fixture::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().reasoning("thinking only"))
            .reply(Turn::text("second")),
    );
    let mut agent = fx.agent(&server, 10);
    fx.run(&mut agent, "one", CancellationToken::new()).await;
    fx.run(&mut agent, "two", CancellationToken::new()).await;
    let second = &server.requests()[1].body;
    for message in second["messages"].as_array().unwrap() {
        if message["role"] == "assistant" {
            let content = message["content"].as_str().unwrap_or_default();
            assert!(
                !content.is_empty() || message.get("tool_calls").is_some(),
                "{message}"
            );
        }
    }
    assert_history_valid(agent.history());
}

#[tokio::test]
async fn a_retried_stream_does_not_duplicate_text() {
    let fx = Fixture::new();
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::text("Hello world")
                    .chunks(["Hello", " world"])
                    .cut_after(2),
            )
            .reply(Turn::text("Hello world").chunks(["Hello", " world"])),
    );
    let mut agent = fx.agent(&server, 10);
    let outcome = fx.run(&mut agent, "hi", CancellationToken::new()).await;
    assert_eq!(outcome.text, "Hello world");
    assert!(
        fx.events()
            .iter()
            .any(|e| matches!(e, AgentEvent::Retry { .. }))
    );
}

#[tokio::test]
async fn whitespace_only_text_is_never_sent_back() {
    let fx = Fixture::new();
    std::fs::write(fx.dir.path().join("a.txt"), "alpha\n").unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("\n\n").tool_call(call(
                "r1",
                "read_file",
                serde_json::json!({"file_path": "a.txt"}),
            )))
            .reply(Turn::text("done")),
    );
    let mut agent = fx.agent(&server, 10);
    let outcome = fx
        .run(&mut agent, "read it", CancellationToken::new())
        .await;
    assert_eq!(outcome.text, "done");
    let second = &server.requests()[1].body;
    let assistant = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "assistant")
        .unwrap();
    assert!(
        assistant["content"].as_str().unwrap_or_default().is_empty(),
        "{assistant}"
    );
    assert_eq!(assistant["tool_calls"][0]["id"], "r1");
    assert_history_valid(agent.history());
}

#[tokio::test]
async fn every_early_started_call_gets_a_result_event_when_its_response_is_retried() {
    let fx = Fixture::new();
    std::fs::write(fx.dir.path().join("a.txt"), "alpha\n").unwrap();
    let read = |id: &str| {
        MockToolCall::new(
            id,
            "read_file",
            serde_json::json!({"file_path": "a.txt"}).to_string(),
        )
    };
    // Events: the role chunk, r1 (whole), r2 (whole), then the cut: r1 is complete and
    // started early once r2 begins, but the response never finishes.
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(read("r1"))
                    .tool_call(read("r2"))
                    .cut_after(3),
            )
            .reply(Turn::text("done")),
    );
    let mut agent = fx.agent(&server, 10);
    let outcome = fx.run(&mut agent, "read", CancellationToken::new()).await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    assert_eq!(outcome.text, "done");

    let events = fx.events();
    let started: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCallStarted { id, .. } => Some(id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(started, ["r1"], "{events:#?}");
    let results: Vec<(&str, bool)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolResult { id, is_error, .. } => Some((id.as_str(), *is_error)),
            _ => None,
        })
        .collect();
    assert_eq!(results, [("r1", true)], "{events:#?}");
    // The dropped call is not in the history: the retried response made no calls.
    assert!(tool_results(agent.history()).is_empty());
    assert_history_valid(agent.history());
}

#[tokio::test]
async fn repeats_are_counted_within_a_turn_not_across_turns() {
    let fx = Fixture::new();
    std::fs::write(fx.dir.path().join("a.txt"), "a\n").unwrap();
    let read = || {
        Turn::new().tool_call(call(
            "r",
            "read_file",
            serde_json::json!({"file_path": "a.txt"}),
        ))
    };
    let mut script = Script::new();
    for _ in 0..8 {
        script = script.reply(read());
    }
    let server = MockServer::start(script.reply(read()).reply(Turn::text("done")));
    let mut agent = fx.agent(&server, 50);
    let first = fx.run(&mut agent, "loop", CancellationToken::new()).await;
    assert_eq!(first.stop(), TurnStop::RepeatedCalls);
    // The person's next request starts the count again: one read is not a loop.
    let second = fx
        .run(&mut agent, "read it once", CancellationToken::new())
        .await;
    assert_eq!(second.stop(), TurnStop::EndTurn);
    assert_eq!(second.text, "done");
    assert_history_valid(agent.history());
}
