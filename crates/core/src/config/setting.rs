//! The settings rein knows, and where a value can come from.

use std::fmt;
use std::path::PathBuf;

/// One configurable setting.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Setting {
    /// `model`.
    Model,
    /// `provider`.
    Provider,
    /// `base_url`.
    BaseUrl,
    /// The API key itself (flag or environment only, never a file).
    ApiKey,
    /// `api_key_env`.
    ApiKeyEnv,
    /// `temperature`.
    Temperature,
    /// `max_tokens`.
    MaxTokens,
    /// `context_window`.
    ContextWindow,
    /// `auto_compact`: whether rein summarises older turns on its own.
    AutoCompact,
    /// `compact_threshold`: the share of the usable window from which it does.
    CompactThreshold,
    /// `max_rounds`.
    MaxRounds,
    /// `retries`.
    Retries,
    /// `tool_output_budget_chars`.
    ToolOutputBudget,
    /// `tool_output_file_max_bytes`: the largest file one tool output is saved to.
    ToolOutputFileMax,
    /// `bash_timeout_secs`.
    BashTimeout,
    /// `ca_file`: extra certificate authorities to trust (a corporate proxy's).
    CaFile,
    /// `thinking_budget`: Anthropic extended thinking, in tokens.
    ThinkingBudget,
    /// `connect_timeout_secs`: making the connection to the model's server.
    ConnectTimeout,
    /// `first_byte_timeout_secs`: from the request to the first byte of the answer.
    FirstByteTimeout,
    /// `stream_idle_timeout_secs`: silence between two pieces of the answer.
    StreamIdleTimeout,
    /// `request_timeout_secs`: one model call in all, retries included.
    RequestTimeout,
    /// `checkpoint_max_file_bytes`: files larger than this are not saved in checkpoints.
    CheckpointMaxFileBytes,
    /// `checkpoint_keep_days`: checkpoints older than this are pruned.
    CheckpointKeepDays,
    /// `checkpoint_max_bytes`: the checkpoint store is pruned down to this.
    CheckpointMaxBytes,
}

impl Setting {
    /// Every setting that may appear in a config file.
    pub const FILE_KEYS: [Setting; 23] = [
        Setting::Model,
        Setting::Provider,
        Setting::BaseUrl,
        Setting::ApiKeyEnv,
        Setting::Temperature,
        Setting::MaxTokens,
        Setting::ContextWindow,
        Setting::AutoCompact,
        Setting::CompactThreshold,
        Setting::MaxRounds,
        Setting::Retries,
        Setting::ToolOutputBudget,
        Setting::ToolOutputFileMax,
        Setting::BashTimeout,
        Setting::CaFile,
        Setting::ThinkingBudget,
        Setting::ConnectTimeout,
        Setting::FirstByteTimeout,
        Setting::StreamIdleTimeout,
        Setting::RequestTimeout,
        Setting::CheckpointMaxFileBytes,
        Setting::CheckpointKeepDays,
        Setting::CheckpointMaxBytes,
    ];

