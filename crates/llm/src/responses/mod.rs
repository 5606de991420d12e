//! The OpenAI Responses API client (`POST /v1/responses`), for models offered only there.

pub(crate) mod stream;
pub(crate) mod wire;

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use crate::driver::{ByteStream, CallSettings, Opener, call_stream};
use crate::explain::Endpoint;
use crate::http::HttpClient;
use crate::{ConfigError, EventStream, LlmError, Provider, ProviderConfig, ProviderKind, Request};

/// A Responses API endpoint, streamed over SSE.
#[derive(Debug)]
pub struct ResponsesProvider {
    shared: Arc<Shared>,
    settings: CallSettings,
}

#[derive(Debug)]
struct Shared {
    http: HttpClient,
    url: String,
    headers: HeaderMap,
    endpoint: Endpoint,
}

impl ResponsesProvider {
    /// Builds the client for `config`'s endpoint.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base = crate::url::normalize_base_url(config.base_url())?;
        let url = if base.ends_with("/responses") {
            base.clone()
        } else {
            format!("{base}/responses")
        };
        let mut headers = HeaderMap::new();
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.trim()))
                .map_err(|_| ConfigError::ApiKey)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let endpoint = Endpoint {
            kind: ProviderKind::OpenAiResponses,
            base_url: base.strip_suffix("/responses").unwrap_or(&base).to_owned(),
            url: url.clone(),
            key_sent: headers.contains_key(AUTHORIZATION),
            key_origin: config.api_key_origin.clone(),
            key: config.api_key.as_deref().map(|k| k.trim().to_owned()),
        };
        let settings = CallSettings::new(
            ProviderKind::OpenAiResponses,
            config.retry.clone(),
            &config.network,
            &url,
        );
        Ok(Self {
            shared: Arc::new(Shared {
                http: HttpClient::new(&config.network)?,
                url,
                headers,
                endpoint,
            }),
            settings,
        })
    }
}

impl Provider for ResponsesProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let opener = Attempt {
            shared: self.shared.clone(),
            body: Bytes::from(wire::request_body(request)),
        };
        call_stream(Arc::new(opener), self.settings.clone())
    }
}

struct Attempt {
    shared: Arc<Shared>,
    body: Bytes,
}

impl Opener for Attempt {
    fn explain(&self, error: LlmError) -> LlmError {
        self.shared.endpoint.explain(error)
    }

    fn open(&self) -> BoxFuture<'static, Result<ByteStream, LlmError>> {
        let shared = self.shared.clone();
        let body = self.body.clone();
        Box::pin(async move {
            shared
                .http
                .post(&shared.url, shared.headers.clone(), body)
                .await
        })
    }
}
