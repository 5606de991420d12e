//! The way back to the person: core asks a question and awaits the answer. Today the only
//! question is an approval. The REPL answers with keys, a headless run has no one to ask and
//! never blocks, and tests script the answers.

use std::collections::VecDeque;
use std::sync::Arc;

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

    /// Whether this puts its questions one at a time already ([`OneAtATime`]).
    fn one_at_a_time(&self) -> bool {
        false
    }
}

/// Questions put one at a time, whoever asks: the calls of an agent, of its sub-agents, and
/// the sandbox's proxy about a host (which asks from a background command too, at any
/// moment). A front-end shows and answers one question at a time (the REPL has one place
/// for it): a second waits until the first is answered. In core, so it holds for every
/// front-end.
pub struct OneAtATime {
    inner: Arc<dyn Interaction>,
    asking: tokio::sync::Mutex<()>,
}

impl std::fmt::Debug for OneAtATime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OneAtATime")
    }
}

impl OneAtATime {
    /// `inner`, asked one question at a time (once: an interaction already wrapped stays).
    pub fn wrap(inner: Arc<dyn Interaction>) -> Arc<dyn Interaction> {
        if inner.one_at_a_time() {
            return inner;
        }
        Arc::new(OneAtATime {
            inner,
            asking: tokio::sync::Mutex::new(()),
        })
    }
}

#[async_trait]
impl Interaction for OneAtATime {
    fn attended(&self) -> bool {
        self.inner.attended()
    }

    fn one_at_a_time(&self) -> bool {
        true
    }

    async fn approve(&self, request: ApprovalRequest) -> Approval {
        // Dropped with the future: a question given up while it waits (Ctrl+C) is not asked.
        let _one = self.asking.lock().await;
        self.inner.approve(request).await
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::sync::oneshot;

    /// Answers each question when the test says, counting the questions open at once.
    #[derive(Default)]
    struct Held {
        open: AtomicUsize,
        most: AtomicUsize,
        answers: Mutex<VecDeque<oneshot::Receiver<Approval>>>,
        asked: Mutex<Vec<String>>,
    }

    #[async_trait]
    impl Interaction for Held {
        async fn approve(&self, request: ApprovalRequest) -> Approval {
            let open = self.open.fetch_add(1, Ordering::SeqCst) + 1;
            self.most.fetch_max(open, Ordering::SeqCst);
            self.asked.lock().push(request.call_id);
            let answer = self.answers.lock().pop_front();
            let answer = match answer {
                Some(answer) => answer.await.unwrap_or(Approval::Cancelled),
                None => Approval::No,
            };
            self.open.fetch_sub(1, Ordering::SeqCst);
            answer
        }
    }

    fn request(id: &str) -> ApprovalRequest {
        ApprovalRequest {
            call_id: id.into(),
            tool: "bash".into(),
            arguments: serde_json::Value::Null,
            preview: None,
            reason: "why".into(),
            scope: AnswerScope::Once,
            agent: None,
        }
    }

    /// Two questions raised together: the second waits until the first is answered, and
    /// each gets its own answer.
    #[tokio::test]
    async fn questions_raised_together_are_put_one_at_a_time() {
        let held = Arc::new(Held::default());
        let (first, first_answer) = oneshot::channel();
        let (second, second_answer) = oneshot::channel();
        held.answers.lock().extend([first_answer, second_answer]);
        let asking = OneAtATime::wrap(held.clone());
        assert!(Arc::ptr_eq(&OneAtATime::wrap(asking.clone()), &asking));
        let one = tokio::spawn({
            let asking = asking.clone();
            async move { asking.approve(request("one")).await }
        });
        while held.asked.lock().is_empty() {
            tokio::task::yield_now().await;
        }
        let two = tokio::spawn({
            let asking = asking.clone();
            async move { asking.approve(request("two")).await }
        });
        for _ in 0..100 {
            tokio::task::yield_now().await;
        }
        assert_eq!(
            *held.asked.lock(),
            ["one"],
            "the second was put while the first was open"
        );
        first.send(Approval::Yes).unwrap();
        assert_eq!(one.await.unwrap(), Approval::Yes);
        second.send(Approval::No).unwrap();
        assert_eq!(two.await.unwrap(), Approval::No);
        assert_eq!(*held.asked.lock(), ["one", "two"]);
        assert_eq!(held.most.load(Ordering::SeqCst), 1);
    }
}
