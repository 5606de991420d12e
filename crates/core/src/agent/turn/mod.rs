//! One turn of the agent: the person's input, then rounds (request, stream, assemble, run
//! the calls, send their results) until the model answers without calling a tool, a limit is
//! reached or the person interrupts.

pub(super) mod hook_points;
pub(super) mod mcp_tools;
pub(super) mod model_check;

use std::sync::Arc;

use futures::StreamExt;
use rein_llm::assemble::Assembler;
use rein_llm::{Message, Part, Role, StopReason, StreamEvent, Usage};
use tokio_util::sync::CancellationToken;

use super::calls::{self, EarlyStarts};
use super::guard::LoopGuard;
use super::runner::{CallEnv, Fatal};
use super::spend::CallKind;
use super::{Agent, AgentEvent, Events, TurnEnd, TurnError, TurnOutcome, TurnStop};
use crate::context::PromptAnchor;
use hook_points::AfterStop;

impl Agent {
    /// Runs one turn: the person's input, then model rounds and tool calls until the model is
    /// done. Cancelling `cancel` stops the stream, a question to the person or the running
    /// tools; the history stays valid (every tool call gets a result) whatever happens.
    pub async fn run_turn(
        &mut self,
        input: &str,
        events: &Events,
        cancel: CancellationToken,
    ) -> TurnOutcome {
        // Everything the front-end gets is masked: the model's text as it streams too.
        let events = &crate::secrets::EventMasker::wrap(&self.runner.secrets, events);
        if let Some(subagents) = &self.subagents {
            subagents.start_turn(events);
        }
        // A new request from the person: repeats are counted within one turn.
        self.guard = LoopGuard::default();
        self.context.reactive_streak = 0;
        self.todo_reminded = false;
        let mut outcome = TurnOutcome::new();
        let before = self.spend.totals();
        self.start_model_check();
        self.start_window_probe();
        // The checkpoint is taken while the first request goes: nothing changes the workspace
        // before the model answers, unless a UserPromptSubmit hook runs; the calls wait for it.
        self.start_checkpoint(Some(input), events).await;
        if self.runner.hooks.runs_on_prompt() {
            self.settle_checkpoint(events).await;
        }
        match self.submit_prompt(input, events, &cancel).await {
            Ok(message) => {
                self.push(message, events);
                self.run_rounds(events, cancel, &mut outcome).await;
            }
            Err(end) => outcome.end = end,
        }
        let after = self.spend.totals();
        outcome.usage_reported = after.reported_calls > before.reported_calls;
        outcome.cost_usd = match (before.cost_usd, after.cost_usd) {
            (Some(a), Some(b)) => Some(rein_llm::micro_dollars(b - a)),
            _ => None,
        };
        self.mask_outcome(&mut outcome);
        let stop = outcome.stop();
        if stop == TurnStop::Cancelled {
            // Background processes of this turn's commands end with it.
            self.tool_ctx.processes().kill_all().await;
        }
        self.checkpoint(None, events).await;
        // A blocked request left nothing in the conversation to record.
        if stop != TurnStop::PromptBlocked
            && let Some(t) = self.transcript.as_mut()
        {
            let recorded = t.record_turn_end(stop);
            self.note_recording(recorded, events);
        }
        events.emit(AgentEvent::TurnFinished { stop_reason: stop });
        outcome
    }

