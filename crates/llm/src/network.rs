//! The network settings of a model client: proxies, an extra CA file and time limits.

use std::path::PathBuf;
use std::time::Duration;

use crate::url::is_loopback_url;

/// How long to wait for a TCP (and TLS) connection to be made.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a remote server may take to send the first byte of its response.
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a server on this machine may take to send its first byte: local servers load the
/// model on the first request, which takes minutes for a large one.
pub const DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(300);
/// How long a response may send nothing between two chunks before it counts as timed out.
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(120);
/// The longest one model call may take, retries and their waits included.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60 * 60);
/// How often a call still waiting for its first byte says so.
pub const WAITING_NOTICE_INTERVAL: Duration = Duration::from_secs(10);

/// Proxies, trust and time limits, passed in as a value: rein-llm never reads the environment
/// itself. Build it with [`NetworkConfig::from_env_vars`] in the binary, or by hand in tests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NetworkConfig {
    /// Proxy for `https://` endpoints (`HTTPS_PROXY`).
    pub https_proxy: Option<String>,
    /// Proxy for `http://` endpoints (`HTTP_PROXY`).
    pub http_proxy: Option<String>,
    /// Hosts reached directly, comma-separated, curl's syntax (`NO_PROXY`).
    pub no_proxy: Option<String>,
    /// A PEM file of extra certificate authorities to trust, e.g. a corporate proxy's.
    pub ca_file: Option<PathBuf>,
    /// How long to wait for a connection.
    pub connect_timeout: Duration,
    /// How long to wait for the first byte of a response, from the start of an attempt;
    /// `None` picks by endpoint ([`DEFAULT_FIRST_BYTE_TIMEOUT`], or
    /// [`DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT`] for a loopback address).
    pub first_byte_timeout: Option<Duration>,
    /// How long a response may stay silent between two chunks.
    pub stream_idle_timeout: Duration,
    /// The longest one model call may take, retries included.
    pub request_timeout: Duration,
    /// How often a call waiting for its first byte yields [`crate::StreamEvent::Waiting`].
    pub waiting_notice_interval: Duration,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            https_proxy: None,
            http_proxy: None,
            no_proxy: None,
            ca_file: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            first_byte_timeout: None,
            stream_idle_timeout: DEFAULT_STREAM_IDLE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            waiting_notice_interval: WAITING_NOTICE_INTERVAL,
        }
    }
}

impl NetworkConfig {
    /// The first-byte limit for requests to `url`.
    pub fn first_byte_timeout_for(&self, url: &str) -> Duration {
        self.first_byte_timeout.unwrap_or(if is_loopback_url(url) {
            DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT
        } else {
            DEFAULT_FIRST_BYTE_TIMEOUT
        })
    }
}

impl NetworkConfig {
    /// Reads the usual variables through `lookup`: `HTTPS_PROXY`, `HTTP_PROXY`, `ALL_PROXY`
    /// (for both when the specific one is unset), `NO_PROXY` and `SSL_CERT_FILE`, each in
    /// lower case first, as curl does. Empty values count as unset.
    pub fn from_env_vars(lookup: impl Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| {
            [name.to_ascii_lowercase(), name.to_owned()]
                .iter()
                .filter_map(|n| lookup(n))
                .map(|v| v.trim().to_owned())
                .find(|v| !v.is_empty())
        };
        let all = get("ALL_PROXY");
        Self {
            https_proxy: get("HTTPS_PROXY").or_else(|| all.clone()),
            http_proxy: get("HTTP_PROXY").or(all),
            no_proxy: get("NO_PROXY"),
            ca_file: get("SSL_CERT_FILE").map(PathBuf::from),
            ..Self::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn from(pairs: &[(&str, &str)]) -> NetworkConfig {
        let map: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        NetworkConfig::from_env_vars(|k| map.get(k).cloned())
    }

    #[test]
    fn reads_proxies_and_ca_file() {
        let c = from(&[
            ("HTTPS_PROXY", "http://proxy:3128"),
            ("http_proxy", "http://lower:8080"),
            ("HTTP_PROXY", "http://upper:8080"),
            ("NO_PROXY", "localhost,.corp"),
            ("SSL_CERT_FILE", "/etc/corp.pem"),
        ]);
        assert_eq!(c.https_proxy.as_deref(), Some("http://proxy:3128"));
        assert_eq!(c.http_proxy.as_deref(), Some("http://lower:8080"));
        assert_eq!(c.no_proxy.as_deref(), Some("localhost,.corp"));
        assert_eq!(c.ca_file, Some(PathBuf::from("/etc/corp.pem")));
        assert_eq!(c.connect_timeout, DEFAULT_CONNECT_TIMEOUT);
    }

    #[test]
    fn local_servers_get_longer_to_answer_first() {
        let c = NetworkConfig::default();
        assert_eq!(
            c.first_byte_timeout_for("http://127.0.0.1:11434/v1"),
            DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT
        );
        assert_eq!(
            c.first_byte_timeout_for("https://api.openai.com/v1"),
            DEFAULT_FIRST_BYTE_TIMEOUT
        );
        let set = NetworkConfig {
            first_byte_timeout: Some(Duration::from_secs(7)),
            ..NetworkConfig::default()
        };
        assert_eq!(
            set.first_byte_timeout_for("http://localhost:8080"),
            Duration::from_secs(7)
        );
    }

    #[test]
    fn all_proxy_fills_in_and_empty_values_are_unset() {
        let c = from(&[("ALL_PROXY", "socks-less:1"), ("HTTPS_PROXY", " ")]);
        assert_eq!(c.https_proxy.as_deref(), Some("socks-less:1"));
        assert_eq!(c.http_proxy.as_deref(), Some("socks-less:1"));
        assert_eq!(from(&[]), NetworkConfig::default());
    }
}
