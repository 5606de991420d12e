//! When and how long to wait before retrying a failed model call.

use std::time::Duration;

use crate::LlmError;

/// How many times a failed model call is retried when nothing else is configured (so five
/// attempts in all).
pub const DEFAULT_MAX_RETRIES: u32 = 4;

/// Exponential backoff with jitter, honouring the server's own "retry after".
#[derive(Debug, Clone, PartialEq)]
pub struct RetryPolicy {
    /// How many times a failed call is retried (so `max_retries + 1` attempts in all).
    pub max_retries: u32,
    /// The wait before the first retry.
    pub base_delay: Duration,
    /// How much each wait grows over the previous one.
    pub factor: f64,
    /// The longest backoff wait.
    pub max_delay: Duration,
    /// The longest wait a server may ask for; asked for more, rein reports the error instead
    /// of waiting silently.
    pub max_server_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_retries: DEFAULT_MAX_RETRIES,
            base_delay: Duration::from_millis(500),
            factor: 2.0,
            max_delay: Duration::from_secs(30),
            max_server_wait: Duration::from_secs(120),
        }
    }
}

impl RetryPolicy {
    /// A policy that never retries.
    pub fn never() -> Self {
        Self {
            max_retries: 0,
            ..Self::default()
        }
    }

    /// The backoff ceiling for retry number `retry` (from 1), before jitter.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exponent = i32::try_from(retry.saturating_sub(1)).unwrap_or(i32::MAX);
        let secs = self.base_delay.as_secs_f64() * self.factor.max(1.0).powi(exponent);
        Duration::try_from_secs_f64(secs)
            .unwrap_or(self.max_delay)
            .min(self.max_delay)
    }

    /// How long to wait before retry number `retry` (from 1) after `error`, or `None` when
    /// the call must not be retried: the error is permanent, the retries are used up, or the
    /// server asked for a longer wait than `max_server_wait`.
    pub fn delay_for(&self, retry: u32, error: &LlmError) -> Option<Duration> {
        if !error.is_retryable() || retry == 0 || retry > self.max_retries {
            return None;
        }
        let server_asked = match error {
            LlmError::RateLimited { retry_after, .. }
            | LlmError::Overloaded { retry_after, .. }
            | LlmError::Server { retry_after, .. } => *retry_after,
            LlmError::Timeout(_)
            | LlmError::Connection(_)
            | LlmError::NotRunning { .. }
            | LlmError::ContextTooLong(_)
            | LlmError::Auth(_)
            | LlmError::BadRequest { .. }
            | LlmError::Protocol(_)
            | LlmError::Cassette(_) => None,
        };
        match server_asked {
            Some(wait) if wait > self.max_server_wait => None,
            // The server knows when it will take us again; jitter would only add to that.
            Some(wait) => Some(wait),
            None => {
                // "Equal jitter": half the backoff for sure, the other half at random, so
                // clients that failed together do not retry together.
                let ceiling = self.backoff(retry);
                Some(ceiling / 2 + ceiling.mul_f64(fastrand::f64() / 2.0))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn server_error() -> LlmError {
        LlmError::Server {
            status: 500,
            retry_after: None,
            message: "boom".into(),
        }
    }

    #[test]
    fn backoff_doubles_from_half_a_second_up_to_the_cap() {
        let p = RetryPolicy::default();
        let secs: Vec<f64> = (1..=8).map(|n| p.backoff(n).as_secs_f64()).collect();
        assert_eq!(secs, vec![0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]);
        assert_eq!(p.backoff(u32::MAX), Duration::from_secs(30));
    }

    #[test]
    fn jittered_delay_stays_within_half_and_full_backoff() {
        let p = RetryPolicy::default();
        for retry in 1..=4 {
            for _ in 0..50 {
                let d = p.delay_for(retry, &server_error()).unwrap();
                let ceiling = p.backoff(retry);
                assert!(d >= ceiling / 2 && d <= ceiling, "{d:?} vs {ceiling:?}");
            }
        }
    }

    #[test]
    fn gives_up_after_max_retries_and_never_retries_permanent_errors() {
        let p = RetryPolicy::default();
        assert!(p.delay_for(4, &server_error()).is_some());
        assert!(p.delay_for(5, &server_error()).is_none());
        assert!(RetryPolicy::never().delay_for(1, &server_error()).is_none());
        for permanent in [
            LlmError::Auth("no".into()),
            LlmError::BadRequest {
                status: 400,
                message: "no".into(),
            },
            LlmError::ContextTooLong("long".into()),
        ] {
            assert_eq!(p.delay_for(1, &permanent), None, "{permanent:?}");
        }
    }

    #[test]
    fn honours_the_servers_wait_unless_it_is_too_long() {
        let p = RetryPolicy::default();
        let limited = |secs| LlmError::RateLimited {
            retry_after: Some(Duration::from_secs(secs)),
            message: String::new(),
        };
        assert_eq!(p.delay_for(1, &limited(7)), Some(Duration::from_secs(7)));
        assert_eq!(p.delay_for(1, &limited(3600)), None);
        let unavailable = LlmError::Server {
            status: 503,
            retry_after: Some(Duration::from_secs(7)),
            message: String::new(),
        };
        assert_eq!(p.delay_for(1, &unavailable), Some(Duration::from_secs(7)));
    }
}
