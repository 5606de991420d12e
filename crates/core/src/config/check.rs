//! The checks on setting values, each with the message a person sees when a value is wrong,
//! and their `deserialize_with` forms for [`super::Settings`].
//!
//! A check reads a TOML value (a file's, or a variable's or a flag's turned into one) so that
//! the message says what was found: `expected an integer, found string "ten"`.

use std::path::PathBuf;
use std::time::Duration;

use serde::de::Deserializer;
use toml::Value;

use rein_tools::bash::BASH_MAX_TIMEOUT;

use super::ProviderKind;
use super::de::with;

pub(super) fn model<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    with(d, |v| match string(v)?.trim() {
        "" => Err("the model name is empty".to_owned()),
        model => Ok(Some(model.to_owned())),
    })
}

pub(super) fn provider<'de, D: Deserializer<'de>>(d: D) -> Result<Option<ProviderKind>, D::Error> {
    with(d, |v| {
        let name = string(v)?;
        name.parse()
            .map(Some)
            .map_err(|e: rein_llm::UnknownProvider| e.to_string())
    })
}

pub(super) fn tool_format<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<rein_llm::ToolFormat, D::Error> {
    with(d, |v| string(v)?.parse())
}

pub(super) fn cache_ttl<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Option<rein_llm::CacheTtl>, D::Error> {
    with(d, |v| {
        let text = v.as_str().ok_or_else(|| expected("\"5m\" or \"1h\"", v))?;
        text.parse()
            .map(Some)
            .map_err(|e: rein_llm::UnknownCacheTtl| e.to_string())
    })
}

pub(super) fn max_cost<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    with(d, |v| {
        let dollars = match v {
            Value::Float(n) => *n,
            Value::Integer(n) => *n as f64,
            other => return Err(expected("US dollars", other)),
        };
        check_max_cost(dollars).map(Some).map_err(|e| e.to_string())
    })
}

/// A `max_cost` that is not a number of dollars above zero.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{0} is not an amount of US dollars above 0")]
pub struct NotACost(pub f64);

/// A `max_cost`: a number of dollars above zero.
pub fn check_max_cost(value: f64) -> Result<f64, NotACost> {
    if value.is_finite() && value > 0.0 {
        Ok(value)
    } else {
        Err(NotACost(value))
    }
}

pub(super) fn base_url<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    with(d, |v| check_base_url(string(v)?).map(Some))
}

pub(super) fn variable_name<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    with(d, |v| check_api_key_env(string(v)?).map(Some))
}

pub(super) fn temperature<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    with(d, |v| {
        let value = number(v)?;
        if value.is_finite() && (0.0..=2.0).contains(&value) {
            Ok(Some(value as f32))
        } else {
            Err(format!("{value} is outside 0 to 2"))
        }
    })
}

pub(super) fn positive<'de, D: Deserializer<'de>, T: TryFrom<i64>>(d: D) -> Result<T, D::Error> {
    with(d, positive_value)
}

pub(super) fn some_positive<'de, D: Deserializer<'de>, T: TryFrom<i64>>(
    d: D,
) -> Result<Option<T>, D::Error> {
    with(d, |v| positive_value(v).map(Some))
}

/// A whole number from 0 up.
pub(super) fn count<'de, D: Deserializer<'de>>(d: D) -> Result<u32, D::Error> {
    with(d, |v| {
        let count = integer(v)?;
        u32::try_from(count).map_err(|_| format!("{count} is out of range"))
    })
}

/// `true` or `false`, for a `bool` or an `Option<bool>`.
pub(super) fn boolean<'de, D: Deserializer<'de>, O: From<bool>>(d: D) -> Result<O, D::Error> {
    with(d, |v| {
        (v.as_bool().map(O::from)).ok_or_else(|| expected("true or false", v))
    })
}

/// The smallest `context_window` accepted: rein's system prompt and tool descriptions alone
/// take about 3,000 tokens.
pub(crate) const MIN_CONTEXT_WINDOW_TOKENS: u64 = 4096;

pub(super) fn context_window<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    with(d, |v| {
        let tokens: u64 = positive_value(v)?;
        if tokens < MIN_CONTEXT_WINDOW_TOKENS {
            return Err(format!(
                "{tokens} tokens is less than {MIN_CONTEXT_WINDOW_TOKENS}, too small for \
                 rein's system prompt and tools"
            ));
        }
        Ok(Some(tokens))
    })
}

/// The lowest and highest `compact_threshold` accepted: below, rein would summarise almost
/// every round; above, the emergency layer (95%) would come first.
pub(crate) const COMPACT_THRESHOLD_RANGE: std::ops::RangeInclusive<f64> = 0.2..=0.95;

pub(super) fn compact_threshold<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    with(d, |v| {
        let value = number(v)?;
        if COMPACT_THRESHOLD_RANGE.contains(&value) {
            return Ok(value);
        }
        let hint = if (20.0..=95.0).contains(&value) {
            format!(" (a share of the window: {} means {value}%)", value / 100.0)
        } else {
            String::new()
        };
        Err(format!(
            "{value} is outside {} to {}{hint}",
            COMPACT_THRESHOLD_RANGE.start(),
            COMPACT_THRESHOLD_RANGE.end()
        ))
    })
}

