//! Approvals: what the person is asked, with what preview, and what each answer does.

use std::sync::Arc;
use std::time::Duration;

use rein_core::agent::{AgentEvent, TurnStop};
use rein_core::hooks::NoHooks;
use rein_core::interaction::{
    AnswerScope, Approval, ApprovalRequest, Interaction, ScriptedInteraction,
};
use rein_core::permissions::{ModePolicy, PermissionMode};
use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use rein_tools::{Preview, async_trait};
use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::{Setup, collect, results};

/// An interaction where the person presses Ctrl+C while asked.
struct CtrlCWhileAsked {
    cancel: CancellationToken,
}

#[async_trait]
impl Interaction for CtrlCWhileAsked {
    async fn approve(&self, _request: ApprovalRequest) -> Approval {
        self.cancel.cancel();
        std::future::pending().await
    }
}

#[tokio::test]
async fn no_with_a_reason_reaches_the_model_and_the_next_request_is_valid() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "t1",
                "bash",
                json!({"command": "cargo test"}).to_string(),
            )))
            .reply(Turn::text("ok, not running them")),
    );
    let interaction = Arc::new(ScriptedInteraction::new([Approval::NoBecause(
        "the tests are slow".into(),
    )]));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        interaction.clone(),
        Arc::new(NoHooks),
    );
    let (events, seen) = collect();
    let outcome = agent
        .run_turn("test it", &events, CancellationToken::new())
        .await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    let asked = interaction.asked();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool, "bash");
    assert_eq!(asked[0].arguments["command"], "cargo test");
    // A plain command offers its prefix, the exact line as the narrow choice.
    let AnswerScope::Call {
        session_rule,
        line_rule,
    } = &asked[0].scope
    else {
        panic!(
            "a command's question offers session rules: {:?}",
            asked[0].scope
        );
    };
    assert_eq!(session_rule.to_string(), "bash(cargo test:*)");
    assert_eq!(
        line_rule.as_ref().map(ToString::to_string),
        Some("bash(cargo test)".to_owned())
    );

    let results = results(agent.history());
    assert!(results[0].contains("the tests are slow"), "{}", results[0]);
    // The second request carries the call and its one result.
    let body = &server.requests()[1].body;
    let messages = body["messages"].as_array().unwrap();
    let last = messages.last().unwrap();
    assert_eq!(last["role"], "tool");
    assert_eq!(last["tool_call_id"], "t1");
    assert!(
        last["content"]
            .as_str()
            .unwrap()
            .contains("the tests are slow")
    );
    let denied: Vec<_> = seen
        .lock()
        .unwrap()
        .iter()
        .filter(|e| matches!(e, AgentEvent::PermissionDenied { .. }))
        .cloned()
        .collect();
    assert_eq!(denied.len(), 1);
}

#[tokio::test]
async fn yes_for_the_session_is_not_asked_again_for_the_same_pattern() {
    let setup = Setup::new();
    let bash = |id: &str, command: &str| {
        Turn::new().tool_call(MockToolCall::new(
            id,
            "bash",
            json!({ "command": command }).to_string(),
        ))
    };
    let server = MockServer::start(
        Script::new()
            // Commands that write (tee), so none is provably read-only.
            .reply(bash("a", "echo one | tee one.txt"))
            .reply(bash("b", "echo one | tee one.txt"))
            .reply(bash("c", "echo two | tee two.txt"))
            .reply(Turn::text("done")),
    );
    let interaction = Arc::new(ScriptedInteraction::new([
        Approval::YesForSession,
        Approval::Yes,
    ]));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        interaction.clone(),
        Arc::new(NoHooks),
    );
    let (events, _) = collect();
    agent
        .run_turn("echo", &events, CancellationToken::new())
        .await;
    let asked: Vec<String> = interaction
        .asked()
        .iter()
        .map(|r| r.arguments["command"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        asked,
        ["echo one | tee one.txt", "echo two | tee two.txt"],
        "the repeat ran unasked"
    );
    let outputs: Vec<String> = results(agent.history())
        .iter()
        .map(|r| r.lines().next().unwrap_or_default().to_owned())
        .collect();
    assert_eq!(outputs, ["one", "one", "two"], "all three ran");
}

#[tokio::test]
async fn ctrl_c_while_asked_ends_the_turn_like_ctrl_c_during_a_tool() {
    let setup = Setup::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "w",
                "write_file",
                json!({"file_path": "a.txt", "content": "x"}).to_string(),
            )))
            .reply(Turn::text("never asked for")),
    );
    let cancel = CancellationToken::new();
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        Arc::new(CtrlCWhileAsked {
            cancel: cancel.clone(),
        }),
        Arc::new(NoHooks),
    );
    let (events, _) = collect();
    let outcome = tokio::time::timeout(
        Duration::from_secs(10),
        agent.run_turn("write it", &events, cancel),
    )
    .await
    .expect("the turn ends when Ctrl+C comes during a question");
    assert_eq!(outcome.stop(), TurnStop::Cancelled);
    assert!(!setup.dir.path().join("a.txt").exists());
    assert_eq!(server.request_count(), 1);
    let results = results(agent.history());
    assert_eq!(results.len(), 1, "the call still has its one result");
    assert!(results[0].contains("interrupted"), "{}", results[0]);
}

