//! Step 4 of a call: asking the person (one question at a time, through the front-end's
//! `Interaction`), and telling the front-end and the model of a refusal.

use std::borrow::Cow;

use rein_llm::ToolCall;
use rein_tools::ToolOutput;

use super::call_args::json_arguments;
use super::event::AgentEvent;
use super::runner::{Asked, CallEnv, Checked, Refusal};
use crate::interaction::{AnswerScope, Approval, ApprovalRequest};
use crate::permissions::{Decision, Rule};

impl CallEnv {
    /// Step 4: asks the person, one question at a time. A call that would run outside the
    /// sandbox if allowed (`leaves_sandbox`) is asked about once: leaving the sandbox is
    /// decided command by command, never for the session.
    pub(super) async fn ask(
        &self,
        call: &ToolCall,
        checked: &Checked,
        reason: &str,
        leaves_sandbox: bool,
    ) -> Asked {
        // A call that can only fail is not put to the person: the model gets the error now.
        if let Some(error) = checked.call.doomed(&checked.ctx(&self.ctx)).await {
            return Asked::Refused(Refusal {
                reason: format!("not asked, it would fail: {error}"),
                message: error,
            });
        }
        let view = checked.view(call);
        if !self.runner.interaction.attended() {
            let how = self.runner.policy.how_to_allow(&view);
            return Asked::Refused(Refusal {
                message: format!(
                    "rein did not run this call: {reason}, and this run has no one to ask (a \
                     one-shot or headless run). Do not retry it; finish what you can without it \
                     and tell the person what you wanted to do. To allow it, the person can {how}."
                ),
                // `how` says what to do ("allow it with …", "run rein with …").
                reason: format!("{reason}, and no one can be asked in this run; {how}"),
            });
        }
        let _asking = match self.runner.asking.try_lock() {
            Ok(free) => free,
            Err(_) => {
                // Queued behind another question: Ctrl+C meanwhile must not ask this one.
                let waited = tokio::select! {
                    biased;
                    () = self.cancel.cancelled() => return Asked::Cancelled,
                    waited = self.runner.asking.lock() => waited,
                };
                // An answer given while this call waited ("yes for the session") may cover it.
                if self.runner.policy.decide(&view) == Decision::Allow {
                    return Asked::Covered;
                }
                waited
            }
        };
        self.events.emit(AgentEvent::ApprovalRequested {
            id: call.id.clone(),
            name: call.name.clone(),
            reason: reason.to_owned(),
        });
        // A plain command offers its prefix (`bash(touch:*)`), the exact line as the
        // narrow choice; any other call its one session rule. A rule that holds a secret
        // value is not offered: the menu and `/permissions` would show it.
        let secrets = &self.runner.secrets;
        let shows_secret = |rule: &Rule| matches!(secrets.redact(&rule.to_string()), Cow::Owned(_));
        let exact = Rule::for_session(&view);
        let scope = match Rule::prefix_for_session(&view) {
            _ if leaves_sandbox => AnswerScope::Once,
            Some(prefix) if prefix != exact && !shows_secret(&prefix) => AnswerScope::Call {
                session_rule: prefix,
                line_rule: Some(exact).filter(|line| !shows_secret(line)),
            },
            _ if shows_secret(&exact) => AnswerScope::Once,
            _ => AnswerScope::Call {
                session_rule: exact,
                line_rule: None,
            },
        };
        let mut request = ApprovalRequest {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: json_arguments(call).clone(),
            preview: checked.call.preview(&checked.ctx(&self.ctx)).await,
            reason: reason.to_owned(),
            scope: scope.clone(),
            agent: self.runner.agent.clone(),
        };
        // The person sees the question masked, as the terminal shows everything else.
        crate::secrets::mask_request(secrets, &mut request);
        let answer = tokio::select! {
            biased;
            () = self.cancel.cancelled() => Approval::Cancelled,
            answer = self.runner.interaction.approve(request) => answer,
        };
        if let Some(rule) = scope.granted(&answer) {
            self.runner.policy.allow_for_session(rule.clone());
        }
        match answer {
            Approval::Yes | Approval::YesForSession | Approval::YesForLine => Asked::Answered,
            Approval::No => Asked::Refused(Refusal {
                message: "The person declined this call; it did not run. Do not retry it \
                          unchanged: ask or take another way."
                    .to_owned(),
                reason: "declined".to_owned(),
            }),
            Approval::NoBecause(why) => Asked::Refused(Refusal {
                message: format!(
                    "The person declined this call; it did not run. Their reason: {why}"
                ),
                reason: format!("declined: {why}"),
            }),
            Approval::Cancelled => Asked::Cancelled,
        }
    }

    /// Tells the front-end a call was refused; returns the result for the model.
    pub(super) fn denied(&self, call: &ToolCall, refusal: Refusal) -> ToolOutput {
        self.events.emit(AgentEvent::PermissionDenied {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: json_arguments(call).clone(),
            reason: refusal.reason,
        });
        ToolOutput::error(refusal.message)
    }
}
