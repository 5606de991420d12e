//! Which wire format a model speaks: chosen by `--provider`, or inferred.

use std::str::FromStr;

use serde::{Deserialize, Serialize};
use strum::{Display, IntoStaticStr};

use crate::url::is_on_domain;

/// The two wire formats rein speaks.
/// Its name (`openai`, `anthropic`, `openai-responses`) is the one used on the command line
/// and in configuration.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, IntoStaticStr, Display,
)]
#[serde(rename_all = "lowercase")]
#[strum(serialize_all = "lowercase")]
pub enum ProviderKind {
    /// OpenAI Chat Completions and everything compatible with it.
    #[serde(rename = "openai")]
    #[strum(serialize = "openai")]
    OpenAi,
    /// The Anthropic Messages API.
    Anthropic,
    /// The OpenAI Responses API (`/v1/responses`), for models offered only there.
    #[serde(rename = "openai-responses")]
    #[strum(serialize = "openai-responses")]
    OpenAiResponses,
}

impl ProviderKind {
    /// The provider's own public endpoint, used when no base URL is configured (for
    /// Anthropic the host: the client appends `/v1/messages`).
    pub fn default_base_url(self) -> &'static str {
        match self {
            ProviderKind::OpenAi | ProviderKind::OpenAiResponses => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
        }
    }
}

/// A provider name that is not `openai`, `openai-responses` or `anthropic`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown provider {0:?}: expected \"openai\", \"openai-responses\" or \"anthropic\"")]
pub struct UnknownProvider(pub String);

impl FromStr for ProviderKind {
    type Err = UnknownProvider;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s.trim().to_ascii_lowercase().as_str() {
            "openai" | "openai-compatible" => Ok(ProviderKind::OpenAi),
            "anthropic" | "claude" => Ok(ProviderKind::Anthropic),
            "openai-responses" | "responses" => Ok(ProviderKind::OpenAiResponses),
            _ => Err(UnknownProvider(s.to_owned())),
        }
    }
}

/// Infers the provider when `--provider` is absent: a model starting with `claude`, or a base
/// URL on anthropic.com, means Anthropic; a model OpenAI offers only through the Responses API
/// on OpenAI's own endpoint means that API; anything else is OpenAI-compatible.
pub fn infer_provider(model: &str, base_url: Option<&str>) -> ProviderKind {
    let claude_model = model.trim().to_ascii_lowercase().starts_with("claude");
    let anthropic_host = base_url.is_some_and(|url| is_on_domain(url, "anthropic.com"));
    let openai_host = base_url.is_none_or(|url| is_on_domain(url, "api.openai.com"));
    if claude_model || anthropic_host {
        ProviderKind::Anthropic
    } else if openai_host && is_responses_only(model) {
        ProviderKind::OpenAiResponses
    } else {
        ProviderKind::OpenAi
    }
}

/// Whether OpenAI offers `model` only through the Responses API (the `-pro` reasoning
/// models, the Codex models, deep research, computer use).
pub fn is_responses_only(model: &str) -> bool {
    let name = model.trim().to_ascii_lowercase();
    let reasoning_pro = [
        "o1-pro",
        "o3-pro",
        "gpt-5-pro",
        "gpt-5.1-pro",
        "gpt-5.2-pro",
    ]
    .iter()
    .any(|pro| name.starts_with(pro));
    reasoning_pro
        || name.starts_with("codex-")
        || name.contains("-codex")
        || name.contains("deep-research")
        || name.starts_with("computer-use-preview")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_models_mean_anthropic() {
        assert_eq!(
            infer_provider("claude-sonnet-4-5", None),
            ProviderKind::Anthropic
        );
        assert_eq!(
            infer_provider("Claude-3-opus", None),
            ProviderKind::Anthropic
        );
        assert_eq!(infer_provider("gpt-4o", None), ProviderKind::OpenAi);
        assert_eq!(infer_provider("deepseek-chat", None), ProviderKind::OpenAi);
    }

    #[test]
    fn an_anthropic_base_url_means_anthropic() {
        for url in [
            "https://api.anthropic.com",
            "https://api.anthropic.com/v1/",
            "HTTPS://API.ANTHROPIC.COM:443",
            "https://user:pw@api.anthropic.com",
        ] {
            assert_eq!(
                infer_provider("my-model", Some(url)),
                ProviderKind::Anthropic,
                "{url}"
            );
        }
    }

    #[test]
    fn look_alike_hosts_and_other_endpoints_are_openai() {
        for url in [
            "https://anthropic.com.evil.example",
            "https://notanthropic.com/v1",
            "http://127.0.0.1:8080/v1?x=anthropic.com",
            "https://openrouter.ai/api/v1",
        ] {
            assert_eq!(
                infer_provider("anthropic/claude-sonnet-4.5", Some(url)),
                ProviderKind::OpenAi,
                "{url}"
            );
        }
    }

    #[test]
    fn a_claude_model_means_anthropic_whatever_the_url() {
        assert_eq!(
            infer_provider("claude-haiku-4-5", Some("http://127.0.0.1:9000")),
            ProviderKind::Anthropic
        );
    }

    #[test]
    fn models_offered_only_through_responses_use_it_on_openai() {
        for model in [
            "o3-pro",
            "gpt-5-codex",
            "codex-mini-latest",
            "o4-mini-deep-research",
        ] {
            assert_eq!(
                infer_provider(model, None),
                ProviderKind::OpenAiResponses,
                "{model}"
            );
            assert_eq!(
                infer_provider(model, Some("https://api.openai.com/v1")),
                ProviderKind::OpenAiResponses
            );
            // Elsewhere (a gateway, a local server) Chat Completions is what is spoken.
            assert_eq!(
                infer_provider(model, Some("https://openrouter.ai/api/v1")),
                ProviderKind::OpenAi
            );
        }
        for model in ["gpt-4o", "gpt-5", "o3", "o4-mini"] {
            assert_eq!(infer_provider(model, None), ProviderKind::OpenAi, "{model}");
        }
        assert_eq!(
            "openai-responses".parse(),
            Ok(ProviderKind::OpenAiResponses)
        );
    }

    #[test]
    fn parses_provider_names() {
        assert_eq!("openai".parse(), Ok(ProviderKind::OpenAi));
        assert_eq!(" Anthropic ".parse(), Ok(ProviderKind::Anthropic));
        assert_eq!(
            "gemini".parse::<ProviderKind>(),
            Err(UnknownProvider("gemini".into()))
        );
        assert_eq!(ProviderKind::Anthropic.to_string(), "anthropic");
    }
}