#[tokio::test]
async fn an_approval_shows_the_diff_an_edit_would_make_before_anything_changes() {
    let setup = Setup::new();
    let file = setup.dir.path().join("main.py");
    std::fs::write(&file, "import helpers\nprint('hi')\n").unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r",
                "read_file",
                json!({"file_path": "main.py"}).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "e",
                "edit_file",
                json!({"file_path": "main.py", "old_string": "import helpers", "new_string": "import utils"})
                    .to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "w",
                "write_file",
                json!({"file_path": "new.txt", "content": "fresh\n"}).to_string(),
            )))
            .reply(Turn::text("done")),
    );
    let interaction = Arc::new(ScriptedInteraction::new([Approval::No, Approval::Yes]));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        interaction.clone(),
        Arc::new(NoHooks),
    );
    let (events, _) = collect();
    agent
        .run_turn("fix it", &events, CancellationToken::new())
        .await;
    let asked = interaction.asked();
    assert_eq!(asked.len(), 2, "the read was not asked about");
    match &asked[0].preview {
        Some(rein_tools::Preview::Diff {
            path,
            diff,
            created,
        }) => {
            assert_eq!(path, "main.py");
            assert!(!created);
            assert!(
                diff.contains("-import helpers") && diff.contains("+import utils"),
                "{diff}"
            );
        }
        other => panic!("no diff to approve: {other:?}"),
    }
    // Declined: the preview wrote nothing.
    assert_eq!(
        std::fs::read_to_string(&file).unwrap(),
        "import helpers\nprint('hi')\n"
    );
    match &asked[1].preview {
        Some(rein_tools::Preview::Diff { diff, created, .. }) => {
            assert!(created);
            assert!(diff.contains("+fresh"), "{diff}");
        }
        other => panic!("no diff to approve: {other:?}"),
    }
    assert_eq!(
        std::fs::read_to_string(setup.dir.path().join("new.txt")).unwrap(),
        "fresh\n"
    );
}

#[tokio::test]
async fn a_file_outside_the_workspace_is_asked_about_with_its_diff_and_written_once_approved() {
    let setup = Setup::new();
    let elsewhere = tempfile::TempDir::new().unwrap();
    let file = elsewhere.path().canonicalize().unwrap().join("notes.txt");
    std::fs::write(&file, "old\n").unwrap();
    let path = file.to_str().unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r",
                "read_file",
                json!({"file_path": path}).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "e",
                "edit_file",
                json!({"file_path": path, "old_string": "old", "new_string": "new"}).to_string(),
            )))
            .reply(Turn::text("done")),
    );
    let interaction = Arc::new(ScriptedInteraction::new([Approval::Yes, Approval::Yes]));
    let mut agent = setup.agent(
        &server,
        // Even accept-edits asks for both: the file is not the workspace's.
        Arc::new(ModePolicy::new(PermissionMode::AcceptEdits)),
        interaction.clone(),
        Arc::new(NoHooks),
    );
    let (events, _) = collect();
    agent
        .run_turn("edit my notes", &events, CancellationToken::new())
        .await;
    let asked = interaction.asked();
    assert_eq!(asked.len(), 2);
    assert!(
        asked[0].reason.contains("outside the workspace"),
        "{}",
        asked[0].reason
    );
    match &asked[1].preview {
        Some(rein_tools::Preview::Diff { diff, .. }) => {
            assert!(diff.contains("-old") && diff.contains("+new"), "{diff}");
        }
        other => panic!("no diff to approve: {other:?}"),
    }
    let results = results(agent.history());
    assert!(results[0].contains("old"), "the read ran: {}", results[0]);
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "new\n");
}

/// Whether the OS sandbox is enforced here; says why not on stderr.
fn sandbox_enforced(test: &str) -> bool {
    let support = rein_tools::sandbox::support(rein_tools::sandbox::KernelProbe::Detect);
    if let Some(why) = support.missing() {
        #[expect(clippy::print_stderr, reason = "a skipped test must say so")]
        {
            eprintln!("SKIPPED {test}: the sandbox is not enforced here: {why}");
        }
        return false;
    }
    true
}

async fn sandbox_refused_then(answer: Approval) -> (Vec<ApprovalRequest>, String, String) {
    let setup = Setup::new();
    let outside = tempfile::TempDir::new().unwrap();
    let target = outside.path().canonicalize().unwrap().join("note.txt");
    // Written by a program the parser cannot see into: only the sandbox stops it.
    let command = format!(
        "python3 -c \"open('{}', 'w').write('written\\n')\"",
        target.display()
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({ "command": command }).to_string(),
            )))
            .reply(Turn::text("done")),
    );
    let interaction = Arc::new(ScriptedInteraction::new([answer]));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Auto)),
        interaction.clone(),
        Arc::new(NoHooks),
    );
    let (events, _) = collect();
    agent
        .run_turn("write it", &events, CancellationToken::new())
        .await;
    let written = std::fs::read_to_string(&target).unwrap_or_default();
    let result = results(agent.history()).join("\n");
    (interaction.asked(), written, result)
}

