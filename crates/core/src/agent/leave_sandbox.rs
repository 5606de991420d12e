//! After a command the sandbox refused something: the person may let that one command run
//! again, once, outside the sandbox (an approval); with no one to ask, the refusal is listed
//! as a permission denial. Nothing is remembered for the session: leaving the sandbox is
//! decided command by command.

use rein_llm::ToolCall;
use rein_tools::{Display, Preview, ToolOutput};

use super::call_args::json_arguments;
use super::event::AgentEvent;
use super::runner::{CallEnv, Checked, Fatal};
use crate::interaction::{AnswerScope, Approval, ApprovalRequest};

impl CallEnv {
    /// Step 5: runs the checked call, and 5b: what the sandbox refused asks the person, who
    /// may let it run once outside.
    pub(super) async fn run_checked(
        &self,
        call: &ToolCall,
        checked: Checked,
        leave_sandbox: bool,
    ) -> (ToolOutput, Option<Fatal>) {
        let mut ctx = checked.ctx(&self.ctx);
        if leave_sandbox {
            ctx = ctx.outside_sandbox();
        }
        let (mut output, mut fatal) = self
            .execute(call, &ctx, checked.call, checked.analyzed)
            .await;
        // 5b. What the sandbox refused asks the person, who may let it run once outside.
        if fatal.is_none()
            && let Some(refused) = sandbox_refusal(&output)
        {
            // Checked again as the second run would be (the first may have moved the
            // shell): the question shows the command line that run would run.
            let again = self.check(call);
            let preview = match &again {
                Ok(again) if self.runner.interaction.attended() => {
                    again.call.preview(&again.ctx(&self.ctx)).await
                }
                // No one to show it to, or no second run to show.
                Ok(_) | Err(_) => None,
            };
            match self.ask_outside_sandbox(call, &refused, preview).await {
                Outside::Rerun => match again {
                    Ok(again) => {
                        let ctx = again.ctx(&self.ctx).outside_sandbox();
                        (output, fatal) =
                            self.execute(call, &ctx, again.call, again.analyzed).await;
                    }
                    Err(message) => output = ToolOutput::error(message),
                },
                Outside::Keep => {}
                Outside::Declined(why) => output.content.push_str(&declined_note(why.as_deref())),
                Outside::Cancelled => fatal = Some(Fatal::Cancelled),
            }
        }
        (output, fatal)
    }

    /// After a command the sandbox refused: asks the person whether to run it once outside
    /// the sandbox (showing `preview`, the command line); with no one to ask, the refusal is
    /// listed as a permission denial (the result already tells the model).
    async fn ask_outside_sandbox(
        &self,
        call: &ToolCall,
        refused: &str,
        preview: Option<Preview>,
    ) -> Outside {
        let arguments = json_arguments(call);
        if !self.runner.interaction.attended() {
            self.events.emit(AgentEvent::PermissionDenied {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: arguments.clone(),
                reason: format!("{refused} (no one could be asked to let it run outside)"),
            });
            return Outside::Keep;
        }
        let _asking = tokio::select! {
            biased;
            () = self.cancel.cancelled() => return Outside::Cancelled,
            waited = self.runner.asking.lock() => waited,
        };
        // rein knows the refusal from the command's error lines, which the command wrote
        // itself: the question says so, and what a second run means.
        let reason = format!(
            "{refused} (as its error output tells); run the whole command again, once, outside \
             the sandbox, with your rights?"
        );
        self.events.emit(AgentEvent::ApprovalRequested {
            id: call.id.clone(),
            name: call.name.clone(),
            reason: reason.clone(),
        });
        let mut request = ApprovalRequest {
            call_id: call.id.clone(),
            tool: call.name.clone(),
            arguments: arguments.clone(),
            preview,
            reason,
            // Leaving the sandbox is never remembered: only yes, once, or no.
            scope: AnswerScope::Once,
            agent: self.runner.agent.clone(),
        };
        // The refusal comes from the command's error lines, which may name a secret (a path
        // made of one): the person sees the question masked, as every other.
        crate::secrets::mask_request(&self.runner.secrets, &mut request);
        let answer = tokio::select! {
            biased;
            () = self.cancel.cancelled() => Approval::Cancelled,
            answer = self.runner.interaction.approve(request) => answer,
        };
        match answer {
            // One command, once, whichever yes a front-end sent.
            Approval::Yes | Approval::YesForSession | Approval::YesForLine => Outside::Rerun,
            Approval::No => Outside::Declined(None),
            Approval::NoBecause(why) => Outside::Declined(Some(why)),
            Approval::Cancelled => Outside::Cancelled,
        }
    }
}

/// What the person said about running a refused command outside the sandbox.
enum Outside {
    /// Yes: run it again, once, outside the sandbox.
    Rerun,
    /// No one to ask: keep the refused result as it is.
    Keep,
    /// The person said no (with their reason, if given): the refused result, saying so.
    Declined(Option<String>),
    /// Ctrl+C while asked.
    Cancelled,
}

/// What the model is told after the person said no to running the command outside: the
/// result's offer ("they can let it run outside") has been answered, so it must not ask again.
fn declined_note(why: Option<&str>) -> String {
    let mut note = "\n\nrein asked the person, and they declined to run it again outside the \
                    sandbox: do not ask them again to let it out; take another way inside the \
                    workspace, or finish without it."
        .to_owned();
    if let Some(why) = why {
        note.push_str(&format!(" Their reason: {why}"));
    }
    note
}

/// What the sandbox refused a command, from its display payload.
pub(crate) fn sandbox_refusal(output: &ToolOutput) -> Option<String> {
    match &output.display {
        Display::Command {
            sandbox_refusal, ..
        } => sandbox_refusal.clone(),
        Display::Text
        | Display::FileRead { .. }
        | Display::FileEdit { .. }
        | Display::Search { .. }
        | Display::Listing { .. }
        | Display::WebPage { .. }
        | Display::Image { .. } => None,
    }
}