    /// Model rounds until the model is done (and the Stop hooks let the turn end), a limit
    /// is reached, or the person interrupts.
    pub(super) async fn run_rounds(
        &mut self,
        events: &Events,
        cancel: CancellationToken,
        outcome: &mut TurnOutcome,
    ) {
        let mut env = CallEnv {
            runner: Arc::clone(&self.runner),
            ctx: self.tool_ctx.with_cancel(cancel.clone()),
            events: events.clone(),
            cancel: cancel.clone(),
        };
        let mut continued = 0;
        loop {
            self.sync_mcp_tools(&mut env).await;
            let round = self.round(&env, outcome).await;
            // What summary calls used counts with the turn.
            let summaries = std::mem::take(&mut self.context.unreported_usage);
            outcome.usage += summaries;
            outcome.compaction_usage += summaries;
            let end = match round {
                RoundEnd::Continue => None,
                RoundEnd::Stop(end @ (TurnEnd::EndTurn | TurnEnd::MaxTokens)) => {
                    // A Stop hook may change files: the turn's checkpoint comes first.
                    self.settle_checkpoint(events).await;
                    match self.stop_hooks(&mut continued, events, &cancel).await {
                        AfterStop::End => match self.todo_reminder(&end) {
                            Some(message) => {
                                self.push(message, events);
                                None
                            }
                            None => Some(end),
                        },
                        AfterStop::Cancelled => Some(TurnEnd::Cancelled),
                        AfterStop::Continue(message) => {
                            self.push(message, events);
                            None
                        }
                    }
                }
                RoundEnd::Stop(end) => Some(end),
            };
            match end {
                Some(end) => {
                    outcome.end = end;
                    return;
                }
                None if outcome.rounds >= self.settings.max_rounds => {
                    outcome.end = TurnEnd::MaxRounds;
                    return;
                }
                None => {}
            }
        }
    }

    /// One model response and its tool calls.
    pub(super) async fn round(&mut self, env: &CallEnv, outcome: &mut TurnOutcome) -> RoundEnd {
        let events = &env.events;
        // The request must fit the window: compact first when it would not fit comfortably.
        if let Err(end) = self.prepare_context(events, &env.cancel).await {
            return RoundEnd::Stop(end);
        }
        // A request that would cross a spending limit is not sent; the history is whole
        // (every call answered), so the session can be continued with a higher limit.
        if let Err(reached) = self
            .spend
            .check(&self.settings.model, self.context.ledger.used())
        {
            return RoundEnd::Stop(TurnEnd::SpendingLimit(reached));
        }
        let sent = self.request.messages.len();
        // Call ids stay unique across the whole conversation (providers reject a reused one);
        // the set moves into the assembler and back, never rebuilt.
        let mut assembler = Assembler::with_taken_ids(std::mem::take(&mut self.call_ids));
        let mut early = EarlyStarts::new();
        let streamed = self
            .stream_response(env, &mut assembler, &mut early, outcome)
            .await;
        // Before the call is priced: the list may give the price.
        self.finish_model_check(events).await;
        if streamed.is_err() {
            self.count_unfinished(&assembler, outcome);
        }
        let finished = streamed.and_then(|()| {
            assembler.finish().map_err(|error| {
                early.abandon("Not answered: the model's response failed.", env);
                RoundEnd::Stop(TurnEnd::Failed(TurnError::Model(error)))
            })
        });
        self.call_ids = assembler.into_taken_ids();
        let response = match finished {
            Ok(response) => response,
            // "Too long" gets a compaction and another try.
            Err(end) => return self.after_failed_request(end, events, &env.cancel).await,
        };
        // Only a response the model finished counts as a round.
        outcome.rounds += 1;
        self.after_response();
        if let Some(usage) = response.usage {
            self.count_usage(usage, sent, events, outcome);
        }
        let message = without_empty_parts(response.message);
        let calls: Vec<rein_llm::ToolCall> = message
            .parts
            .iter()
            .filter_map(Part::as_tool_call)
            .cloned()
            .collect();
        let text = text_of(&message);
        events.emit(AgentEvent::ResponseFinished {
            round: outcome.rounds,
            text: text.clone(),
            tool_calls: calls.len(),
        });
        // The answer is the text of a response that asks for nothing more; text before tool
        // calls is narration, already shown as such.
        outcome.text = if calls.is_empty() {
            text
        } else {
            String::new()
        };
        let sendable = message
            .parts
            .iter()
            .any(|p| matches!(p, Part::Text { .. } | Part::ToolCall(_)));
        if sendable {
            self.push(message, events);
        } else {
            // Small local models often stop at once (llama-cpp-python with SmolLM2 did, one
            // run in two): an empty result with exit 0 looks like rein lost the answer.
            events.warn("the model ended its answer without any text or tool call");
        }
        if calls.is_empty() {
            return RoundEnd::Stop(match response.stop_reason {
                StopReason::MaxTokens => TurnEnd::MaxTokens,
                StopReason::EndTurn | StopReason::ToolUse | StopReason::Other(_) => {
                    TurnEnd::EndTurn
                }
            });
        }
        self.answer_calls(env, &calls, early, outcome).await
    }

