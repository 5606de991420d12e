//! Base URLs and their hosts, read with a real URL parser (`url::Url`, through reqwest) and
//! never split by hand: credentials, ports, IPv6 literals, a trailing dot and look-alike hosts
//! (`anthropic.com.evil.example`, `localhost.evil.com`) are all seen for what they are.

use std::net::IpAddr;

use reqwest::Url;

/// Why a base URL cannot be used; each message quotes the URL as given.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseUrlError {
    /// The URL has spaces, tabs or line breaks inside it.
    #[error("{url:?} contains whitespace")]
    Whitespace {
        /// The URL as given.
        url: String,
    },
    /// The parser could not read it at all (`api.openai.com`, `http://[::1`).
    #[error("{url:?} is not an http:// or https:// URL ({reason})")]
    Unparsable {
        /// The URL as given.
        url: String,
        /// What the parser said.
        reason: String,
    },
    /// A URL, but not an http(s) one (`ftp://host`, `localhost:8080`).
    #[error("{url:?} is not an http:// or https:// URL")]
    NotHttp {
        /// The URL as given.
        url: String,
    },
    /// A query or fragment, which the API path appended to a base URL would end up inside.
    #[error(
        "{url:?} has a query or fragment (?... or #...): rein appends the API's path \
         (/chat/completions, /v1/messages) to the base URL, so it must end with a path"
    )]
    QueryOrFragment {
        /// The URL as given.
        url: String,
    },
}

/// `url` checked and normalised for use as a base URL: http or https, a host, no whitespace
/// and no query or fragment; returned as the parser writes it (scheme and host in lower
/// case, a default port left out) without a trailing slash. Whitespace around it is ignored.
pub fn normalize_base_url(url: &str) -> Result<String, BaseUrlError> {
    let given = url.trim();
    let owned = || given.to_owned();
    // The parser would quietly drop tabs and line breaks and percent-encode spaces in the
    // path; in a configured URL they are a mistake.
    if given.contains(char::is_whitespace) {
        return Err(BaseUrlError::Whitespace { url: owned() });
    }
    let parsed = Url::parse(given).map_err(|err| BaseUrlError::Unparsable {
        url: owned(),
        reason: err.to_string(),
    })?;
    // The parser refuses an http(s) URL without a host, so a host is certain from here.
    if !matches!(parsed.scheme(), "http" | "https") {
        return Err(BaseUrlError::NotHttp { url: owned() });
    }
    if parsed.query().is_some() || parsed.fragment().is_some() {
        return Err(BaseUrlError::QueryOrFragment { url: owned() });
    }
    Ok(parsed.as_str().trim_end_matches('/').to_owned())
}

/// `url` without a user name or password, for messages: a base URL may carry credentials
/// (`https://user:token@gateway/v1`), and they must never reach the terminal or a file.
/// Text that does not parse as a URL is returned as it is.
pub fn redact_credentials(url: &str) -> String {
    match Url::parse(url.trim()) {
        Ok(mut parsed) if !parsed.username().is_empty() || parsed.password().is_some() => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.as_str().trim_end_matches('/').to_owned()
        }
        Ok(_) | Err(_) => url.to_owned(),
    }
}

