//! What the agent's calls cost, counted as they come, and the spending limits checked before
//! each request (`--max-cost`, `--max-tokens`): a request that would cross one is not sent.
//!
//! Each call is priced when its usage arrives, with its own model (a sub-agent's may differ)
//! and the [`PriceBook`] (configured prices, then the endpoint's list, then rein's table);
//! the run's cost is the sum of the calls' costs, unknown as soon as one call's is.

use std::sync::Arc;

use rein_llm::{Price, PriceBook, Usage};
use serde::Serialize;

/// The limits of one run.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpendLimits {
    /// US dollars the run may spend (`--max-cost`, `max_cost`).
    pub max_cost: Option<f64>,
    /// Input plus output tokens the run may use (`--max-tokens`, `max_session_tokens`).
    pub max_tokens: Option<u64>,
}

/// Which limit stopped a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SpendLimit {
    /// `--max-cost`.
    Cost,
    /// `--max-tokens`.
    Tokens,
}

/// A request that was not sent because it would have crossed a limit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LimitReached {
    /// Which limit.
    pub limit: SpendLimit,
    /// The limit's value (dollars or tokens).
    pub allowed: f64,
    /// What the run had spent: dollars for the cost limit, tokens for the token limit.
    pub spent: f64,
    /// What the request would have added, estimated (same unit).
    pub request: f64,
}

impl LimitReached {
    /// For the person: what was spent, and how to go on.
    pub fn message(&self) -> String {
        match self.limit {
            SpendLimit::Cost => format!(
                "stopped at the cost limit: ${:.4} spent of ${:.4}, and the next request \
                 (about ${:.4}) would cross it; continue with: rein -c --max-cost {}",
                self.spent,
                self.allowed,
                self.request,
                suggest(self.allowed * 2.0)
            ),
            SpendLimit::Tokens => format!(
                "stopped at the token limit: {} tokens used of {}, and the next request (about \
                 {} tokens) would cross it; continue with: rein -c --max-tokens {}",
                self.spent as u64,
                self.allowed as u64,
                self.request as u64,
                (self.allowed as u64).saturating_mul(2)
            ),
        }
    }
}

/// A round number for a raised limit: `2`, `0.5`, `0.002`.
fn suggest(usd: f64) -> String {
    let text = format!("{usd:.6}");
    text.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// Where each call's tokens went, apart, as `/cost` shows them.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SpendTotals {
    /// Every call: the agent's own, its summaries and its sub-agents'.
    pub usage: Usage,
    /// Of `usage`, the summary calls of compactions.
    pub compactions: Usage,
    /// Of `usage`, what sub-agents used.
    pub subagents: Usage,
    /// The cost in USD of every call, whole micro-dollars; `None` when a call's price is
    /// unknown.
    pub cost_usd: Option<f64>,
    /// Whether any call reported its usage (a server that never does leaves it unknown).
    pub reported: bool,
    /// How many calls reported their usage.
    pub reported_calls: u64,
}

/// What kind of call a usage belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum CallKind {
    /// One of the agent's own rounds.
    Round,
    /// A compaction's summary.
    Compaction,
    /// A sub-agent's calls.
    Subagent,
}

/// The counting of one agent.
#[derive(Debug)]
pub(crate) struct Spend {
    prices: Arc<PriceBook>,
    pub(crate) limits: SpendLimits,
    totals: SpendTotals,
    /// Whether a call went unpriced.
    unpriced: bool,
    cost: f64,
    /// The previous round's prompt tokens, and whether the cache served part of it.
    last_prompt: Option<(u64, bool)>,
}

impl Spend {
    pub(crate) fn new(prices: Arc<PriceBook>, limits: SpendLimits) -> Self {
        Spend {
            prices,
            limits,
            totals: SpendTotals::default(),
            unpriced: false,
            cost: 0.0,
            last_prompt: None,
        }
    }

    /// The price book calls are priced with.
    pub(crate) fn prices(&self) -> &Arc<PriceBook> {
        &self.prices
    }

    /// Counts one call of `model`; returns its cost when known.
    pub(crate) fn record(&mut self, kind: CallKind, model: &str, usage: &Usage) -> Option<f64> {
        self.totals.usage += *usage;
        self.totals.reported = true;
        self.totals.reported_calls += 1;
        match kind {
            CallKind::Round => {
                self.last_prompt = Some((usage.prompt_tokens, usage.cached_prompt_tokens > 0));
            }
            CallKind::Compaction => {
                self.totals.compactions += *usage;
                // The next round's prefix is new: nothing of it is cached yet.
                self.last_prompt = None;
            }
            CallKind::Subagent => self.totals.subagents += *usage,
        }
        let cost = self.prices.call_cost(model, usage);
        match cost {
            Some(cost) => self.cost += cost,
            None => self.unpriced = true,
        }
        cost
    }

    /// Counts tokens no server reported (an interrupted response's output, estimated).
    pub(crate) fn record_estimate(&mut self, model: &str, output_tokens: u64) {
        let usage = Usage {
            completion_tokens: output_tokens,
            ..Usage::default()
        };
        if let Some(price) = self.prices.price_for(model) {
            self.cost += price.cost(&usage);
        }
    }

