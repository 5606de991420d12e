//! The Anthropic Messages client.

pub(crate) mod stream;
pub mod wire;

use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::anthropic::wire::{ANTHROPIC_VERSION, WireOptions, request_body};
use crate::driver::{CallSettings, call_stream};
use crate::target::{KeyHeader, Posting, Target, joined};
use crate::{ConfigError, EventStream, Provider, ProviderConfig, ProviderKind, Request};

/// The Anthropic Messages API, streamed over SSE.
#[derive(Debug)]
pub struct AnthropicProvider {
    target: Arc<Target>,
    options: WireOptions,
    settings: CallSettings,
}

impl AnthropicProvider {
    /// Builds the client for `config`'s endpoint.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base = crate::url::normalize_base_url(config.base_url())?;
        let path = if base.ends_with("/v1") {
            "/messages"
        } else {
            "/v1/messages"
        };
        let url = joined(&base, path);
        let mut headers = HeaderMap::new();
        headers.insert(
            "anthropic-version",
            HeaderValue::from_static(ANTHROPIC_VERSION),
        );
        let kind = ProviderKind::Anthropic;
        let (target, settings) =
            Target::new(config, kind, (base, url), headers, KeyHeader::XApiKey)?;
        Ok(Self {
            target: Arc::new(target),
            options: WireOptions {
                thinking_budget_tokens: config.thinking_budget_tokens,
                cache_ttl: config.cache_ttl,
            },
            settings,
        })
    }
}

impl Provider for AnthropicProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let opener = Posting {
            target: self.target.clone(),
            body: Bytes::from(request_body(request, self.options)),
        };
        call_stream(Arc::new(opener), self.settings.clone())
    }
}
