//! What rein pays: the `[pricing."MODEL"]` table, prices by model name that add to or
//! override rein's own. The limits (`max_cost`, `max_session_tokens`) and `cache_ttl` are
//! flat settings ([`super::Settings`]).

use std::collections::BTreeMap;

use serde::Deserialize;

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

/// Reads a file's `[pricing]` table into `pricing` (a later layer's model replaces an
/// earlier one's); the error says what is wrong (the caller adds the file and line).
pub(crate) fn read_pricing(
    pricing: &mut BTreeMap<String, PriceEntry>,
    table: &toml::Table,
) -> Result<(), super::de::TableError> {
    for (model, entry) in table {
        let entry = price(model, entry)
            .map_err(|message| super::de::TableError::from(message).under(model))?;
        pricing.insert(model.clone(), entry);
    }
    Ok(())
}

/// The prices of `[pricing."MODEL"]`.
fn price(model: &str, entry: &toml::Value) -> Result<PriceEntry, String> {
    let entry: PriceEntry = entry.clone().try_into().map_err(|e: toml::de::Error| {
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
    Ok(entry)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use rein_llm::CacheTtl;

    use super::super::file::parse_layer;
    use super::super::layer::Layer;
    use super::super::source::Source;

    fn read_all(text: &str) -> Result<Layer, String> {
        parse_layer(text, Path::new("config.toml"), Source::Default).map_err(|e| e.to_string())
    }

    #[test]
    fn reads_limits_ttl_and_prices() {
        let layer = read_all(
            "cache_ttl = \"1h\"\nmax_cost = 2\nmax_session_tokens = 500000\n\
             [pricing.\"my-alias\"]\ninput = 3.0\noutput = 15\ncached_input = 0.3\n",
        )
        .unwrap();
        let settings = layer.settings().unwrap();
        assert_eq!(settings.cache_ttl, Some(CacheTtl::OneHour));
        assert_eq!(settings.max_cost, Some(2.0));
        assert_eq!(settings.max_session_tokens, Some(500_000));
        let price = layer.tables.pricing["my-alias"].price();
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

    #[test]
    fn the_limit_flags_win_over_a_file_and_say_so() {
        let mut layer = read_all("max_cost = 5\nmax_session_tokens = 100\n").unwrap();
        let flags = super::super::Overrides {
            max_cost: Some(0.5),
            max_session_tokens: Some(20_000),
            ..Default::default()
        };
        let (above, _) = Layer::from_overrides(&flags).unwrap();
        layer.stack(above);
        let settings = layer.settings().unwrap();
        assert_eq!(settings.max_cost, Some(0.5));
        assert_eq!(settings.max_session_tokens, Some(20_000));
        assert_eq!(layer.source("max_cost"), &Source::Flag("--max-cost"));
        assert_eq!(
            layer.source("max_session_tokens"),
            &Source::Flag("--max-tokens")
        );
    }
}
