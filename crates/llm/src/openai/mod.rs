//! The OpenAI-compatible Chat Completions client.

pub(crate) mod stream;
pub mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::Value;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::HeaderMap;

use crate::driver::{ByteStream, CallSettings, Opener, call_stream};
use crate::openai::wire::{
    BodyOptions, Extras, MaxTokensField, body_with_tools, request_body, tools_json, with_extras,
};
use crate::target::{KeyHeader, Target, joined};
use crate::text_calls::{ToolFormat, recognise_text_calls};
use crate::toolspec::ToolsCache;
use crate::{ConfigError, EventStream, LlmError, Provider, ProviderConfig, ProviderKind, Request};

/// A Chat Completions endpoint (OpenAI, DeepSeek, Qwen, Kimi, OpenRouter, vLLM, llama.cpp,
/// Ollama, LM Studio, ...), streamed over SSE.
#[derive(Debug)]
pub struct OpenAiProvider {
    shared: Arc<Shared>,
    settings: CallSettings,
}

#[derive(Debug)]
struct Shared {
    target: Target,
    max_field: MaxTokensField,
    /// Set once a server has rejected `stream_options` and accepted the request without it.
    omit_usage_option: AtomicBool,
    /// Set once a server has rejected `prompt_cache_key` and accepted the request without it.
    omit_cache_key: AtomicBool,
    /// Set when tools go as text: configured so, or once the server refused `tools` and took
    /// the request with the tools described in the system prompt instead.
    text_tools: AtomicBool,
    /// Set once the server has taken a request with `tools`: from then on a request is not
    /// kept for describing its tools as text (a copy of the whole conversation each round).
    tools_taken: AtomicBool,
    /// The `tools` array of the last request.
    tools_json: ToolsCache,
    /// Ollama's `options.num_ctx`, when configured.
    num_ctx: Option<u32>,
}

impl Shared {
    /// The request's body in `format`, the `tools` array taken from the last request when
    /// its tools are the same.
    fn body(&self, request: &Request, format: ToolFormat) -> Vec<u8> {
        let options = self.options(format);
        if format == ToolFormat::Text || request.tools.is_empty() {
            return request_body(request, options);
        }
        (self.tools_json).with(&request.tools, tools_json, |tools| {
            body_with_tools(request, options, Some(tools))
        })
    }

    fn options(&self, tool_format: ToolFormat) -> BodyOptions {
        BodyOptions {
            max_field: self.max_field,
            tool_format,
            num_ctx: self.num_ctx,
        }
    }

    fn tool_format(&self) -> ToolFormat {
        if self.text_tools.load(Ordering::Relaxed) {
            ToolFormat::Text
        } else {
            ToolFormat::Native
        }
    }

    /// Posts `body` with its optional members (`stream_options`, `prompt_cache_key`), less
    /// those the server is known to refuse; on a refusal that may be about one of them, drops
    /// what it names (else `stream_options` first, then the key) and asks again.
    async fn post(&self, body: Bytes, cache_key: Option<&str>) -> Result<ByteStream, LlmError> {
        let post = |extras: Extras<'_>| {
            let body = Bytes::from(with_extras(&body, extras));
            (self.target.http).post(&self.target.url, self.target.headers.clone(), body)
        };
        let mut extras = Extras {
            usage: !self.omit_usage_option.load(Ordering::Relaxed),
            cache_key: cache_key.filter(|_| !self.omit_cache_key.load(Ordering::Relaxed)),
        };
        let mut refused = None;
        loop {
            let result = post(extras).await;
            let Err(LlmError::BadRequest {
                status: status @ (400 | 422),
                message,
            }) = &result
            else {
                if result.is_ok() && refused.is_some() {
                    // Remembered only once the request went through without it: the
                    // complaint may have been about another parameter.
                    if !extras.usage {
                        self.omit_usage_option.store(true, Ordering::Relaxed);
                    }
                    if extras.cache_key.is_none() && cache_key.is_some() {
                        self.omit_cache_key.store(true, Ordering::Relaxed);
                    }
                }
                return match (result, refused) {
                    // Still refused after dropping what it may have been: the first
                    // complaint is the one to show.
                    (Err(LlmError::BadRequest { .. }), Some(first)) => Err(first),
                    (result, _) => result,
                };
            };
            if !refuses_a_parameter(message) {
                return match refused {
                    Some(first) => Err(first),
                    None => result,
                };
            }
            let names_key = message.to_ascii_lowercase().contains("prompt_cache_key");
            if extras.cache_key.is_some() && names_key {
                extras.cache_key = None;
            } else if extras.usage {
                extras.usage = false;
            } else if extras.cache_key.is_some() {
                extras.cache_key = None;
            } else {
                return match refused {
                    Some(first) => Err(first),
                    None => result,
                };
            }
            tracing::info!(%message, "the server refused a parameter; retrying without it");
            if refused.is_none() {
                refused = Some(LlmError::BadRequest {
                    status: *status,
                    message: message.clone(),
                });
            }
        }
    }
}