    /// The key in a config file (`api_key` for the key, which files may not hold).
    pub fn key(self) -> &'static str {
        match self {
            Setting::Model => "model",
            Setting::Provider => "provider",
            Setting::BaseUrl => "base_url",
            Setting::ApiKey => "api_key",
            Setting::ApiKeyEnv => "api_key_env",
            Setting::Temperature => "temperature",
            Setting::MaxTokens => "max_tokens",
            Setting::ContextWindow => "context_window",
            Setting::AutoCompact => "auto_compact",
            Setting::CompactThreshold => "compact_threshold",
            Setting::MaxRounds => "max_rounds",
            Setting::Retries => "retries",
            Setting::ToolOutputBudget => "tool_output_budget_chars",
            Setting::ToolOutputFileMax => "tool_output_file_max_bytes",
            Setting::BashTimeout => "bash_timeout_secs",
            Setting::CaFile => "ca_file",
            Setting::ThinkingBudget => "thinking_budget",
            Setting::ConnectTimeout => "connect_timeout_secs",
            Setting::FirstByteTimeout => "first_byte_timeout_secs",
            Setting::StreamIdleTimeout => "stream_idle_timeout_secs",
            Setting::RequestTimeout => "request_timeout_secs",
            Setting::CheckpointMaxFileBytes => "checkpoint_max_file_bytes",
            Setting::CheckpointKeepDays => "checkpoint_keep_days",
            Setting::CheckpointMaxBytes => "checkpoint_max_bytes",
        }
    }

    /// The environment variable that sets it, for the settings that have one.
    pub fn env_var(self) -> Option<&'static str> {
        match self {
            Setting::Model => Some("REIN_MODEL"),
            Setting::Provider => Some("REIN_PROVIDER"),
            Setting::BaseUrl => Some("REIN_BASE_URL"),
            Setting::CaFile => Some("SSL_CERT_FILE"),
            Setting::ThinkingBudget => Some("REIN_THINKING_BUDGET"),
            Setting::ConnectTimeout => Some("REIN_CONNECT_TIMEOUT_SECS"),
            Setting::FirstByteTimeout => Some("REIN_FIRST_BYTE_TIMEOUT_SECS"),
            Setting::StreamIdleTimeout => Some("REIN_STREAM_IDLE_TIMEOUT_SECS"),
            Setting::RequestTimeout => Some("REIN_REQUEST_TIMEOUT_SECS"),
            Setting::ApiKey
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
            | Setting::CheckpointMaxFileBytes
            | Setting::CheckpointKeepDays
            | Setting::CheckpointMaxBytes => None,
        }
    }

    /// The command-line flag that sets it, for the few settings `rein` has a flag for.
    pub const fn flag(self) -> Option<&'static str> {
        match self {
            Setting::Model => Some("--model"),
            Setting::Provider => Some("--provider"),
            Setting::BaseUrl => Some("--base-url"),
            Setting::ApiKey => Some("--api-key"),
            Setting::MaxRounds => Some("--max-rounds"),
            Setting::ApiKeyEnv
            | Setting::Temperature
            | Setting::MaxTokens
            | Setting::ContextWindow
            | Setting::AutoCompact
            | Setting::CompactThreshold
            | Setting::Retries
            | Setting::ToolOutputBudget
            | Setting::ToolOutputFileMax
            | Setting::BashTimeout
            | Setting::CaFile
            | Setting::ThinkingBudget
            | Setting::ConnectTimeout
            | Setting::FirstByteTimeout
            | Setting::StreamIdleTimeout
            | Setting::RequestTimeout
            | Setting::CheckpointMaxFileBytes
            | Setting::CheckpointKeepDays
            | Setting::CheckpointMaxBytes => None,
        }
    }

    /// The setting a config-file key names.
    pub fn from_file_key(key: &str) -> Option<Setting> {
        Setting::FILE_KEYS
            .into_iter()
            .find(|setting| setting.key() == key)
    }
}

/// The flag of a setting that has one, for a `const`: asked about a setting without a flag,
/// the build fails instead of a made-up flag reaching a message.
pub(crate) const fn known_flag(setting: Setting) -> &'static str {
    match setting.flag() {
        Some(flag) => flag,
        None => panic!("this setting has no command-line flag"),
    }
}

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// rein's built-in default, or inferred from other settings.
    Default,
    /// `$REIN_HOME/config.toml`.
    UserFile(PathBuf),
    /// The project's `.rein/config.toml`.
    ProjectFile(PathBuf),
    /// An environment variable.
    Env(String),
    /// A variable from a `.env` file.
    DotEnv {
        /// The variable.
        var: String,
        /// The file.
        file: PathBuf,
    },
    /// A command-line flag (`--model`): one of [`Setting::flag`]'s.
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("built-in default"),
            Source::UserFile(path) | Source::ProjectFile(path) => {
                write!(f, "{}", path.display())
            }
            Source::Env(var) => write!(f, "environment variable {var}"),
            Source::DotEnv { var, file } => write!(f, "{var} in {}", file.display()),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_file_key_round_trips() {
        for setting in Setting::FILE_KEYS {
            assert_eq!(Setting::from_file_key(setting.key()), Some(setting));
        }
        assert_eq!(Setting::from_file_key("api_key"), None);
    }
}
