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
    /// What the answer decides beyond this call: the choices a front-end may offer.
    pub scope: AnswerScope,
    /// The sub-agent that made the call, when it was not the main conversation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
}

/// What an answer decides beyond the call asked about, so that a front-end offers only the
/// choices that mean something.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AnswerScope {
    /// Yes or no for this call; the person may also allow calls like it for the rest of the
    /// session ([`Approval::YesForSession`], [`Approval::YesForLine`]).
    Call {
        /// What "yes for the rest of the session" allows from then on: for a plain command,
        /// its prefix (`bash(touch:*)`), else the exact call.
        session_rule: Rule,
        /// The narrow choice when `session_rule` is a command's prefix: the exact line
        /// (answered with [`Approval::YesForLine`]).
        #[serde(skip_serializing_if = "Option::is_none")]
        line_rule: Option<Rule>,
    },
    /// Yes or no for this call, once: nothing can be allowed for the session (leaving the
    /// sandbox is decided command by command). A yes for the session counts as one yes.
    Once,
    /// The answer, yes or no, holds for the rest of the session: who asked remembers it (a
    /// host reached through the sandbox's proxy).
    Session {
        /// What a no means and how the person can change it later, shown after a no.
        after_no: String,
    },
}

impl AnswerScope {
    /// The rule an answer allows for the rest of the session, when it allows one.
    pub fn granted(&self, answer: &Approval) -> Option<&Rule> {
        match (self, answer) {
            (AnswerScope::Call { session_rule, .. }, Approval::YesForSession) => Some(session_rule),
            (
                AnswerScope::Call {
                    session_rule,
                    line_rule,
                },
                Approval::YesForLine,
            ) => Some(line_rule.as_ref().unwrap_or(session_rule)),
            (AnswerScope::Call { .. }, _)
            | (AnswerScope::Once | AnswerScope::Session { .. }, _) => None,
        }
    }
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
