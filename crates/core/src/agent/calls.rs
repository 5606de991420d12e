//! Running the tool calls of one model response: read-only calls concurrently (some already
//! while the response streams), edits and commands alone, results in call order. Each call
//! goes through the pipeline in `runner.rs`.

use std::time::Duration;

use futures::StreamExt;
use rein_llm::{ToolCall, ToolResult};
use rein_tools::Display;
use tokio::task::JoinHandle;

use super::event::AgentEvent;
use super::guard::{LoopGuard, Verdict};
use super::runner::{CallEnv, CallOutcome, Fatal};

/// Read-only calls that may run at the same time.
pub(crate) const MAX_CONCURRENT_READS: usize = 8;

/// Read-only calls started while the response is still streaming.
pub(crate) struct EarlyStarts {
    started: Vec<(ToolCall, JoinHandle<CallOutcome>)>,
    /// Set once a call that may not start early has been seen: later calls wait for it.
    closed: bool,
}

impl EarlyStarts {
    pub(crate) fn new() -> Self {
        EarlyStarts {
            started: Vec::new(),
            closed: false,
        }
    }

    /// Starts `call` now if it and every call before it may start early.
    pub(crate) fn offer(&mut self, env: &CallEnv, call: ToolCall) {
        let check = if self.closed || self.started.len() >= MAX_CONCURRENT_READS {
            None
        } else {
            env.may_start_early(&call)
        };
        let Some(check) = check else {
            self.closed = true;
            return;
        };
        let handle = env.spawn(&call, Some(check));
        self.started.push((call, handle));
    }

    /// Stops every started call because its response will not be answered (it is being
    /// requested again, or the turn ended), telling the front-end why, so that every call it
    /// saw start also ends.
    pub(crate) fn abandon(&mut self, why: &str, env: &CallEnv) {
        for (call, handle) in self.started.drain(..) {
            handle.abort();
            env.events.emit(dropped_result(&call, why));
        }
        self.closed = false;
    }

    /// Drops every started call silently (the turn is being torn down).
    fn abort_all(&mut self) {
        for (_, handle) in self.started.drain(..) {
            handle.abort();
        }
        self.closed = false;
    }

    /// Takes the running call for `call`. One started with other arguments (more of them
    /// streamed after it was reported complete) is stopped, and its start answered, so the
    /// call runs again with the arguments the response holds.
    fn take(&mut self, call: &ToolCall, env: &CallEnv) -> Option<JoinHandle<CallOutcome>> {
        let pos = self.started.iter().position(|(c, _)| c.id == call.id)?;
        let (started, handle) = self.started.remove(pos);
        if started == *call {
            return Some(handle);
        }
        handle.abort();
        env.events.emit(dropped_result(
            &started,
            "Dropped: the call's arguments changed after it started; it runs again with them.",
        ));
        None
    }
}

/// The event answering the start of a call that was stopped before its result.
fn dropped_result(call: &ToolCall, why: &str) -> AgentEvent {
    AgentEvent::ToolResult {
        id: call.id.clone(),
        name: call.name.clone(),
        summary: why.to_owned(),
        content: why.to_owned(),
        is_error: true,
        duration: Duration::ZERO,
        display: Display::Text,
        changes: Vec::new(),
    }
}

impl Drop for EarlyStarts {
    fn drop(&mut self) {
        self.abort_all();
    }
}

