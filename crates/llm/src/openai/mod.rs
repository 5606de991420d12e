//! The OpenAI-compatible Chat Completions client.

pub(crate) mod stream;
pub mod wire;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{AUTHORIZATION, HeaderMap, HeaderValue};

use crate::driver::{ByteStream, CallSettings, Opener, call_stream};
use crate::explain::Endpoint;
use crate::http::HttpClient;
use crate::openai::wire::{Extras, MaxTokensField, request_body, with_extras};
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
    http: HttpClient,
    url: String,
    headers: HeaderMap,
    max_field: MaxTokensField,
    endpoint: Endpoint,
    /// Set once a server has rejected `stream_options` and accepted the request without it.
    omit_usage_option: AtomicBool,
    /// Set once a server has rejected `prompt_cache_key` and accepted the request without it.
    omit_cache_key: AtomicBool,
}

impl OpenAiProvider {
    /// Builds the client for `config`'s endpoint.
    pub fn new(config: &ProviderConfig) -> Result<Self, ConfigError> {
        let base = crate::url::normalize_base_url(config.base_url())?;
        let url = if base.ends_with("/chat/completions") {
            base.clone()
        } else {
            format!("{base}/chat/completions")
        };
        let mut headers = HeaderMap::new();
        if let Some(key) = config.api_key.as_deref().filter(|k| !k.trim().is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {}", key.trim()))
                .map_err(|_| ConfigError::ApiKey)?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        let endpoint = Endpoint {
            kind: ProviderKind::OpenAi,
            base_url: base
                .strip_suffix("/chat/completions")
                .unwrap_or(&base)
                .to_owned(),
            url: url.clone(),
            key_sent: headers.contains_key(AUTHORIZATION),
            key_origin: config.api_key_origin.clone(),
        };
        // OpenAI's own reasoning models refuse `max_tokens`; most other servers only know it.
        let max_field = if crate::url::is_on_domain(&base, "api.openai.com") {
            MaxTokensField::MaxCompletionTokens
        } else {
            MaxTokensField::MaxTokens
        };
        let http = HttpClient::new(&config.network)?;
        let settings = CallSettings::new(
            ProviderKind::OpenAi,
            config.retry.clone(),
            &config.network,
            &url,
        );
        Ok(Self {
            shared: Arc::new(Shared {
                http,
                url,
                headers,
                max_field,
                endpoint,
                omit_usage_option: AtomicBool::new(false),
                omit_cache_key: AtomicBool::new(false),
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

/// Whether a refused request's message may be about an optional member we sent.
fn refuses_a_parameter(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    UNKNOWN_PARAMETER_WORDINGS.iter().any(|w| lower.contains(w))
}

impl Provider for OpenAiProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let body = request_body(request, self.shared.max_field);
        let opener = Attempt {
            shared: self.shared.clone(),
            body: Bytes::from(body),
            cache_key: request.cache_key.as_deref().map(Arc::from),
        };
        call_stream(Arc::new(opener), self.settings.clone())
    }

    fn model_listing<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Option<crate::ModelListing>> {
        let shared = &self.shared;
        Box::pin(crate::listing::fetch(
            &shared.http,
            &shared.endpoint.base_url,
            &shared.headers,
            model,
        ))
    }

    fn context_window<'a>(&'a self, model: &'a str) -> BoxFuture<'a, Option<crate::ServerWindow>> {
        let shared = &self.shared;
        Box::pin(crate::probe::probe(
            &shared.http,
            &shared.endpoint.base_url,
            &shared.headers,
            model,
        ))
    }
}

struct Attempt {
    shared: Arc<Shared>,
    /// The body without the optional members.
    body: Bytes,
    /// The request's `prompt_cache_key`, if it has one.
    cache_key: Option<Arc<str>>,
}

impl Opener for Attempt {
    fn explain(&self, error: LlmError) -> LlmError {
        self.shared.endpoint.explain(error)
    }

    fn open(&self) -> BoxFuture<'static, Result<ByteStream, LlmError>> {
        let shared = self.shared.clone();
        let body = self.body.clone();
        let cache_key = self.cache_key.clone();
        Box::pin(async move {
            let post = |extras: Extras<'_>| {
                let body = Bytes::from(with_extras(&body, extras));
                shared.http.post(&shared.url, shared.headers.clone(), body)
            };
            let mut extras = Extras {
                usage: !shared.omit_usage_option.load(Ordering::Relaxed),
                cache_key: cache_key
                    .as_deref()
                    .filter(|_| !shared.omit_cache_key.load(Ordering::Relaxed)),
            };
            let mut refused = None;
            loop {
                let result = post(extras).await;
                let Err(LlmError::BadRequest {
                    status: status @ (400 | 422),
                    message,
                }) = &result
                else {
                    if result.is_ok() {
                        // Remembered only once the request went through without it: the
                        // complaint may have been about another parameter.
                        let dropped_usage = !extras.usage;
                        let dropped_key = extras.cache_key.is_none() && cache_key.is_some();
                        if refused.is_some() && dropped_usage {
                            shared.omit_usage_option.store(true, Ordering::Relaxed);
                        }
                        if refused.is_some() && dropped_key {
                            shared.omit_cache_key.store(true, Ordering::Relaxed);
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
                // Drop what the complaint names; a complaint naming nothing drops
                // `stream_options` first, then the cache key.
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
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
