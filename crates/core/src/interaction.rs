//! The way back to the person: core asks a question and awaits the answer. Today the only
//! question is an approval. The REPL answers with keys, a headless run has no one to ask and
//! never blocks, and tests script the answers.

use std::collections::VecDeque;

use parking_lot::Mutex;
use rein_tools::{Preview, async_trait};
use serde::Serialize;

use crate::permissions::Rule;

/// A call that needs the person's approval, with what they need to decide.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalRequest {
    /// The call's id.
    pub call_id: String,
    /// The tool's name.
    pub tool: String,
    /// The call's full arguments.
    pub arguments: serde_json::Value,
    /// What the call would do, shown before the question; `None`: show the arguments.
    pub preview: Option<Preview>,
    /// Why rein asks.
    pub reason: String,
    /// What "yes for the rest of the session" allows from then on: for a plain command,
    /// its prefix (`bash(touch:*)`), else the exact call.
    pub session_rule: Rule,
    /// The narrow choice when `session_rule` is a command's prefix: the exact line
    /// (answered with [`Approval::YesForLine`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_rule: Option<Rule>,
    /// The sub-agent that made the call, when it was not the main conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// The person's answer to an approval.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Approval {
    /// Run it, this once.
    Yes,
    /// Run it, and the same kind of call without asking for the rest of the session.
    YesForSession,
    /// Run it, and this exact line again without asking for the rest of the session (the
    /// request's `line_rule`; its `session_rule` when it has none).
    YesForLine,
    /// Do not run it.
    No,
    /// Do not run it, and tell the model why.
    NoBecause(String),
    /// The person pressed Ctrl+C while asked: the turn ends, as during a tool.
    Cancelled,
}

/// Where questions go.
#[async_trait]
pub trait Interaction: Send + Sync {
    /// Whether a person can answer. When not (a headless run), core never asks: what would
    /// ask is refused, and the model is told how the person can allow it.
    fn attended(&self) -> bool {
        true
    }

    /// Asks for an approval and waits for the answer.
    async fn approve(&self, request: ApprovalRequest) -> Approval;
}

/// No one to ask: every call that would need an approval is refused, at once.
#[derive(Debug, Clone, Copy, Default)]
pub struct Unattended;

#[async_trait]
impl Interaction for Unattended {
    fn attended(&self) -> bool {
        false
    }

    async fn approve(&self, _request: ApprovalRequest) -> Approval {
        Approval::No
    }
}

/// Answers from a script, in order, recording each request (for tests). When the script
/// runs out, it answers [`Approval::No`].
#[derive(Debug, Default)]
pub struct ScriptedInteraction {
    answers: Mutex<VecDeque<Approval>>,
    asked: Mutex<Vec<ApprovalRequest>>,
}

impl ScriptedInteraction {
    /// Answers `answers`, one per question.
    pub fn new(answers: impl IntoIterator<Item = Approval>) -> Self {
        ScriptedInteraction {
            answers: Mutex::new(answers.into_iter().collect()),
            asked: Mutex::default(),
        }
    }

    /// Every request asked so far.
    pub fn asked(&self) -> Vec<ApprovalRequest> {
        self.asked.lock().clone()
    }
}

#[async_trait]
impl Interaction for ScriptedInteraction {
    async fn approve(&self, request: ApprovalRequest) -> Approval {
        self.asked.lock().push(request);
        self.answers.lock().pop_front().unwrap_or(Approval::No)
    }
}
