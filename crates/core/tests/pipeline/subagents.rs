//! A sub-agent under the parent's permissions and hooks: its approval is asked through the
//! parent's interaction, marked as its own; its calls pass the same hooks; SubagentStop fires
//! and Stop does not.

use std::sync::{Arc, Mutex};

use rein_core::agent::{AgentEvent, TurnStop};
use rein_core::hooks::{HookCall, HookWarnings, Hooks, PreToolUse, StopCheck};
use rein_core::interaction::{Approval, ScriptedInteraction};
use rein_core::permissions::{ModePolicy, PermissionMode};
use rein_testkit::{CapturedRequest, MockServer, MockToolCall, Reply, Script, Turn};
use rein_tools::async_trait;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Setup, collect};

#[derive(Default)]
struct Recorded {
    seen: Mutex<Vec<String>>,
}

#[async_trait]
impl Hooks for Recorded {
    async fn pre_tool_use(&self, call: &HookCall<'_>, _warnings: &mut HookWarnings) -> PreToolUse {
        self.seen.lock().unwrap().push(format!("pre {}", call.tool));
        PreToolUse::default()
    }

    async fn stop(&self, _active: bool, _warnings: &mut HookWarnings) -> StopCheck {
        self.seen.lock().unwrap().push("stop".to_owned());
        StopCheck::End
    }

    async fn subagent_stop(&self, _warnings: &mut HookWarnings) {
        self.seen.lock().unwrap().push("subagent_stop".to_owned());
    }
}

fn is_sub(request: &CapturedRequest) -> bool {
    request.body["messages"][0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("# You are a sub-agent"))
}

#[tokio::test]
async fn a_sub_agent_asks_through_the_parent_and_runs_its_hooks() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                let answered = |id: &str| {
                    request.body["messages"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|m| m["tool_call_id"] == id)
                };
                if is_sub(request) {
                    if answered("w1") {
                        return Turn::text("wrote it").into();
                    }
                    return Turn::new()
                        .tool_call(MockToolCall::new(
                            "w1",
                            "write_file",
                            json!({"file_path": "note.txt", "content": "hi\n"}).to_string(),
                        ))
                        .into();
                }
                if answered("task") {
                    return Turn::text("done").into();
                }
                Turn::new()
                    .tool_call(MockToolCall::new(
                        "task",
                        "agent",
                        json!({"task": "write note.txt"}).to_string(),
                    ))
                    .into()
            }))
            .repeating(),
    );
    let interaction = Arc::new(ScriptedInteraction::new([Approval::Yes]));
    let hooks = Arc::new(Recorded::default());
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        interaction.clone(),
        hooks.clone(),
    );
    let (events, seen) = collect();
    let outcome = agent
        .run_turn("delegate", &events, CancellationToken::new())
        .await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    let asked = interaction.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "write_file");
    assert_eq!(asked[0].agent.as_deref(), Some("general"));
    assert_eq!(
        std::fs::read_to_string(setup.dir.path().join("note.txt")).unwrap(),
        "hi\n"
    );
    assert_eq!(
        *hooks.seen.lock().unwrap(),
        ["pre agent", "pre write_file", "subagent_stop", "stop"]
    );
    // The question reached the front-end nested under the parent's call.
    let nested_ask = seen.lock().unwrap().iter().any(|e| {
        matches!(e, AgentEvent::Nested(n) if n.parent_call_id == "task"
            && matches!(*n.event, AgentEvent::ApprovalRequested { .. }))
    });
    assert!(nested_ask);
}
