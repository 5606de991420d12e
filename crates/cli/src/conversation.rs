//! `rein --input-format stream-json --output-format stream-json`: a conversation a program
//! holds over stdin/stdout (Claude Code's shape). Each stdin line is one JSON message: a
//! person's turn (`user`), an answer to a question (`permission_response`), or a control
//! (`interrupt`). Each turn streams the usual events and ends with its `result` line; the
//! session lasts until stdin ends. The shapes are in docs/output-format.md.

use std::collections::HashMap;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use rein_core::agent::{Events, TurnOutcome};
use rein_core::face::{
    AnswerScope, Approval, ApprovalRequest, Interaction, Unattended, async_trait,
};
use rein_core::hooks::SessionStartSource;
use serde::{Deserialize, Serialize};
use tokio::sync::{mpsc, oneshot};
use tokio_util::sync::CancellationToken;

use crate::args::{Args, OutputFormat, PermissionPrompt};
use crate::exit::Exit;
use crate::report::RunReport;
use crate::run::{event_sink, keep_session};
use crate::setup::{self, McpServers, Prepared, SetupError};
use crate::{interrupt, render};

/// One stdin line, by its `type`.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Incoming {
    User {
        message: UserMessage,
    },
    PermissionResponse {
        id: String,
        decision: Decision,
        #[serde(default)]
        reason: Option<String>,
    },
    Control {
        action: Control,
    },
}

#[derive(Debug, Deserialize)]
struct UserMessage {
    #[serde(default)]
    role: Option<String>,
    content: Content,
}

/// A message's content: text, or content blocks of which the text ones count.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Content {
    Text(String),
    Blocks(Vec<Block>),
}

#[derive(Debug, Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    text: Option<String>,
}

/// A `permission_response`'s decision; its names are also the `answers` a
/// `permission_request` lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "snake_case")]
enum Decision {
    Allow,
    /// Run it, and the same command line (the same words) again for the session (`line_rule`).
    AllowLine,
    AllowSession,
    Deny,
}

#[derive(Debug, Clone, Copy, Deserialize)]
#[serde(rename_all = "snake_case")]
enum Control {
    Interrupt,
}

/// Writes one JSON line on stdout (beside the events, which go through the same lock).
fn emit(value: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}");
    let _ = out.flush();
}

/// A line that could not be taken: said on stdout, and the conversation goes on.
fn line_error(line: u64, message: &str) {
    emit(&serde_json::json!({
        "type": "error",
        "line": line,
        "message": message,
    }));
}

/// An open question: where its answer goes, and the decisions it listed.
type Waiting = (oneshot::Sender<Approval>, &'static [Decision]);

/// Questions put to the program on stdout, answered by `permission_response` lines.
#[derive(Debug, Default)]
struct StdinApprovals {
    waiting: Mutex<HashMap<String, Waiting>>,
    /// stdin ended: no answer can come any more.
    closed: std::sync::atomic::AtomicBool,
}

impl StdinApprovals {
    /// Gives the answer to the question `id`; false when none waits under that id. A
    /// decision the question did not list is never a wider yes: `allow_line` to a question
    /// with no line to allow is one `allow` (core narrows `allow_session` itself).
    fn answer(&self, id: &str, decision: Decision, reason: Option<String>) -> bool {
        let Some((sender, listed)) = self.waiting.lock().remove(id) else {
            return false;
        };
        let approval = match (decision, reason) {
            (Decision::AllowLine, _) if !listed.contains(&Decision::AllowLine) => Approval::Yes,
            (Decision::Allow, _) => Approval::Yes,
            (Decision::AllowLine, _) => Approval::YesForLine,
            (Decision::AllowSession, _) => Approval::YesForSession,
            (Decision::Deny, Some(reason)) if !reason.trim().is_empty() => {
                Approval::NoBecause(reason)
            }
            (Decision::Deny, _) => Approval::No,
        };
        sender.send(approval).is_ok()
    }

    /// stdin ended: what still waits is refused.
    fn close(&self) {
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        self.waiting.lock().clear();
    }
}

#[async_trait]
impl Interaction for StdinApprovals {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Approval::NoBecause("no one can answer: stdin has ended".into());
        }
        let (sender, answer) = oneshot::channel();
        let listed = answers(&request.scope);
        self.waiting
            .lock()
            .insert(request.call_id.clone(), (sender, listed));
        let mut asked = serde_json::json!({
            "type": "permission_request",
            "id": request.call_id,
            "tool": request.tool,
            "arguments": request.arguments,
            "reason": request.reason,
            "answers": listed,
        });
        if let AnswerScope::Call {
            session_rule,
            line_rule,
        } = &request.scope
        {
            asked["session_rule"] = session_rule.to_string().into();
            if let Some(line_rule) = line_rule {
                asked["line_rule"] = line_rule.to_string().into();
            }
        }
        emit(&asked);
        answer
            .await
            .unwrap_or_else(|_| Approval::NoBecause("no one can answer: stdin has ended".into()))
    }
}

