//! The Anthropic Messages client.

pub(crate) mod stream;
pub mod wire;

use std::sync::Arc;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderValue};

use crate::anthropic::wire::{
    ANTHROPIC_VERSION, WireOptions, body_with_tools, request_body, tools_json,
};
use crate::driver::{CallSettings, call_stream};
use crate::target::{KeyHeader, Posting, Target, joined};
use crate::toolspec::ToolsCache;
use crate::{ConfigError, EventStream, Provider, ProviderConfig, ProviderKind, Request};

/// The Anthropic Messages API, streamed over SSE.
#[derive(Debug)]
pub struct AnthropicProvider {
    target: Arc<Target>,
    options: WireOptions,
    settings: CallSettings,
    /// The `tools` array of the last request.
    tools_json: ToolsCache,
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
            tools_json: ToolsCache::default(),
        })
    }
}

impl AnthropicProvider {
    /// The request's body, the `tools` array taken from the last request when its tools are
    /// the same.
    fn body(&self, request: &Request) -> Vec<u8> {
        if request.tools.is_empty() {
            return request_body(request, self.options);
        }
        let render = |tools: &[crate::ToolSpec]| tools_json(tools, self.options);
        (self.tools_json).with(&request.tools, render, |tools| {
            body_with_tools(request, self.options, Some(tools))
        })
    }
}

impl Provider for AnthropicProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let opener = Posting {
            target: self.target.clone(),
            body: Bytes::from(self.body(request)),
        };
        call_stream(Arc::new(opener), self.settings.clone())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;
    use crate::ToolSpec;

    #[test]
    fn each_request_carries_its_own_tools_and_the_breakpoint_on_the_last() {
        let provider =
            AnthropicProvider::new(&ProviderConfig::new(ProviderKind::Anthropic)).unwrap();
        let tool = |name: &str| {
            ToolSpec::new(
                name,
                format!("{name} things"),
                serde_json::json!({"type": "object"}),
            )
        };
        let mut request = Request {
            model: "claude-sonnet-4-5".to_owned(),
            tools: vec![tool("read_file"), tool("grep")],
            ..Request::default()
        };
        let tools = |provider: &AnthropicProvider, request: &Request| -> Vec<(String, bool)> {
            let body: Value = serde_json::from_slice(&provider.body(request)).unwrap();
            body["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|t| {
                    (
                        t["name"].as_str().unwrap().to_owned(),
                        t.get("cache_control").is_some(),
                    )
                })
                .collect()
        };
        let first = provider.body(&request);
        assert_eq!(first, request_body(&request, provider.options));
        assert_eq!(provider.body(&request), first);
        assert_eq!(
            tools(&provider, &request),
            [("read_file".to_owned(), false), ("grep".to_owned(), true)]
        );
        request.tools.push(tool("mcp__docs__search"));
        assert_eq!(
            tools(&provider, &request),
            [
                ("read_file".to_owned(), false),
                ("grep".to_owned(), false),
                ("mcp__docs__search".to_owned(), true)
            ]
        );
        request.tools.truncate(1);
        assert_eq!(tools(&provider, &request), [("read_file".to_owned(), true)]);
        request.tools.clear();
        assert!(tools(&provider, &request).is_empty());
    }
}
