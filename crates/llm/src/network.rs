//! The network settings of a model client: proxies, an extra CA file and time limits.

use std::path::PathBuf;
use std::time::Duration;

/// How long to wait for a TCP (and TLS) connection to be made.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long an open response may send nothing before it counts as timed out.
pub const DEFAULT_STREAM_IDLE_TIMEOUT: Duration = Duration::from_secs(120);

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
    /// How long an open response may stay silent.
    pub stream_idle_timeout: Duration,
}

impl Default for NetworkConfig {
    fn default() -> Self {
        Self {
            https_proxy: None,
            http_proxy: None,
            no_proxy: None,
            ca_file: None,
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            stream_idle_timeout: DEFAULT_STREAM_IDLE_TIMEOUT,
        }
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
    fn all_proxy_fills_in_and_empty_values_are_unset() {
        let c = from(&[("ALL_PROXY", "socks-less:1"), ("HTTPS_PROXY", " ")]);
        assert_eq!(c.https_proxy.as_deref(), Some("socks-less:1"));
        assert_eq!(c.http_proxy.as_deref(), Some("socks-less:1"));
        assert_eq!(from(&[]), NetworkConfig::default());
    }
}