impl OpenAiProvider {
    /// Builds the client for `config`'s endpoint.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base = crate::url::normalize_base_url(config.base_url())?;
        let url = joined(&base, "/chat/completions");
        let base_url = base.strip_suffix("/chat/completions").unwrap_or(&base);
        let kind = ProviderKind::OpenAi;
        let (target, settings) = Target::new(
            config,
            kind,
            (base_url.to_owned(), url),
            HeaderMap::new(),
            KeyHeader::Bearer,
        )?;
        // OpenAI's own reasoning models refuse `max_tokens`; most other servers only know it.
        let max_field = if crate::url::is_on_domain(&base, "api.openai.com") {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
        Ok(Self {
            shared: Arc::new(Shared {
                target,
                max_field,
                omit_usage_option: AtomicBool::new(false),
                omit_cache_key: AtomicBool::new(false),
                text_tools: AtomicBool::new(config.tool_format == ToolFormat::Text),
                tools_taken: AtomicBool::new(false),
                tools_json: ToolsCache::default(),
                num_ctx: config.ollama_num_ctx,
            }),
            settings,
        })
    }
}

/// Wordings of servers that refuse `stream_options` (by name, or as an unknown parameter);
/// any other 400 is about something else and is reported as it is.
const UNKNOWN_PARAMETER_WORDINGS: &[&str] = &[
    "stream_options",
    "prompt_cache_key",
    "include_usage",
    "unrecognized request argument",
    "unknown parameter",
    "unknown field",
    "unrecognized parameter",
    "unsupported parameter",
    "extra inputs are not permitted",
    "extra_forbidden",
    "additional properties",
    "unexpected keyword argument",
];

/// Wordings of servers that take no `tools` (llama.cpp without `--jinja`, vLLM without a
/// tool parser, Ollama models whose template has none).
const TOOLS_REFUSED_WORDINGS: &[&str] = &[
    "tools",
    "tool choice",
    "tool_choice",
    "tool calling",
    "function calling",
];

/// Whether a refused request's message is about its tools.
fn refuses_tools(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    TOOLS_REFUSED_WORDINGS.iter().any(|w| lower.contains(w))
}

/// Whether a refused request's message may be about an optional member we sent.
fn refuses_a_parameter(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    UNKNOWN_PARAMETER_WORDINGS.iter().any(|w| lower.contains(w))
}

impl Provider for OpenAiProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let format = self.shared.tool_format();
        let body = self.shared.body(request, format);
        // Kept to describe the tools as text should the server refuse them, until it has
        // taken them once.
        let with_tools = (format == ToolFormat::Native
            && !request.tools.is_empty()
            && !self.shared.tools_taken.load(Ordering::Relaxed))
        .then(|| Arc::new(request.clone()));
        let opener = Attempt {
            shared: self.shared.clone(),
            body: Bytes::from(body),
            cache_key: request.cache_key.as_deref().map(Arc::from),
            with_tools,
        };
        let events = call_stream(Arc::new(opener), self.settings.clone());
        if request.tools.is_empty() {
            events
        } else {
            recognise_text_calls(events)
        }
    }

    fn model_listing<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Option<crate::ModelListing>> {
        let shared = &self.shared;
        Box::pin(crate::listing::fetch(&shared.target, model))
    }

    fn context_window<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Option<crate::ServerWindow>> {
        let shared = &self.shared;
        Box::pin(crate::probe::probe(&shared.target, model))
    }
}

struct Attempt {
    shared: Arc<Shared>,
    /// The body without the optional members.
    body: Bytes,
    /// The request's `prompt_cache_key`, if it has one.
    cache_key: Option<Arc<str>>,
    /// The request, while its tools go natively.
    with_tools: Option<Arc<Request>>,
}

impl Opener for Attempt {
    fn explain(&self, error: LlmError) -> LlmError {
        self.shared.target.endpoint.explain(error)
    }

