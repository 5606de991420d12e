//! Compacting the context: pruning old results, and summarising older turns (with the
//! model, or without it when it cannot answer). A compaction is written to the session file
//! before the context changes, so a crash leaves the old context or the new one, never half.

use std::sync::Arc;

use rein_llm::{Message, Part, Role};
use tokio_util::sync::CancellationToken;

use super::cut::target;
use crate::agent::{Agent, AgentEvent, Events};
use crate::context::{
    self, CompactionInfo, CompactionLayer, CompactionRecord, EMERGENCY_KEEP_MESSAGES,
    KEEP_RECENT_MESSAGES, Kind, Ledger, Limits, PERSON_REQUESTS_SHARE, PrunedResult,
    SUMMARY_MAX_TOKENS, SummaryParts, Window,
};

/// Messages an automatic summary waits for (besides an earlier summary).
const MIN_NEW_MESSAGES_TO_SUMMARISE: usize = 4;

/// The person interrupted a compaction.
pub(in crate::agent) struct Interrupted;

impl Agent {
    /// Layer 2: every long result older than the last rounds cut to its ends, in one step.
    pub(in crate::agent) fn prune(
        &mut self,
        limits: &Limits,
        events: &Events,
    ) -> Option<CompactionInfo> {
        let boundary = self.context.ledger.prune_boundary();
        let pruned: Vec<PrunedResult> = (0..boundary)
            .filter(|&i| self.context.ledger.is_prunable(i))
            .flat_map(|i| context::prune_results(&self.request.messages[i]))
            .collect();
        let tokens_before = self.context.ledger.used();
        self.commit_cuts(
            CompactionLayer::Prune,
            pruned,
            tokens_before,
            limits,
            events,
        )
    }

    /// Commits `pruned`, cuts of results that stay in the context (nothing summarised), as
    /// a compaction of `layer`; `None` when there is none.
    pub(in crate::agent) fn commit_cuts(
        &mut self,
        layer: CompactionLayer,
        pruned: Vec<PrunedResult>,
        tokens_before: u64,
        limits: &Limits,
        events: &Events,
    ) -> Option<CompactionInfo> {
        if pruned.is_empty() {
            return None;
        }
        let record = CompactionRecord {
            layer,
            replaced: 0,
            with: Vec::new(),
            pruned,
            tokens_before,
            tokens_after: 0,
            usage: None,
        };
        let info = CompactionInfo {
            layer,
            tokens_before,
            tokens_after: 0,
            usable_window: limits.usable,
            summarised_messages: 0,
            kept_messages: self.request.messages.len(),
            quoted_requests: 0,
            last_request_kept: self.last_request_in_context(),
            pruned_results: record.pruned.len(),
            pinned: Vec::new(),
            summary_by: None,
            summary_error: None,
            focus: None,
        };
        self.commit(record, info, events)
    }

