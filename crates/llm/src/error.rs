//! The one error type of the model layer, and the one place that decides what is retried.

use std::time::Duration;

/// Why a model call failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LlmError {
    /// 429: too many requests.
    #[error("rate limited: {message}")]
    RateLimited {
        /// How long the server asked us to wait, if it said.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// 529 or an `overloaded_error`.
    #[error("the provider is overloaded: {message}")]
    Overloaded {
        /// How long the server asked us to wait, if it said.
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// No response, or no data on an open stream, within the time limit.
    #[error("timed out: {0}")]
    Timeout(String),
    /// The connection could not be made or was lost.
    #[error("connection failed: {0}")]
    Connection(String),
    /// A server on this machine refused the connection: it is not running, and waiting will
    /// not start it.
    #[error(
        "could not connect to {url}: connection refused, so no server is running there \
         (start it, or check the base URL)"
    )]
    NotRunning {
        /// The URL the request was for.
        url: String,
    },
    /// A 5xx other than 529.
    #[error("server error {status}: {message}")]
    Server {
        /// The HTTP status.
        status: u16,
        /// How long the server asked us to wait, if it said (a 503 often does).
        retry_after: Option<Duration>,
        /// The server's message.
        message: String,
    },
    /// The prompt does not fit the model's context window.
    #[error("the conversation is too long for the model: {0}")]
    ContextTooLong(String),
    /// 401 or 403: the key is missing, wrong or lacks access.
    #[error("authentication failed: {0}")]
    Auth(String),
    /// Any other 4xx: the request itself is wrong.
    #[error("bad request ({status}): {message}")]
    BadRequest {
        /// The HTTP status.
        status: u16,
        /// The server's message.
        message: String,
    },
    /// The response did not follow the wire format.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// A replay cassette has no response left, or a recording could not be written.
    #[error("cassette: {0}")]
    Cassette(String),
}

impl LlmError {
    /// The same error with `mask` applied to each text it carries (the server's messages can
    /// quote a secret: a 401 that repeats the key).
    pub fn map_messages(self, mask: impl Fn(String) -> String) -> LlmError {
        match self {
            LlmError::RateLimited {
                retry_after,
                message,
            } => LlmError::RateLimited {
                retry_after,
                message: mask(message),
            },
            LlmError::Overloaded {
                retry_after,
                message,
            } => LlmError::Overloaded {
                retry_after,
                message: mask(message),
            },
            LlmError::Timeout(message) => LlmError::Timeout(mask(message)),
            LlmError::Connection(message) => LlmError::Connection(mask(message)),
            LlmError::NotRunning { url } => LlmError::NotRunning { url: mask(url) },
            LlmError::Server {
                status,
                retry_after,
                message,
            } => LlmError::Server {
                status,
                retry_after,
                message: mask(message),
            },
            LlmError::ContextTooLong(message) => LlmError::ContextTooLong(mask(message)),
            LlmError::Auth(message) => LlmError::Auth(mask(message)),
            LlmError::BadRequest { status, message } => LlmError::BadRequest {
                status,
                message: mask(message),
            },
            LlmError::Protocol(message) => LlmError::Protocol(mask(message)),
            LlmError::Cassette(message) => LlmError::Cassette(mask(message)),
        }
    }

    /// Whether retrying the same request may succeed.
    pub fn is_retryable(&self) -> bool {
        match self {
            LlmError::RateLimited { .. }
            | LlmError::Overloaded { .. }
            | LlmError::Timeout(_)
            | LlmError::Connection(_)
            | LlmError::Server { .. }
            | LlmError::Protocol(_) => true,
            LlmError::ContextTooLong(_)
            | LlmError::NotRunning { .. }
            | LlmError::Auth(_)
            | LlmError::BadRequest { .. }
            | LlmError::Cassette(_) => false,
        }
    }

    /// What went wrong in a few words, for a line announcing a retry; the full message (the
    /// server's own words included) is for the error that ends a call.
    pub fn summary(&self) -> String {
        /// How much of a protocol error's detail a retry line quotes.
        const SUMMARY_DETAIL_MAX_CHARS: usize = 80;
        match self {
            LlmError::RateLimited { .. } => "rate limited".to_owned(),
            LlmError::Overloaded { .. } => "the provider is overloaded".to_owned(),
            LlmError::Server { status, .. } => format!("server error {status}"),
            LlmError::Protocol(detail) => {
                let mut short: String = detail.chars().take(SUMMARY_DETAIL_MAX_CHARS).collect();
                if short.len() < detail.len() {
                    short.push('…');
                }
                format!("protocol error: {short}")
            }
            LlmError::Timeout(_)
            | LlmError::Connection(_)
            | LlmError::NotRunning { .. }
            | LlmError::ContextTooLong(_)
            | LlmError::Auth(_)
            | LlmError::BadRequest { .. }
            | LlmError::Cassette(_) => self.to_string(),
        }
    }
}
