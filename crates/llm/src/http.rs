//! The HTTP client shared by both providers: built once, with proxies and TLS trust from a
//! [`NetworkConfig`], and a POST that classifies every failure.

use std::error::Error as _;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::HeaderMap;

use crate::classify::classify_http;
use crate::driver::ByteStream;
use crate::url::is_loopback_url;
use crate::{ConfigError, LlmError, NetworkConfig};

/// How much of an error response's body is read for its message.
const ERROR_BODY_MAX_BYTES: usize = 256 * 1024;

/// A reqwest client plus the time limit for a silent server. The time to the first byte is
/// the caller's to limit (see `driver`).
#[derive(Debug, Clone)]
pub(crate) struct HttpClient {
    client: reqwest::Client,
    idle_timeout: Duration,
}

impl HttpClient {
    /// Builds the client; cheap, since the system certificate store is loaded only on need.
    pub(crate) fn new(network: &NetworkConfig) -> Result<Self, ConfigError> {
        crate::tls::install_crypto_provider();
        let tls = crate::tls::client_config(network.ca_file.as_deref())?;
        // `no_proxy()` first: it stops reqwest reading the process environment itself.
        let mut builder = reqwest::Client::builder()
            .no_proxy()
            .tls_backend_preconfigured(tls)
            .connect_timeout(network.connect_timeout)
            .user_agent(concat!("rein/", env!("CARGO_PKG_VERSION")));
        let no_proxy = network
            .no_proxy
            .as_deref()
            .and_then(reqwest::NoProxy::from_string);
        let proxy_error = |url: &str, e: reqwest::Error| ConfigError::Proxy {
            url: url.to_owned(),
            message: error_chain(&e),
        };
        if let Some(url) = &network.https_proxy {
            let proxy = reqwest::Proxy::https(url.as_str()).map_err(|e| proxy_error(url, e))?;
            builder = builder.proxy(proxy.no_proxy(no_proxy.clone()));
        }
        if let Some(url) = &network.http_proxy {
            let proxy = reqwest::Proxy::http(url.as_str()).map_err(|e| proxy_error(url, e))?;
            builder = builder.proxy(proxy.no_proxy(no_proxy));
        }
        let client = builder
            .build()
            .map_err(|e| ConfigError::Client(error_chain(&e)))?;
        Ok(Self {
            client,
            idle_timeout: network.stream_idle_timeout,
        })
    }

    /// POSTs a JSON body; a success status gives the body stream, anything else a
    /// classified error.
    pub(crate) async fn post(
        &self,
        url: &str,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<ByteStream, LlmError> {
        let send = self
            .client
            .post(url)
            .headers(headers)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body)
            .send();
        let response = send.await.map_err(|e| map_send_error(&e, url))?;
        let status = response.status();
        if status.is_success() {
            let server = authority(url);
            let body = response
                .bytes_stream()
                .map(move |chunk| chunk.map_err(|e| map_body_error(&e, &server)));
            return Ok(Box::pin(body));
        }
        let headers = response.headers().clone();
        let body = self.read_error_body(response).await;
        Err(classify_http(status.as_u16(), &headers, &body))
    }

    /// A small JSON exchange (a server's metadata): `GET url`, or `POST url` with `body`.
    /// `None` on any failure, a status that is not a success, a body over `max_bytes` or one
    /// that is not JSON: the caller only learns what the server says when it says it plainly.
    pub(crate) async fn fetch_json(
        &self,
        url: &str,
        headers: HeaderMap,
        body: Option<serde_json::Value>,
        max_bytes: usize,
    ) -> Option<serde_json::Value> {
        let request = match body {
            Some(body) => self
                .client
                .post(url)
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .body(body.to_string()),
            None => self.client.get(url),
        };
        let mut response = request.headers(headers).send().await.ok()?;
        if !response.status().is_success() {
            return None;
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.ok()? {
            bytes.extend_from_slice(&chunk);
            if bytes.len() > max_bytes {
                return None;
            }
        }
        serde_json::from_slice(&bytes).ok()
    }

    async fn read_error_body(&self, mut response: reqwest::Response) -> Vec<u8> {
        let mut body = Vec::new();
        while body.len() < ERROR_BODY_MAX_BYTES {
            match tokio::time::timeout(self.idle_timeout, response.chunk()).await {
                Ok(Ok(Some(chunk))) => body.extend_from_slice(&chunk),
                // The status already says what failed; a body cut short only loses detail.
                Ok(Ok(None) | Err(_)) | Err(_) => break,
            }
        }
        body
    }
}

/// Classifies a failure to send the request (and get the response head) to `url`, in one
/// short line: the server's address and the innermost cause, which says what went wrong.
pub(crate) fn map_send_error(e: &reqwest::Error, url: &str) -> LlmError {
    let server = authority(url);
    let cause = root_cause(e);
    if e.is_connect() && refused(e) && is_loopback_url(url) {
        LlmError::NotRunning {
            url: crate::redact_credentials(url),
        }
    } else if e.is_timeout() {
        LlmError::Timeout(format!(
            "could not connect to {server} in time (connect_timeout_secs): {cause}"
        ))
    } else if e.is_connect() {
        LlmError::Connection(format!("could not connect to {server}: {cause}"))
    } else {
        LlmError::Connection(format!("the request to {server} failed: {cause}"))
    }
}

/// Classifies a failure while reading a response body from `server`.
fn map_body_error(e: &reqwest::Error, server: &str) -> LlmError {
    let cause = root_cause(e);
    if e.is_timeout() {
        LlmError::Timeout(format!("{server} stopped sending: {cause}"))
    } else {
        LlmError::Connection(format!("the connection to {server} was lost: {cause}"))
    }
}

/// `host:port` of a URL, or the URL itself when it does not parse.
fn authority(url: &str) -> String {
    reqwest::Url::parse(url)
        .ok()
        .and_then(|u| {
            let host = u.host_str()?.to_owned();
            Some(match u.port_or_known_default() {
                Some(port) => format!("{host}:{port}"),
                None => host,
            })
        })
        .unwrap_or_else(|| crate::redact_credentials(url))
}

/// The innermost cause of an error: the specific reason ("Connection refused (os error
/// 111)", "dns error: ...", "invalid peer certificate: UnknownIssuer").
fn root_cause(e: &reqwest::Error) -> String {
    let mut cause: &dyn std::error::Error = e;
    while let Some(inner) = cause.source() {
        cause = inner;
    }
    cause.to_string()
}

/// Whether the connection was refused (nothing listens at the address).
fn refused(e: &reqwest::Error) -> bool {
    let mut cause: Option<&dyn std::error::Error> = Some(e);
    while let Some(c) = cause {
        if c.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::ConnectionRefused)
        {
            return true;
        }
        cause = c.source();
    }
    false
}

/// An error and all its causes, "outer: inner: root", for a message a person can act on.
fn error_chain(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.contains(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}
