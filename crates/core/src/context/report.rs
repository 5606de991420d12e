//! What `/context` shows: the window, how much of it is used and by what, and when the next
//! compaction happens.

use std::fmt;

use serde::Serialize;

use super::{CompactionLayer, Window};

/// `tokens` as a whole percentage of `of`, the one rounding every view of the context shares
/// (`/context`, the REPL's status line, compaction lines): to the nearest, except that a use
/// above nothing never shows as 0%. `of` of 0 gives 0.
pub fn percent_of(tokens: u64, of: u64) -> u64 {
    if of == 0 {
        return 0;
    }
    let nearest = (u128::from(tokens) * 200 + u128::from(of)) / (2 * u128::from(of));
    let nearest = u64::try_from(nearest).unwrap_or(u64::MAX);
    if nearest == 0 && tokens > 0 {
        1
    } else {
        nearest
    }
}

/// The context's use, for the person.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ContextReport {
    /// The model's window, and where that figure came from.
    pub window: Window,
    /// The room kept for the answer.
    pub answer_reserve: u64,
    /// What the request may take: the window less the reserve.
    pub usable: u64,
    /// What the next request takes, in tokens.
    pub used: u64,
    /// Whether `used` rests on the provider's count of the last request (the rest is
    /// estimated).
    pub measured: bool,
    /// The system prompt's share of `used` (project instructions included).
    pub system_prompt: u64,
    /// The tool descriptions'.
    pub tools: u64,
    /// The messages' (text and tool calls).
    pub messages: u64,
    /// The tool results'.
    pub tool_results: u64,
    /// Messages in the context.
    pub message_count: usize,
    /// Compactions so far in this session's run.
    pub compactions: u32,
    /// Old tool results are pruned from this many tokens.
    pub prune_at: u64,
    /// The next summary, and at how many tokens (`None`: `auto_compact` is off).
    pub next: Option<NextCompaction>,
}

/// The next layer that will act on its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct NextCompaction {
    /// Which.
    pub layer: CompactionLayer,
    /// At how many tokens of context.
    pub at_tokens: u64,
}

impl fmt::Display for ContextReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let percent = |tokens: u64| percent_of(tokens, self.usable);
        writeln!(
            f,
            "Context window: {} tokens (from {}); {} kept for the answer, {} usable",
            self.window.tokens, self.window.source, self.answer_reserve, self.usable
        )?;
        writeln!(
            f,
            "Used: {} tokens ({}% of usable){}",
            self.used,
            percent(self.used),
            if self.measured {
                ", as the provider counted the last request"
            } else {
                ", estimated"
            }
        )?;
        for (name, tokens) in [
            ("system prompt", self.system_prompt),
            ("tools", self.tools),
            ("messages", self.messages),
            ("tool results", self.tool_results),
        ] {
            writeln!(f, "  {name:<14} {tokens:>8} tokens ({}%)", percent(tokens))?;
        }
        writeln!(
            f,
            "{} messages; {} compactions so far",
            self.message_count, self.compactions
        )?;
        writeln!(
            f,
            "Old tool results are pruned from {} tokens ({}%)",
            self.prune_at,
            percent(self.prune_at)
        )?;
        match self.next {
            Some(next) => write!(
                f,
                "Next compaction: {} at {} tokens ({}%), {} tokens from now",
                match next.layer {
                    CompactionLayer::Prune => "old tool results pruned",
                    CompactionLayer::Emergency => "a summary and the last 4 messages",
                    CompactionLayer::Summary
                    | CompactionLayer::Reactive
                    | CompactionLayer::Manual
                    | CompactionLayer::Tool => "older turns summarised",
                },
                next.at_tokens,
                percent(next.at_tokens),
                next.at_tokens.saturating_sub(self.used)
            ),
            None => write!(
                f,
                "Next compaction: none on its own (auto_compact is off); /compact compacts now"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::percent_of;

    #[test]
    fn shares_round_to_the_nearest_and_a_little_is_never_nothing() {
        assert_eq!(percent_of(151, 1_000), 15);
        assert_eq!(percent_of(155, 1_000), 16);
        assert_eq!(percent_of(1, 1_000_000), 1);
        assert_eq!(percent_of(0, 1_000), 0);
        assert_eq!(percent_of(1_000, 1_000), 100);
        assert_eq!(percent_of(3_000, 1_000), 300);
        assert_eq!(percent_of(5, 0), 0);
        assert_eq!(percent_of(u64::MAX, 1), u64::MAX);
    }
}
