//! Where a provider's requests go: the HTTP client, the URL, the headers (the API key among
//! them) and the endpoint its errors are explained with. Every wire format builds them the
//! same way; what differs is the path and how the key is sent.

use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;

use crate::driver::{ByteStream, CallSettings, Opener};
use crate::explain::Endpoint;
use crate::http::HttpClient;
use crate::{ConfigError, LlmError, ProviderConfig, ProviderKind};

/// How a provider sends the API key.
#[derive(Debug, Clone, Copy)]
pub(crate) enum KeyHeader {
    /// `Authorization: Bearer KEY` (OpenAI and the servers that speak its formats).
    Bearer,
    /// `x-api-key: KEY` (Anthropic).
    XApiKey,
}

/// Where one provider's requests go.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) http: HttpClient,
    pub(crate) url: String,
    pub(crate) headers: HeaderMap,
    pub(crate) endpoint: Endpoint,
    /// The server's model list, shared by the questions asked of it together.
    pub(crate) models: ModelList,
}

/// The server's model list, asked once for the questions that come together.
#[derive(Debug, Default)]
pub(crate) struct ModelList {
    /// When it was last asked, and what it said (`None`: no list, or no answer in time).
    pub(crate) last: tokio::sync::Mutex<Option<(Instant, Option<Arc<Value>>)>>,
}

/// `base` with `path` after it, unless it already ends with it.
pub(crate) fn joined(base: &str, path: &str) -> String {
    if base.ends_with(path) {
        base.to_owned()
    } else {
        format!("{base}{path}")
    }
}

impl Target {
    /// The target for `config`'s endpoint of `kind`: requests go to `url`, with `headers`
    /// and the key sent as `key` says; `base_url` is the base as people write it. Also the
    /// settings of the calls made to it.
    pub(crate) fn new(
        config: &ProviderConfig,
        kind: ProviderKind,
        (base_url, url): (String, String),
        mut headers: HeaderMap,
        key: KeyHeader,
    ) -> Result<(Self, CallSettings), ConfigError> {
        let trimmed = config.api_key.as_deref().map(str::trim);
        if let Some(text) = trimmed.filter(|k| !k.is_empty()) {
            let (name, text) = match key {
                KeyHeader::Bearer => (AUTHORIZATION, format!("Bearer {text}")),
                KeyHeader::XApiKey => (HeaderName::from_static("x-api-key"), text.to_owned()),
            };
            let mut value = HeaderValue::from_str(&text).map_err(|_| ConfigError::ApiKey)?;
            value.set_sensitive(true);
            headers.insert(name, value);
        }
        let endpoint = Endpoint {
            kind,
            base_url,
            url: url.clone(),
            key_sent: trimmed.is_some_and(|k| !k.is_empty()),
            key_origin: config.api_key_origin.clone(),
            key: trimmed.map(str::to_owned),
        };
        let settings = CallSettings::new(kind, config.retry.clone(), &config.network, &url);
        let http = HttpClient::new(&config.network)?;
        let target = Target {
            http,
            url,
            headers,
            endpoint,
            models: ModelList::default(),
        };
        Ok((target, settings))
    }
}

/// One request's attempts: the same body posted to the same target each time.
pub(crate) struct Posting {
    pub(crate) target: Arc<Target>,
    pub(crate) body: Bytes,
}

impl Opener for Posting {
    fn explain(&self, error: LlmError) -> LlmError {
        self.target.endpoint.explain(error)
    }

    fn open(&self) -> BoxFuture<'static, Result<ByteStream, LlmError>> {
        let target = self.target.clone();
        let body = self.body.clone();
        Box::pin(async move {
            (target.http)
                .post(&target.url, target.headers.clone(), body)
                .await
        })
    }
}
