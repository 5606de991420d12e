//! What a call costs, for the models whose prices rein knows.
//!
//! Prices are list prices in USD per million tokens, for the first pricing tier where a
//! provider has several (Qwen's by prompt length). A model that is not listed has no price:
//! rein says "unknown" rather than guess from a similar name.

use std::collections::HashMap;

use parking_lot::Mutex;

use crate::{CacheTtl, Usage};

/// The prices of one model, in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Price {
    /// Uncached input.
    pub input_per_mtok: f64,
    /// Output, reasoning included.
    pub output_per_mtok: f64,
    /// Input read from the prompt cache.
    pub cached_input_per_mtok: f64,
    /// Input written to the prompt cache, where that is billed apart (Anthropic).
    pub cache_write_per_mtok: Option<f64>,
}

const fn p(input: f64, output: f64, cached: f64) -> Price {
    Price {
        input_per_mtok: input,
        output_per_mtok: output,
        cached_input_per_mtok: cached,
        cache_write_per_mtok: None,
    }
}

/// Anthropic: cache reads at a tenth of the input price, 5-minute cache writes at 1.25 times.
const fn anthropic(input: f64, output: f64) -> Price {
    Price {
        input_per_mtok: input,
        output_per_mtok: output,
        cached_input_per_mtok: input / 10.0,
        cache_write_per_mtok: Some(input * 1.25),
    }
}

/// The table: exact model names as the providers' APIs spell them.
const PRICES: &[(&str, Price)] = &[
    // OpenAI
    ("gpt-4o", p(2.50, 10.00, 1.25)),
    ("gpt-4o-mini", p(0.15, 0.60, 0.075)),
    ("gpt-4.1", p(2.00, 8.00, 0.50)),
    ("gpt-4.1-mini", p(0.40, 1.60, 0.10)),
    ("gpt-4.1-nano", p(0.10, 0.40, 0.025)),
    ("gpt-5", p(1.25, 10.00, 0.125)),
    ("gpt-5-mini", p(0.25, 2.00, 0.025)),
    ("gpt-5-nano", p(0.05, 0.40, 0.005)),
    ("o3", p(2.00, 8.00, 0.50)),
    ("o3-mini", p(1.10, 4.40, 0.55)),
    ("o4-mini", p(1.10, 4.40, 0.275)),
    // Anthropic
    ("claude-opus-4-1", anthropic(15.00, 75.00)),
    ("claude-opus-4", anthropic(15.00, 75.00)),
    ("claude-opus-4-5", anthropic(5.00, 25.00)),
    ("claude-sonnet-4-5", anthropic(3.00, 15.00)),
    ("claude-sonnet-4", anthropic(3.00, 15.00)),
    ("claude-3-7-sonnet", anthropic(3.00, 15.00)),
    ("claude-haiku-4-5", anthropic(1.00, 5.00)),
    ("claude-3-5-haiku", anthropic(0.80, 4.00)),
    // DeepSeek (V3.2 prices; both names serve it)
    ("deepseek-chat", p(0.28, 0.42, 0.028)),
    ("deepseek-reasoner", p(0.28, 0.42, 0.028)),
    // Qwen (Alibaba Cloud international; implicit cache hits at 20% of input)
    ("qwen3-max", p(1.20, 6.00, 0.24)),
    ("qwen-max", p(1.60, 6.40, 0.32)),
    ("qwen-plus", p(0.40, 1.20, 0.08)),
    ("qwen-turbo", p(0.05, 0.20, 0.01)),
    ("qwen3-coder-plus", p(1.00, 5.00, 0.20)),
    // Kimi (Moonshot)
    ("kimi-k2-0905-preview", p(0.60, 2.50, 0.15)),
    ("kimi-k2-0711-preview", p(0.60, 2.50, 0.15)),
    ("kimi-k2-thinking", p(0.60, 2.50, 0.15)),
    ("kimi-k2-turbo-preview", p(1.15, 8.00, 0.15)),
    // GLM (Z.ai)
    ("glm-4.6", p(0.60, 2.20, 0.11)),
    ("glm-4.5", p(0.60, 2.20, 0.11)),
    ("glm-4.5-air", p(0.20, 1.10, 0.03)),
];