/// The decisions a question of `scope` takes. Another is never a wider yes: `allow_session`
/// to a question asked once counts as one yes (core grants nothing for the session then),
/// `allow` to a question whose answer holds for the session is that session's yes.
fn answers(scope: &AnswerScope) -> &'static [Decision] {
    match scope {
        AnswerScope::Call {
            line_rule: Some(_), ..
        } => &[
            Decision::Allow,
            Decision::AllowLine,
            Decision::AllowSession,
            Decision::Deny,
        ],
        AnswerScope::Call {
            line_rule: None, ..
        } => &[Decision::Allow, Decision::AllowSession, Decision::Deny],
        AnswerScope::Once => &[Decision::Allow, Decision::Deny],
        AnswerScope::Session { .. } => &[Decision::AllowSession, Decision::Deny],
    }
}

/// What the stdin reader shares with the turns.
struct Shared {
    approvals: Option<Arc<StdinApprovals>>,
    /// The running turn's token.
    turn: Mutex<Option<CancellationToken>>,
}

/// The conversation's agent, ready, with the stdin approvals it asks through (when
/// `--permission-prompt stdin`); the exit status, once said why, when it cannot start.
fn set_up(args: &Args) -> Result<(Prepared, Option<Arc<StdinApprovals>>), Exit> {
    if args.output_format != Some(OutputFormat::StreamJson) {
        render::notice("rein: --input-format stream-json goes with --output-format stream-json");
        return Err(Exit::Usage);
    }
    if args.prompt.is_some() {
        render::notice("rein: --input-format stream-json reads the prompts from stdin: drop -p");
        return Err(Exit::Usage);
    }
    let started = Instant::now();
    let approvals = (args.permission_prompt == Some(PermissionPrompt::Stdin))
        .then(Arc::<StdinApprovals>::default);
    let interaction: Arc<dyn Interaction> = match &approvals {
        Some(approvals) => Arc::clone(approvals) as Arc<dyn Interaction>,
        None => Arc::new(Unattended),
    };
    match setup::prepare(args, interaction, McpServers::Start) {
        Ok(prepared) => Ok((prepared, approvals)),
        Err(error) => {
            let (message, exit) = match error {
                SetupError::Usage(message) => (message, Exit::Usage),
                SetupError::Runtime(message) => (message, Exit::Runtime),
            };
            render::error(&message);
            render::stdout_line(
                &RunReport::failed_setup(&message, started.elapsed()).to_json_line(),
            );
            Err(exit)
        }
    }
}

