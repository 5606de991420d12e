//! The flat settings of rein, declared once: each field of [`Settings`] is a config-file key
//! (its `serde` name), with its type and its check, and its default in `Settings::default`.
//! Reading, layering, provenance and the "did you mean" hint all follow from the declaration.
//!
//! Adding a setting: a field here with its doc line and its default (and, for a variable, a
//! line in [`ENV_VARS`]), and its row in `docs/config.md`, which a test holds to this file.

use std::path::PathBuf;
use std::time::Duration;

use serde::Deserialize;

use super::ProviderKind;
use super::check;

/// Every flat setting, as the layers resolve it: a field without a default is `None` when no
/// layer sets it. Read through [`super::Config`], which dereferences to it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Settings {
    /// `model` as configured; [`super::Config::model`] holds the one in use.
    #[serde(deserialize_with = "check::model")]
    pub model: Option<String>,
    /// `provider` as configured; [`super::Config::provider`] holds the one in use.
    #[serde(deserialize_with = "check::provider")]
    pub provider: Option<ProviderKind>,
    /// `base_url` as configured (normalised); [`super::Config::base_url`] holds the one in use.
    #[serde(deserialize_with = "check::base_url")]
    pub base_url: Option<String>,
    /// `api_key_env`: the variable the key is read from (otherwise the default order).
    #[serde(deserialize_with = "check::variable_name")]
    pub api_key_env: Option<String>,
    /// `temperature`: sampling temperature; `None` leaves it to the provider.
    #[serde(deserialize_with = "check::temperature")]
    pub temperature: Option<f32>,
    /// `max_tokens`: the output token limit; `None` leaves it to the model client, which
    /// sends the model's default where the API requires one (Anthropic).
    #[serde(deserialize_with = "check::some_positive")]
    pub max_tokens: Option<u32>,
    /// `context_window`: the model's window in tokens; otherwise the server or rein's table
    /// says (see [`crate::context`]).
    #[serde(rename = "context_window", deserialize_with = "check::context_window")]
    pub context_window_tokens: Option<u64>,
    /// `vision`: whether the model takes images (read_file on a picture, `@shot.png`);
    /// `None` lets rein's table of models decide.
    #[serde(deserialize_with = "check::boolean")]
    pub vision: Option<bool>,
    /// `auto_compact`: whether rein summarises older turns on its own.
    #[serde(deserialize_with = "check::boolean")]
    pub auto_compact: bool,
    /// `compact_threshold`: the share of the usable window from which it does.
    #[serde(deserialize_with = "check::compact_threshold")]
    pub compact_threshold: f64,
    /// `max_rounds`: the most model calls one request may take.
    #[serde(deserialize_with = "check::positive")]
    pub max_rounds: u32,
    /// `retries`: retries of a transient API failure.
    #[serde(deserialize_with = "check::count")]
    pub retries: u32,
    /// `tool_output_budget_chars`: tool results above this many characters go to a file.
    #[serde(deserialize_with = "check::positive")]
    pub tool_output_budget_chars: usize,
    /// `tool_output_file_max_bytes`: the largest file one tool output is saved to; past it
    /// the file is cut and says so.
    #[serde(deserialize_with = "check::output_file_max")]
    pub tool_output_file_max_bytes: u64,
    /// `bash_timeout_secs`: the bash timeout when the model gives none.
    #[serde(rename = "bash_timeout_secs", deserialize_with = "check::bash_timeout")]
    pub bash_default_timeout: Duration,
    /// `ca_file`: a PEM file of extra certificate authorities to trust besides the system's
    /// and the bundled ones (a relative path is relative to the file that names it).
    #[serde(deserialize_with = "check::path")]
    pub ca_file: Option<PathBuf>,
    /// `thinking_budget`: Anthropic extended thinking, in tokens; `None` is off.
    #[serde(
        rename = "thinking_budget",
        deserialize_with = "check::thinking_budget"
    )]
    pub thinking_budget_tokens: Option<u32>,
    /// `connect_timeout_secs`: making the connection to the model's server.
    #[serde(
        rename = "connect_timeout_secs",
        deserialize_with = "check::network_timeout"
    )]
    pub connect_timeout: Duration,
    /// `first_byte_timeout_secs`: from the request to the first byte of the answer; `None`
    /// leaves it to the client, which gives servers on this machine longer.
    #[serde(
        rename = "first_byte_timeout_secs",
        deserialize_with = "check::network_timeout"
    )]
    pub first_byte_timeout: Option<Duration>,
    /// `stream_idle_timeout_secs`: silence between two pieces of the answer.
    #[serde(
        rename = "stream_idle_timeout_secs",
        deserialize_with = "check::network_timeout"
    )]
    pub stream_idle_timeout: Duration,
    /// `request_timeout_secs`: one model call in all, retries included.
    #[serde(
        rename = "request_timeout_secs",
        deserialize_with = "check::network_timeout"
    )]
    pub request_timeout: Duration,
    /// `tool_format`: `native` (the default) or `text`, for servers that take no `tools`.
    #[serde(deserialize_with = "check::tool_format")]
    pub tool_format: rein_llm::ToolFormat,
    /// `ollama_num_ctx`: the window Ollama loads the model with (`options.num_ctx`).
    #[serde(deserialize_with = "check::some_positive")]
    pub ollama_num_ctx: Option<u32>,
    /// `cache_ttl`: how long Anthropic keeps a cached prefix (`5m` unless set).
    #[serde(deserialize_with = "check::cache_ttl")]
    pub cache_ttl: Option<rein_llm::CacheTtl>,
    /// `max_cost` (or `--max-cost`): US dollars the session may spend; `None` is no limit.
    #[serde(deserialize_with = "check::max_cost")]
    pub max_cost: Option<f64>,
    /// `max_session_tokens` (or `--max-tokens`): input plus output tokens the session may
    /// use; `None` is no limit.
    #[serde(deserialize_with = "check::some_positive")]
    pub max_session_tokens: Option<u64>,
    /// `checkpoint_max_file_bytes`: files larger than this are not saved in checkpoints.
    #[serde(deserialize_with = "check::positive")]
    pub checkpoint_max_file_bytes: u64,
    /// `checkpoint_keep_days`: sessions' checkpoints older than this are pruned.
    #[serde(deserialize_with = "check::positive")]
    pub checkpoint_keep_days: u32,
    /// `checkpoint_max_bytes`: the checkpoint store is pruned, oldest sessions first, down
    /// to this.
    #[serde(deserialize_with = "check::positive")]
    pub checkpoint_max_bytes: u64,
    /// `import_claude_settings`: whether the person's `~/.claude/settings.json` applies too.
    #[serde(deserialize_with = "check::boolean")]
    pub import_claude_settings: bool,
}

