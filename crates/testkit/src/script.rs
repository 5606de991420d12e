//! What the mock server answers: a [`Script`] of [`Reply`]s served in order, one per request.

use std::{fmt, sync::Arc, time::Duration};

use serde::{Deserialize, Serialize};

use crate::{CapturedRequest, MockError, Turn, duration_ms};

/// The replies a mock server serves, in order, one per request whatever its path.
///
/// Written in JSON (for `rein-mock --script`), a script is
/// `{"replies": [{"turn": {"text": ["Hello"]}}, {"error": {"kind": "overloaded"}}], "repeat": false}`
/// or simply the array of replies.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Script {
    replies: Vec<Reply>,
    repeat: bool,
}

impl Script {
    /// An empty script: every request gets 500 "script exhausted".
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends a reply.
    pub fn reply(mut self, reply: impl Into<Reply>) -> Self {
        self.replies.push(reply.into());
        self
    }

    /// Starts over from the first reply when the last has been served, forever.
    pub fn repeating(mut self) -> Self {
        self.repeat = true;
        self
    }

    /// Reads a script from JSON: a script object or a bare array of replies.
    pub fn from_json(text: &str) -> Result<Self, MockError> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        if value.is_array() {
            let replies: Vec<Reply> = serde_json::from_value(value)?;
            Ok(Self {
                replies,
                repeat: false,
            })
        } else {
            Ok(serde_json::from_value(value)?)
        }
    }

    /// The replies, in order.
    pub fn replies(&self) -> &[Reply] {
        &self.replies
    }

    /// Whether the script starts over when exhausted.
    pub fn is_repeating(&self) -> bool {
        self.repeat
    }
}

impl<R: Into<Reply>> FromIterator<R> for Script {
    fn from_iter<I: IntoIterator<Item = R>>(replies: I) -> Self {
        Self {
            replies: replies.into_iter().map(Into::into).collect(),
            repeat: false,
        }
    }
}

/// One answer of the script.
#[expect(
    clippy::large_enum_variant,
    reason = "replies are built once per test; `Reply::Turn(Turn::text(..))` must stay unboxed"
)]
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reply {
    /// A model answer, rendered in the wire format of the request's path.
    Turn(Turn),
    /// A literal HTTP response.
    Http(HttpReply),
    /// A provider error, with the body shaped like the request's wire format.
    Error(ApiError),
    /// No answer at all: the request is read and the connection held open, silent, until the
    /// client gives up (a server that accepted and hung).
    Silent,
    /// A reply chosen from the request when it arrives (not serializable).
    #[serde(skip)]
    Dynamic(DynamicReply),
}

impl Reply {
    /// An HTTP response with this status and body (`content-type: application/json` unless a
    /// header says otherwise).
    pub fn http(status: u16, body: impl Into<String>) -> Self {
        Reply::Http(HttpReply {
            status,
            body: body.into(),
            headers: Vec::new(),
            delay: Duration::ZERO,
        })
    }

    /// A provider error of this kind (see the shortcuts below).
    pub fn error(kind: ApiErrorKind) -> Self {
        Reply::Error(ApiError {
            kind,
            headers: Vec::new(),
            delay: Duration::ZERO,
        })
    }

    /// 429 with `retry-after: <secs>`.
    pub fn rate_limited(retry_after_secs: u64) -> Self {
        Self::error(ApiErrorKind::RateLimited {
            retry_after_secs: Some(retry_after_secs),
        })
    }

    /// 529 overloaded.
    pub fn overloaded() -> Self {
        Self::error(ApiErrorKind::Overloaded)
    }

    /// 500 internal server error.
    pub fn server_error() -> Self {
        Self::error(ApiErrorKind::ServerError)
    }

    /// 400: OpenAI `context_length_exceeded`, or Anthropic "prompt is too long".
    pub fn context_too_long() -> Self {
        Self::error(ApiErrorKind::ContextTooLong)
    }

    /// 401 invalid API key.
    pub fn unauthorized() -> Self {
        Self::error(ApiErrorKind::Unauthorized)
    }

    /// Never answers: see [`Reply::Silent`].
    pub fn silent() -> Self {
        Reply::Silent
    }

    /// A reply decided when the request arrives, e.g. an error when the body has some field.
    pub fn dynamic(decide: impl Fn(&CapturedRequest) -> Reply + Send + Sync + 'static) -> Self {
        Reply::Dynamic(DynamicReply(Arc::new(decide)))
    }

    /// Adds a response header (for a dynamic reply, to whatever it decides).
    pub fn header(self, name: impl Into<String>, value: impl Into<String>) -> Self {
        let (name, value) = (name.into(), value.into());
        match self {
            Reply::Turn(mut turn) => {
                turn.push_header(name, value);
                Reply::Turn(turn)
            }
            Reply::Http(mut http) => {
                http.headers.push((name, value));
                Reply::Http(http)
            }
            Reply::Error(mut error) => {
                error.headers.push((name, value));
                Reply::Error(error)
            }
            Reply::Dynamic(DynamicReply(decide)) => {
                Reply::dynamic(move |request| decide(request).header(name.clone(), value.clone()))
            }
            // Nothing is sent, headers included.
            Reply::Silent => Reply::Silent,
        }
    }