/// The smallest cap accepted for a saved tool output, in bytes (1 MiB): below it, ordinary
/// outputs would be cut in the very file meant to keep them whole.
pub(crate) const TOOL_OUTPUT_FILE_MIN_BYTES: u64 = 1024 * 1024;

pub(super) fn output_file_max<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    with(d, |v| {
        let value = integer(v)?;
        match u64::try_from(value) {
            Ok(bytes) if bytes >= TOOL_OUTPUT_FILE_MIN_BYTES => Ok(bytes),
            _ => Err(format!(
                "{value} is less than {TOOL_OUTPUT_FILE_MIN_BYTES} bytes (1 MiB), the smallest \
                 file size rein accepts"
            )),
        }
    })
}

pub(super) fn bash_timeout<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
    with(d, |v| seconds_within(v, BASH_MAX_TIMEOUT))
}

/// The longest network time limit accepted: a day.
pub(crate) const NETWORK_TIMEOUT_MAX: Duration = Duration::from_secs(24 * 60 * 60);

/// A network time limit, for a `Duration` or an `Option<Duration>`.
pub(super) fn network_timeout<'de, D: Deserializer<'de>, O: From<Duration>>(
    d: D,
) -> Result<O, D::Error> {
    with(d, |v| seconds_within(v, NETWORK_TIMEOUT_MAX).map(O::from))
}

/// Anthropic's smallest thinking budget, in tokens.
pub(crate) const THINKING_BUDGET_MIN_TOKENS: u32 = 1024;

pub(super) fn thinking_budget<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u32>, D::Error> {
    with(d, |v| {
        let value = integer(v)?;
        match u32::try_from(value) {
            Ok(tokens) if tokens >= THINKING_BUDGET_MIN_TOKENS => Ok(Some(tokens)),
            _ => Err(format!(
                "{value} is not a number of tokens from {THINKING_BUDGET_MIN_TOKENS} up (the \
                 smallest budget Anthropic accepts)"
            )),
        }
    })
}

pub(super) fn path<'de, D: Deserializer<'de>>(d: D) -> Result<Option<PathBuf>, D::Error> {
    with(d, |v| {
        let path = string(v)?;
        if path.is_empty() {
            return Err("the path is empty".to_owned());
        }
        Ok(Some(PathBuf::from(path)))
    })
}

/// A base URL checked and normalised by rein-llm, which reads it with a URL parser.
pub(crate) fn check_base_url(url: &str) -> Result<String, String> {
    rein_llm::normalize_base_url(url).map_err(|err| err.to_string())
}

fn check_api_key_env(var: &str) -> Result<String, String> {
    let valid = !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(var.to_owned())
    } else {
        Err(format!(
            "\"{var}\" is not an environment variable name (letters, digits and _)"
        ))
    }
}

/// Whole seconds from 1 to `max`.
fn seconds_within(value: &Value, max: Duration) -> Result<Duration, String> {
    let secs = integer(value)?;
    match u64::try_from(secs) {
        Ok(secs @ 1..) if secs <= max.as_secs() => Ok(Duration::from_secs(secs)),
        _ => Err(format!(
            "{secs} s is outside 1 to {} seconds",
            max.as_secs()
        )),
    }
}

fn string(value: &Value) -> Result<&str, String> {
    value.as_str().ok_or_else(|| expected("a string", value))
}

/// A number, written with or without a decimal point.
fn number(value: &Value) -> Result<f64, String> {
    match value {
        Value::Float(number) => Ok(*number),
        Value::Integer(number) => Ok(*number as f64),
        other => Err(expected("a number", other)),
    }
}

fn integer(value: &Value) -> Result<i64, String> {
    value
        .as_integer()
        .ok_or_else(|| expected("an integer", value))
}

fn positive_value<T: TryFrom<i64>>(value: &Value) -> Result<T, String> {
    let number = integer(value)?;
    if number < 1 {
        return Err(format!("{number} is less than 1"));
    }
    T::try_from(number).map_err(|_| format!("{number} is too large"))
}

fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {} {found}", found.type_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_must_be_http_and_lose_their_trailing_slash() {
        assert_eq!(
            check_base_url("http://127.0.0.1:11434/v1/").unwrap(),
            "http://127.0.0.1:11434/v1"
        );
        assert_eq!(
            check_base_url("localhost:8080").unwrap_err(),
            "\"localhost:8080\" is not an http:// or https:// URL"
        );
        assert!(check_base_url("https://").is_err());
    }

    #[test]
    fn variable_names_are_checked() {
        assert!(check_api_key_env("MY_KEY_2").is_ok());
        assert!(check_api_key_env("my-key").is_err());
        assert!(check_api_key_env("2KEY").is_err());
        assert!(check_api_key_env("").is_err());
    }
}