    /// Runs the calls of a response and sends their results (with the round's notes) to
    /// the history; a fatal outcome ends the turn.
    pub(super) async fn answer_calls(
        &mut self,
        env: &CallEnv,
        calls: &[rein_llm::ToolCall],
        early: EarlyStarts,
        outcome: &mut TurnOutcome,
    ) -> RoundEnd {
        let events = &env.events;
        // The checkpoint before the turn is whole before a call can change a file; calls
        // that only look go on beside it (on a fast server the first round's reads would
        // otherwise wait for the first scan of the workspace).
        if !calls.iter().all(|call| env.leaves_workspace(call)) {
            self.settle_checkpoint(events).await;
        }
        let mut outcomes = calls::run_calls(env, calls, early, &mut self.guard).await;
        self.count_subagents(events, outcome);
        let updated = self.report_todos(events);
        // What goes to the model with the results: a reminder of a stale todo list, and
        // the background commands that ended.
        let notes = self
            .todos
            .after_round(updated)
            .into_iter()
            .chain(self.tool_ctx.background().take_finish_notices());
        if let Some(last) = outcomes.last_mut() {
            for note in notes {
                last.result.content.push_str("\n\n");
                last.result.content.push_str(&note);
            }
        }
        let fatal = outcomes
            .iter()
            .find_map(|o| o.fatal.clone())
            .or_else(|| env.cancel.is_cancelled().then_some(Fatal::Cancelled));
        let mut results = Message {
            role: Role::Tool,
            parts: outcomes
                .into_iter()
                .map(|o| Part::ToolResult(o.result))
                .collect(),
        };
        // No result may take more than its share of the window.
        self.fit_results(&mut results, calls, &env.cancel).await;
        self.push(results, events);
        match fatal {
            None => RoundEnd::Continue,
            Some(Fatal::Cancelled) => RoundEnd::Stop(TurnEnd::Cancelled),
            Some(Fatal::RepeatedCalls) => RoundEnd::Stop(TurnEnd::RepeatedCalls),
            Some(Fatal::Internal(message)) => {
                RoundEnd::Stop(TurnEnd::Failed(TurnError::Tool(message)))
            }
        }
    }

    /// Counts what one request of `sent` messages used: in the totals, in the context's
    /// ledger, in the transcript, and for the front-end.
    pub(super) fn count_usage(
        &mut self,
        usage: Usage,
        sent: usize,
        events: &Events,
        outcome: &mut TurnOutcome,
    ) {
        self.usage += usage;
        outcome.usage += usage;
        self.spend
            .record(CallKind::Round, &self.settings.model, &usage);
        self.context.ledger.observe(PromptAnchor {
            prompt_tokens: usage.prompt_tokens,
            messages: sent,
        });
        if let Some(t) = self.transcript.as_mut() {
            let recorded = t.record_usage(&self.settings.model, self.settings.provider, &usage);
            self.note_recording(recorded, events);
        }
        events.emit(AgentEvent::Usage {
            call: usage,
            total: self.usage,
        });
    }