/// Holds the conversation; returns how rein exits.
pub(crate) async fn run(args: &Args) -> Exit {
    let (prepared, approvals) = match set_up(args) {
        Ok(ready) => ready,
        Err(exit) => return exit,
    };
    let mut agent = prepared.agent;
    let resumed = args.resume.is_some() || args.continue_session;
    render::stdout_line(&render::session_line(
        &prepared.session_id,
        agent.model(),
        agent.provider_kind(),
        &prepared.cwd,
        resumed,
    ));
    let shared = Arc::new(Shared {
        approvals,
        turn: Mutex::new(None),
    });
    let (prompts, mut received) = mpsc::unbounded_channel();
    let reading = Arc::clone(&shared);
    std::thread::spawn(move || read_stdin(&reading, &prompts));
    // SIGINT and the like end the running turn, then the conversation.
    let ending = CancellationToken::new();
    let interrupts = interrupt::install(
        ending.clone(),
        agent.tool_context().processes().clone(),
        agent.mcp_hub().cloned(),
    );
    let (_, log) = event_sink(OutputFormat::StreamJson, prepared.warnings.clone());
    let events = Events::shared(log.clone());
    let source = if resumed {
        SessionStartSource::Resume
    } else {
        SessionStartSource::Startup
    };
    agent.start_session(source, &events, &ending).await;
    let mut last: Option<TurnOutcome> = None;
    while !ending.is_cancelled() {
        let prompt = tokio::select! {
            prompt = received.recv() => match prompt {
                Some(prompt) => prompt,
                None => break,
            },
            () = ending.cancelled() => break,
        };
        let turn_started = Instant::now();
        let before = agent.tool_context().changed_files();
        let cancel = ending.child_token();
        *shared.turn.lock() = Some(cancel.clone());
        let outcome = agent.run_turn(&prompt, &events, cancel).await;
        *shared.turn.lock() = None;
        if outcome.stop() == rein_core::agent::TurnStop::Cancelled {
            agent.tool_context().processes().kill_all().await;
        }
        let (session_id, unsaved) =
            // A conversation's session is kept whatever its first turn did: more may follow.
            keep_session(&mut agent, &outcome, &events, true, &prepared.session_id);
        let changed: Vec<_> = agent
            .tool_context()
            .changed_files()
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        let mut report = RunReport::new(
            session_id,
            &outcome,
            &changed,
            &prepared.cwd,
            turn_started.elapsed(),
        );
        (
            report.warnings,
            report.permission_denials,
            report.compactions,
        ) = log.take();
        if let Some(message) = &unsaved {
            report.set_error_if_none(message);
        }
        render::stdout_line(&report.to_json_line());
        last = Some(outcome);
    }
    agent.end_session(&events).await;
    agent.tool_context().processes().kill_all().await;
    agent.tool_context().background().stop_all().await;
    agent.shutdown_mcp().await;
    if let Some(signalled) = interrupts.exit() {
        return signalled;
    }
    last.map_or(Exit::Done, |outcome| Exit::for_stop(outcome.stop()))
}

/// Reads stdin to its end: prompts go to the turns, answers to the waiting questions,
/// interrupts to the running turn; a bad line is said and skipped.
/// (A thread of its own: a blocking read of stdin must not hold the runtime.)
fn read_stdin(shared: &Shared, prompts: &mpsc::UnboundedSender<String>) {
    use std::io::BufRead;
    let mut lines = std::io::stdin().lock().lines();
    let mut number = 0u64;
    loop {
        let line = match lines.next() {
            Some(Ok(line)) => line,
            None => break,
            Some(Err(e)) => {
                line_error(number + 1, &format!("cannot read stdin: {e}"));
                break;
            }
        };
        number += 1;
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Incoming>(&line) {
            Ok(Incoming::User { message }) => match prompt_of(message) {
                Ok(prompt) => {
                    let _ = prompts.send(prompt);
                }
                Err(message) => line_error(number, &message),
            },
            Ok(Incoming::PermissionResponse {
                id,
                decision,
                reason,
            }) => {
                let answered = shared
                    .approvals
                    .as_ref()
                    .is_some_and(|approvals| approvals.answer(&id, decision, reason));
                if !answered {
                    line_error(number, &format!("no permission request {id} is waiting"));
                }
            }
            Ok(Incoming::Control {
                action: Control::Interrupt,
            }) => {
                if let Some(turn) = &*shared.turn.lock() {
                    turn.cancel();
                }
            }
            Err(e) => line_error(number, &format!("not a message rein understands: {e}")),
        }
    }
    // End of input: the running turn finishes; a question it still asks is refused.
    if let Some(approvals) = &shared.approvals {
        approvals.close();
    }
}

/// The text of a user message.
fn prompt_of(message: UserMessage) -> Result<String, String> {
    if let Some(role) = &message.role
        && role != "user"
    {
        return Err(format!("a user message has role \"user\", not \"{role}\""));
    }
    let text = match message.content {
        Content::Text(text) => text,
        Content::Blocks(blocks) => blocks
            .into_iter()
            .filter(|b| b.kind == "text")
            .filter_map(|b| b.text)
            .collect::<Vec<_>>()
            .join("\n"),
    };
    if text.trim().is_empty() {
        return Err("the user message has no text".to_owned());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_is_text_or_text_blocks() {
        let line = r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"a"},{"type":"image"},{"type":"text","text":"b"}]}}"#;
        let Ok(Incoming::User { message }) = serde_json::from_str(line) else {
            panic!("not parsed");
        };
        assert_eq!(prompt_of(message).unwrap(), "a\nb");
        let line = r#"{"type":"user","message":{"role":"assistant","content":"x"}}"#;
        let Ok(Incoming::User { message }) = serde_json::from_str(line) else {
            panic!("not parsed");
        };
        assert!(prompt_of(message).is_err());
    }
}