    /// Layers 3 and 4, the reaction to a refusal, `/compact` and the `compact` tool: older
    /// turns give way to a summary. `Ok(None)` when there is nothing to summarise.
    pub(in crate::agent) async fn summarise(
        &mut self,
        layer: CompactionLayer,
        focus: Option<&str>,
        events: &Events,
        cancel: &CancellationToken,
    ) -> Result<Option<CompactionInfo>, Interrupted> {
        let window = self.window(cancel).await;
        let usable = window.usable(self.settings.max_tokens);
        let limits = Limits::new(usable, &self.context.settings);
        // At the emergency, or refused, the request must shrink now: a summary of whatever
        // is older than the last few messages, and long results cut where that is not enough.
        let urgent = match layer {
            CompactionLayer::Emergency | CompactionLayer::Reactive => true,
            CompactionLayer::Summary
            | CompactionLayer::Manual
            | CompactionLayer::Tool
            | CompactionLayer::Prune => false,
        };
        let keep = if urgent {
            EMERGENCY_KEEP_MESSAGES
        } else {
            KEEP_RECENT_MESSAGES
        };
        let split = tail_start(&self.request.messages, keep);
        let new = split.saturating_sub(usize::from(
            self.context.ledger.kind(0) == Some(Kind::Summary),
        ));
        // Below the emergency, rein waits for a few new messages to summarise: a context
        // whose recent messages alone are large would otherwise be summarised every round.
        // At the emergency, refused, or asked, one new message is enough.
        let least = match layer {
            CompactionLayer::Summary => MIN_NEW_MESSAGES_TO_SUMMARISE,
            CompactionLayer::Emergency
            | CompactionLayer::Reactive
            | CompactionLayer::Manual
            | CompactionLayer::Tool
            | CompactionLayer::Prune => 1,
        };
        let parts = (split > 0 && new >= least).then(|| self.summary_parts(split, &window));
        // On its own, a summary must save enough to be worth its call; asked or refused, it
        // is made.
        let worth = parts.as_ref().is_some_and(|parts| match layer {
            CompactionLayer::Summary | CompactionLayer::Emergency => {
                worth_summarising(&self.context.ledger, split, parts, &window)
            }
            CompactionLayer::Reactive
            | CompactionLayer::Manual
            | CompactionLayer::Tool
            | CompactionLayer::Prune => true,
        });
        let Some(parts) = parts.filter(|_| worth) else {
            return Ok(if urgent {
                self.cut_kept_results(layer, &limits, events)
            } else {
                None
            });
        };
        let tokens_before = self.context.ledger.used();
        self.announce_compaction(layer, tokens_before, usable, events, cancel)
            .await?;

        let summary = self
            .ask_for_summary(split, focus, &window, usable, events, cancel)
            .await?;
        let pinned: Vec<(String, String)> = self
            .context
            .pinned
            .iter()
            .filter_map(|p| Some((p.name().to_owned(), p.render()?)))
            .collect();
        let message = context::summary_message(&SummaryParts {
            summary: &summary.text,
            summarised: parts.summarised,
            requests: &parts.requests,
            requests_left_out: parts.left_out,
            current: parts.current.as_deref(),
            pinned: &pinned,
        });

        // What the context costs then; above the target, long results among the kept
        // messages are cut too, oldest first, the newest included.
        let messages = &self.request.messages;
        let summary_tokens = context::estimate::message_tokens(&message);
        let fixed = self.context.ledger.system_tokens() + self.context.ledger.tools_tokens();
        let after = fixed + summary_tokens + self.context.ledger.tokens_of(split..messages.len());
        let (pruned, after) = self.cut_results(split, after, target(layer, &limits, tokens_before));
        let last_person = (0..messages.len())
            .rev()
            .find(|&i| self.context.ledger.kind(i) == Some(Kind::Person));
        let last_request_kept = last_person.is_some_and(|i| i >= split) || parts.current.is_some();

        let record = CompactionRecord {
            layer,
            replaced: split,
            with: vec![message],
            pruned,
            tokens_before,
            tokens_after: after,
            usage: summary.usage,
        };
        let info = CompactionInfo {
            layer,
            tokens_before,
            tokens_after: after,
            usable_window: usable,
            summarised_messages: parts.summarised,
            kept_messages: messages.len() - split,
            quoted_requests: parts.requests.len() + usize::from(parts.current.is_some()),
            last_request_kept,
            pruned_results: record.pruned.len(),
            pinned: pinned.into_iter().map(|(name, _)| name).collect(),
            summary_by: Some(summary.author),
            summary_error: summary.error,
            focus: focus.map(str::to_owned),
        };
        Ok(self.commit(record, info, events))
    }

    /// Tells the front-end a compaction starts, and runs the PreCompact hooks.
    async fn announce_compaction(
        &self,
        layer: CompactionLayer,
        tokens: u64,
        usable: u64,
        events: &Events,
        cancel: &CancellationToken,
    ) -> Result<(), Interrupted> {
        events.emit(AgentEvent::CompactionStarted {
            layer,
            tokens,
            usable_window: usable,
        });
        let hooks = Arc::clone(&self.runner.hooks);
        let mut warnings = Vec::new();
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(Interrupted),
            () = hooks.pre_compact(&mut warnings) => {}
        }
        for message in warnings {
            events.warn(message);
        }
        Ok(())
    }

    /// The person's requests the summary message of messages `..split` quotes.
    fn summary_parts(&self, split: usize, window: &Window) -> QuotedRequests {
        let messages = &self.request.messages;
        let mut earlier = Vec::new();
        let mut left_out = 0;
        let mut summarised = split;
        // The person's last request, when summarised, is quoted whatever its length: their
        // last message, or, when every message of theirs was summarised before, the newest
        // request the earlier summary quotes.
        let last_person = (0..messages.len())
            .rev()
            .find(|&i| self.context.ledger.kind(i) == Some(Kind::Person));
        let mut current = None;
        for (i, message) in messages[..split].iter().enumerate() {
            match self.context.ledger.kind(i) {
                Some(Kind::Summary) => {
                    let (quoted, skipped) = context::quoted_requests(message);
                    earlier.extend(quoted);
                    left_out += skipped;
                    summarised = summarised - 1 + context::summarised_count(message);
                    if last_person.is_none() {
                        current = earlier.pop();
                    }
                }
                Some(Kind::Person) if Some(i) == last_person => current = first_text(message),
                Some(Kind::Person) => earlier.extend(first_text(message)),
                Some(Kind::Assistant | Kind::ToolResults) | None => {}
            }
        }
        let mut budget = (window.tokens as f64 * PERSON_REQUESTS_SHARE) as u64;
        if let Some(current) = &current {
            budget = budget.saturating_sub(context::estimate::text_tokens(current));
        }
        // The newest first, while they fit.
        let mut kept = 0;
        for request in earlier.iter().rev() {
            let cost = context::estimate::text_tokens(request) + 16;
            if cost > budget {
                break;
            }
            budget -= cost;
            kept += 1;
        }
        let skipped = earlier.len() - kept;
        QuotedRequests {
            requests: earlier.split_off(skipped),
            left_out: left_out + skipped,
            current,
            summarised,
        }
    }

    /// Records a compaction, then applies it: a crash in between leaves a file that replays
    /// it on resume, a crash before leaves the context as it was.
    pub(in crate::agent) fn commit(
        &mut self,
        mut record: CompactionRecord,
        mut info: CompactionInfo,
        events: &Events,
    ) -> Option<CompactionInfo> {
        let mut messages = std::mem::take(&mut self.request.messages);
        // `apply` changes nothing when it fails.
        if let Err(reason) = record.apply(&mut messages) {
            // Built from this very context; a failure here is rein's own bug.
            self.request.messages = messages;
            events.warn(format!("a compaction was dropped: {reason}"));
            return None;
        }
        let changed: Vec<usize> = messages
            .iter()
            .enumerate()
            .filter(|(_, m)| {
                m.role == Role::Tool
                    && m.parts.iter().any(|part| {
                        matches!(part, Part::ToolResult(r)
                            if record.pruned.iter().any(|p| p.call_id == r.call_id))
                    })
            })
            .map(|(i, _)| i)
            .collect();
        self.context
            .ledger
            .rebuild(&messages, record.replaced, record.with.len(), &changed);
        let after = self.context.ledger.used();
        record.tokens_after = after;
        info.tokens_after = after;
        if let Some(t) = self.transcript.as_mut() {
            // A summary is the model's writing: the file gets it masked.
            let secrets = &self.runner.secrets;
            let masked: Vec<Option<Message>> = record
                .with
                .iter()
                .map(|m| {
                    crate::secrets::masked_message(secrets, m, crate::secrets::Reasoning::Mask)
                })
                .collect();
            let recorded = if masked.iter().any(Option::is_some) {
                let mut copy = record.clone();
                for (message, masked) in copy.with.iter_mut().zip(masked) {
                    if let Some(masked) = masked {
                        *message = masked;
                    }
                }
                t.record_compaction(&copy)
            } else {
                t.record_compaction(&record)
            };
            self.note_recording(recorded, events);
        }
        if !record.with.is_empty() {
            self.context.len_after_summary = Some(messages.len());
        }
        self.request.messages = messages;
        self.context.compactions += 1;
        if let Some(usage) = record.usage {
            events.emit(AgentEvent::Usage {
                call: usage,
                total: self.usage,
            });
        }
        events.emit(AgentEvent::Compaction(info.clone()));
        Some(info)
    }
}