/// The host of `url` in lower case, without brackets around an IPv6 address, a trailing dot,
/// credentials or port (`http://u:p@[::1]:8080/v1` has host `::1`); `None` when `url` does
/// not parse or names no host.
pub fn url_host(url: &str) -> Option<String> {
    let parsed = Url::parse(url.trim()).ok()?;
    let host = parsed.host_str()?;
    let host = host
        .strip_prefix('[')
        .and_then(|inner| inner.strip_suffix(']'))
        .unwrap_or(host);
    // `example.com.` is the fully qualified spelling of `example.com`: the same host.
    let host = host.strip_suffix('.').unwrap_or(host);
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// Whether `url`'s host is `domain` or one of its subdomains (`api.anthropic.com` is on
/// `anthropic.com`; `notanthropic.com` and `anthropic.com.evil.example` are not). An IP
/// address is on no domain but itself.
pub fn is_on_domain(url: &str, domain: &str) -> bool {
    let domain = domain.trim();
    let domain = domain
        .strip_suffix('.')
        .unwrap_or(domain)
        .to_ascii_lowercase();
    let Some(host) = url_host(url) else {
        return false;
    };
    if domain.is_empty() {
        return false;
    }
    if host == domain {
        return true;
    }
    host.parse::<IpAddr>().is_err()
        && host
            .strip_suffix(&domain)
            .is_some_and(|sub| sub.ends_with('.'))
}

/// Whether `url` points at this machine: `localhost` or a name under it, `127.0.0.0/8`, `::1`
/// (an IPv4-mapped `::ffff:127.x.x.x` too).
pub fn is_loopback_url(url: &str) -> bool {
    let Some(host) = url_host(url) else {
        return false;
    };
    match host.parse::<IpAddr>() {
        Ok(ip) => ip.to_canonical().is_loopback(),
        Err(_) => host == "localhost" || host.ends_with(".localhost"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_never_reach_a_message() {
        assert_eq!(
            redact_credentials("https://user:s3cret-token@gateway.example/v1"),
            "https://gateway.example/v1"
        );
        assert_eq!(
            redact_credentials("http://token@127.0.0.1:8080/v1/chat/completions"),
            "http://127.0.0.1:8080/v1/chat/completions"
        );
        assert_eq!(
            redact_credentials("https://api.openai.com/v1"),
            "https://api.openai.com/v1"
        );
        assert_eq!(redact_credentials("not a url"), "not a url");
    }

    #[test]
    fn base_urls_are_normalised() {
        for (given, normal) in [
            ("http://127.0.0.1:11434/v1/", "http://127.0.0.1:11434/v1"),
            ("  https://api.openai.com/v1  ", "https://api.openai.com/v1"),
            ("https://api.anthropic.com/", "https://api.anthropic.com"),
            (
                "HTTPS://API.Example.COM:443/V1",
                "https://api.example.com/V1",
            ),
            ("http://example.com:80", "http://example.com"),
            ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
            ("http://localhost./v1//", "http://localhost./v1"),
            (
                "http://user:pw@proxy.corp:4000/v1",
                "http://user:pw@proxy.corp:4000/v1",
            ),
        ] {
            assert_eq!(normalize_base_url(given).as_deref(), Ok(normal), "{given}");
        }
    }

    #[test]
    fn bad_base_urls_say_what_is_wrong() {
        let err = |url: &str| normalize_base_url(url).unwrap_err();
        assert!(matches!(err("ftp://x"), BaseUrlError::NotHttp { .. }));
        // Without a scheme, the part before the colon reads as one.
        assert_eq!(
            err("localhost:8080").to_string(),
            "\"localhost:8080\" is not an http:// or https:// URL"
        );
        for unparsable in ["api.openai.com", "https://", "http://[::1", "http://a:b:c"] {
            assert!(
                matches!(err(unparsable), BaseUrlError::Unparsable { .. }),
                "{unparsable}"
            );
        }
        assert_eq!(
            err("api.openai.com").to_string(),
            "\"api.openai.com\" is not an http:// or https:// URL (relative URL without a base)"
        );
        for spaced in [
            "https://exa mple.com",
            "https://example.com/v 1",
            "http://a\tb/v1",
        ] {
            assert!(
                matches!(err(spaced), BaseUrlError::Whitespace { .. }),
                "{spaced}"
            );
        }
        for query in [
            "https://x.example/v1?api-version=1",
            "https://x.example/v1#top",
        ] {
            assert!(
                matches!(err(query), BaseUrlError::QueryOrFragment { .. }),
                "{query}"
            );
        }
    }

    #[test]
    fn hosts_lose_credentials_ports_brackets_case_and_a_trailing_dot() {
        for (url, host) in [
            ("https://API.Anthropic.com/v1", "api.anthropic.com"),
            ("http://user:pw@127.0.0.1:8080/v1", "127.0.0.1"),
            // The host is what follows the last `@` of the authority, not the first.
            ("http://127.0.0.1@evil.example/v1", "evil.example"),
            ("http://[::1]:8080/v1", "::1"),
            ("http://[::FFFF:7F00:1]/", "::ffff:7f00:1"),
            ("http://localhost.:1", "localhost"),
            ("https://example.com?x=other.com", "example.com"),
        ] {
            assert_eq!(url_host(url).as_deref(), Some(host), "{url}");
        }
        assert_eq!(url_host("not a url"), None);
        assert_eq!(url_host("api.openai.com"), None);
    }

    #[test]
    fn domains_include_subdomains_and_nothing_else() {
        for (url, domain) in [
            ("https://api.anthropic.com", "anthropic.com"),
            ("https://anthropic.com/v1", "anthropic.com"),
            ("HTTPS://API.ANTHROPIC.COM.:443", "Anthropic.com."),
            ("https://user:pw@api.deepseek.com/v1", "deepseek.com"),
            ("https://eu.api.openai.com/v1", "api.openai.com"),
        ] {
            assert!(is_on_domain(url, domain), "{url} on {domain}");
        }
        for (url, domain) in [
            ("https://anthropic.com.evil.example/v1", "anthropic.com"),
            ("https://notanthropic.com/v1", "anthropic.com"),
            ("http://anthropic.com@evil.example/v1", "anthropic.com"),
            ("http://127.0.0.1:8080/v1?x=anthropic.com", "anthropic.com"),
            ("http://127.0.0.1/v1", "0.0.1"),
            ("https://anthropic.com/v1", ""),
            ("anthropic.com", "anthropic.com"),
        ] {
            assert!(!is_on_domain(url, domain), "{url} on {domain}");
        }
    }

    #[test]
    fn loopback_urls_are_recognised() {
        for local in [
            "http://localhost:11434/v1",
            "http://LOCALHOST.:1",
            "http://ollama.localhost/v1",
            "http://127.0.0.1:8080/v1",
            "http://127.1.2.3",
            "http://[::1]:8080/v1",
            "http://[::ffff:127.0.0.1]:8080/v1",
            "http://user:pw@localhost/v1",
        ] {
            assert!(is_loopback_url(local), "{local}");
        }
        for remote in [
            "https://api.openai.com/v1",
            "https://localhost.evil.com/v1",
            "http://127.0.0.1@evil.example/v1",
            "http://10.0.0.1:8080",
            "http://[::2]/v1",
            "not a url",
        ] {
            assert!(!is_loopback_url(remote), "{remote}");
        }
    }
}
