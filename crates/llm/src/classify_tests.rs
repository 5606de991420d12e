//! Classifying HTTP and in-stream errors, and reading the waits servers ask for.

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
    let per_minute = br#"{"error":{"message":"Rate limit reached: too many tokens per minute"}}"#;
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
    let body =
        br#"{"error":{"message":"You exceeded your current quota","code":"insufficient_quota"}}"#;
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
fn a_gateways_relayed_retry_after_is_read() {
    // LiteLLM's 429: the upstream's wait, prefixed, and no retry-after of its own.
    let h = headers(&[("llm_provider-retry-after", "3")]);
    match classify_http(429, &h, br#"{"error":{"message":"Rate limit"}}"#) {
        LlmError::RateLimited { retry_after, .. } => {
            assert_eq!(retry_after, Some(Duration::from_secs(3)));
        }
        other => panic!("{other:?}"),
    }
    let h = headers(&[("llm_provider-retry-after", "3"), ("retry-after", "1")]);
    assert_eq!(
        retry_after_from_headers(&h, SystemTime::now()),
        Some(Duration::from_secs(1)),
        "the server's own header first"
    );
}

#[test]
fn rate_limit_resets_say_when_the_exhausted_limit_frees_up() {
    let reset = |pairs: &[(&'static str, &str)]| rate_limit_reset(&headers(pairs));
    assert_eq!(
        reset(&[
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-reset-tokens", "6m0s"),
        ]),
        Some(Duration::from_secs(1)),
        "nothing says which limit was hit: the soonest"
    );
    assert_eq!(
        reset(&[
            ("x-ratelimit-reset-requests", "1s"),
            ("x-ratelimit-remaining-requests", "40"),
            ("x-ratelimit-reset-tokens", "6m0s"),
            ("x-ratelimit-remaining-tokens", "0"),
        ]),
        Some(Duration::from_secs(360))
    );
    assert_eq!(
        reset(&[("llm_provider-x-ratelimit-reset-tokens", "20ms")]),
        Some(Duration::from_millis(20))
    );
    assert_eq!(
        reset(&[("x-ratelimit-reset-requests", "1741305600000")]),
        None
    );
    // Only a 429 reads them; a retry-after or a hint in the message comes first.
    let h = headers(&[("x-ratelimit-reset-requests", "2s")]);
    let wait = |status, body: &[u8]| match classify_http(status, &h, body) {
        LlmError::RateLimited { retry_after, .. } | LlmError::Server { retry_after, .. } => {
            retry_after
        }
        other => panic!("{other:?}"),
    };
    assert_eq!(wait(429, b"{}"), Some(Duration::from_secs(2)));
    assert_eq!(wait(503, b"{}"), None);
    assert_eq!(
        wait(429, br#"{"error":{"message":"try again in 5s"}}"#),
        Some(Duration::from_secs(5))
    );
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
