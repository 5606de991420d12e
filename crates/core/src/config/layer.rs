//! One layer of settings (a file, the environment, the flags), validated, and how layers
//! stack.

use std::path::PathBuf;
use std::time::Duration;

use rein_tools::bash::BASH_MAX_TIMEOUT;

use super::setting::known_flag;
use super::tables::{ConfiguredRule, Tables};
use super::{ApiKey, ConfigError, Overrides, ProviderKind, Setting, Source};

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sourced<T> {
    pub(crate) value: T,
    pub(crate) source: Source,
}

impl<T> Sourced<T> {
    pub(crate) fn new(value: T, source: Source) -> Self {
        Sourced { value, source }
    }
}

/// The settings one layer sets; `None` leaves the value of the layers below.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layer {
    pub(crate) model: Option<Sourced<String>>,
    pub(crate) provider: Option<Sourced<ProviderKind>>,
    pub(crate) base_url: Option<Sourced<String>>,
    pub(crate) api_key_env: Option<Sourced<String>>,
    pub(crate) temperature: Option<Sourced<f32>>,
    pub(crate) max_tokens: Option<Sourced<u32>>,
    pub(crate) context_window: Option<Sourced<u64>>,
    pub(crate) auto_compact: Option<Sourced<bool>>,
    pub(crate) compact_threshold: Option<Sourced<f64>>,
    pub(crate) max_rounds: Option<Sourced<u32>>,
    pub(crate) retries: Option<Sourced<u32>>,
    pub(crate) tool_output_budget: Option<Sourced<usize>>,
    pub(crate) tool_output_file_max: Option<Sourced<u64>>,
    pub(crate) bash_timeout: Option<Sourced<Duration>>,
    pub(crate) ca_file: Option<Sourced<PathBuf>>,
    pub(crate) thinking_budget: Option<Sourced<u32>>,
    pub(crate) connect_timeout: Option<Sourced<Duration>>,
    pub(crate) first_byte_timeout: Option<Sourced<Duration>>,
    pub(crate) stream_idle_timeout: Option<Sourced<Duration>>,
    pub(crate) request_timeout: Option<Sourced<Duration>>,
    pub(crate) checkpoint_max_file_bytes: Option<Sourced<u64>>,
    pub(crate) checkpoint_keep_days: Option<Sourced<u32>>,
    pub(crate) checkpoint_max_bytes: Option<Sourced<u64>>,
    /// Rules, hooks and passed variables: added to, never replaced.
    pub(crate) tables: Tables,
}

impl Layer {
    /// Puts `above` on top of this layer: what it sets wins.
    pub(crate) fn stack(&mut self, above: Layer) {
        let Layer {
            model,
            provider,
            base_url,
            api_key_env,
            temperature,
            max_tokens,
            context_window,
            auto_compact,
            compact_threshold,
            max_rounds,
            retries,
            tool_output_budget,
            tool_output_file_max,
            bash_timeout,
            ca_file,
            thinking_budget,
            connect_timeout,
            first_byte_timeout,
            stream_idle_timeout,
            request_timeout,
            checkpoint_max_file_bytes,
            checkpoint_keep_days,
            checkpoint_max_bytes,
            tables,
        } = above;
        self.tables.stack(tables);
        fn over<T>(below: &mut Option<T>, above: Option<T>) {
            if above.is_some() {
                *below = above;
            }
        }
        over(&mut self.model, model);
        over(&mut self.provider, provider);
        over(&mut self.base_url, base_url);
        over(&mut self.api_key_env, api_key_env);
        over(&mut self.temperature, temperature);
        over(&mut self.max_tokens, max_tokens);
        over(&mut self.context_window, context_window);
        over(&mut self.auto_compact, auto_compact);
        over(&mut self.compact_threshold, compact_threshold);
        over(&mut self.max_rounds, max_rounds);
        over(&mut self.retries, retries);
        over(&mut self.tool_output_budget, tool_output_budget);
        over(&mut self.tool_output_file_max, tool_output_file_max);
        over(&mut self.bash_timeout, bash_timeout);
        over(&mut self.ca_file, ca_file);
        over(&mut self.thinking_budget, thinking_budget);
        over(&mut self.connect_timeout, connect_timeout);
        over(&mut self.first_byte_timeout, first_byte_timeout);
        over(&mut self.stream_idle_timeout, stream_idle_timeout);
        over(&mut self.request_timeout, request_timeout);
        over(
            &mut self.checkpoint_max_file_bytes,
            checkpoint_max_file_bytes,
        );
        over(&mut self.checkpoint_keep_days, checkpoint_keep_days);
        over(&mut self.checkpoint_max_bytes, checkpoint_max_bytes);
    }

