//! The OpenAI Responses API client (`POST /v1/responses`), for models offered only there.

pub(crate) mod stream;
pub(crate) mod wire;

use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::HeaderMap;

use crate::driver::{CallSettings, call_stream};
use crate::target::{KeyHeader, Posting, Target, joined};
use crate::{ConfigError, EventStream, Provider, ProviderConfig, ProviderKind, Request};

/// A Responses API endpoint, streamed over SSE.
#[derive(Debug)]
pub struct ResponsesProvider {
    target: Arc<Target>,
    settings: CallSettings,
}

impl ResponsesProvider {
    /// Builds the client for `config`'s endpoint.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base = crate::url::normalize_base_url(config.base_url())?;
        let url = joined(&base, "/responses");
        let base = base.strip_suffix("/responses").unwrap_or(&base).to_owned();
        let kind = ProviderKind::OpenAiResponses;
        let (target, settings) = Target::new(
            config,
            kind,
            (base, url),
            HeaderMap::new(),
            KeyHeader::Bearer,
        )?;
        Ok(Self {
            target: Arc::new(target),
            settings,
        })
    }
}

impl Provider for ResponsesProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let opener = Posting {
            target: self.target.clone(),
            body: Bytes::from(wire::request_body(request)),
        };
        call_stream(Arc::new(opener), self.settings.clone())
    }
}
