//! The dim lines that sum a turn up (REPL) or a run (one-shot): tokens in and out, cached,
//! cost when the price is known, context used; and how to continue.

use std::time::Duration;

use rein_core::face::{TurnOutcome, Usage};

use super::Style;
use super::result::human_duration;

/// What a turn's line shows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnFigures<'a> {
    /// The turn: its tokens, whether they were reported, its cost.
    pub(crate) outcome: &'a TurnOutcome,
    /// Context used and the usable window, in tokens, when known.
    pub(crate) context: Option<(u64, u64)>,
    /// How long the turn took.
    pub(crate) elapsed: Duration,
}

/// `↑ 12.3k in (10k cached) · ↓ 234 out · $0.0123 · context 23% of 128k · 4.2 s`.
pub(crate) fn turn_line(s: Style, figures: &TurnFigures<'_>) -> String {
    let mut parts = turn_spend(figures.outcome);
    if let Some((used, usable)) = figures.context
        && usable > 0
    {
        parts.push(format!(
            "context {}% of {}",
            rein_core::context::percent_of(used, usable),
            count(usable)
        ));
    }
    parts.push(human_duration(figures.elapsed));
    s.dim(&parts.join(" · "))
}

/// `↑ 12.3k in (10k cached) · ↓ 234 out`.
pub(crate) fn tokens(usage: &Usage) -> String {
    let mut text = format!("↑ {} in", count(usage.prompt_tokens));
    if usage.cached_prompt_tokens > 0 {
        text.push_str(&format!(" ({} cached)", count(usage.cached_prompt_tokens)));
    }
    text.push_str(&format!(" · ↓ {} out", count(usage.completion_tokens)));
    text
}

/// A turn's tokens and cost as far as they are known: `usage not reported by the server`
/// rather than zeros, and `~234 out` for output the server never counted.
fn turn_spend(outcome: &TurnOutcome) -> Vec<String> {
    let estimated = outcome.estimated_output_tokens;
    let mut parts = Vec::new();
    if outcome.usage_reported {
        parts.push(tokens(&outcome.usage));
        if estimated > 0 {
            parts.push(format!("~{} out (estimated)", count(estimated)));
        }
        if let Some(usd) = outcome.cost_usd {
            parts.push(dollars(usd));
        }
    } else if estimated > 0 {
        parts.push(format!(
            "~{} out (estimated: usage not reported by the server)",
            count(estimated)
        ));
    } else {
        parts.push("usage not reported by the server".to_owned());
    }
    parts
}

/// `$0.0123`, `$1.25`.
pub(crate) fn dollars(usd: f64) -> String {
    if usd >= 1.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    }
}

/// `950`, `12.3k`, `1.2M`.
pub(crate) fn count(n: u64) -> String {
    if n < 1_000 {
        return n.to_string();
    }
    // Rounded to the nearest at every scale: 19,500 is 20k, 9,960 is 10k.
    let tenths_of_k = n.saturating_add(50) / 100;
    if tenths_of_k < 100 {
        return format!("{}.{}k", tenths_of_k / 10, tenths_of_k % 10);
    }
    let kilos = n.saturating_add(500) / 1_000;
    if kilos < 1_000 {
        return format!("{kilos}k");
    }
    let tenths_of_m = n.saturating_add(50_000) / 100_000;
    format!("{}.{}M", tenths_of_m / 10, tenths_of_m % 10)
}

/// The closing line of a one-shot run: model, rounds, tokens, cost, session and how to go on.
pub(crate) fn closing_line(
    s: Style,
    model: &str,
    outcome: &TurnOutcome,
    session_id: Option<&str>,
) -> String {
    let rounds = outcome.rounds;
    let mut parts = vec![
        model.to_owned(),
        format!("{rounds} round{}", if rounds == 1 { "" } else { "s" }),
    ];
    parts.extend(turn_spend(outcome));
    if let Some(id) = session_id {
        parts.push(format!("session {id} (continue: rein -r {id})"));
    }
    s.dim(&parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(usage: Option<Usage>, estimated: u64, cost: Option<f64>) -> TurnOutcome {
        TurnOutcome {
            end: rein_core::agent::TurnEnd::EndTurn,
            text: String::new(),
            rounds: 1,
            usage: usage.unwrap_or_default(),
            subagent_usage: Usage::default(),
            compaction_usage: Usage::default(),
            usage_reported: usage.is_some(),
            estimated_output_tokens: estimated,
            cost_usd: cost,
        }
    }

    fn line(outcome: &TurnOutcome) -> String {
        turn_line(
            Style::plain(),
            &TurnFigures {
                outcome,
                context: Some((29_000, 128_000)),
                elapsed: Duration::from_millis(4_200),
            },
        )
    }

    #[test]
    fn a_turn_line_with_everything_known() {
        let usage = Usage {
            prompt_tokens: 12_345,
            completion_tokens: 234,
            cached_prompt_tokens: 10_000,
            ..Usage::default()
        };
        assert_eq!(
            line(&outcome(Some(usage), 0, None)),
            "↑ 12k in (10k cached) · ↓ 234 out · context 23% of 128k · 4.2 s"
        );
        assert_eq!(
            line(&outcome(Some(usage), 0, Some(0.0123))),
            "↑ 12k in (10k cached) · ↓ 234 out · $0.0123 · context 23% of 128k · 4.2 s"
        );
    }

    #[test]
    fn unknown_usage_is_said_never_zero() {
        assert_eq!(
            line(&outcome(None, 0, Some(0.0))),
            "usage not reported by the server · context 23% of 128k · 4.2 s"
        );
        assert_eq!(
            line(&outcome(None, 234, None)),
            "~234 out (estimated: usage not reported by the server) · context 23% of 128k · 4.2 s"
        );
    }

    #[test]
    fn the_context_share_is_rounded_as_context_rounds_it() {
        let figures = |used, usable| {
            let outcome = outcome(None, 0, None);
            turn_line(
                Style::plain(),
                &TurnFigures {
                    outcome: &outcome,
                    context: Some((used, usable)),
                    elapsed: Duration::from_millis(4_200),
                },
            )
        };
        // 15.1%: `/context` says 15%, and so does the line (it once said 16).
        assert!(figures(15_100, 100_000).contains("context 15% of 100k"));
        // A little use is never 0%.
        assert!(figures(3, 100_000).contains("context 1% of 100k"));
        assert!(figures(0, 100_000).contains("context 0% of 100k"));
        // Past the usable window (a compaction is due) as /context says it, not held at 100.
        assert!(figures(125_006, 119_808).contains("context 104% of 120k"));
    }

    #[test]
    fn counts_read_short() {
        assert_eq!(count(950), "950");
        assert_eq!(count(1_234), "1.2k");
        assert_eq!(count(128_000), "128k");
        assert_eq!(count(1_500_000), "1.5M");
        // To the nearest, never cut: the status line and /context say the same size.
        assert_eq!(count(1_249), "1.2k");
        assert_eq!(count(1_250), "1.3k");
        assert_eq!(count(9_949), "9.9k");
        assert_eq!(count(9_960), "10k");
        assert_eq!(count(19_500), "20k");
        assert_eq!(count(119_808), "120k");
        assert_eq!(count(999_499), "999k");
        assert_eq!(count(999_500), "1.0M");
        assert_eq!(count(u64::MAX), "18446744073709.5M");
    }
}
