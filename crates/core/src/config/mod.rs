//! Layered configuration: built-in defaults < `$REIN_HOME/config.toml` < the project's
//! `.rein/config.toml` < environment (with a `.env` filling gaps) < flags.
//!
//! Nothing here reads the process environment: the caller passes an env lookup, the
//! directories and the flag overrides, and gets back a resolved [`Config`] that says where
//! every setting came from. The reference for users is `docs/config.md`.

mod check;
mod claude;
mod de;
mod defaults;
pub(crate) mod dotenv;
mod error;
mod fields;
mod file;
mod layer;
mod mcp_servers;
mod project;
#[cfg(test)]
mod reference_tests;
mod repl;
mod resolve;
mod sandbox;
mod settings;
mod shown;
mod source;
mod spend;
mod tables;
mod tool_search;
mod untrusted;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

pub use defaults::{
    ANTHROPIC_DEFAULT_MODEL, DEEPSEEK_BASE_URL, DEEPSEEK_DEFAULT_MODEL, DEFAULT_MAX_ROUNDS,
    OPENAI_DEFAULT_MODEL,
};
pub use error::ConfigError;
pub use mcp_servers::{McpServerEntry, McpTransportEntry};
pub use project::{ProjectRoot, find_project_root};
pub use repl::{ReplSettings, has_repl_table, with_repl_mode};
pub use sandbox::SandboxSettings;
pub(crate) use sandbox::stricter as sandbox_stricter;
pub use tool_search::ToolSearchSettings;

/// The person's config file, under rein's home.
pub const USER_CONFIG_FILE: &str = "config.toml";
pub use check::{NotACost, check_max_cost};
pub use claude::CLAUDE_PROJECT_FILES;
pub use settings::{ENV_VARS, FLAGS, Settings};
pub use shown::ShownTableKey;
pub use source::Source;
pub use spend::PriceEntry;
pub use tables::{
    ConfiguredRule, DEFAULT_HOOK_TIMEOUT, EnvEntry, HookCommand, HookEvent, LeftOut, RuleLists,
    TableValue,
};

/// The model API rein talks to (one type for the whole of rein).
pub use rein_llm::ProviderKind;

/// An API key, kept in memory only: it is not serialisable and its `Debug` is redacted.
#[derive(Clone, PartialEq, Eq)]
pub struct ApiKey(String);

impl ApiKey {
    /// Wraps a key.
    pub fn new(key: impl Into<String>) -> Self {
        ApiKey(key.into())
    }

    /// The key itself, for the request header.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

/// Settings given on the command line: only those `rein` has a flag for (see [`FLAGS`]);
/// `None` means the flag was not given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Overrides {
    /// `-m/--model`.
    pub model: Option<String>,
    /// `--provider openai|anthropic`.
    pub provider: Option<ProviderKind>,
    /// `--base-url`.
    pub base_url: Option<String>,
    /// `--api-key`: the key itself.
    pub api_key: Option<ApiKey>,
    /// `--max-rounds N`.
    pub max_rounds: Option<u32>,
    /// `--max-cost USD`.
    pub max_cost: Option<f64>,
    /// `--max-tokens N` (the `max_session_tokens` setting).
    pub max_session_tokens: Option<u64>,
    /// `--allow RULE`, each given.
    pub allow: Vec<String>,
    /// `--deny RULE`, each given.
    pub deny: Vec<String>,
}

impl Overrides {
    /// Fills in what a resumed session implies (`-r ID`, `-c`): its model, unless `-m` was
    /// given, and with it its provider, unless `--provider` was given. A model given on the
    /// command line keeps its own inferred provider.
    pub fn resume_session(&mut self, model: &str, provider: ProviderKind) {
        if self.model.is_none() {
            self.model = Some(model.to_owned());
            self.provider.get_or_insert(provider);
        }
    }
}

/// Everything [`load_config`] reads; the caller gathers it from the process.
pub struct ConfigInputs<'a> {
    /// rein's home (`$REIN_HOME`, default `~/.rein`; see [`default_rein_home`]).
    pub rein_home: &'a Path,
    /// The working directory.
    pub cwd: &'a Path,
    /// The user's home directory: the upper bound of the `.env` search.
    pub home_dir: Option<&'a Path>,
    /// Looks up an environment variable (the process environment, or a map in tests).
    pub env: &'a dyn Fn(&str) -> Option<String>,
    /// The command-line flags.
    pub overrides: &'a Overrides,
}

impl fmt::Debug for ConfigInputs<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ConfigInputs")
            .field("rein_home", &self.rein_home)
            .field("cwd", &self.cwd)
            .field("home_dir", &self.home_dir)
            .field("overrides", &self.overrides)
            .finish_non_exhaustive()
    }
}

