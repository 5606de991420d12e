//! What rein may spend and what it pays: `cache_ttl`, `max_cost`, `max_session_tokens` and
//! the `[pricing."MODEL"]` table. Kept apart from the flat settings and read by serde, so that
//! it moves as one struct into a derived configuration.

use std::collections::BTreeMap;

use rein_llm::CacheTtl;
use serde::Deserialize;
use toml::Value;

/// The keys of a config file this module reads (flat keys, then the table).
pub(crate) const KEYS: [&str; 4] = ["cache_ttl", "max_cost", "max_session_tokens", "pricing"];

/// The spending settings of every layer, stacked (a later layer's value wins; prices merge
/// model by model).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SpendSettings {
    /// `cache_ttl`: how long Anthropic keeps a cached prefix (`5m` unless set).
    pub cache_ttl: Option<CacheTtl>,
    /// `max_cost` (or `--max-cost`): US dollars the session may spend.
    pub max_cost: Option<f64>,
    /// `max_session_tokens` (or `--max-tokens`): input plus output tokens the session may use.
    pub max_session_tokens: Option<u64>,
    /// `[pricing."MODEL"]`: prices that add to or override rein's table, by model name.
    pub pricing: BTreeMap<String, PriceEntry>,
}

/// One model's prices as configured, in USD per million tokens.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PriceEntry {
    /// Uncached input.
    pub input: f64,
    /// Output.
    pub output: f64,
    /// Input read from the prompt cache; the input price when not given.
    pub cached_input: Option<f64>,
    /// Input written to the prompt cache; the input price when not given.
    pub cache_write: Option<f64>,
}

impl PriceEntry {
    /// The price rein bills with.
    pub fn price(&self) -> rein_llm::Price {
        rein_llm::Price {
            input_per_mtok: self.input,
            output_per_mtok: self.output,
            cached_input_per_mtok: self.cached_input.unwrap_or(self.input),
            cache_write_per_mtok: self.cache_write,
        }
    }
}

impl SpendSettings {
    /// Puts `above` on top of these settings.
    pub(crate) fn stack(&mut self, above: SpendSettings) {
        if above.cache_ttl.is_some() {
            self.cache_ttl = above.cache_ttl;
        }
        if above.max_cost.is_some() {
            self.max_cost = above.max_cost;
        }
        if above.max_session_tokens.is_some() {
            self.max_session_tokens = above.max_session_tokens;
        }
        self.pricing.extend(above.pricing);
    }
}

/// A `max_cost`: a number of dollars above zero.
pub fn check_max_cost(value: f64) -> Result<f64, String> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(format!("{value} is not an amount of US dollars above 0"))
    }
}

/// Reads `key` (one of [`KEYS`]) of a file into `settings`; the error says what is wrong
/// (the caller adds the file and line).
pub(crate) fn read(settings: &mut SpendSettings, key: &str, value: &Value) -> Result<(), String> {
    match key {
        "cache_ttl" => {
            let text = value
                .as_str()
                .ok_or_else(|| format!("expected \"5m\" or \"1h\", found {}", value.type_str()))?;
            settings.cache_ttl = Some(
                text.parse()
                    .map_err(|e: rein_llm::UnknownCacheTtl| e.to_string())?,
            );
        }
        "max_cost" => {
            let dollars = match value {
                Value::Float(n) => *n,
                Value::Integer(n) => *n as f64,
                other => return Err(format!("expected US dollars, found {}", other.type_str())),
            };
            settings.max_cost = Some(check_max_cost(dollars)?);
        }
        "max_session_tokens" => {
            let tokens = value.as_integer().ok_or_else(|| {
                format!("expected a number of tokens, found {}", value.type_str())
            })?;
            let tokens = u64::try_from(tokens)
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("{tokens} is less than 1"))?;
            settings.max_session_tokens = Some(tokens);
        }
        "pricing" => {
            let table = value.as_table().ok_or_else(|| {
                format!(
                    "expected a table ([pricing.\"MODEL\"]), found {}",
                    value.type_str()
                )
            })?;
            for (model, entry) in table {
                let entry: PriceEntry =
                    entry.clone().try_into().map_err(|e: toml::de::Error| {
                        format!(
                            "pricing.\"{model}\": {} (the keys are input, output, cached_input, \
                             cache_write, in USD per million tokens)",
                            e.message().trim()
                        )
                    })?;
                let prices = [
                    Some(entry.input),
                    Some(entry.output),
                    entry.cached_input,
                    entry.cache_write,
                ];
                if prices
                    .into_iter()
                    .flatten()
                    .any(|p| !p.is_finite() || p < 0.0)
                {
                    return Err(format!("pricing.\"{model}\": a price is below 0"));
                }
                settings.pricing.insert(model.clone(), entry);
            }
        }
        other => return Err(format!("unknown key \"{other}\"")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read_all(text: &str) -> Result<SpendSettings, String> {
        let table: toml::Table = toml::from_str(text).map_err(|e| e.to_string())?;
        let mut settings = SpendSettings::default();
        for (key, value) in &table {
            read(&mut settings, key, value)?;
        }
        Ok(settings)
    }

    #[test]
    fn reads_limits_ttl_and_prices() {
        let settings = read_all(
            "cache_ttl = \"1h\"\nmax_cost = 2\nmax_session_tokens = 500000\n\
             [pricing.\"my-alias\"]\ninput = 3.0\noutput = 15\ncached_input = 0.3\n",
        )
        .unwrap();
        assert_eq!(settings.cache_ttl, Some(CacheTtl::OneHour));
        assert_eq!(settings.max_cost, Some(2.0));
        assert_eq!(settings.max_session_tokens, Some(500_000));
        let price = settings.pricing["my-alias"].price();
        assert!((price.cached_input_per_mtok - 0.3).abs() < 1e-12);
        assert_eq!(price.cache_write_per_mtok, None);
    }

    #[test]
    fn bad_values_say_what_is_wrong() {
        for (text, says) in [
            ("max_cost = -1", "-1 is not an amount of US dollars above 0"),
            ("max_cost = \"abc\"", "expected US dollars"),
            ("max_session_tokens = 0", "0 is less than 1"),
            ("cache_ttl = \"2h\"", "expected \"5m\" or \"1h\""),
            ("[pricing.m]\ninput = 1\n", "missing field `output`"),
            (
                "[pricing.m]\ninput = 1\noutput = 2\ncache = 3\n",
                "unknown field `cache`",
            ),
            ("[pricing.m]\ninput = -1\noutput = 2\n", "below 0"),
        ] {
            let err = read_all(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}
