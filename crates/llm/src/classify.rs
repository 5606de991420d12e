//! Turning what a server said (HTTP status, headers, error body, in-stream error) into an
//! [`LlmError`], and reading how long it asked us to wait.

use std::time::{Duration, SystemTime};

use reqwest::header::HeaderMap;

use crate::LlmError;

/// How much of an unreadable error body is quoted back to the person.
const QUOTED_BODY_MAX_CHARS: usize = 500;

/// Wordings providers use for "the prompt does not fit the context window".
const CONTEXT_TOO_LONG_WORDINGS: &[&str] = &[
    "context_length_exceeded",
    "prompt is too long",
    "maximum context length",
    "too many tokens",
    "context window",
    "exceeds the available context size",
    "input is too long",
    "request_too_large",
    "reduce the length of the messages",
];

/// Whether an error message or code says the prompt is too long for the model.
pub fn is_context_too_long(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    CONTEXT_TOO_LONG_WORDINGS.iter().any(|w| lower.contains(w))
}

/// Classifies a non-success HTTP response.
pub(crate) fn classify_http(status: u16, headers: &HeaderMap, body: &[u8]) -> LlmError {
    let detail = ErrorDetail::from_body(body);
    let retry_after = retry_after_from_headers(headers, SystemTime::now())
        .or_else(|| retry_hint_in_message(&detail.message))
        .or_else(|| match status {
            429 => rate_limit_reset(headers),
            _ => None,
        });
    match status {
        413 => LlmError::ContextTooLong(detail.message),
        // Only a refused request can mean "too long": a 429 saying "too many tokens" is a
        // tokens-per-minute limit, which waiting does cure.
        400 | 422 if detail.says_context_too_long() => LlmError::ContextTooLong(detail.message),
        401 | 403 => LlmError::Auth(detail.message),
        408 => LlmError::Timeout(detail.message),
        // A spent quota is not transient: waiting will not bring the money back.
        429 if detail.says_quota_exhausted() => LlmError::BadRequest {
            status,
            message: detail.message,
        },
        429 => LlmError::RateLimited {
            retry_after,
            message: detail.message,
        },
        529 => LlmError::Overloaded {
            retry_after,
            message: detail.message,
        },
        500..=599 => LlmError::Server {
            status,
            retry_after,
            message: detail.message,
        },
        _ => LlmError::BadRequest {
            status,
            message: detail.message,
        },
    }
}

/// Classifies an error object that arrived inside a 200 response (an SSE `error` event, or a
/// chunk with an `error` field).
pub(crate) fn classify_in_stream(error: &serde_json::Value) -> LlmError {
    let detail = ErrorDetail::from_value(error);
    let retry_after = retry_hint_in_message(&detail.message);
    let kind = detail.kind.as_deref().unwrap_or_default();
    let code = detail.code.as_deref().unwrap_or_default();
    match (kind, code) {
        ("overloaded_error", _) | (_, "overloaded") => LlmError::Overloaded {
            retry_after,
            message: detail.message,
        },
        ("rate_limit_error" | "rate_limit_exceeded", _) | (_, "rate_limit_exceeded") => {
            LlmError::RateLimited {
                retry_after,
                message: detail.message,
            }
        }
        ("authentication_error" | "permission_error", _) => LlmError::Auth(detail.message),
        // As over HTTP, the wording counts only once the type has not said the error is a
        // limit that waiting cures.
        _ if detail.says_context_too_long() => LlmError::ContextTooLong(detail.message),
        ("invalid_request_error", _) => LlmError::BadRequest {
            status: 400,
            message: detail.message,
        },
        // Anything else mid-stream (api_error, server_error, unknown) is the server's trouble.
        _ => LlmError::Server {
            status: 500,
            retry_after,
            message: detail.message,
        },
    }
}

/// The parts of a provider's error body that matter for classification.
#[derive(Debug, Default)]
struct ErrorDetail {
    message: String,
    kind: Option<String>,
    code: Option<String>,
}

impl ErrorDetail {
    fn from_body(body: &[u8]) -> Self {
        match serde_json::from_slice::<serde_json::Value>(body) {
            Ok(value) => Self::from_value(&value),
            Err(_) => {
                let text = String::from_utf8_lossy(body);
                let text = text.trim();
                let message = if text.is_empty() {
                    "(empty response body)".to_owned()
                } else {
                    text.chars().take(QUOTED_BODY_MAX_CHARS).collect()
                };
                Self {
                    message,
                    ..Self::default()
                }
            }
        }
    }

    /// Reads `{"error": {...}}`, `{"type": "error", "error": {...}}`, `{"error": "text"}`,
    /// `{"message": ...}` and `{"detail": ...}`.
    fn from_value(value: &serde_json::Value) -> Self {
        let inner = value.get("error").unwrap_or(value);
        let text_of = |v: &serde_json::Value, key: &str| {
            v.get(key).and_then(|x| match x {
                serde_json::Value::String(s) => Some(s.clone()),
                serde_json::Value::Number(n) => Some(n.to_string()),
                _ => None,
            })
        };
        let message = match inner {
            serde_json::Value::String(s) => Some(s.clone()),
            _ => text_of(inner, "message").or_else(|| text_of(inner, "detail")),
        }
        .unwrap_or_else(|| {
            value
                .to_string()
                .chars()
                .take(QUOTED_BODY_MAX_CHARS)
                .collect()
        });
        Self {
            message,
            kind: text_of(inner, "type"),
            code: text_of(inner, "code"),
        }
    }