/// Every model in the table.
#[cfg(test)]
pub(crate) fn priced_models() -> impl Iterator<Item = &'static str> {
    PRICES.iter().map(|(name, _)| *name)
}

/// The price of `model`, if known.
///
/// Matching is exact after removing, in turn: a router's `vendor/` prefix (`openai/gpt-4o`),
/// and a date or `-latest` suffix (`gpt-4o-2024-08-06`, `claude-sonnet-4-5-20250929`,
/// `qwen-plus-latest`). So `gpt-4o-mini` never gets `gpt-4o`'s price, nor
/// `gpt-4o-audio-preview` any price at all.
pub fn price_for(model: &str) -> Option<Price> {
    let lower = model.trim().to_ascii_lowercase();
    let name = lower.rsplit_once('/').map_or(lower.as_str(), |(_, n)| n);
    lookup(name).or_else(|| strip_version_suffix(name).and_then(lookup))
}

fn lookup(name: &str) -> Option<Price> {
    PRICES.iter().find(|(n, _)| *n == name).map(|(_, p)| *p)
}

/// `name` without a trailing `-YYYY-MM-DD`, `-YYYYMMDD` or `-latest`.
pub(crate) fn strip_version_suffix(name: &str) -> Option<&str> {
    if let Some(base) = name.strip_suffix("-latest") {
        return Some(base);
    }
    let (base, last) = name.rsplit_once('-')?;
    if last.len() == 8 && last.bytes().all(|b| b.is_ascii_digit()) {
        return Some(base);
    }
    // -YYYY-MM-DD: three dash-separated numeric groups of 4, 2 and 2 digits.
    let (rest, month) = base.rsplit_once('-')?;
    let (base, year) = rest.rsplit_once('-')?;
    let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
    (digits(year, 4) && digits(month, 2) && digits(last, 2)).then_some(base)
}

impl Price {
    /// The cost of `usage` in USD, cache writes at the five-minute rate.
    pub fn cost(&self, usage: &Usage) -> f64 {
        self.cost_with_ttl(usage, CacheTtl::FiveMinutes)
    }

    /// The cost of `usage` in USD. Prompt tokens include the cached and cache-written ones,
    /// which are billed at their own rates: a write to the one-hour cache costs twice the
    /// input price where writes are billed apart.
    pub fn cost_with_ttl(&self, usage: &Usage, ttl: CacheTtl) -> f64 {
        let write_price = match (self.cache_write_per_mtok, ttl) {
            (None, _) => self.input_per_mtok,
            (Some(five_minutes), CacheTtl::FiveMinutes) => five_minutes,
            (Some(_), CacheTtl::OneHour) => self.input_per_mtok * ttl.write_multiplier(),
        };
        let cached = usage.cached_prompt_tokens.min(usage.prompt_tokens);
        let written = usage
            .cache_creation_tokens
            .min(usage.prompt_tokens - cached);
        let plain = usage.prompt_tokens - cached - written;
        let per = |tokens: u64, price: f64| tokens as f64 * price / 1_000_000.0;
        per(plain, self.input_per_mtok)
            + per(cached, self.cached_input_per_mtok)
            + per(written, write_price)
            + per(usage.completion_tokens, self.output_per_mtok)
    }
}

/// Rounds a cost to whole micro-dollars: sums of float prices print as
/// `0.019725000000000003` otherwise.
pub fn micro_dollars(usd: f64) -> f64 {
    (usd * 1e6).round() / 1e6
}

/// Where a model's price comes from, most trusted first: the configuration
/// (`[pricing."MODEL"]`), then what the endpoint's model list says (LiteLLM, OpenRouter), then
/// rein's table. A cost the endpoint reports for a call (a gateway's `usage.cost`) is the bill
/// itself and wins over every price.
#[derive(Debug, Default)]
pub struct PriceBook {
    configured: HashMap<String, Price>,
    listed: Mutex<HashMap<String, Price>>,
    ttl: CacheTtl,
}

