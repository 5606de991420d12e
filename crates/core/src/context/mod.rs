//! Context management: every request fits the model's context window, however long the
//! session, and compaction never loses the thread.
//!
//! **Accounting** ([`Ledger`]): the provider's count of the last request is the truth; the
//! messages added since are estimated ([`estimate`]), each once. **The window** ([`Window`]):
//! `context_window` from the configuration, else what the server says it runs the model with,
//! else rein's table, else a conservative default (with one warning). Thresholds are fractions
//! of the usable window: the window less a reserve for the answer.
//!
//! Before every request, cheapest first ([`next_step`]):
//! 1. the tool output budget (in the tool pipeline) keeps each result bounded;
//! 2. above half the usable window, old long tool results are **pruned** to their ends
//!    ([`prune`]), all at once so the prompt cache's prefix changes seldom;
//! 3. above the threshold (default 80%, `compact_threshold`; `auto_compact = false` turns
//!    this off), older turns are **summarised** by the model with a fixed template
//!    ([`summarize`]); kept word for word are the person's last request, the recent messages
//!    (at least 8, never a tool call without its result), the person's other requests up to a
//!    fifth of the window, and the pinned state (the todo list); the system prompt is never
//!    touched. A summary call that fails gives way to one rein writes itself;
//! 4. above 95%, the summary and the last 4 messages only;
//! 5. a provider that still says "too long" gets layer 4 and the request again, twice per
//!    request at most (the count starts again once a request is answered).
//!
//! Layers 4 and 5 never give up for want of older turns: when there is nothing to summarise
//! (a short conversation with one huge result), or the summary is not enough, the long tool
//! results they keep are cut to their ends too, the newest included. And no result takes more
//! than a quarter of the usable window when it enters the context ([`RESULT_SHARE`]).
//!
//! Each compaction is an event and a line of the session file ([`CompactionRecord`]), so a
//! resume rebuilds the same context while the file keeps the whole conversation.

pub mod estimate;
mod ledger;
mod pinned;
mod prune;
mod record;
mod report;
mod summarize;
mod summary;
mod tool;
mod window;

use serde::Serialize;

pub(crate) use ledger::Kind;
pub use ledger::{Ledger, PRUNE_KEEP_ROUNDS, PRUNE_MIN_CHARS, PromptAnchor};
pub use pinned::PinnedState;
pub(crate) use prune::{cut_kept_results, fit_result, prune_results};
pub use record::{CompactionLayer, CompactionMismatch, CompactionRecord, PrunedResult};
pub use report::{ContextReport, NextCompaction, percent_of};
pub use summarize::SUMMARY_SECTIONS;
pub(crate) use summarize::{summary_request, summary_without_model};
pub(crate) use summary::{SummaryParts, quoted_requests, summarised_count, summary_message};
pub use tool::{COMPACT_TOOL, CompactRequests, CompactTool, ContextUse};
pub use window::{
    DEFAULT_ANSWER_RESERVE_TOKENS, MIN_LEARNED_WINDOW_TOKENS, UNKNOWN_WINDOW_TOKENS, Window,
    WindowSource,
};

/// Summarising starts at this share of the usable window unless configured otherwise.
pub const DEFAULT_COMPACT_THRESHOLD: f64 = 0.8;
/// Old tool results are pruned from this share of the usable window.
pub const PRUNE_THRESHOLD: f64 = 0.5;
/// From this share, only the summary and the last few messages are kept.
pub const EMERGENCY_THRESHOLD: f64 = 0.95;
/// Pruning waits until it saves at least this share of the usable window, so that it
/// happens in steps (each changes the prompt-cache prefix) rather than a little every round.
pub const PRUNE_STEP: f64 = 0.2;
/// Near the compaction threshold a smaller saving is worth it (pruning costs less than a
/// summary); below this share of the usable window, no compaction is.
pub const MIN_GAIN: f64 = 0.05;
/// Messages a summary keeps word for word at the least.
pub const KEEP_RECENT_MESSAGES: usize = 8;
/// Messages an emergency compaction keeps.
pub const EMERGENCY_KEEP_MESSAGES: usize = 4;
/// The share of the window the person's quoted requests may take.
pub const PERSON_REQUESTS_SHARE: f64 = 0.2;
/// Times in a row one request is compacted and sent again because the provider refused it
/// as too long (the count starts again once a request is answered).
pub const MAX_REACTIVE_COMPACTIONS_PER_REQUEST: u32 = 2;
/// The share of the usable window one tool result may take when it enters the context: the
/// tool output budget, scaled to the window (a result over it is cut to its ends, the whole
/// saved to a file).
pub const RESULT_SHARE: f64 = 0.25;
/// The `compact` tool is refused below this share of the usable window: a summary would cost
/// a model call and save little.
pub const COMPACT_TOOL_MIN_USE: f64 = 0.2;
/// The smallest `max_tokens` a request asks for when the configured one is lowered to fit
/// the window (or the configured one, when smaller).
pub const ANSWER_FLOOR_TOKENS: u64 = 1024;
/// The longest summary asked for, in tokens (less on a small window).
pub const SUMMARY_MAX_TOKENS: u64 = 4096;

/// How context management behaves (`docs/config.md`).
#[derive(Debug, Clone, PartialEq)]
pub struct ContextSettings {
    /// `context_window`: the window to assume, whatever the model's table and the server say.
    pub window_tokens: Option<u64>,
    /// `auto_compact`: whether rein summarises on its own. Off, only pruning and the reaction
    /// to a refused request remain.
    pub auto_compact: bool,
    /// `compact_threshold`: the share of the usable window from which rein summarises.
    pub compact_threshold: f64,
}