/// The person's requests a summary quotes.
struct QuotedRequests {
    requests: Vec<String>,
    left_out: usize,
    current: Option<String>,
    summarised: usize,
}

/// Whether summarising messages `..split` would save enough to be worth a model call: the
/// summary carries the quoted requests and at least what an earlier summary said, so
/// summarising a few messages after a summary may save nothing.
fn worth_summarising(
    ledger: &Ledger,
    split: usize,
    parts: &QuotedRequests,
    window: &Window,
) -> bool {
    let head = ledger.tokens_of(0..split);
    let earlier = if ledger.kind(0) == Some(Kind::Summary) {
        ledger.tokens_of(0..1)
    } else {
        0
    };
    let quoted: u64 = parts
        .requests
        .iter()
        .chain(&parts.current)
        .map(|r| context::estimate::text_tokens(r))
        .sum();
    let written = (head / 3).min(SUMMARY_MAX_TOKENS.min(window.tokens / 5));
    let expected = earlier.max(written) + quoted;
    head.saturating_sub(expected) >= (window.tokens as f64 * context::MIN_GAIN) as u64
}

/// Where the kept messages start: at least `keep` from the end, moved back to a response of
/// the model, so that no tool result is parted from its call and the summary (the person's
/// turn) is followed by the model's, as chat templates that want turns to alternate demand.
/// 0 when nothing older would be left to summarise.
fn tail_start(messages: &[Message], keep: usize) -> usize {
    let mut start = messages.len().saturating_sub(keep);
    while start > 0 && messages[start].role != Role::Assistant {
        start -= 1;
    }
    start
}

/// The person's own words in a message of theirs: its first text (hooks add the rest).
fn first_text(message: &Message) -> Option<String> {
    message.parts.iter().find_map(|part| match part {
        Part::Text { text } => Some(text.clone()),
        _ => None,
    })
}

#[cfg(test)]
mod tests {
    use rein_llm::{Message, Part, Role};

    use super::tail_start;

    fn message(role: Role) -> Message {
        Message {
            role,
            parts: vec![Part::Text { text: "x".into() }],
        }
    }

    #[test]
    fn the_kept_messages_start_with_a_response() {
        use Role::{Assistant as A, Tool as T, User as U};
        let messages: Vec<Message> = [U, A, T, A, T, A, U, A, T, A]
            .into_iter()
            .map(message)
            .collect();
        // The 4th from the end is a tool result, then a person's request: back to a response.
        assert_eq!(tail_start(&messages, 4), 5);
        assert_eq!(tail_start(&messages, 3), 7);
        assert_eq!(tail_start(&messages, 9), 1);
        // Nothing before the first response: nothing to summarise.
        assert_eq!(tail_start(&messages, 10), 0);
    }
}
