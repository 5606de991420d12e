//! Why a server reached by URL did not answer, in words a person acts on: one mapping for
//! the connection of a session (`/mcp`, `rein mcp list`) and for `rein mcp login`, so both
//! say the same of the same failure.

use std::error::Error;
use std::time::Duration;

use rmcp::transport::streamable_http_client::StreamableHttpError;

/// How long looking the host name up again may take, to tell a name that does not resolve.
const LOOKUP_LIMIT: Duration = Duration::from_secs(5);

/// Why a request to `url` failed to connect, when rein can name it: nothing listens at the
/// address, or the host name does not resolve. `None` for other failures (TLS, a timeout, an
/// answer that was not the expected one): the caller says those as they are.
pub(crate) async fn reason(
    url: &str,
    error: &(dyn Error + Send + Sync + 'static),
) -> Option<String> {
    match failure(error)? {
        Failure::Refused => {
            return Some(
                "connection refused, so no server is running there (start it, or check the \
                 server's `url`)"
                    .to_owned(),
            );
        }
        Failure::Connect => {}
    }
    // The connection failed before any TCP answer: a name that does not resolve is told by
    // resolving it (the connector's own error carries that only as text).
    let parsed = reqwest::Url::parse(url).ok()?;
    let Some(url::Host::Domain(host)) = parsed.host() else {
        return None;
    };
    let port = parsed.port_or_known_default().unwrap_or(80);
    let lookup = tokio::time::timeout(LOOKUP_LIMIT, tokio::net::lookup_host((host, port))).await;
    match lookup {
        Ok(Err(_)) => Some(format!(
            "the host name `{host}` does not resolve (no such host, or no network; check the \
             server's `url`)"
        )),
        Ok(Ok(_)) | Err(_) => None,
    }
}

/// What a failed request's causes tell.
enum Failure {
    /// Nothing listens at the address.
    Refused,
    /// The connection failed otherwise (among others: the host name did not resolve).
    Connect,
}

fn failure(error: &(dyn Error + 'static)) -> Option<Failure> {
    let mut connect_failed = false;
    for cause in chain(error) {
        if cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return Some(Failure::Refused);
        }
        connect_failed |= cause
            .downcast_ref::<reqwest::Error>()
            .is_some_and(reqwest::Error::is_connect);
    }
    connect_failed.then_some(Failure::Connect)
}

/// `error` and its causes, outermost first. rmcp wraps reqwest's error without naming it as
/// the source: the chain goes through it.
fn chain<'a>(error: &'a (dyn Error + 'static)) -> impl Iterator<Item = &'a (dyn Error + 'static)> {
    std::iter::successors(Some(error), |&e| {
        match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::Client(client)) => Some(client as &(dyn Error + 'static)),
            _ => e.source(),
        }
    })
}

/// An error and its causes as one line ("outer: inner: root"), a cause left out when the
/// text before already says it: for failures [`reason`] cannot name.
pub(crate) fn words(error: &(dyn Error + 'static)) -> String {
    let mut text = String::new();
    for cause in chain(error) {
        let said = cause.to_string();
        if text.contains(&said) {
            continue;
        }
        if !text.is_empty() {
            text.push_str(": ");
        }
        text.push_str(&said);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn client() -> reqwest::Client {
        rein_llm::install_crypto_provider();
        reqwest::Client::new()
    }

    /// A port nothing listens on: one bound, then closed.
    fn closed_port() -> u16 {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    }

    #[tokio::test]
    async fn a_refused_connection_says_no_server_runs_there() {
        let url = format!("http://127.0.0.1:{}/mcp", closed_port());
        let error = client().get(&url).send().await.unwrap_err();
        let said = reason(&url, &error).await.unwrap();
        assert!(
            said.starts_with("connection refused, so no server"),
            "{said}"
        );
        assert!(!words(&error).is_empty());
    }

    #[tokio::test]
    async fn a_refused_connection_under_rmcps_wrapper_is_found_too() {
        let url = format!("http://127.0.0.1:{}/mcp", closed_port());
        let error = client().get(&url).send().await.unwrap_err();
        let wrapped: StreamableHttpError<reqwest::Error> = StreamableHttpError::Client(error);
        assert!(reason(&url, &wrapped).await.is_some());
    }

    #[tokio::test]
    async fn another_failure_is_not_named() {
        let error = std::io::Error::other("something else");
        assert_eq!(reason("http://127.0.0.1:9/mcp", &error).await, None);
    }
}