impl PriceBook {
    /// Prices configured by model name (matched without regard to case), cache writes
    /// billed for `ttl`.
    pub fn new(configured: impl IntoIterator<Item = (String, Price)>, ttl: CacheTtl) -> Self {
        PriceBook {
            configured: configured
                .into_iter()
                .map(|(model, price)| (model.trim().to_ascii_lowercase(), price))
                .collect(),
            listed: Mutex::new(HashMap::new()),
            ttl,
        }
    }

    /// Remembers the price the endpoint lists for `model`.
    pub fn learn(&self, model: &str, price: Price) {
        self.listed
            .lock()
            .insert(model.trim().to_ascii_lowercase(), price);
    }

    /// The price of `model`, if any source knows it.
    pub fn price_for(&self, model: &str) -> Option<Price> {
        let key = model.trim().to_ascii_lowercase();
        self.configured
            .get(&key)
            .copied()
            .or_else(|| self.listed.lock().get(&key).copied())
            .or_else(|| price_for(model))
    }

    /// The cost of one call of `model` in USD, in whole micro-dollars: what the endpoint
    /// reported, else the usage at the model's price; `None` when neither is known.
    pub fn call_cost(&self, model: &str, usage: &Usage) -> Option<f64> {
        usage
            .cost_usd
            .or_else(|| {
                self.price_for(model)
                    .map(|price| price.cost_with_ttl(usage, self.ttl))
            })
            .map(micro_dollars)
    }
}