/// Runs every call of a response (using the early starts), returning outcomes in call order.
/// After a call that ends the turn, the calls not yet run get a result that says so.
pub(crate) async fn run_calls(
    env: &CallEnv,
    calls: &[ToolCall],
    mut early: EarlyStarts,
    guard: &mut LoopGuard,
) -> Vec<CallOutcome> {
    let mut outcomes: Vec<CallOutcome> = Vec::with_capacity(calls.len());
    let mut next = 0;
    while next < calls.len() {
        let fatal = outcomes
            .iter()
            .find_map(|o| o.fatal.clone())
            .or_else(|| env.cancel.is_cancelled().then_some(Fatal::Cancelled));
        if let Some(fatal) = fatal {
            for call in &calls[next..] {
                outcomes.push(skipped(call, &fatal));
            }
            // A skipped call that had started early still gets its start answered.
            early.abandon("Not run: an earlier call ended the turn.", env);
            break;
        }
        let group_end = if env.runs_concurrently(&calls[next]) {
            next + calls[next..]
                .iter()
                .take_while(|c| env.runs_concurrently(c))
                .count()
        } else {
            next + 1
        };
        let group = &calls[next..group_end];
        // Early starts are a prefix of the group and at most MAX_CONCURRENT_READS long, so
        // they sit inside the first window; a call not yet started is spawned only when
        // `buffered` first polls it, which keeps at most that many running at once.
        let early_handles: Vec<Option<JoinHandle<CallOutcome>>> =
            group.iter().map(|call| early.take(call, env)).collect();
        // Owned calls: a closure over borrowed ones trips the compiler's Send check when this
        // runs inside a sub-agent's future.
        let pending: Vec<(Option<JoinHandle<CallOutcome>>, ToolCall)> = early_handles
            .into_iter()
            .zip(group.iter().cloned())
            .collect();
        let mut results = futures::stream::iter(pending)
            .map(|(handle, call)| {
                let env = env.clone();
                async move {
                    let handle = handle.unwrap_or_else(|| env.spawn(&call, None));
                    join(handle, &call).await
                }
            })
            .buffered(MAX_CONCURRENT_READS);
        let mut group_calls = group.iter();
        while let Some(mut outcome) = results.next().await {
            if let Some(call) = group_calls.next() {
                let kind = env.runner.registry.get(&call.name).map(|tool| tool.kind());
                let result = &outcome.result;
                match guard.observe(call, kind, &result.content, result.is_error) {
                    Verdict::Fine => {}
                    Verdict::Note(note) => outcome.result.content.push_str(&note),
                    Verdict::Stop(note) => {
                        outcome.result.content.push_str(&note);
                        outcome.fatal.get_or_insert(Fatal::RepeatedCalls);
                    }
                }
            }
            emit_result(env, calls, &outcome);
            outcomes.push(outcome);
        }
        next = group_end;
    }
    // Nothing started early may end without its start answered.
    early.abandon("Dropped: the response did not keep this call.", env);
    outcomes
}

async fn join(handle: JoinHandle<CallOutcome>, call: &ToolCall) -> CallOutcome {
    match handle.await {
        Ok(outcome) => outcome,
        Err(e) => {
            let message = if e.is_cancelled() {
                "the call was stopped".to_owned()
            } else {
                format!("the tool panicked: {e}")
            };
            CallOutcome {
                result: error_result(call, format!("rein failed to run this call: {message}")),
                display: Display::Text,
                changes: Vec::new(),
                duration: Duration::ZERO,
                fatal: Some(Fatal::Internal(message)),
            }
        }
    }
}

fn emit_result(env: &CallEnv, calls: &[ToolCall], outcome: &CallOutcome) {
    let name = calls
        .iter()
        .find(|c| c.id == outcome.result.call_id)
        .map(|c| c.name.clone())
        .unwrap_or_default();
    env.events.emit(AgentEvent::ToolResult {
        id: outcome.result.call_id.clone(),
        name,
        summary: summarize(&outcome.result.content),
        content: outcome.result.content.clone(),
        is_error: outcome.result.is_error,
        duration: outcome.duration,
        display: outcome.display.clone(),
        changes: outcome.changes.clone(),
    });
}

/// The result for a call that never ran because an earlier one ended the turn.
pub(crate) fn skipped(call: &ToolCall, why: &Fatal) -> CallOutcome {
    let content = match why {
        Fatal::Cancelled => "Not run: the person interrupted the turn before this call.".to_owned(),
        Fatal::Internal(_) => {
            "Not run: an earlier call failed inside rein and ended the turn.".to_owned()
        }
        Fatal::RepeatedCalls => {
            "Not run: rein stopped the turn because the model kept repeating a call.".to_owned()
        }
    };
    CallOutcome {
        result: error_result(call, content),
        display: Display::Text,
        changes: Vec::new(),
        duration: Duration::ZERO,
        fatal: None,
    }
}

fn error_result(call: &ToolCall, content: String) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        content,
        is_error: true,
        images: Vec::new(),
    }
}

/// The first line of a result, shortened, with a count of the rest.
pub(crate) fn summarize(content: &str) -> String {
    const SUMMARY_CHARS: usize = 120;
    let mut lines = content.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("(no output)");
    let mut summary: String = first.chars().take(SUMMARY_CHARS).collect();
    if summary.len() < first.len() {
        summary.push('…');
    }
    let rest = lines.count();
    if rest > 0 {
        summary.push_str(&format!(" (+{rest} lines)"));
    }
    summary
}
