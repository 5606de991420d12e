//! Step 5 of the tool pipeline ([`super::runner`]): the tool runs in the call's scope, its
//! progress masked on the way to the front-end, and cancelling gives it a grace period to
//! stop on its own.

use std::sync::Arc;
use std::time::Duration;

use rein_llm::ToolCall;
use rein_shell::Analyzed;
use rein_tools::{CallScope, PreparedCall, Progress, ToolContext, ToolError, ToolOutput};

use super::event::AgentEvent;
use super::runner::{CallEnv, Fatal};

/// How long a cancelled tool may take to stop on its own: bash sends TERM, then KILL after
/// its grace, and needs a moment more to collect what was printed.
const CANCEL_GRACE: Duration = rein_tools::bash::KILL_GRACE.saturating_add(Duration::from_secs(1));

impl CallEnv {
    /// Step 5: runs the tool, in the call's scope; cancelling gives it a grace period to
    /// stop on its own.
    pub(super) async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        prepared: Box<dyn PreparedCall>,
        shell: Option<Arc<Analyzed>>,
    ) -> (ToolOutput, Option<Fatal>) {
        let name = &call.name;
        let events = self.events.clone();
        let id = call.id.clone();
        let secrets = Arc::clone(&self.runner.secrets);
        let ctx = ctx.with_progress(Arc::new(move |progress| {
            let progress = match progress {
                Progress::Output {
                    bytes,
                    lines,
                    mut last_line,
                } => {
                    secrets.redact_in_place(&mut last_line);
                    Progress::Output {
                        bytes,
                        lines,
                        last_line,
                    }
                }
                Progress::Steps {
                    progress,
                    total,
                    mut message,
                } => {
                    if let Some(message) = message.as_mut() {
                        secrets.redact_in_place(message);
                    }
                    Progress::Steps {
                        progress,
                        total,
                        message,
                    }
                }
            };
            events.emit(AgentEvent::ToolProgress {
                id: id.clone(),
                progress,
            });
        }));
        let ctx = ctx.with_scope(CallScope {
            call_id: call.id.clone(),
            shell,
        });
        let mut run = std::pin::pin!(prepared.run(&ctx));
        let outcome = tokio::select! {
            biased;
            outcome = &mut run => outcome,
            () = self.cancel.cancelled() => {
                // A tool that watches the token (bash) stops its processes and returns what
                // it had; one that does not is dropped after the grace period.
                match tokio::time::timeout(CANCEL_GRACE, &mut run).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(ToolError::Cancelled { partial: String::new() }),
                }
            }
        };
        match outcome {
            Ok(output) => (output, None),
            Err(ToolError::Model(message)) => (ToolOutput::error(message), None),
            Err(ToolError::Cancelled { partial }) => {
                let mut content = String::from("Cancelled: the person interrupted this call.");
                if !partial.is_empty() {
                    content.push_str("\nOutput before the interruption:\n");
                    content.push_str(&partial);
                }
                (ToolOutput::error(content), Some(Fatal::Cancelled))
            }
            Err(ToolError::Internal(message)) => (
                ToolOutput::error(format!("rein failed to run `{name}`: {message}")),
                Some(Fatal::Internal(message)),
            ),
        }
    }
}
