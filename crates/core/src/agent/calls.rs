//! Running the tool calls of one model response: read-only calls concurrently (some already
//! while the response streams), edits and commands alone, results in call order.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::StreamExt;
use rein_llm::{ToolArguments, ToolCall, ToolResult};
use rein_tools::{ToolContext, ToolError, ToolKind, ToolRegistry};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::event::{AgentEvent, EventSink};
use super::guard::{LoopGuard, Verdict};

/// Read-only calls that may run at the same time.
pub(crate) const MAX_CONCURRENT_READS: usize = 8;

/// How long a cancelled tool may take to stop on its own (bash: TERM, then KILL after 2 s).
const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// How one call ended.
#[derive(Debug)]
pub(crate) struct CallOutcome {
    pub(crate) result: ToolResult,
    pub(crate) duration: Duration,
    /// Set when the call ended the turn.
    pub(crate) fatal: Option<Fatal>,
}

/// A tool failure that ends the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fatal {
    /// The person interrupted.
    Cancelled,
    /// rein itself failed.
    Internal(String),
    /// The model kept making the same call with the same result.
    RepeatedCalls,
}

/// What the agent needs to run calls.
#[derive(Clone)]
pub(crate) struct CallEnv {
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) ctx: ToolContext,
    pub(crate) cancel: CancellationToken,
}

impl CallEnv {
    /// Whether `call` only looks (or fails at once without effect), so it may run beside others.
    fn runs_concurrently(&self, call: &ToolCall) -> bool {
        match &call.arguments {
            ToolArguments::Invalid { .. } => true,
            ToolArguments::Json { .. } => match self.registry.get(&call.name) {
                Some(tool) => match tool.kind() {
                    ToolKind::ReadOnly => true,
                    ToolKind::Edit | ToolKind::Execute => false,
                },
                None => true,
            },
        }
    }

    /// Starts `call` on its own task, announcing it.
    fn spawn(&self, call: &ToolCall, sink: &dyn EventSink) -> JoinHandle<CallOutcome> {
        sink.emit(AgentEvent::ToolCallStarted {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: match &call.arguments {
                ToolArguments::Json { value } => value.clone(),
                ToolArguments::Invalid { raw, .. } => serde_json::Value::String(raw.clone()),
            },
        });
        let env = self.clone();
        let call = call.clone();
        tokio::spawn(async move { env.execute(&call).await })
    }

    async fn execute(&self, call: &ToolCall) -> CallOutcome {
        let started = Instant::now();
        let value = match &call.arguments {
            ToolArguments::Json { value } => value.clone(),
            ToolArguments::Invalid { raw, error } => {
                return CallOutcome {
                    result: error_result(call, invalid_arguments_message(&call.name, raw, error)),
                    duration: started.elapsed(),
                    fatal: None,
                };
            }
        };
        let mut run = std::pin::pin!(self.registry.call_value(&call.name, value, &self.ctx));
        let outcome = tokio::select! {
            biased;
            outcome = &mut run => outcome,
            () = self.cancel.cancelled() => {
                // A tool that watches the token (bash) stops its processes and returns what it
                // had; one that does not is dropped after the grace period.
                match tokio::time::timeout(CANCEL_GRACE, &mut run).await {
                    Ok(outcome) => outcome,
                    Err(_) => Err(ToolError::Cancelled { partial: String::new() }),
                }
            }
        };
        let (result, fatal) = match outcome {
            Ok(output) => (
                ToolResult {
                    call_id: call.id.clone(),
                    content: output.content,
                    is_error: output.is_error,
                },
                None,
            ),
            Err(ToolError::Model(message)) => (error_result(call, message), None),
            Err(ToolError::Cancelled { partial }) => {
                let mut content = String::from("Cancelled: the person interrupted this call.");
                if !partial.is_empty() {
                    content.push_str("\nOutput before the interruption:\n");
                    content.push_str(&partial);
                }
                (error_result(call, content), Some(Fatal::Cancelled))
            }
            Err(ToolError::Internal(message)) => (
                error_result(call, format!("rein failed to run this call: {message}")),
                Some(Fatal::Internal(message)),
            ),
        };
        CallOutcome {
            result,
            duration: started.elapsed(),
            fatal,
        }
    }
}

