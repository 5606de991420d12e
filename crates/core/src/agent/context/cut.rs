//! Cutting the long tool results the context keeps, when a summary cannot shrink it enough
//! or there is nothing older to summarise: a short conversation with one huge result must
//! still fit. Each cut keeps the result's two ends and names the file holding the whole.

use rein_llm::Part;

use crate::agent::{Agent, Events};
use crate::context::{self, CompactionInfo, CompactionLayer, Kind, Limits, PrunedResult};

impl Agent {
    /// Layers 4 and 5 when there is nothing to summarise (a short conversation with a huge
    /// result) or a summary would not be worth its call: the long results the context keeps
    /// are cut to their ends, the newest included, until it is back at the target.
    pub(in crate::agent) fn cut_kept_results(
        &mut self,
        layer: CompactionLayer,
        limits: &Limits,
        events: &Events,
    ) -> Option<CompactionInfo> {
        let tokens_before = self.context.ledger.used();
        let (pruned, _) = self.cut_results(0, tokens_before, target(layer, limits, tokens_before));
        self.commit_cuts(layer, pruned, tokens_before, limits, events)
    }

    /// The long tool results among messages `from..` cut to their ends, oldest first, until
    /// the context (`tokens` now) is at `target`: the cuts, and the context's tokens after.
    pub(in crate::agent) fn cut_results(
        &self,
        from: usize,
        mut tokens: u64,
        target: u64,
    ) -> (Vec<PrunedResult>, u64) {
        let mut pruned = Vec::new();
        for (index, kept) in self.request.messages.iter().enumerate().skip(from) {
            if tokens <= target {
                break;
            }
            if self.context.ledger.kind(index) != Some(Kind::ToolResults) {
                continue;
            }
            let calls = index
                .checked_sub(1)
                .map_or(&[][..], |i| &self.request.messages[i].parts[..]);
            let tool = |id: &str| {
                calls
                    .iter()
                    .find_map(|part| match part {
                        Part::ToolCall(call) if call.id == id => Some(call.name.as_str()),
                        _ => None,
                    })
                    .unwrap_or("tool")
            };
            let cut = context::cut_kept_results(kept, tool, self.tool_ctx.config());
            if cut.is_empty() {
                continue;
            }
            let mut shorter = kept.clone();
            for part in &mut shorter.parts {
                if let Part::ToolResult(result) = part
                    && let Some(p) = cut.iter().find(|p| p.call_id == result.call_id)
                {
                    result.content.clone_from(&p.content);
                }
            }
            tokens = tokens.saturating_sub(self.context.ledger.tokens_of(index..index + 1))
                + context::estimate::message_tokens(&shorter);
            pruned.extend(cut);
        }
        (pruned, tokens)
    }

    /// Whether the person's last request is in the context: a message of theirs, or quoted
    /// in the summary at its start.
    pub(in crate::agent) fn last_request_in_context(&self) -> bool {
        let ledger = &self.context.ledger;
        (0..ledger.len()).any(|i| ledger.kind(i) == Some(Kind::Person))
            || (ledger.kind(0) == Some(Kind::Summary)
                && !context::quoted_requests(&self.request.messages[0])
                    .0
                    .is_empty())
    }
}

/// What a compaction brings the context (`before` tokens) down to, cutting long kept results
/// if a summary is not enough: the usable window; for layers 4 and 5, the compaction
/// threshold (80% of the usable window when automatic compaction is off), and after a
/// refusal also a quarter below what was refused, whatever rein thought of its size.
pub(in crate::agent) fn target(layer: CompactionLayer, limits: &Limits, before: u64) -> u64 {
    let urgent = limits.compact_at.unwrap_or(limits.usable * 4 / 5);
    match layer {
        CompactionLayer::Emergency => urgent,
        CompactionLayer::Reactive => urgent.min(before * 3 / 4),
        CompactionLayer::Summary
        | CompactionLayer::Manual
        | CompactionLayer::Tool
        | CompactionLayer::Prune => limits.usable,
    }
}
