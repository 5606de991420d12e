//! The dim lines that sum a turn up (REPL) or a run (one-shot): tokens in and out, cached,
//! cost when the price is known, context used; and how to continue.

use std::time::Duration;

use rein_core::face::Usage;

use super::Style;
use super::result::human_duration;

/// What a turn's line shows.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TurnFigures<'a> {
    /// The model that answered.
    pub(crate) model: &'a str,
    /// Tokens of the turn.
    pub(crate) usage: &'a Usage,
    /// Context used and the usable window, in tokens, when known.
    pub(crate) context: Option<(u64, u64)>,
    /// How long the turn took.
    pub(crate) elapsed: Duration,
}

/// `↑ 12.3k in (10k cached) · ↓ 234 out · $0.0123 · context 23% of 128k · 4.2 s`.
pub(crate) fn turn_line(s: Style, figures: &TurnFigures<'_>) -> String {
    let mut parts = vec![tokens(figures.usage)];
    if let Some(cost) = cost(figures.model, figures.usage) {
        parts.push(cost);
    }
    if let Some((used, usable)) = figures.context
        && usable > 0
    {
        parts.push(format!(
            "context {}% of {}",
            (used * 100).div_ceil(usable).min(100),
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

/// `$0.0123`, when the model's price is known (or the provider said).
pub(crate) fn cost(model: &str, usage: &Usage) -> Option<String> {
    let usd = usage
        .cost_usd
        .or_else(|| rein_core::face::cost_usd(model, usage))?;
    Some(if usd >= 1.0 {
        format!("${usd:.2}")
    } else {
        format!("${usd:.4}")
    })
}

/// `950`, `12.3k`, `1.2M`.
pub(crate) fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..10_000 => format!("{:.1}k", n as f64 / 1e3),
        10_000..1_000_000 => format!("{}k", n / 1_000),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// The closing line of a one-shot run: model, rounds, tokens, cost, session and how to go on.
pub(crate) fn closing_line(
    s: Style,
    model: &str,
    rounds: u32,
    usage: &Usage,
    session_id: Option<&str>,
) -> String {
    let mut parts = vec![
        model.to_owned(),
        format!("{rounds} round{}", if rounds == 1 { "" } else { "s" }),
        tokens(usage),
    ];
    if let Some(cost) = cost(model, usage) {
        parts.push(cost);
    }
    if let Some(id) = session_id {
        parts.push(format!("session {id} (continue: rein -r {id})"));
    }
    s.dim(&parts.join(" · "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turn_line_with_everything_known() {
        let usage = Usage {
            prompt_tokens: 12_345,
            completion_tokens: 234,
            cached_prompt_tokens: 10_000,
            ..Usage::default()
        };
        let line = turn_line(
            Style::plain(),
            &TurnFigures {
                model: "unknown-model",
                usage: &usage,
                context: Some((29_000, 128_000)),
                elapsed: Duration::from_millis(4_200),
            },
        );
        assert_eq!(
            line,
            "↑ 12k in (10k cached) · ↓ 234 out · context 23% of 128k · 4.2 s"
        );
    }

    #[test]
    fn counts_read_short() {
        assert_eq!(count(950), "950");
        assert_eq!(count(1_234), "1.2k");
        assert_eq!(count(128_000), "128k");
        assert_eq!(count(1_500_000), "1.5M");
    }
}