    /// Streams one response into `assembler`, starting calls early where they may. Ends the
    /// round early when the person interrupts or the stream fails.
    pub(super) async fn stream_response(
        &mut self,
        env: &CallEnv,
        assembler: &mut Assembler,
        early: &mut EarlyStarts,
        outcome: &mut TurnOutcome,
    ) -> Result<(), RoundEnd> {
        let events = &env.events;
        let blind = (!self.tool_ctx.config().vision)
            .then(|| super::blind::without_images(&self.request))
            .flatten();
        let mut stream = self
            .provider
            .stream(blind.as_ref().unwrap_or(&self.request));
        loop {
            let next = tokio::select! {
                biased;
                () = env.cancel.cancelled() => {
                    early.abandon("Not answered: the person interrupted the response.", env);
                    // Keep what the person already saw; unfinished tool calls are dropped.
                    let text = assembler.text();
                    if !text.trim().is_empty() {
                        outcome.text.clone_from(&text);
                        self.push(Message { role: Role::Assistant, parts: vec![Part::Text { text }] }, events);
                    }
                    return Err(RoundEnd::Stop(TurnEnd::Cancelled));
                }
                next = stream.next() => next,
            };
            let event = match next {
                None => return Ok(()),
                Some(Ok(event)) => event,
                Some(Err(error)) => {
                    early.abandon("Not answered: the model's response failed.", env);
                    return Err(RoundEnd::Stop(TurnEnd::Failed(TurnError::Model(error))));
                }
            };
            match &event {
                StreamEvent::TextDelta { text } => {
                    events.emit(AgentEvent::TextDelta { text: text.clone() });
                }
                StreamEvent::ReasoningDelta { text } => {
                    events.emit(AgentEvent::ReasoningDelta { text: text.clone() });
                }
                StreamEvent::Retry {
                    attempt,
                    wait,
                    reason,
                } => {
                    early.abandon(
                        "Dropped: the response was cut off and is being requested again.",
                        env,
                    );
                    events.emit(AgentEvent::Retry {
                        attempt: *attempt,
                        wait: *wait,
                        reason: reason.clone(),
                    });
                }
                StreamEvent::Waiting { elapsed } => {
                    events.emit(AgentEvent::Waiting { elapsed: *elapsed });
                }
                StreamEvent::ReasoningSignature { .. }
                | StreamEvent::RedactedReasoning { .. }
                | StreamEvent::ToolCallDelta { .. }
                | StreamEvent::ToolCallEnd { .. }
                | StreamEvent::Usage(_)
                | StreamEvent::Finish { .. } => {}
            }
            for call in assembler.push(&event) {
                early.offer(env, call);
            }
        }
    }

    /// Counts what the sub-agents of this round used in the session's total (and the turn's),
    /// and records it apart from the agent's own calls.
    pub(super) fn count_subagents(&mut self, events: &Events, outcome: &mut TurnOutcome) {
        let Some(subagents) = &self.subagents else {
            return;
        };
        for (model, agent, usage) in subagents.take() {
            self.spend.record(CallKind::Subagent, &model, &usage);
            self.usage += usage;
            outcome.usage += usage;
            outcome.subagent_usage += usage;
            if let Some(t) = self.transcript.as_mut() {
                let recorded = t.record_subagent_usage(&model, &agent, &usage);
                self.note_recording(recorded, events);
            }
        }
    }

    /// Counts a response that ended before it finished (interrupted, failed): what the
    /// server reported of it, else its output estimated from what streamed.
    pub(super) fn count_unfinished(&mut self, assembler: &Assembler, outcome: &mut TurnOutcome) {
        match assembler.usage() {
            Some(usage) => {
                self.usage += usage;
                outcome.usage += usage;
                self.spend
                    .record(CallKind::Round, &self.settings.model, &usage);
            }
            None => {
                let chars = assembler.streamed_chars();
                if chars > 0 {
                    // About four characters a token: an estimate, and shown as one.
                    let tokens = (chars as u64).div_ceil(4);
                    outcome.estimated_output_tokens += tokens;
                    self.spend.record_estimate(&self.settings.model, tokens);
                }
            }
        }
    }