    fn open(&self) -> BoxFuture<'static, Result<ByteStream, LlmError>> {
        let shared = self.shared.clone();
        let body = self.body.clone();
        let cache_key = self.cache_key.clone();
        let with_tools = self.with_tools.clone();
        Box::pin(async move {
            let as_text = |request: &Request| {
                Bytes::from(request_body(request, shared.options(ToolFormat::Text)))
            };
            let Some(request) = with_tools else {
                return shared.post(body, cache_key.as_deref()).await;
            };
            // An earlier attempt learned that the server takes no tools.
            if shared.tool_format() == ToolFormat::Text {
                return shared.post(as_text(&request), cache_key.as_deref()).await;
            }
            match shared.post(body, cache_key.as_deref()).await {
                Ok(stream) => {
                    shared.tools_taken.store(true, Ordering::Relaxed);
                    Ok(stream)
                }
                Err(LlmError::BadRequest {
                    status: status @ (400 | 422),
                    message,
                }) if refuses_tools(&message) => {
                    tracing::info!(%message, "the server refused tools; describing them as text");
                    let retried = shared.post(as_text(&request), cache_key.as_deref()).await;
                    if retried.is_ok() {
                        shared.text_tools.store(true, Ordering::Relaxed);
                    }
                    retried.map_err(|error| match error {
                        LlmError::BadRequest { .. } => LlmError::BadRequest { status, message },
                        other => other,
                    })
                }
                other => other,
            }
        })
    }

    fn open_unstreamed(&self) -> Option<BoxFuture<'static, Result<ByteStream, LlmError>>> {
        let shared = self.shared.clone();
        let body = match (&self.with_tools, shared.tool_format()) {
            (Some(request), ToolFormat::Text) => {
                request_body(request, shared.options(ToolFormat::Text))
            }
            (Some(_) | None, _) => self.body.to_vec(),
        };
        let mut value: Value = serde_json::from_slice(&body).ok()?;
        value["stream"] = Value::Bool(false);
        let body = Bytes::from(serde_json::to_vec(&value).ok()?);
        Some(Box::pin(async move {
            shared
                .target
                .http
                .post(&shared.target.url, shared.target.headers.clone(), body)
                .await
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ToolSpec;

    #[test]
    fn only_complaints_about_tools_switch_to_text() {
        for refusal in [
            "tools param requires --jinja flag",
            "\"auto\" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set",
            "registry.ollama.ai/library/gemma:2b does not support tools",
        ] {
            assert!(refuses_tools(refusal), "{refusal}");
        }
        for other in [
            "This model's maximum context length is 8192 tokens",
            "messages: field required",
        ] {
            assert!(!refuses_tools(other), "{other}");
        }
    }

    #[test]
    fn a_request_carries_its_own_tools_when_they_change_between_rounds() {
        let provider = OpenAiProvider::new(&ProviderConfig::new(ProviderKind::OpenAi)).unwrap();
        let tool = |name: &str| ToolSpec {
            name: name.to_owned(),
            description: format!("{name} things"),
            parameters: Arc::new(serde_json::json!({"type": "object", "properties": {}})),
        };
        let mut request = Request {
            model: "gpt-4o".to_owned(),
            tools: vec![tool("read_file")],
            ..Request::default()
        };
        let tool_names = |body: Vec<u8>| -> Vec<String> {
            let body: Value = serde_json::from_slice(&body).unwrap();
            body["tools"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        };
        let native = ToolFormat::Native;
        let first = provider.shared.body(&request, native);
        assert_eq!(
            first,
            request_body(&request, provider.shared.options(native))
        );
        assert_eq!(provider.shared.body(&request, native), first);
        // A tool found by tool_search joins the list; one taken away leaves it.
        request.tools.push(tool("mcp__docs__search"));
        assert_eq!(
            tool_names(provider.shared.body(&request, native)),
            ["read_file", "mcp__docs__search"]
        );
        request.tools[0].description = "reads a file".to_owned();
        let body: Value = serde_json::from_slice(&provider.shared.body(&request, native)).unwrap();
        assert_eq!(body["tools"][0]["function"]["description"], "reads a file");
        request.tools.remove(0);
        assert_eq!(
            tool_names(provider.shared.body(&request, native)),
            ["mcp__docs__search"]
        );
        request.tools.clear();
        let body: Value = serde_json::from_slice(&provider.shared.body(&request, native)).unwrap();
        assert!(body.get("tools").is_none(), "{body}");
    }

    #[test]
    fn only_complaints_about_a_parameter_drop_stream_options() {
        for refusal in [
            "Unrecognized request argument supplied: stream_options",
            "stream_options: Extra inputs are not permitted",
            "[{'type': 'extra_forbidden', 'loc': ('body', 'stream_options')}]",
            "Unknown parameter: 'stream_options.include_usage'.",
        ] {
            assert!(refuses_a_parameter(refusal), "{refusal}");
        }
        for other in [
            "No connected db.",
            "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`",
            "messages: field required",
        ] {
            assert!(!refuses_a_parameter(other), "{other}");
        }
    }
}