    fn says_context_too_long(&self) -> bool {
        is_context_too_long(&self.message)
            || self.code.as_deref().is_some_and(is_context_too_long)
            || self.kind.as_deref().is_some_and(is_context_too_long)
    }

    fn says_quota_exhausted(&self) -> bool {
        self.code.as_deref() == Some("insufficient_quota")
            || self.kind.as_deref() == Some("insufficient_quota")
    }
}

/// The prefix LiteLLM puts on the headers of the provider behind it: its 429 carries the
/// upstream's wait as `llm_provider-retry-after` and no `retry-after` of its own.
const GATEWAY_HEADER_PREFIX: &str = "llm_provider-";

/// Reads `retry-after-ms`, then `retry-after` (seconds or an HTTP date), the server's own
/// before those a gateway relays from the provider behind it.
pub(crate) fn retry_after_from_headers(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    ["", GATEWAY_HEADER_PREFIX].iter().find_map(|prefix| {
        header(&format!("{prefix}retry-after-ms"))
            .and_then(|v| v.trim().parse::<f64>().ok())
            .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
            .or_else(|| {
                header(&format!("{prefix}retry-after")).and_then(|v| parse_retry_after(v, now))
            })
    })
}

/// When a rate limit frees up, from OpenAI's `x-ratelimit-reset-requests` and
/// `x-ratelimit-reset-tokens` (`1s`, `6m0s`, `20ms`; also as a gateway relays them): the
/// reset of a limit whose `x-ratelimit-remaining-*` is 0 (the longest, if both are), else the
/// soonest. A bare number (some gateways send a timestamp there) is not read.
pub(crate) fn rate_limit_reset(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let limits: Vec<(bool, Duration)> = ["", GATEWAY_HEADER_PREFIX]
        .iter()
        .flat_map(|prefix| ["requests", "tokens"].map(|limit| (*prefix, limit)))
        .filter_map(|(prefix, limit)| {
            let reset = header(&format!("{prefix}x-ratelimit-reset-{limit}"))
                .and_then(|v| parse_spoken_duration(v.trim()))?;
            let exhausted = header(&format!("{prefix}x-ratelimit-remaining-{limit}"))
                .is_some_and(|v| v.trim() == "0");
            Some((exhausted, reset))
        })
        .collect();
    let exhausted = limits.iter().filter(|(e, _)| *e).map(|(_, d)| *d).max();
    exhausted.or_else(|| limits.iter().map(|(_, d)| *d).min())
}

/// Parses a `Retry-After` value: delay seconds (fractions accepted) or an HTTP date.
pub fn parse_retry_after(value: &str, now: SystemTime) -> Option<Duration> {
    let value = value.trim();
    if let Ok(secs) = value.parse::<f64>() {
        return Duration::try_from_secs_f64(secs).ok();
    }
    let at = httpdate::parse_http_date(value).ok()?;
    Some(at.duration_since(now).unwrap_or(Duration::ZERO))
}

/// Finds "try again in 1.5s", "try again in 1m30s", "try again in 250ms" or
/// "retry after 20 seconds" in an error message.
pub fn retry_hint_in_message(message: &str) -> Option<Duration> {
    let lower = message.to_ascii_lowercase();
    ["try again in ", "retry after ", "retry in "]
        .iter()
        .find_map(|marker| {
            let start = lower.find(marker)? + marker.len();
            parse_spoken_duration(&lower[start..])
        })
}

/// Parses the duration at the start of `text`: one or more number+unit groups ("1m30s",
/// "6.5s", "200ms", "20 seconds").
fn parse_spoken_duration(text: &str) -> Option<Duration> {
    let mut rest = text;
    let mut total = 0.0_f64;
    let mut matched = false;
    loop {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        if digits == 0 {
            break;
        }
        let Ok(number) = rest[..digits].parse::<f64>() else {
            break;
        };
        let after = rest[digits..].trim_start();
        let unit_len = after
            .find(|c: char| !c.is_ascii_alphabetic())
            .unwrap_or(after.len());
        let seconds_per_unit = match &after[..unit_len] {
            "ms" | "millisecond" | "milliseconds" => 0.001,
            "s" | "sec" | "secs" | "second" | "seconds" => 1.0,
            "m" | "min" | "mins" | "minute" | "minutes" => 60.0,
            "h" | "hour" | "hours" => 3600.0,
            _ => break,
        };
        total += number * seconds_per_unit;
        matched = true;
        rest = &after[unit_len..];
    }
    if !matched {
        return None;
    }
    Duration::try_from_secs_f64(total).ok()
}

#[cfg(test)]
#[path = "classify_tests.rs"]
mod tests;
