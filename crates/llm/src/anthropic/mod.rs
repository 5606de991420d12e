//! The Anthropic Messages client.

pub(crate) mod stream;
pub mod wire;

use std::sync::Arc;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::anthropic::wire::{ANTHROPIC_VERSION, WireOptions, request_body};
use crate::driver::{ByteStream, CallSettings, Opener, call_stream};
use crate::explain::Endpoint;
use crate::http::HttpClient;
use crate::{ConfigError, EventStream, LlmError, Provider, ProviderConfig, ProviderKind, Request};

/// The Anthropic Messages API, streamed over SSE.
#[derive(Debug)]
pub struct AnthropicProvider {
    shared: Arc<Shared>,
    settings: CallSettings,
}

#[derive(Debug)]
struct Shared {
    http: HttpClient,
    url: String,
    headers: HeaderMap,
    options: WireOptions,
    endpoint: Endpoint,
}

impl AnthropicProvider {
    /// Builds the client for `config`'s endpoint.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base = crate::url::normalize_base_url(config.base_url())?;
        let url = if base.ends_with("/v1/messages") {
            base.clone()
        } else if base.ends_with("/v1") {
            format!("{base}/messages")
        } else {
            format!("{base}/v1/messages")
        };
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
            let mut value = HeaderValue::from_str(key.trim()).map_err(|_| ConfigError::ApiKey)?;
            value.set_sensitive(true);
            headers.insert("x-api-key", value);
        }
        let endpoint = Endpoint {
            kind: ProviderKind::Anthropic,
            base_url: base,
            url: url.clone(),
            key_sent: headers.contains_key("x-api-key"),
            key_origin: config.api_key_origin.clone(),
            key: config.api_key.as_deref().map(|k| k.trim().to_owned()),
        };
        let http = HttpClient::new(&config.network)?;
        let settings = CallSettings::new(
            ProviderKind::Anthropic,
            config.retry.clone(),
            &config.network,
            &url,
        );
        Ok(Self {
            shared: Arc::new(Shared {
                http,
                url,
                headers,
                options: WireOptions {
                    thinking_budget_tokens: config.thinking_budget_tokens,
                    cache_ttl: config.cache_ttl,
                },
                endpoint,
            }),
            settings,
        })
    }
}

impl Provider for AnthropicProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let opener = Attempt {
            shared: self.shared.clone(),
            body: Bytes::from(request_body(request, self.shared.options)),
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