    /// What the agent has spent so far.
    pub(crate) fn totals(&self) -> SpendTotals {
        SpendTotals {
            cost_usd: (!self.unpriced).then(|| rein_llm::micro_dollars(self.cost)),
            ..self.totals
        }
    }

    /// Whether a request of about `input_tokens` to `model` may be sent.
    pub(crate) fn check(&self, model: &str, input_tokens: u64) -> Result<(), LimitReached> {
        if let Some(allowed) = self.limits.max_tokens {
            let spent = self.totals.usage.prompt_tokens + self.totals.usage.completion_tokens;
            if spent + input_tokens > allowed {
                return Err(LimitReached {
                    limit: SpendLimit::Tokens,
                    allowed: allowed as f64,
                    spent: spent as f64,
                    request: input_tokens as f64,
                });
            }
        }
        if let Some(allowed) = self.limits.max_cost {
            // Checked at start-up: a limit in dollars needs a price.
            let request = self
                .prices
                .price_for(model)
                .map_or(0.0, |price| self.estimate(&price, input_tokens));
            if self.cost + request > allowed {
                return Err(LimitReached {
                    limit: SpendLimit::Cost,
                    allowed,
                    spent: rein_llm::micro_dollars(self.cost),
                    request: rein_llm::micro_dollars(request),
                });
            }
        }
        Ok(())
    }

    /// The cost of sending `input_tokens`: where the cache served the previous request, its
    /// prefix is read from the cache and the rest written to it.
    fn estimate(&self, price: &Price, input_tokens: u64) -> f64 {
        let cached = match self.last_prompt {
            Some((prompt, true)) => prompt.min(input_tokens),
            Some((_, false)) | None => 0,
        };
        let written = if price.cache_write_per_mtok.is_some() {
            input_tokens - cached
        } else {
            0
        };
        price.cost(&Usage {
            prompt_tokens: input_tokens,
            cached_prompt_tokens: cached,
            cache_creation_tokens: written,
            ..Usage::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spend(limits: SpendLimits) -> Spend {
        Spend::new(Arc::new(PriceBook::default()), limits)
    }

    #[test]
    fn a_request_that_would_cross_the_token_limit_is_refused() {
        let mut s = spend(SpendLimits {
            max_tokens: Some(1_000),
            ..SpendLimits::default()
        });
        assert!(s.check("m", 900).is_ok());
        s.record(
            CallKind::Round,
            "m",
            &Usage {
                prompt_tokens: 600,
                completion_tokens: 100,
                ..Usage::default()
            },
        );
        let reached = s.check("m", 301).unwrap_err();
        assert_eq!(reached.limit, SpendLimit::Tokens);
        assert!(
            reached.message().contains("700 tokens used of 1000"),
            "{}",
            reached.message()
        );
        assert!(reached.message().contains("rein -c --max-tokens 2000"));
        assert!(s.check("m", 300).is_ok());
    }

    #[test]
    fn the_cost_estimate_counts_the_cached_prefix_at_the_read_price() {
        let mut s = spend(SpendLimits {
            max_cost: Some(0.01),
            ..SpendLimits::default()
        });
        // claude-haiku-4-5: $1 in, writes $1.25, reads $0.10 per million.
        assert!(s.check("claude-haiku-4-5", 7_000).is_ok()); // 7000 × 1.25e-6 = 0.00875
        assert!(s.check("claude-haiku-4-5", 9_000).is_err());
        s.record(
            CallKind::Round,
            "claude-haiku-4-5",
            &Usage {
                prompt_tokens: 7_000,
                cache_creation_tokens: 7_000,
                ..Usage::default()
            },
        );
        // Nothing was read from the cache yet: the next request is all writes.
        assert!(s.check("claude-haiku-4-5", 7_500).is_err());
        s.record(
            CallKind::Round,
            "claude-haiku-4-5",
            &Usage {
                prompt_tokens: 0,
                cached_prompt_tokens: 1,
                ..Usage::default()
            },
        );
        let totals = s.totals();
        assert_eq!(totals.cost_usd, Some(0.008_75));
        assert!(totals.reported);
    }

    #[test]
    fn one_unpriced_call_makes_the_cost_unknown_and_parts_stay_apart() {
        let mut s = spend(SpendLimits::default());
        let usage = Usage {
            prompt_tokens: 10,
            ..Usage::default()
        };
        s.record(CallKind::Compaction, "gpt-4o", &usage);
        s.record(CallKind::Subagent, "gpt-4o", &usage);
        assert_eq!(s.totals().cost_usd, Some(0.00005));
        s.record(CallKind::Round, "no-such-model", &usage);
        let totals = s.totals();
        assert_eq!(totals.cost_usd, None);
        assert_eq!(totals.usage.prompt_tokens, 30);
        assert_eq!(totals.compactions.prompt_tokens, 10);
        assert_eq!(totals.subagents.prompt_tokens, 10);
    }

    #[test]
    fn limits_suggest_a_raise() {
        assert_eq!(suggest(2.0), "2");
        assert_eq!(suggest(0.002), "0.002");
    }
}