impl Default for ContextSettings {
    fn default() -> Self {
        ContextSettings {
            window_tokens: None,
            auto_compact: true,
            compact_threshold: DEFAULT_COMPACT_THRESHOLD,
        }
    }
}

/// The token counts the layers start at, for one usable window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The window less the answer's reserve.
    pub usable: u64,
    /// Pruning starts here.
    pub prune_at: u64,
    /// Summarising starts here (`None`: `auto_compact` is off).
    pub compact_at: Option<u64>,
    /// The emergency layer starts here (`None`: `auto_compact` is off).
    pub emergency_at: Option<u64>,
}

impl Limits {
    /// The limits of `usable` tokens under `settings`.
    pub fn new(usable: u64, settings: &ContextSettings) -> Self {
        let share = |share: f64| (usable as f64 * share) as u64;
        Limits {
            usable,
            prune_at: share(PRUNE_THRESHOLD),
            compact_at: settings
                .auto_compact
                .then(|| share(settings.compact_threshold)),
            emergency_at: settings.auto_compact.then(|| share(EMERGENCY_THRESHOLD)),
        }
    }
}

/// What the context needs before the next request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Nothing: it fits comfortably.
    Nothing,
    /// Prune old tool results.
    Prune,
    /// Summarise older turns.
    Summarise,
    /// Keep only a summary and the last few messages.
    Emergency,
}

/// The cheapest step the context needs: pruning first when it is worth it (a big step, or
/// any real saving once a summary is near), then a summary, then the emergency. A few
/// comparisons, whatever the length of the conversation.
pub fn next_step(ledger: &Ledger, limits: &Limits) -> Step {
    let used = ledger.used();
    let share = |share: f64| ((limits.usable as f64 * share) as u64).max(1);
    let prunable = ledger.prunable_tokens();
    let near_summary = used
        >= limits
            .compact_at
            .unwrap_or(share(DEFAULT_COMPACT_THRESHOLD));
    let worth_pruning =
        prunable >= share(PRUNE_STEP) || (near_summary && prunable >= share(MIN_GAIN));
    if used >= limits.prune_at && worth_pruning {
        Step::Prune
    } else if limits.emergency_at.is_some_and(|at| used >= at) {
        Step::Emergency
    } else if limits.compact_at.is_some_and(|at| used >= at) {
        Step::Summarise
    } else {
        Step::Nothing
    }
}

/// Who wrote a summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SummaryAuthor {
    /// The model, as asked.
    Model,
    /// rein, because the model could not be asked or gave nothing.
    Rein,
}

/// What a compaction did, for the person (the `compaction` event).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CompactionInfo {
    /// The layer that made it.
    pub layer: CompactionLayer,
    /// The context's size before, in tokens (the provider's count where there was one).
    pub tokens_before: u64,
    /// Its estimated size after.
    pub tokens_after: u64,
    /// The usable window (the window less the answer's reserve).
    pub usable_window: u64,
    /// Messages the summary stands for (none when pruning).
    pub summarised_messages: usize,
    /// Recent messages kept word for word.
    pub kept_messages: usize,
    /// The person's requests kept word for word in the summary (besides those among the
    /// recent messages).
    pub quoted_requests: usize,
    /// Whether the person's last request is in the context word for word.
    pub last_request_kept: bool,
    /// Tool results cut to their ends.
    pub pruned_results: usize,
    /// The pinned state kept (the todo list), by name.
    pub pinned: Vec<String>,
    /// Who wrote the summary (none when pruning).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_by: Option<SummaryAuthor>,
    /// Why the model did not write it, when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary_error: Option<String>,
    /// What the summary was asked to keep in most detail (`/compact FOCUS`, the tool's
    /// `focus`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub focus: Option<String>,
}

#[cfg(test)]
mod tests {
    use rein_llm::{Message, Part, Role};

    use super::*;

    fn ledger_at(used: u64) -> Ledger {
        let mut ledger = Ledger::new(
            "",
            0,
            &[Message {
                role: Role::User,
                parts: vec![Part::Text { text: "x".into() }],
            }],
        );
        ledger.observe(PromptAnchor {
            prompt_tokens: used,
            messages: 1,
        });
        ledger
    }

    #[test]
    fn layers_start_at_their_share_of_the_usable_window() {
        let limits = Limits::new(10_000, &ContextSettings::default());
        assert_eq!(next_step(&ledger_at(4_999), &limits), Step::Nothing);
        // Above half with nothing worth pruning: nothing yet.
        assert_eq!(next_step(&ledger_at(7_999), &limits), Step::Nothing);
        assert_eq!(next_step(&ledger_at(8_000), &limits), Step::Summarise);
        assert_eq!(next_step(&ledger_at(9_500), &limits), Step::Emergency);
        let off = Limits::new(
            10_000,
            &ContextSettings {
                auto_compact: false,
                ..ContextSettings::default()
            },
        );
        assert_eq!(next_step(&ledger_at(9_900), &off), Step::Nothing);
        let early = Limits::new(
            10_000,
            &ContextSettings {
                compact_threshold: 0.6,
                ..ContextSettings::default()
            },
        );
        assert_eq!(next_step(&ledger_at(6_000), &early), Step::Summarise);
    }
}