#[tokio::test]
async fn what_the_sandbox_refused_asks_and_yes_runs_it_once_outside() {
    if !sandbox_enforced("what_the_sandbox_refused_asks_and_yes_runs_it_once_outside") {
        return;
    }
    let (asked, written, result) = sandbox_refused_then(Approval::Yes).await;
    assert_eq!(
        asked.len(),
        1,
        "auto runs the command unasked, then asks once"
    );
    assert!(
        asked[0].reason.contains("the sandbox refused a write to")
            && asked[0].reason.contains("outside the sandbox"),
        "{}",
        asked[0].reason
    );
    assert_eq!(written, "written\n", "{result}");
    // Once only, and shown as the command line, not as JSON.
    assert_eq!(asked[0].scope, AnswerScope::Once);
    match &asked[0].preview {
        Some(Preview::Command { command, .. }) => assert!(command.starts_with("python3 -c")),
        other => panic!("no command line shown: {other:?}"),
    }

    // "Yes for the session" from a front-end counts as one yes.
    let (asked, written, _) = sandbox_refused_then(Approval::YesForSession).await;
    assert_eq!((asked.len(), written.as_str()), (1, "written\n"));
    // A no with a reason: the model gets the reason with the refused result.
    let (_, written, result) =
        sandbox_refused_then(Approval::NoBecause("keep it in the project".into())).await;
    assert_eq!(written, "");
    assert!(
        result.contains("Their reason: keep it in the project"),
        "{result}"
    );

    let (asked, written, result) = sandbox_refused_then(Approval::No).await;
    assert_eq!(asked.len(), 1);
    assert_eq!(written, "");
    assert!(
        result.contains("the sandbox refused a write to"),
        "{result}"
    );
}

#[tokio::test]
async fn a_write_outside_the_workspace_allowed_once_runs_outside_the_sandbox_unasked_again() {
    if !sandbox_enforced("a_write_outside_the_workspace_allowed_once_runs_outside_the_sandbox") {
        return;
    }
    let setup = Setup::new();
    let outside = tempfile::TempDir::new().unwrap();
    let target = outside.path().canonicalize().unwrap().join("note.txt");
    // The parser sees this write: the person is asked before it runs, and only then.
    let command = format!("echo written > {}", target.display());
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({ "command": command }).to_string(),
            )))
            .reply(Turn::text("done")),
    );
    let interaction = Arc::new(ScriptedInteraction::new([Approval::Yes, Approval::Yes]));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Auto)),
        interaction.clone(),
        Arc::new(NoHooks),
    );
    let (events, _) = collect();
    agent
        .run_turn("write it", &events, CancellationToken::new())
        .await;
    let asked = interaction.asked();
    assert_eq!(
        asked.len(),
        1,
        "one question for one command: {:?}",
        asked.iter().map(|a| &a.reason).collect::<Vec<_>>()
    );
    assert!(
        asked[0].reason.contains("outside the sandbox"),
        "the question says the command leaves the sandbox: {}",
        asked[0].reason
    );
    let result = results(agent.history()).join("\n");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap_or_default(),
        "written\n",
        "{result}"
    );
}

/// A rule that holds a secret value is never offered for the session: the menu and
/// `/permissions` would show it. The question shows the call masked, and a yes runs it once.
#[tokio::test]
async fn a_command_holding_a_secret_offers_no_rule_that_shows_it() {
    const SECRET: &str = "dt5up3rs3cr3tv4lue";
    let mut setup = Setup::new();
    setup.env = vec![("DEPLOY_TOKEN".into(), SECRET.into())];
    let command = format!("touch token-{SECRET}.txt");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "t1",
                "bash",
                json!({ "command": command }).to_string(),
            )))
            .reply(Turn::text("made")),
    );
    let interaction = Arc::new(ScriptedInteraction::new([Approval::YesForSession]));
    let mut agent = setup.agent(
        &server,
        Arc::new(ModePolicy::new(PermissionMode::Default)),
        interaction.clone(),
        Arc::new(NoHooks),
    );
    let (events, _seen) = collect();
    let outcome = agent
        .run_turn("make it", &events, CancellationToken::new())
        .await;
    assert_eq!(outcome.stop(), TurnStop::EndTurn);
    let asked = interaction.asked();
    assert_eq!(asked.len(), 1);
    // `touch` offers its prefix; the exact line, which holds the secret, is left out.
    let AnswerScope::Call {
        session_rule,
        line_rule,
    } = &asked[0].scope
    else {
        panic!("the prefix holds no secret: {:?}", asked[0].scope);
    };
    assert_eq!(session_rule.to_string(), "bash(touch:*)");
    assert_eq!(line_rule, &None);
    assert!(
        !format!("{:?}", asked[0]).contains(SECRET),
        "{:?}",
        asked[0]
    );
}
