//! The HTTP client shared by both providers: built once, with proxies and TLS trust from a
//! [`NetworkConfig`], and a POST that classifies every failure.

use std::error::Error as _;
use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use reqwest::header::HeaderMap;

use crate::classify::classify_http;
use crate::driver::ByteStream;
use crate::{ConfigError, LlmError, NetworkConfig};

/// How much of an error response's body is read for its message.
const ERROR_BODY_MAX_BYTES: usize = 256 * 1024;

/// A reqwest client plus the time limit for a silent server.
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

    /// The longest silence tolerated while waiting for a response or reading its body.
    pub(crate) fn idle_timeout(&self) -> Duration {
        self.idle_timeout
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
        let response = match tokio::time::timeout(self.idle_timeout, send).await {
            Err(_) => {
                return Err(LlmError::Timeout(format!(
                    "no response from {url} within {} s",
                    self.idle_timeout.as_secs_f64()
                )));
            }
            Ok(Err(e)) => return Err(map_reqwest_error(&e)),
            Ok(Ok(response)) => response,
        };
        let status = response.status();
        if status.is_success() {
            let body = response
                .bytes_stream()
                .map(|chunk| chunk.map_err(|e| map_reqwest_error(&e)));
            return Ok(Box::pin(body));
        }
        let headers = response.headers().clone();
        let body = self.read_error_body(response).await;
        Err(classify_http(status.as_u16(), &headers, &body))
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

/// Classifies a transport failure.
pub(crate) fn map_reqwest_error(e: &reqwest::Error) -> LlmError {
    let detail = error_chain(e);
    if e.is_timeout() {
        LlmError::Timeout(detail)
    } else if e.is_connect() {
        LlmError::Connection(format!("could not connect: {detail}"))
    } else {
        LlmError::Connection(detail)
    }
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