    /// Takes the checkpoint before a turn (`Some(prompt)`) or records what the turn changed
    /// (`None`), and waits for it. A failure is a warning.
    pub(super) async fn checkpoint(&mut self, before: Option<&str>, events: &Events) {
        self.start_checkpoint(before, events).await;
        self.settle_checkpoint(events).await;
    }

    /// Starts the checkpoint of [`Self::checkpoint`] off the async threads (a scan reads the
    /// disk), once the one before it is done; [`Self::settle_checkpoint`] waits for it.
    async fn start_checkpoint(&mut self, before: Option<&str>, events: &Events) {
        self.settle_checkpoint(events).await;
        // Before a turn, the threads its first tool calls will run on are made while the
        // model is asked, from the checkpoint's thread or one of their own.
        let handle = tokio::runtime::Handle::current();
        let warm = before.is_some();
        let Some(mut checkpoints) = self.checkpoints.take() else {
            if warm {
                drop(tokio::task::spawn_blocking(move || {
                    rein_tools::warm_threads(&handle);
                }));
            }
            return;
        };
        let line = self.transcript.as_ref().map_or(0, |t| t.lines());
        let prompt = before.map(str::to_owned);
        self.checkpoint_pending = Some(tokio::task::spawn_blocking(move || {
            if warm {
                rein_tools::warm_threads(&handle);
            }
            let warnings = match &prompt {
                Some(prompt) => checkpoints.before_turn(prompt, line),
                None => checkpoints.after_turn(),
            };
            (checkpoints, warnings)
        }));
    }

    /// Waits for the checkpoint being taken, if any, and tells what it had to say: before
    /// anything can change the workspace (a tool call, a hook, the turn's end).
    async fn settle_checkpoint(&mut self, events: &Events) {
        let Some(pending) = self.checkpoint_pending.take() else {
            return;
        };
        let warnings = match pending.await {
            Ok((checkpoints, warnings)) => {
                self.checkpoints = Some(checkpoints);
                warnings
            }
            Err(e) => vec![format!("checkpoints stopped: {e}")],
        };
        for message in std::mem::take(&mut self.checkpoint_warnings)
            .into_iter()
            .chain(warnings)
        {
            events.warn(message);
        }
    }

    /// Tells the front-end and the session file of a new todo list; whether there was one.
    pub(super) fn report_todos(&mut self, events: &Events) -> bool {
        let Some(todos) = self.todos.take_change() else {
            return false;
        };
        if let Some(t) = self.transcript.as_mut() {
            let recorded = t.record_todos(&todos);
            self.note_recording(recorded, events);
        }
        events.emit(AgentEvent::Todos { todos });
        true
    }

    /// The message that keeps a turn going once, when the model ends it with open items.
    pub(super) fn todo_reminder(&mut self, end: &TurnEnd) -> Option<Message> {
        if *end != TurnEnd::EndTurn || self.todo_reminded {
            return None;
        }
        let text = self.todos.end_of_turn_reminder()?;
        self.todo_reminded = true;
        Some(Message {
            role: Role::User,
            parts: vec![Part::Text { text }],
        })
    }
}

pub(super) enum RoundEnd {
    Continue,
    Stop(TurnEnd),
}

/// Drops empty text parts (some providers send them), keeping reasoning and calls.
fn without_empty_parts(mut message: Message) -> Message {
    message.parts.retain(|p| match p {
        // Anthropic rejects text blocks that are only whitespace.
        Part::Text { text } => !text.trim().is_empty(),
        Part::Reasoning {
            text,
            signature,
            redacted,
        } => !text.is_empty() || signature.is_some() || redacted.is_some(),
        Part::ToolCall(_) | Part::ToolResult(_) | Part::Image(_) => true,
    });
    message
}

fn text_of(message: &Message) -> String {
    message
        .parts
        .iter()
        .filter_map(|p| match p {
            Part::Text { text } => Some(text.as_str()),
            Part::Reasoning { .. } | Part::ToolCall(_) | Part::ToolResult(_) | Part::Image(_) => {
                None
            }
        })
        .collect()
}