impl Default for Settings {
    /// Every setting at its default (`docs/config.md` lists them).
    fn default() -> Self {
        Settings {
            model: None,
            provider: None,
            base_url: None,
            api_key_env: None,
            temperature: None,
            max_tokens: None,
            context_window_tokens: None,
            vision: None,
            auto_compact: true,
            compact_threshold: crate::context::DEFAULT_COMPACT_THRESHOLD,
            max_rounds: super::DEFAULT_MAX_ROUNDS,
            retries: rein_llm::DEFAULT_MAX_RETRIES,
            tool_output_budget_chars: rein_tools::context::DEFAULT_OUTPUT_BUDGET_CHARS,
            tool_output_file_max_bytes: rein_tools::context::DEFAULT_OFFLOAD_MAX_BYTES,
            bash_default_timeout: rein_tools::context::BASH_DEFAULT_TIMEOUT,
            ca_file: None,
            thinking_budget_tokens: None,
            connect_timeout: rein_llm::DEFAULT_CONNECT_TIMEOUT,
            first_byte_timeout: None,
            stream_idle_timeout: rein_llm::DEFAULT_STREAM_IDLE_TIMEOUT,
            request_timeout: rein_llm::DEFAULT_REQUEST_TIMEOUT,
            tool_format: Default::default(),
            ollama_num_ctx: None,
            cache_ttl: None,
            max_cost: None,
            max_session_tokens: None,
            checkpoint_max_file_bytes: crate::checkpoint::DEFAULT_MAX_FILE_BYTES,
            checkpoint_keep_days: crate::checkpoint::DEFAULT_KEEP_DAYS,
            checkpoint_max_bytes: crate::checkpoint::DEFAULT_MAX_BYTES,
            import_claude_settings: false,
        }
    }
}

impl Settings {
    /// How checkpoints are kept, from the three `checkpoint_*` settings.
    pub fn checkpoints(&self) -> crate::checkpoint::CheckpointSettings {
        crate::checkpoint::CheckpointSettings {
            max_file_bytes: self.checkpoint_max_file_bytes,
            keep_days: self.checkpoint_keep_days,
            max_bytes: self.checkpoint_max_bytes,
        }
    }
}

/// The settings an environment variable sets: `(key, variable)`.
pub const ENV_VARS: &[(&str, &str)] = &[
    ("model", "REIN_MODEL"),
    ("provider", "REIN_PROVIDER"),
    ("base_url", "REIN_BASE_URL"),
    // The variable OpenSSL and most HTTP clients read for extra trusted certificates.
    ("ca_file", "SSL_CERT_FILE"),
    ("thinking_budget", "REIN_THINKING_BUDGET"),
    ("connect_timeout_secs", "REIN_CONNECT_TIMEOUT_SECS"),
    ("first_byte_timeout_secs", "REIN_FIRST_BYTE_TIMEOUT_SECS"),
    ("stream_idle_timeout_secs", "REIN_STREAM_IDLE_TIMEOUT_SECS"),
    ("request_timeout_secs", "REIN_REQUEST_TIMEOUT_SECS"),
];

/// The settings a command-line flag sets (see [`super::Overrides`]): `(key, flag)`. The API
/// key is among them although no file may hold it.
pub const FLAGS: &[(&str, &str)] = &[
    ("model", "--model"),
    ("provider", "--provider"),
    ("base_url", "--base-url"),
    ("api_key", "--api-key"),
    ("max_rounds", "--max-rounds"),
    ("max_cost", "--max-cost"),
    ("max_session_tokens", "--max-tokens"),
];

/// The flag of `key`, for [`super::Source::Flag`].
pub(crate) fn flag(key: &str) -> &'static str {
    FLAGS
        .iter()
        .find(|(k, _)| *k == key)
        .map_or("", |(_, flag)| flag)
}