    /// Waits this long before sending the response headers.
    pub fn delay(self, delay: Duration) -> Self {
        match self {
            Reply::Turn(mut turn) => {
                turn.add_delay(delay);
                Reply::Turn(turn)
            }
            Reply::Http(mut http) => {
                http.delay += delay;
                Reply::Http(http)
            }
            Reply::Error(mut error) => {
                error.delay += delay;
                Reply::Error(error)
            }
            Reply::Dynamic(DynamicReply(decide)) => {
                Reply::dynamic(move |request| decide(request).delay(delay))
            }
            Reply::Silent => Reply::Silent,
        }
    }
}

impl From<Turn> for Reply {
    fn from(turn: Turn) -> Self {
        Reply::Turn(turn)
    }
}

/// A literal HTTP response.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HttpReply {
    /// The status code (200 to 999).
    pub status: u16,
    /// The body, sent as given.
    #[serde(default)]
    pub body: String,
    /// Extra headers, in order.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// How long to wait before answering.
    #[serde(default, rename = "delay_ms", with = "duration_ms")]
    pub delay: Duration,
}

/// A provider error whose body follows the request's wire format.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiError {
    /// Which error.
    #[serde(flatten)]
    pub kind: ApiErrorKind,
    /// Extra headers, in order (a rate limit's `retry-after` is added when not among them).
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// How long to wait before answering.
    #[serde(default, rename = "delay_ms", with = "duration_ms")]
    pub delay: Duration,
}

/// The common provider errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum ApiErrorKind {
    /// 429 (with a `retry-after` header when seconds are given).
    RateLimited {
        /// The `retry-after` header's value, in seconds.
        #[serde(default)]
        retry_after_secs: Option<u64>,
    },
    /// 529 overloaded.
    Overloaded,
    /// 500 internal server error.
    ServerError,
    /// 400 because the prompt does not fit the context window.
    ContextTooLong,
    /// 401 invalid API key.
    Unauthorized,
}

impl ApiErrorKind {
    /// The HTTP status of this error.
    pub fn status(self) -> u16 {
        match self {
            ApiErrorKind::RateLimited { .. } => 429,
            ApiErrorKind::Overloaded => 529,
            ApiErrorKind::ServerError => 500,
            ApiErrorKind::ContextTooLong => 400,
            ApiErrorKind::Unauthorized => 401,
        }
    }
}

/// The function behind [`Reply::dynamic`].
#[derive(Clone)]
pub struct DynamicReply(Arc<dyn Fn(&CapturedRequest) -> Reply + Send + Sync>);

impl DynamicReply {
    /// The reply this function decides for `request`.
    pub fn decide(&self, request: &CapturedRequest) -> Reply {
        (self.0)(request)
    }
}

impl fmt::Debug for DynamicReply {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("DynamicReply(..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{MockToolCall, MockUsage};

    #[test]
    fn a_script_round_trips_through_json() {
        let script = Script::new()
            .reply(
                Turn::text("Hi")
                    .chunks(["H", "i"])
                    .usage(MockUsage::new(3, 1).cached(2))
                    .chunk_delay(Duration::from_micros(1500)),
            )
            .reply(Turn::new().tool_call(MockToolCall::new("c1", "glob", "{}").split_every(1)))
            .reply(Reply::rate_limited(2))
            .reply(Reply::http(418, "teapot").header("x-a", "b"))
            .repeating();
        let json = serde_json::to_string(&script).unwrap();
        let back = Script::from_json(&json).unwrap();
        assert_eq!(serde_json::to_string(&back).unwrap(), json);
        assert!(back.is_repeating());
        match &back.replies()[0] {
            Reply::Turn(turn) => {
                assert_eq!(turn.delay_between_chunks(), Duration::from_micros(1500));
            }
            other => panic!("expected a turn, got {other:?}"),
        }
    }

    #[test]
    fn a_hand_written_script_file_reads() {
        let script = Script::from_json(
            r#"[
                {"turn": {"text": ["Hel", "lo"], "chunk_delay_ms": 2, "interrupt": {"cut_after": 3}}},
                {"turn": {"tool_calls": [{"id": "c", "name": "bash", "arguments": "{}", "split": {"every": 2}}]}},
                {"error": {"kind": "rate_limited", "retry_after_secs": 1}},
                {"error": {"kind": "context_too_long"}},
                {"http": {"status": 500, "body": "boom"}}
            ]"#,
        )
        .unwrap();
        assert_eq!(script.replies().len(), 5);
        match &script.replies()[2] {
            Reply::Error(error) => assert_eq!(error.kind.status(), 429),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn a_script_with_a_typo_is_refused_with_the_field_named() {
        let error = Script::from_json(r#"[{"turn": {"txt": ["x"]}}]"#).unwrap_err();
        assert!(error.to_string().contains("txt"), "{error}");
        let error = Script::from_json(r#"[{"turn": {"chunk_delay_ms": -1}}]"#).unwrap_err();
        assert!(error.to_string().contains("milliseconds"), "{error}");
    }
}
