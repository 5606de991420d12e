//! Building a provider from one configuration value.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

use crate::text_calls::ToolFormat;
use crate::{
    AnthropicProvider, BaseUrlError, NetworkConfig, OpenAiProvider, Provider, ProviderKind,
    ResponsesProvider, RetryPolicy,
};

/// Everything needed to talk to one model endpoint.
#[derive(Clone, PartialEq)]
pub struct ProviderConfig {
    /// Which wire format the endpoint speaks.
    pub kind: ProviderKind,
    /// The endpoint; `None` means the provider's public API.
    pub base_url: Option<String>,
    /// The API key; local servers often need none.
    pub api_key: Option<String>,
    /// Where the key came from, for the person reading an authentication error
    /// (`the environment variable OPENAI_API_KEY`, `--api-key`, ...); never the key itself.
    pub api_key_origin: Option<String>,
    /// Proxies, trust and time limits.
    pub network: NetworkConfig,
    /// How failed calls are retried.
    pub retry: RetryPolicy,
    /// Anthropic extended thinking: the tokens the model may think for; `None` leaves it off.
    pub thinking_budget_tokens: Option<u32>,
    /// How long Anthropic's prompt cache keeps the prefixes rein marks.
    pub cache_ttl: crate::CacheTtl,
    /// How tools reach the model (Chat Completions): natively, or described as text.
    pub tool_format: ToolFormat,
    /// Ollama's `options.num_ctx`: the window Ollama loads the model with.
    pub ollama_num_ctx: Option<u32>,
}

impl ProviderConfig {
    /// A configuration for `kind`'s public endpoint with default network and retry settings.
    pub fn new(kind: ProviderKind) -> Self {
        Self {
            kind,
            base_url: None,
            api_key: None,
            api_key_origin: None,
            network: NetworkConfig::default(),
            retry: RetryPolicy::default(),
            thinking_budget_tokens: None,
            cache_ttl: crate::CacheTtl::default(),
            tool_format: ToolFormat::Native,
            ollama_num_ctx: None,
        }
    }

    /// The endpoint in use: the configured base URL, or the provider's default.
    pub fn base_url(&self) -> &str {
        self.base_url
            .as_deref()
            .unwrap_or_else(|| self.kind.default_base_url())
    }
}

// Written by hand so that the key never reaches a log line.
impl fmt::Debug for ProviderConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ProviderConfig")
            .field("kind", &self.kind)
            .field("base_url", &self.base_url)
            .field("api_key", &self.api_key.as_ref().map(|_| "<redacted>"))
            .field("api_key_origin", &self.api_key_origin)
            .field("network", &self.network)
            .field("retry", &self.retry)
            .field("thinking_budget_tokens", &self.thinking_budget_tokens)
            .field("cache_ttl", &self.cache_ttl)
            .field("tool_format", &self.tool_format)
            .field("ollama_num_ctx", &self.ollama_num_ctx)
            .finish()
    }
}

/// Why a provider could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// The extra CA file could not be used.
    #[error("the CA file {path} cannot be used: {message}")]
    CaFile {
        /// The file named in the configuration.
        path: PathBuf,
        /// What is wrong with it.
        message: String,
    },
    /// A proxy URL is not valid.
    #[error("the proxy {url:?} is not valid: {message}")]
    Proxy {
        /// The proxy as configured.
        url: String,
        /// What is wrong with it.
        message: String,
    },
    /// The base URL cannot be used.
    #[error("the base URL {0}")]
    BaseUrl(#[from] BaseUrlError),
    /// The API key cannot be sent in an HTTP header.
    #[error("the API key contains characters that cannot be sent in an HTTP header")]
    ApiKey,
    /// The HTTP client could not be set up.
    #[error("the HTTP client could not be set up: {0}")]
    Client(String),
}

/// Builds the provider `config` describes.
pub fn build_provider(config: &ProviderConfig) -> Result<Arc<dyn Provider>, ConfigError> {
    Ok(match config.kind {
        ProviderKind::OpenAi => Arc::new(OpenAiProvider::new(config)?),
        ProviderKind::Anthropic => Arc::new(AnthropicProvider::new(config)?),
        ProviderKind::OpenAiResponses => Arc::new(ResponsesProvider::new(config)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_output_hides_the_key() {
        let mut config = ProviderConfig::new(ProviderKind::OpenAi);
        config.api_key = Some("sk-secret-123".into());
        let shown = format!("{config:?}");
        assert!(!shown.contains("sk-secret-123"), "{shown}");
        assert!(shown.contains("<redacted>"));
    }

    #[test]
    fn a_bad_base_url_is_rejected_with_the_reason() {
        let mut config = ProviderConfig::new(ProviderKind::OpenAi);
        config.base_url = Some("localhost:8080/v1".into());
        let err = build_provider(&config).err().unwrap();
        assert_eq!(
            err.to_string(),
            "the base URL \"localhost:8080/v1\" is not an http:// or https:// URL"
        );
    }

    #[test]
    fn a_missing_ca_file_is_a_clear_error() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ProviderConfig::new(ProviderKind::OpenAi);
        config.network.ca_file = Some(dir.path().join("nope.pem"));
        let err = build_provider(&config).err().unwrap();
        assert!(err.to_string().contains("nope.pem"), "{err}");
    }

    #[test]
    fn a_file_without_certificates_is_rejected() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("empty.pem");
        std::fs::write(&path, "not a certificate\n").unwrap();
        let mut config = ProviderConfig::new(ProviderKind::Anthropic);
        config.network.ca_file = Some(path);
        assert!(matches!(
            build_provider(&config),
            Err(ConfigError::CaFile { .. })
        ));
    }

    #[test]
    fn a_bad_proxy_is_rejected() {
        let mut config = ProviderConfig::new(ProviderKind::OpenAi);
        config.network.https_proxy = Some("http://[::1".into());
        assert!(matches!(
            build_provider(&config),
            Err(ConfigError::Proxy { .. })
        ));
    }
}