/// Read-only calls started while the response is still streaming.
pub(crate) struct EarlyStarts {
    started: Vec<(ToolCall, JoinHandle<CallOutcome>)>,
    /// Set once a call that must run alone has been seen: later calls wait for it.
    closed: bool,
}

impl EarlyStarts {
    pub(crate) fn new() -> Self {
        EarlyStarts {
            started: Vec::new(),
            closed: false,
        }
    }

    /// Starts `call` now if it and every call before it are read-only.
    pub(crate) fn offer(&mut self, env: &CallEnv, call: ToolCall, sink: &dyn EventSink) {
        if self.closed
            || self.started.len() >= MAX_CONCURRENT_READS
            || !env.runs_concurrently(&call)
        {
            self.closed = true;
            return;
        }
        let handle = env.spawn(&call, sink);
        self.started.push((call, handle));
    }

    /// Stops every started call because its response will not be answered (it is being
    /// requested again, or the turn ended), telling the front-end why, so that every call it
    /// saw start also ends.
    pub(crate) fn abandon(&mut self, why: &str, sink: &dyn EventSink) {
        for (call, handle) in self.started.drain(..) {
            handle.abort();
            sink.emit(AgentEvent::ToolResult {
                id: call.id.clone(),
                name: call.name.clone(),
                summary: why.to_owned(),
                content: why.to_owned(),
                is_error: true,
                duration: Duration::ZERO,
            });
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

    /// Takes the running call for `call`, if it was started with exactly these arguments.
    fn take(&mut self, call: &ToolCall) -> Option<JoinHandle<CallOutcome>> {
        let pos = self.started.iter().position(|(c, _)| c == call)?;
        Some(self.started.remove(pos).1)
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
    sink: &dyn EventSink,
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
            group.iter().map(|call| early.take(call)).collect();
        let mut results = futures::stream::iter(early_handles.into_iter().zip(group))
            .map(|(handle, call)| async move {
                let handle = handle.unwrap_or_else(|| env.spawn(call, sink));
                join(handle, call).await
            })
            .buffered(MAX_CONCURRENT_READS);
        let mut group_calls = group.iter();
        while let Some(mut outcome) = results.next().await {
            if let Some(call) = group_calls.next() {
                let kind = env.registry.get(&call.name).map(|tool| tool.kind());
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
            emit_result(sink, calls, &outcome);
            outcomes.push(outcome);
        }
        next = group_end;
    }
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
                duration: Duration::ZERO,
                fatal: Some(Fatal::Internal(message)),
            }
        }
    }
}

fn emit_result(sink: &dyn EventSink, calls: &[ToolCall], outcome: &CallOutcome) {
    let name = calls
        .iter()
        .find(|c| c.id == outcome.result.call_id)
        .map(|c| c.name.clone())
        .unwrap_or_default();
    sink.emit(AgentEvent::ToolResult {
        id: outcome.result.call_id.clone(),
        name,
        summary: summarize(&outcome.result.content),
        content: outcome.result.content.clone(),
        is_error: outcome.result.is_error,
        duration: outcome.duration,
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
        duration: Duration::ZERO,
        fatal: None,
    }
}

fn error_result(call: &ToolCall, content: String) -> ToolResult {
    ToolResult {
        call_id: call.id.clone(),
        content,
        is_error: true,
    }
}

/// What the model is told when its arguments were not JSON.
fn invalid_arguments_message(tool: &str, raw: &str, error: &str) -> String {
    const SHOWN_CHARS: usize = 2_000;
    let shown: String = raw.chars().take(SHOWN_CHARS).collect();
    let cut = if shown.len() < raw.len() {
        " …(cut)"
    } else {
        ""
    };
    format!(
        "The arguments for `{tool}` were not valid JSON ({error}), so the tool did not run.\n\
         You sent: {shown}{cut}\n\
         Send the call again with the arguments as one JSON object."
    )
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