/// The resolved configuration: every setting has a value and a [`Source`]. The flat settings
/// are read through it (`config.max_rounds`): it dereferences to [`Settings`].
#[derive(Debug, Clone)]
pub struct Config {
    /// The model API.
    pub provider: ProviderKind,
    /// The model's name as the provider knows it.
    pub model: String,
    /// The API's base URL (OpenAI: up to `/v1`; Anthropic: without `/v1`).
    pub base_url: String,
    /// The API key, when one was found and may be sent; a local server may need none.
    pub api_key: Option<ApiKey>,
    /// The key found but not sent, under the variable it came from: the base URL in use came
    /// from an untrusted project (its value is masked all the same).
    pub withheld_api_key: Option<(String, ApiKey)>,
    /// When the base URL in use is a server on this machine that an untrusted project named:
    /// what to tell the person (the person's key is not sent there).
    pub keyless_endpoint: Option<String>,
    /// The flat settings, as the layers set them or by default.
    pub settings: Settings,
    /// rein's home directory.
    pub rein_home: PathBuf,
    /// The project root: the nearest ancestor with `.git`, else the working directory.
    pub project_root: PathBuf,
    /// Whether the working directory is inside a git repository.
    pub is_git_repo: bool,
    /// The config files that were read, in layer order.
    pub files: Vec<PathBuf>,
    /// The `.env` file that filled gaps in the environment, if one was found.
    pub dotenv_file: Option<PathBuf>,
    /// The permission rules of every layer (user file, project file, flags), in that order.
    pub rules: RuleLists,
    /// The hooks of every file (a project's run only once the project is trusted).
    pub hooks: Vec<HookCommand>,
    /// Variables passed to commands and hooks although their names look secret
    /// (`[secrets] pass_env`).
    pub pass_env: Vec<String>,
    /// The MCP servers of every file, a later file's replacing a same-named one (a
    /// project's start only once the project is trusted).
    pub mcp_servers: Vec<McpServerEntry>,
    /// The servers a later file replaced with a same-named one, in the order they were
    /// replaced: when the replacing file is an untrusted project's, the replaced one starts.
    pub mcp_servers_replaced: Vec<McpServerEntry>,
    /// The `[sandbox]` settings of every file.
    pub sandbox: SandboxSettings,
    /// The `[repl]` settings of every file.
    pub repl: ReplSettings,
    /// The `[tool_search]` settings of every file.
    pub tool_search: ToolSearchSettings,
    /// The keys of `[sandbox]`, `[repl]`, `[tool_search]` and `[pricing]` each file set, in
    /// layer order, for `rein config --show`.
    pub table_values: Vec<TableValue>,
    /// `[pricing."MODEL"]` of every file: prices that add to or override rein's table.
    pub pricing: BTreeMap<String, PriceEntry>,
    /// The secret-looking variables of the `.env` file (their values are masked).
    pub dotenv_secrets: crate::secrets::SecretValues,
    /// What the project's config file set that was ignored because the project is not
    /// trusted (allow rules, `pass_env`, `base_url`, `api_key_env`, `ca_file`).
    pub untrusted_ignored: Vec<String>,
    /// Those of them that are table keys (allow rules, `[secrets] pass_env`), key by key.
    pub untrusted_tables: Vec<LeftOut>,
    /// What a project's `.env` set that was ignored because the project is not trusted (or
    /// the trust does not cover that file), each with its file: `REIN_BASE_URL in /p/.env`.
    pub untrusted_dotenv: Vec<String>,
    /// The home directory: the upper bound of the `.env` search and of what the trust in a
    /// project covers.
    pub home_dir: Option<PathBuf>,
    /// Variables the settings files set for commands and hooks (a project's only once it
    /// is trusted).
    pub env: Vec<EnvEntry>,
    /// What Claude Code settings files held that rein does not apply, one warning each.
    pub claude_ignored: Vec<String>,
    /// Each flat setting a layer set, as written there (TOML), for `rein config --show`.
    shown: BTreeMap<String, String>,
    sources: BTreeMap<String, Source>,
}

impl std::ops::Deref for Config {
    type Target = Settings;

    fn deref(&self) -> &Settings {
        &self.settings
    }
}

impl Config {
    /// The API key, when one was found.
    pub fn api_key(&self) -> Option<&str> {
        self.api_key.as_ref().map(ApiKey::expose)
    }

    /// Where the value of the setting `key` (`"max_rounds"`, or `"api_key"` for the key)
    /// came from.
    pub fn source(&self, key: &str) -> &Source {
        debug_assert!(
            key == "api_key" || layer::keys().contains(&key),
            "{key} is no setting"
        );
        self.sources.get(key).unwrap_or(&Source::Default)
    }

    /// The variable the API key was read from (`OPENAI_API_KEY`), or `api_key` when it came
    /// from the command line: the name its value is masked under.
    pub fn api_key_variable(&self) -> Option<&str> {
        self.api_key.as_ref()?;
        Some(match self.source("api_key") {
            Source::Env(var) | Source::DotEnv { var, .. } => var.as_str(),
            Source::Default | Source::UserFile(_) | Source::ProjectFile(_) | Source::Flag(_) => {
                "api_key"
            }
        })
    }

