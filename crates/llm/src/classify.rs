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
        .or_else(|| retry_hint_in_message(&detail.message));
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

/// Reads `retry-after-ms`, then `retry-after` (seconds or an HTTP date).
pub(crate) fn retry_after_from_headers(headers: &HeaderMap, now: SystemTime) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(wait) = header("retry-after-ms")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .and_then(|ms| Duration::try_from_secs_f64(ms / 1000.0).ok())
    {
        return Some(wait);
    }
    header("retry-after").and_then(|v| parse_retry_after(v, now))
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
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (k, v) in pairs {
            map.insert(*k, HeaderValue::from_str(v).unwrap());
        }
        map
    }

    #[test]
    fn recognises_the_usual_context_wordings() {
        for body in [
            r#"{"error":{"message":"This model's maximum context length is 128000 tokens.","code":"context_length_exceeded"}}"#,
            r#"{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#,
            r#"{"error":{"message":"Too many tokens in the request"}}"#,
            r#"{"error":{"message":"bad","code":"context_length_exceeded"}}"#,
        ] {
            let err = classify_http(400, &HeaderMap::new(), body.as_bytes());
            assert!(
                matches!(err, LlmError::ContextTooLong(_)),
                "{body}: {err:?}"
            );
            assert!(!err.is_retryable());
        }
    }

    #[test]
    fn a_tokens_per_minute_limit_is_retried_not_taken_for_a_long_prompt() {
        let h = HeaderMap::new();
        let per_minute =
            br#"{"error":{"message":"Rate limit reached: too many tokens per minute"}}"#;
        let err = classify_http(429, &h, per_minute);
        assert!(matches!(err, LlmError::RateLimited { .. }), "{err:?}");
        assert!(err.is_retryable());
        let err = classify_http(503, &h, per_minute);
        assert!(
            matches!(err, LlmError::Server { status: 503, .. }),
            "{err:?}"
        );
        let long = br#"{"error":{"message":"prompt is too long: 210000 tokens > 200000 maximum"}}"#;
        for status in [400, 413, 422] {
            let err = classify_http(status, &h, long);
            assert!(
                matches!(err, LlmError::ContextTooLong(_)),
                "{status}: {err:?}"
            );
        }
        let in_stream = serde_json::json!({"error":{"type":"rate_limit_error","message":"too many tokens per minute"}});
        let err = classify_in_stream(&in_stream);
        assert!(matches!(err, LlmError::RateLimited { .. }), "{err:?}");
    }

    #[test]
    fn a_server_error_reads_retry_after() {
        let err = classify_http(503, &headers(&[("retry-after", "2")]), b"busy");
        assert_eq!(
            err,
            LlmError::Server {
                status: 503,
                retry_after: Some(Duration::from_secs(2)),
                message: "busy".into()
            }
        );
    }

    #[test]
    fn classifies_statuses() {
        let h = HeaderMap::new();
        assert!(matches!(classify_http(401, &h, b"{}"), LlmError::Auth(_)));
        assert!(matches!(classify_http(403, &h, b"no"), LlmError::Auth(_)));
        assert!(matches!(
            classify_http(529, &h, b"{}"),
            LlmError::Overloaded { .. }
        ));
        assert!(matches!(
            classify_http(503, &h, b""),
            LlmError::Server { status: 503, .. }
        ));
        assert!(matches!(
            classify_http(422, &h, b"{}"),
            LlmError::BadRequest { status: 422, .. }
        ));
        assert!(matches!(
            classify_http(413, &h, b"too big"),
            LlmError::ContextTooLong(_)
        ));
    }

    #[test]
    fn a_spent_quota_is_not_retried() {
        let body = br#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#;
        let err = classify_http(429, &HeaderMap::new(), body);
        assert!(!err.is_retryable(), "{err:?}");
    }

    #[test]
    fn rate_limit_reads_retry_after_header_and_message() {
        let err = classify_http(429, &headers(&[("retry-after", "3")]), b"{}");
        assert_eq!(
            err,
            LlmError::RateLimited {
                retry_after: Some(Duration::from_secs(3)),
                message: "{}".into()
            }
        );
        let body = br#"{"error":{"message":"Rate limit reached. Please try again in 1.5s."}}"#;
        match classify_http(429, &HeaderMap::new(), body) {
            LlmError::RateLimited { retry_after, .. } => {
                assert_eq!(retry_after, Some(Duration::from_millis(1500)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn retry_after_ms_wins_over_seconds() {
        let h = headers(&[("retry-after-ms", "250"), ("retry-after", "9")]);
        assert_eq!(
            retry_after_from_headers(&h, SystemTime::now()),
            Some(Duration::from_millis(250))
        );
    }

    #[test]
    fn parses_retry_after_dates_and_rejects_nonsense() {
        let now = httpdate::parse_http_date("Wed, 21 Oct 2015 07:28:00 GMT").unwrap();
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:28:30 GMT", now),
            Some(Duration::from_secs(30))
        );
        assert_eq!(
            parse_retry_after("Wed, 21 Oct 2015 07:27:00 GMT", now),
            Some(Duration::ZERO)
        );
        assert_eq!(parse_retry_after("-1", now), None);
        assert_eq!(parse_retry_after("soon", now), None);
    }

    #[test]
    fn reads_spoken_durations() {
        let cases = [
            ("Please try again in 20s.", 20_000),
            ("try again in 1m30s", 90_000),
            ("Try again in 250ms", 250),
            ("Please retry after 2 seconds", 2_000),
        ];
        for (text, ms) in cases {
            assert_eq!(
                retry_hint_in_message(text),
                Some(Duration::from_millis(ms)),
                "{text}"
            );
        }
        assert_eq!(retry_hint_in_message("try again in a while"), None);
        assert_eq!(
            retry_hint_in_message(
                "try again in 99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999h"
            ),
            None
        );
    }

    #[test]
    fn in_stream_errors_are_classified_by_type() {
        let overloaded = serde_json::json!({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}});
        assert!(matches!(
            classify_in_stream(&overloaded),
            LlmError::Overloaded { .. }
        ));
        let api = serde_json::json!({"error":{"type":"api_error","message":"boom"}});
        assert!(classify_in_stream(&api).is_retryable());
        let long = serde_json::json!({"error":{"message":"prompt is too long"}});
        assert!(matches!(
            classify_in_stream(&long),
            LlmError::ContextTooLong(_)
        ));
    }

    #[test]
    fn unreadable_bodies_are_quoted_shortly() {
        let body = vec![b'x'; 10_000];
        match classify_http(502, &HeaderMap::new(), &body) {
            LlmError::Server { message, .. } => {
                assert_eq!(message.chars().count(), QUOTED_BODY_MAX_CHARS);
            }
            other => panic!("{other:?}"),
        }
    }
}