    /// Where the value of a network time limit goes.
    pub(crate) fn timeout_mut(
        &mut self,
        setting: Setting,
    ) -> Option<&mut Option<Sourced<Duration>>> {
        match setting {
            Setting::ConnectTimeout => Some(&mut self.connect_timeout),
            Setting::FirstByteTimeout => Some(&mut self.first_byte_timeout),
            Setting::StreamIdleTimeout => Some(&mut self.stream_idle_timeout),
            Setting::RequestTimeout => Some(&mut self.request_timeout),
            Setting::Model
            | Setting::Provider
            | Setting::BaseUrl
            | Setting::ApiKey
            | Setting::ApiKeyEnv
            | Setting::Temperature
            | Setting::MaxTokens
            | Setting::ContextWindow
            | Setting::AutoCompact
            | Setting::CompactThreshold
            | Setting::MaxRounds
            | Setting::Retries
            | Setting::ToolOutputBudget
            | Setting::ToolOutputFileMax
            | Setting::BashTimeout
            | Setting::CaFile
            | Setting::ThinkingBudget
            | Setting::CheckpointMaxFileBytes
            | Setting::CheckpointKeepDays
            | Setting::CheckpointMaxBytes => None,
        }
    }

    /// The flags as a layer, validated like any other; also returns the `--api-key` value.
    pub(crate) fn from_overrides(
        flags: &Overrides,
    ) -> Result<(Layer, Option<ApiKey>), ConfigError> {
        // Looked up when rein is compiled: `Overrides` holds only settings with a flag.
        const MODEL: &str = known_flag(Setting::Model);
        const PROVIDER: &str = known_flag(Setting::Provider);
        const BASE_URL: &str = known_flag(Setting::BaseUrl);
        const MAX_ROUNDS: &str = known_flag(Setting::MaxRounds);
        const API_KEY: &str = known_flag(Setting::ApiKey);
        let invalid = |setting: Setting, flag: &'static str| {
            move |reason: String| ConfigError::InvalidValue {
                key: setting.key().to_owned(),
                origin: Source::Flag(flag).to_string(),
                reason,
            }
        };
        let mut layer = Layer::default();
        if let Some(model) = &flags.model {
            let model = check_model(model).map_err(invalid(Setting::Model, MODEL))?;
            layer.model = Some(Sourced::new(model, Source::Flag(MODEL)));
        }
        if let Some(provider) = flags.provider {
            layer.provider = Some(Sourced::new(provider, Source::Flag(PROVIDER)));
        }
        if let Some(url) = &flags.base_url {
            let url = check_base_url(url).map_err(invalid(Setting::BaseUrl, BASE_URL))?;
            layer.base_url = Some(Sourced::new(url, Source::Flag(BASE_URL)));
        }
        if let Some(value) = flags.max_rounds {
            at_least(u64::from(value), 1).map_err(invalid(Setting::MaxRounds, MAX_ROUNDS))?;
            layer.max_rounds = Some(Sourced::new(value, Source::Flag(MAX_ROUNDS)));
        }
        for (texts, list, name) in [
            (&flags.allow, &mut layer.tables.rules.allow, "--allow"),
            (&flags.deny, &mut layer.tables.rules.deny, "--deny"),
        ] {
            for text in texts {
                crate::permissions::Rule::parse(text, None).map_err(|reason| {
                    ConfigError::InvalidValue {
                        key: name.trim_start_matches('-').to_owned(),
                        origin: format!("flag {name}"),
                        reason,
                    }
                })?;
                list.push(ConfiguredRule {
                    text: text.clone(),
                    source: Source::Flag(name),
                });
            }
        }
        let key = match &flags.api_key {
            Some(key) if key.expose().trim().is_empty() => {
                return Err(invalid(Setting::ApiKey, API_KEY)(
                    "the key is empty".to_owned(),
                ));
            }
            other => other.clone(),
        };
        Ok((layer, key))
    }
}

pub(crate) fn check_model(model: &str) -> Result<String, String> {
    let model = model.trim();
    if model.is_empty() {
        return Err("the model name is empty".to_owned());
    }
    Ok(model.to_owned())
}

/// A base URL checked and normalised by rein-llm, which reads it with a URL parser.
pub(crate) fn check_base_url(url: &str) -> Result<String, String> {
    rein_llm::normalize_base_url(url).map_err(|err| err.to_string())
}

pub(crate) fn check_api_key_env(var: &str) -> Result<String, String> {
    let valid = !var.is_empty()
        && !var.starts_with(|c: char| c.is_ascii_digit())
        && var.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if valid {
        Ok(var.to_owned())
    } else {
        Err(format!(
            "\"{var}\" is not an environment variable name (letters, digits and _)"
        ))
    }
}

pub(crate) fn check_temperature(value: f64) -> Result<f32, String> {
    if value.is_finite() && (0.0..=2.0).contains(&value) {
        Ok(value as f32)
    } else {
        Err(format!("{value} is outside 0 to 2"))
    }
}

/// The smallest `context_window` accepted: rein's system prompt and tool descriptions alone
/// take about 3,000 tokens.
pub(crate) const MIN_CONTEXT_WINDOW_TOKENS: u64 = 4096;

/// The lowest and highest `compact_threshold` accepted: below, rein would summarise almost
/// every round; above, the emergency layer (95%) would come first.
pub(crate) const COMPACT_THRESHOLD_RANGE: std::ops::RangeInclusive<f64> = 0.2..=0.95;

