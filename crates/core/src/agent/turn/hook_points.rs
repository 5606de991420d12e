//! Where the agent calls the hooks of a session and of a turn (those around tool calls are in
//! `runner.rs`): SessionStart and SessionEnd, called by whoever opens and closes the session;
//! UserPromptSubmit, before a request is recorded and sent; Stop, when the model answers
//! without calling a tool. A hook that runs when the person interrupts is stopped with its
//! processes.

use std::sync::Arc;

use rein_llm::{Message, Part, Role};
use tokio_util::sync::CancellationToken;

use crate::agent::{Agent, Events, TurnEnd};
use crate::hooks::{HookWarnings, PromptCheck, SessionStartSource, StopCheck};

/// How many times Stop hooks may make the model go on in one turn; past it the turn ends.
pub const MAX_STOP_HOOK_CONTINUATIONS: u32 = 5;

/// What the Stop hooks made of a finished answer.
pub(in crate::agent) enum AfterStop {
    /// The turn ends.
    End,
    /// The model goes on with this message.
    Continue(Message),
    /// The person interrupted.
    Cancelled,
}

impl Agent {
    /// Runs the SessionStart hooks, for a new session or a resumed one; what they give the
    /// model goes with the next request. Cancelling `cancel` stops them.
    pub async fn start_session(
        &mut self,
        source: SessionStartSource,
        events: &Events,
        cancel: &CancellationToken,
    ) {
        let hooks = Arc::clone(&self.runner.hooks);
        let mut warnings = Vec::new();
        let context = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            context = hooks.session_start(source, &mut warnings) => context,
        };
        emit_warnings(events, warnings);
        self.session_context = context;
    }

    /// Runs the SessionEnd hooks.
    pub async fn end_session(&self, events: &Events) {
        let mut warnings = Vec::new();
        self.runner.hooks.session_end(&mut warnings).await;
        emit_warnings(events, warnings);
    }

    /// The person's request as the model gets it, once the UserPromptSubmit hooks let it go
    /// (with what they and the SessionStart hooks add); the end of the turn when they block it
    /// or the person interrupts.
    pub(in crate::agent) async fn submit_prompt(
        &mut self,
        input: &str,
        events: &Events,
        cancel: &CancellationToken,
    ) -> Result<Message, TurnEnd> {
        let hooks = Arc::clone(&self.runner.hooks);
        let mut warnings = Vec::new();
        // A sub-agent's task is the parent model's, not the person's prompt.
        let check = if self.is_subagent() {
            Some(PromptCheck::Send { context: None })
        } else {
            tokio::select! {
                biased;
                () = cancel.cancelled() => None,
                check = hooks.user_prompt_submit(input, &mut warnings) => Some(check),
            }
        };
        emit_warnings(events, warnings);
        let context = match check {
            None => return Err(TurnEnd::Cancelled),
            Some(PromptCheck::Block { reason }) => return Err(TurnEnd::PromptBlocked { reason }),
            Some(PromptCheck::Send { context }) => context,
        };
        // Background commands that ended since the last request go with this one.
        let finished = self.tool_ctx.background().take_finish_notices();
        let parts = [Some(input.to_owned()), self.session_context.take(), context]
            .into_iter()
            .flatten()
            .chain(finished)
            .map(|text| Part::Text { text })
            .chain(
                std::mem::take(&mut self.pending_images)
                    .into_iter()
                    .map(Part::Image),
            )
            .collect();
        Ok(Message {
            role: Role::User,
            parts,
        })
    }

    /// Runs the Stop hooks after an answer without tool calls. `continued` counts the times
    /// they made the model go on in this turn.
    pub(in crate::agent) async fn stop_hooks(
        &self,
        continued: &mut u32,
        events: &Events,
        cancel: &CancellationToken,
    ) -> AfterStop {
        // A sub-agent's end is not the turn's: SubagentStop fires for it instead.
        if self.is_subagent() {
            return AfterStop::End;
        }
        let hooks = Arc::clone(&self.runner.hooks);
        let mut warnings = Vec::new();
        let check = tokio::select! {
            biased;
            () = cancel.cancelled() => None,
            check = hooks.stop(*continued > 0, &mut warnings) => Some(check),
        };
        emit_warnings(events, warnings);
        match check {
            None => AfterStop::Cancelled,
            Some(StopCheck::End) => AfterStop::End,
            Some(StopCheck::Continue { reason }) if *continued >= MAX_STOP_HOOK_CONTINUATIONS => {
                events.warn(format!(
                    "a Stop hook asked the model to go on again after \
                         {MAX_STOP_HOOK_CONTINUATIONS} times in this turn; the turn ends here. \
                         It said: {reason}"
                ));
                AfterStop::End
            }
            Some(StopCheck::Continue { reason }) => {
                *continued += 1;
                AfterStop::Continue(Message {
                    role: Role::User,
                    parts: vec![Part::Text { text: reason }],
                })
            }
        }
    }
}

fn emit_warnings(events: &Events, warnings: HookWarnings) {
    for message in warnings {
        events.warn(message);
    }
}