/// The cost of `usage` on `model` in USD: the cost the provider reported (a gateway's
/// `usage.cost`, the bill itself), else from rein's price table; `None` when neither is known.
pub fn cost_usd(model: &str, usage: &Usage) -> Option<f64> {
    usage
        .cost_usd
        .or_else(|| price_for(model).map(|price| price.cost(usage)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_covers_the_providers_rein_targets() {
        let names: Vec<&str> = priced_models().collect();
        assert!(names.len() >= 15);
        for prefix in [
            "gpt-4o",
            "gpt-4o-mini",
            "claude",
            "deepseek",
            "qwen",
            "kimi",
            "glm",
        ] {
            assert!(names.iter().any(|n| n.starts_with(prefix)), "{prefix}");
        }
        let mut sorted = names.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), names.len(), "duplicate entries");
    }

    #[test]
    fn dated_variants_match_their_base_entry() {
        assert_eq!(price_for("gpt-4o-2024-08-06"), price_for("gpt-4o"));
        assert_eq!(
            price_for("gpt-4o-mini-2024-07-18"),
            price_for("gpt-4o-mini")
        );
        assert_eq!(
            price_for("claude-sonnet-4-5-20250929"),
            price_for("claude-sonnet-4-5")
        );
        assert_eq!(
            price_for("claude-3-5-haiku-latest"),
            price_for("claude-3-5-haiku")
        );
        assert_eq!(price_for("openai/GPT-4o"), price_for("gpt-4o"));
        assert!(price_for("gpt-4o").is_some());
    }

    #[test]
    fn never_borrows_a_different_models_price() {
        assert_ne!(price_for("gpt-4o-mini"), price_for("gpt-4o"));
        for unknown in [
            "gpt-4o-audio-preview",
            "gpt-4",
            "claude-sonnet-4-5-thinking",
            "my-local-model",
            "qwen2.5-coder:7b",
            "",
            "gpt-4o-2024-8-6",
        ] {
            assert_eq!(price_for(unknown), None, "{unknown}");
        }
    }

    #[test]
    fn cost_bills_cached_and_written_tokens_at_their_rates() {
        let usage = Usage {
            prompt_tokens: 1_000_000,
            completion_tokens: 100_000,
            cached_prompt_tokens: 400_000,
            cache_creation_tokens: 100_000,
            cost_usd: None,
        };
        // claude-sonnet-4-5: 0.5M plain × 3 + 0.4M × 0.3 + 0.1M × 3.75 + 0.1M × 15
        let cost = cost_usd("claude-sonnet-4-5", &usage).unwrap();
        assert!((cost - (1.5 + 0.12 + 0.375 + 1.5)).abs() < 1e-9, "{cost}");
        // gpt-4o-mini, no cache write price: written tokens at the input price.
        let cost = cost_usd("gpt-4o-mini", &usage).unwrap();
        assert!(
            (cost - (0.075 + 0.03 + 0.015 + 0.06)).abs() < 1e-9,
            "{cost}"
        );
        assert_eq!(cost_usd("unlisted", &usage), None);
    }

    #[test]
    fn a_reported_cost_stands_in_for_a_missing_price() {
        let usage = Usage {
            prompt_tokens: 1_000_000,
            cost_usd: Some(0.25),
            ..Usage::default()
        };
        assert_eq!(cost_usd("my-gateway-alias", &usage), Some(0.25));
        // The bill the gateway reports wins over rein's table.
        assert_eq!(cost_usd("gpt-4o", &usage), Some(0.25));
        let mut total = Usage::default();
        total += usage;
        total += Usage {
            cost_usd: Some(0.5),
            ..Usage::default()
        };
        total += Usage::default();
        assert_eq!(total.cost_usd, Some(0.75));
    }

    #[test]
    fn cache_writes_cost_more_for_the_one_hour_cache_and_reads_a_tenth() {
        let usage = Usage {
            prompt_tokens: 1_000_000,
            cached_prompt_tokens: 600_000,
            cache_creation_tokens: 300_000,
            ..Usage::default()
        };
        let price = price_for("claude-sonnet-4-5").unwrap();
        // 0.1M uncached × 3 + 0.6M × 0.3 + 0.3M × 3.75 (5m) or × 6 (1h).
        let five = price.cost_with_ttl(&usage, CacheTtl::FiveMinutes);
        let hour = price.cost_with_ttl(&usage, CacheTtl::OneHour);
        assert!((five - (0.3 + 0.18 + 1.125)).abs() < 1e-9, "{five}");
        assert!((hour - (0.3 + 0.18 + 1.8)).abs() < 1e-9, "{hour}");
        // OpenAI bills no writes: they are input; reads at the model's cached price.
        let price = price_for("gpt-4.1").unwrap();
        let cost = price.cost_with_ttl(&usage, CacheTtl::OneHour);
        assert!((cost - (0.4 * 2.0 + 0.6 * 0.5)).abs() < 1e-9, "{cost}");
    }

    #[test]
    fn the_book_prefers_configured_then_listed_then_the_table() {
        let mine = p(1.0, 2.0, 0.5);
        let listed = p(7.0, 8.0, 7.0);
        let book = PriceBook::new([("My-Alias".to_owned(), mine)], CacheTtl::FiveMinutes);
        assert_eq!(book.price_for("my-alias"), Some(mine));
        assert_eq!(book.price_for("other-alias"), None);
        book.learn("other-alias", listed);
        book.learn("gpt-4o", listed);
        book.learn("my-alias", listed);
        assert_eq!(book.price_for("other-alias"), Some(listed));
        assert_eq!(book.price_for("gpt-4o"), Some(listed));
        assert_eq!(book.price_for("my-alias"), Some(mine));
        let usage = Usage {
            prompt_tokens: 3,
            completion_tokens: 1,
            ..Usage::default()
        };
        // Rounded to micro-dollars: 3 × 1e-6 + 1 × 2e-6.
        assert_eq!(book.call_cost("my-alias", &usage), Some(0.000_005));
        let reported = Usage {
            cost_usd: Some(0.123_456_789),
            ..usage
        };
        assert_eq!(book.call_cost("my-alias", &reported), Some(0.123_457));
        assert_eq!(book.call_cost("unknown", &usage), None);
    }

    #[test]
    fn inconsistent_counts_do_not_underflow() {
        let usage = Usage {
            prompt_tokens: 10,
            completion_tokens: 0,
            cached_prompt_tokens: 50,
            cache_creation_tokens: 50,
            cost_usd: None,
        };
        let cost = cost_usd("gpt-4o", &usage).unwrap();
        assert!((cost - 10.0 * 1.25 / 1e6).abs() < 1e-12);
    }
}