pub(crate) fn check_compact_threshold(value: f64) -> Result<f64, String> {
    if COMPACT_THRESHOLD_RANGE.contains(&value) {
        return Ok(value);
    }
    let hint = if (20.0..=95.0).contains(&value) {
        format!(" (a share of the window: {} means {value}%)", value / 100.0)
    } else {
        String::new()
    };
    Err(format!(
        "{value} is outside {} to {}{hint}",
        COMPACT_THRESHOLD_RANGE.start(),
        COMPACT_THRESHOLD_RANGE.end()
    ))
}

pub(crate) fn check_bash_timeout(value: Duration) -> Result<Duration, String> {
    if value.is_zero() || value > BASH_MAX_TIMEOUT {
        Err(format!(
            "{} s is outside 1 to {} seconds",
            value.as_secs_f64(),
            BASH_MAX_TIMEOUT.as_secs()
        ))
    } else {
        Ok(value)
    }
}

/// The smallest cap accepted for a saved tool output, in bytes (1 MiB): below it, ordinary
/// outputs would be cut in the very file meant to keep them whole.
pub(crate) const TOOL_OUTPUT_FILE_MIN_BYTES: u64 = 1024 * 1024;

pub(crate) fn check_tool_output_file_max(value: i64) -> Result<u64, String> {
    match u64::try_from(value) {
        Ok(bytes) if bytes >= TOOL_OUTPUT_FILE_MIN_BYTES => Ok(bytes),
        _ => Err(format!(
            "{value} is less than {TOOL_OUTPUT_FILE_MIN_BYTES} bytes (1 MiB), the smallest \
             file size rein accepts"
        )),
    }
}

/// The longest network time limit accepted: a day.
pub(crate) const NETWORK_TIMEOUT_MAX: Duration = Duration::from_secs(24 * 60 * 60);

pub(crate) fn check_network_timeout(value: Duration) -> Result<Duration, String> {
    if value < Duration::from_secs(1) || value > NETWORK_TIMEOUT_MAX {
        Err(format!(
            "{} s is outside 1 to {} seconds",
            value.as_secs_f64(),
            NETWORK_TIMEOUT_MAX.as_secs()
        ))
    } else {
        Ok(value)
    }
}

/// Anthropic's smallest thinking budget, in tokens.
pub(crate) const THINKING_BUDGET_MIN_TOKENS: u32 = 1024;

pub(crate) fn check_thinking_budget(value: i64) -> Result<u32, String> {
    match u32::try_from(value) {
        Ok(tokens) if tokens >= THINKING_BUDGET_MIN_TOKENS => Ok(tokens),
        _ => Err(format!(
            "{value} is not a number of tokens from {THINKING_BUDGET_MIN_TOKENS} up (the \
             smallest budget Anthropic accepts)"
        )),
    }
}

pub(crate) fn at_least(value: u64, min: u64) -> Result<(), String> {
    if value < min {
        Err(format!("{value} is less than {min}"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_must_be_http_and_lose_their_trailing_slash() {
        assert_eq!(
            check_base_url("http://127.0.0.1:11434/v1/").unwrap(),
            "http://127.0.0.1:11434/v1"
        );
        assert_eq!(
            check_base_url("localhost:8080").unwrap_err(),
            "\"localhost:8080\" is not an http:// or https:// URL"
        );
        assert!(check_base_url("https://").is_err());
    }

    #[test]
    fn variable_names_are_checked() {
        assert!(check_api_key_env("MY_KEY_2").is_ok());
        assert!(check_api_key_env("my-key").is_err());
        assert!(check_api_key_env("2KEY").is_err());
        assert!(check_api_key_env("").is_err());
    }

    #[test]
    fn flags_are_validated_like_files_and_named_in_errors() {
        let flags = Overrides {
            max_rounds: Some(0),
            ..Overrides::default()
        };
        let err = Layer::from_overrides(&flags).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid value for \"max_rounds\" in flag --max-rounds: 0 is less than 1"
        );
        let flags = Overrides {
            base_url: Some("localhost:8080".into()),
            ..Overrides::default()
        };
        let err = Layer::from_overrides(&flags).unwrap_err().to_string();
        assert!(err.contains("in flag --base-url: "), "{err}");
        let flags = Overrides {
            api_key: Some(ApiKey::new(" ")),
            ..Overrides::default()
        };
        let err = Layer::from_overrides(&flags).unwrap_err().to_string();
        assert!(err.contains("in flag --api-key: the key is empty"), "{err}");
    }

    #[test]
    fn a_later_layer_wins_only_where_it_sets_something() {
        let mut below = Layer {
            model: Some(Sourced::new("a".to_owned(), Source::Default)),
            retries: Some(Sourced::new(1, Source::Default)),
            ..Layer::default()
        };
        let above = Layer {
            model: Some(Sourced::new("b".to_owned(), Source::Flag("--model"))),
            ..Layer::default()
        };
        below.stack(above);
        assert_eq!(below.model.unwrap().value, "b");
        assert_eq!(below.retries.unwrap().value, 1);
    }
}
