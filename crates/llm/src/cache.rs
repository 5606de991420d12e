//! Prompt caching: how long Anthropic keeps a cached prefix, and where rein asks it to.
//!
//! Anthropic caches a prompt only up to the blocks marked `cache_control`, at most four per
//! request. rein marks the stable prefix (the last tool and the system prompt, which holds the
//! project's instructions) and two moving points in the conversation: the newest message, so
//! that the next round can read everything up to it, and the message that was newest in the
//! previous request, which that request wrote to the cache. Round N therefore reads round
//! N−1's whole prefix and writes only what was added since.

use std::str::FromStr;

use serde::Serialize;

/// The most `cache_control` breakpoints Anthropic accepts in one request.
pub const MAX_CACHE_BREAKPOINTS: usize = 4;

/// How long a cached prefix lives (`cache_ttl` in the configuration).
/// Its spelling in configuration and on the wire is `5m` or `1h`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Hash, strum::IntoStaticStr, strum::Display,
)]
pub enum CacheTtl {
    /// Five minutes, refreshed on each read; writes cost 1.25 times the input price.
    #[default]
    #[strum(serialize = "5m")]
    FiveMinutes,
    /// One hour; writes cost twice the input price.
    #[strum(serialize = "1h")]
    OneHour,
}

impl CacheTtl {
    /// What a cache write costs, as a multiple of the input price (Anthropic's list prices).
    pub fn write_multiplier(self) -> f64 {
        match self {
            CacheTtl::FiveMinutes => 1.25,
            CacheTtl::OneHour => 2.0,
        }
    }
}

/// A `cache_ttl` that is neither `5m` nor `1h`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown cache_ttl {0:?}: expected \"5m\" or \"1h\"")]
pub struct UnknownCacheTtl(pub String);

impl FromStr for CacheTtl {
    type Err = UnknownCacheTtl;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim() {
            "5m" => Ok(CacheTtl::FiveMinutes),
            "1h" => Ok(CacheTtl::OneHour),
            other => Err(UnknownCacheTtl(other.to_owned())),
        }
    }
}

/// `{"type": "ephemeral"}`, with `"ttl": "1h"` for the long-lived cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct CacheControl {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    ttl: Option<&'static str>,
}

impl CacheControl {
    /// The breakpoint for `ttl`; the five-minute one is the API's default and says nothing.
    pub(crate) fn new(ttl: CacheTtl) -> Self {
        CacheControl {
            kind: "ephemeral",
            ttl: match ttl {
                CacheTtl::FiveMinutes => None,
                CacheTtl::OneHour => Some(CacheTtl::OneHour.into()),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ttl_reads_its_two_spellings_and_refuses_others() {
        assert_eq!("5m".parse(), Ok(CacheTtl::FiveMinutes));
        assert_eq!(" 1h ".parse(), Ok(CacheTtl::OneHour));
        let err = "60m".parse::<CacheTtl>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "unknown cache_ttl \"60m\": expected \"5m\" or \"1h\""
        );
        assert_eq!(
            serde_json::to_value(CacheControl::new(CacheTtl::OneHour)).unwrap(),
            serde_json::json!({"type": "ephemeral", "ttl": "1h"})
        );
        assert_eq!(
            serde_json::to_value(CacheControl::new(CacheTtl::FiveMinutes)).unwrap(),
            serde_json::json!({"type": "ephemeral"})
        );
    }
}