    /// Where the API key came from, in words for an error message (never the key itself):
    /// `the environment variable OPENAI_API_KEY`, `OPENAI_API_KEY in /src/app/.env`,
    /// `--api-key`; a variable named by `api_key_env` says which file named it.
    pub fn api_key_origin(&self) -> Option<String> {
        self.api_key.as_ref()?;
        let origin = match self.source("api_key") {
            Source::Env(var) => format!("the environment variable {var}"),
            Source::DotEnv { var, file } => format!("{var} in {}", file.display()),
            Source::Flag(flag) => return Some((*flag).to_owned()),
            other => return Some(other.to_string()),
        };
        Some(match self.source("api_key_env") {
            Source::UserFile(file) | Source::ProjectFile(file) => format!(
                "{origin}, the variable api_key_env names in {}",
                file.display()
            ),
            Source::Default | Source::Env(_) | Source::DotEnv { .. } | Source::Flag(_) => origin,
        })
    }

    /// The variables searched for the API key, in order (for a "no API key" message).
    pub fn api_key_variables(&self) -> Vec<String> {
        resolve::key_variables(self.provider, self.api_key_env.as_deref())
    }

    /// The trusted projects of this rein home.
    pub fn trust_store(&self) -> crate::trust::TrustStore {
        crate::trust::TrustStore::new(&self.rein_home, self.home_dir.as_deref())
    }

    /// Every flat setting with its value (as a layer wrote it, or `default`) and where it
    /// came from, in key order; the resolved endpoint (provider, model, base URL) as used.
    pub fn settings_shown(&self) -> Vec<(&'static str, String, &Source)> {
        layer::keys()
            .iter()
            .map(|key| {
                let value = match *key {
                    "provider" => self.provider.to_string(),
                    "model" => format!("\"{}\"", self.model),
                    "base_url" => format!("\"{}\"", self.base_url),
                    key => self
                        .shown
                        .get(key)
                        .cloned()
                        .unwrap_or_else(|| "(default)".to_owned()),
                };
                (*key, value, self.source(key))
            })
            .collect()
    }

    /// Where session files live.
    pub fn sessions_dir(&self) -> PathBuf {
        self.rein_home.join("sessions")
    }
}

/// Loads and resolves the configuration; see the module documentation for the layers.
pub fn load_config(inputs: &ConfigInputs<'_>) -> Result<Config, ConfigError> {
    resolve::load(inputs)
}

/// rein's home: `$REIN_HOME` (a leading `~/` means the home directory), else `~/.rein`;
/// `None` when neither is known.
pub fn default_rein_home(
    env: &dyn Fn(&str) -> Option<String>,
    home_dir: Option<&Path>,
) -> Option<PathBuf> {
    match env("REIN_HOME").filter(|value| !value.is_empty()) {
        Some(value) => Some(expand_tilde(&value, home_dir)),
        None => home_dir.map(|home| home.join(".rein")),
    }
}

/// Replaces a leading `~` or `~/` with the home directory, when it is known.
fn expand_tilde(value: &str, home_dir: Option<&Path>) -> PathBuf {
    match (value.strip_prefix('~'), home_dir) {
        (Some(""), Some(home)) => home.to_path_buf(),
        (Some(rest), Some(home)) if rest.starts_with('/') => {
            home.join(rest.trim_start_matches('/'))
        }
        _ => PathBuf::from(value),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rein_home_prefers_the_variable_and_expands_tilde() {
        let home = Path::new("/home/ann");
        let set = |name: &str| (name == "REIN_HOME").then(|| "~/custom".to_owned());
        assert_eq!(
            default_rein_home(&set, Some(home)),
            Some(PathBuf::from("/home/ann/custom"))
        );
        let unset = |_: &str| None;
        assert_eq!(
            default_rein_home(&unset, Some(home)),
            Some(PathBuf::from("/home/ann/.rein"))
        );
        assert_eq!(default_rein_home(&unset, None), None);
    }

    #[test]
    fn provider_names_parse_and_bad_ones_are_explained() {
        assert_eq!(
            "Anthropic".parse::<ProviderKind>(),
            Ok(ProviderKind::Anthropic)
        );
        assert_eq!("openai".parse::<ProviderKind>(), Ok(ProviderKind::OpenAi));
        let err = "gemini".parse::<ProviderKind>().unwrap_err().to_string();
        assert!(
            err.contains("\"gemini\"") && err.contains("openai"),
            "{err}"
        );
    }

    #[test]
    fn api_key_debug_is_redacted() {
        let key = ApiKey::new("sk-secret-123");
        assert_eq!(format!("{key:?}"), "ApiKey(<redacted>)");
        assert_eq!(key.expose(), "sk-secret-123");
    }

    #[test]
    fn resuming_takes_the_sessions_model_unless_one_was_given() {
        let mut none = Overrides::default();
        none.resume_session("claude-sonnet-4-5", ProviderKind::Anthropic);
        assert_eq!(none.model.as_deref(), Some("claude-sonnet-4-5"));
        assert_eq!(none.provider, Some(ProviderKind::Anthropic));

        let mut given = Overrides {
            model: Some("gpt-4o".into()),
            ..Overrides::default()
        };
        given.resume_session("claude-sonnet-4-5", ProviderKind::Anthropic);
        assert_eq!(given.model.as_deref(), Some("gpt-4o"));
        assert_eq!(given.provider, None);
    }
}
