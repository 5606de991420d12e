//! Stacking the layers and filling what none of them set: the provider, the key, the base
//! URL and the model are inferred from each other and from which API keys are present.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use rein_llm::DEFAULT_MAX_RETRIES;
use rein_tools::context::{
    BASH_DEFAULT_TIMEOUT, DEFAULT_OFFLOAD_MAX_BYTES, DEFAULT_OUTPUT_BUDGET_CHARS,
};

use super::defaults::{
    ANTHROPIC_DEFAULT_MODEL, DEEPSEEK_BASE_URL, DEEPSEEK_DEFAULT_MODEL, OPENAI_DEFAULT_MODEL,
};
use super::dotenv::Env;
use super::file::read_layer;
use super::layer::{
    Layer, Sourced, check_base_url, check_model, check_network_timeout, check_thinking_budget,
};
use super::setting::known_flag;
use super::{
    ApiKey, Config, ConfigError, ConfigInputs, ProviderKind, Setting, Source, Timeouts,
    find_project_root,
};
use crate::agent::DEFAULT_MAX_ROUNDS;
use crate::trust::TrustStore;

const REIN_API_KEY: &str = "REIN_API_KEY";
const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
const DEEPSEEK_API_KEY: &str = "DEEPSEEK_API_KEY";
const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
const ANTHROPIC_KEY_PREFIX: &str = "sk-ant-";

/// Reads every layer and resolves the result.
pub(crate) fn load(inputs: &ConfigInputs<'_>) -> Result<Config, ConfigError> {
    let project = find_project_root(inputs.cwd);
    let env = Env::load(inputs.env, inputs.cwd, inputs.home_dir, &project.dir)?;
    let (files, from_files, untrusted_ignored) = read_files(inputs.rein_home, &project.dir)?;
    let from_env = env_layer(&env)?;
    let (from_flags, flag_key) = Layer::from_overrides(inputs.overrides)?;

    // OPENAI_BASE_URL sits in the environment layer but only applies to OpenAI, which is
    // not known until everything else is stacked; keep the layers' URLs apart until then.
    let base_urls = BaseUrls {
        above_files: from_flags
            .base_url
            .clone()
            .or_else(|| from_env.base_url.clone()),
        from_files: from_files.base_url.clone(),
    };
    let mut stacked = from_files;
    stacked.stack(from_env);
    stacked.stack(from_flags);
    let endpoint = resolve_endpoint(&stacked, base_urls, flag_key, &env)?;

    // Only Anthropic thinks within `max_tokens`; other providers ignore the budget. An unset
    // limit stays unset: the client knows each model's default and makes room for thinking.
    if endpoint.provider.value == ProviderKind::Anthropic {
        check_room_for_thinking(
            stacked.max_tokens.as_ref(),
            stacked.thinking_budget.as_ref(),
        )?;
    }
    let auto_compact = or_default(stacked.auto_compact, true);
    let compact_threshold = or_default(
        stacked.compact_threshold,
        crate::context::DEFAULT_COMPACT_THRESHOLD,
    );
    let max_rounds = or_default(stacked.max_rounds, DEFAULT_MAX_ROUNDS);
    let retries = or_default(stacked.retries, DEFAULT_MAX_RETRIES);
    let budget = or_default(stacked.tool_output_budget, DEFAULT_OUTPUT_BUDGET_CHARS);
    let file_max = or_default(stacked.tool_output_file_max, DEFAULT_OFFLOAD_MAX_BYTES);
    let bash_timeout = or_default(stacked.bash_timeout, BASH_DEFAULT_TIMEOUT);
    let checkpoint_file = or_default(
        stacked.checkpoint_max_file_bytes,
        crate::checkpoint::DEFAULT_MAX_FILE_BYTES,
    );
    let checkpoint_days = or_default(
        stacked.checkpoint_keep_days,
        crate::checkpoint::DEFAULT_KEEP_DAYS,
    );
    let checkpoint_bytes = or_default(
        stacked.checkpoint_max_bytes,
        crate::checkpoint::DEFAULT_MAX_BYTES,
    );
    let connect_timeout = or_default(
        stacked.connect_timeout.clone(),
        rein_llm::DEFAULT_CONNECT_TIMEOUT,
    );
    let stream_idle_timeout = or_default(
        stacked.stream_idle_timeout.clone(),
        rein_llm::DEFAULT_STREAM_IDLE_TIMEOUT,
    );
    let request_timeout = or_default(
        stacked.request_timeout.clone(),
        rein_llm::DEFAULT_REQUEST_TIMEOUT,
    );

    let source = |value: Option<&Source>| value.cloned().unwrap_or(Source::Default);
    let sources = BTreeMap::from([
        (Setting::Provider, endpoint.provider.source.clone()),
        (Setting::Model, endpoint.model.source.clone()),
        (Setting::BaseUrl, endpoint.base_url.source.clone()),
        (
            Setting::ApiKey,
            source(endpoint.key.as_ref().map(|(_, s)| s)),
        ),
        (
            Setting::ApiKeyEnv,
            source(stacked.api_key_env.as_ref().map(|s| &s.source)),
        ),
        (
            Setting::Temperature,
            source(stacked.temperature.as_ref().map(|s| &s.source)),
        ),
        (
            Setting::MaxTokens,
            source(stacked.max_tokens.as_ref().map(|s| &s.source)),
        ),
        (
            Setting::ContextWindow,
            source(stacked.context_window.as_ref().map(|s| &s.source)),
        ),
        (Setting::AutoCompact, auto_compact.source),
        (Setting::CompactThreshold, compact_threshold.source),
        (Setting::MaxRounds, max_rounds.source),
        (Setting::Retries, retries.source),
        (Setting::ToolOutputBudget, budget.source),
        (Setting::ToolOutputFileMax, file_max.source),
        (Setting::BashTimeout, bash_timeout.source),
        (
            Setting::CaFile,
            source(stacked.ca_file.as_ref().map(|s| &s.source)),
        ),
        (
            Setting::ThinkingBudget,
            source(stacked.thinking_budget.as_ref().map(|s| &s.source)),
        ),
        (Setting::ConnectTimeout, connect_timeout.source),
        (
            Setting::FirstByteTimeout,
            source(stacked.first_byte_timeout.as_ref().map(|s| &s.source)),
        ),
        (Setting::StreamIdleTimeout, stream_idle_timeout.source),
        (Setting::RequestTimeout, request_timeout.source),
        (Setting::CheckpointMaxFileBytes, checkpoint_file.source),
        (Setting::CheckpointKeepDays, checkpoint_days.source),
        (Setting::CheckpointMaxBytes, checkpoint_bytes.source),
    ]);

    Ok(Config {
        provider: endpoint.provider.value,
        model: endpoint.model.value,
        base_url: endpoint.base_url.value,
        api_key: endpoint.key.map(|(key, _)| key),
        api_key_env: stacked.api_key_env.map(|s| s.value),
        temperature: stacked.temperature.map(|s| s.value),
        max_tokens: stacked.max_tokens.map(|s| s.value),
        thinking_budget_tokens: stacked.thinking_budget.map(|s| s.value),
        context_window_tokens: stacked.context_window.map(|s| s.value),
        auto_compact: auto_compact.value,
        compact_threshold: compact_threshold.value,
        max_rounds: max_rounds.value,
        retries: retries.value,
        tool_output_budget_chars: budget.value,
        tool_output_file_max_bytes: file_max.value,
        bash_default_timeout: bash_timeout.value,
        checkpoints: crate::checkpoint::CheckpointSettings {
            max_file_bytes: checkpoint_file.value,
            keep_days: checkpoint_days.value,
            max_bytes: checkpoint_bytes.value,
        },
        ca_file: stacked.ca_file.map(|s| s.value),
        timeouts: Timeouts {
            connect: connect_timeout.value,
            first_byte: stacked.first_byte_timeout.map(|s| s.value),
            stream_idle: stream_idle_timeout.value,
            request: request_timeout.value,
        },
        rein_home: inputs.rein_home.to_path_buf(),
        project_root: project.dir,
        is_git_repo: project.is_git_repo,
        files,
        dotenv_file: env.dotenv_file().map(Into::into),
        rules: stacked.tables.rules,
        hooks: stacked.tables.hooks,
        pass_env: stacked.tables.pass_env,
        mcp_servers: stacked.tables.mcp_servers,
        mcp_servers_replaced: stacked.tables.mcp_replaced,
        sandbox: stacked.tables.sandbox,
        repl: stacked.tables.repl,
        dotenv_secrets: env.dotenv_secrets(),
        untrusted_ignored,
        sources,
    })
}

/// Anthropic counts thinking within `max_tokens`, which must exceed the budget: a configured
/// limit that leaves no room for the answer is an error naming both settings.
fn check_room_for_thinking(
    max_tokens: Option<&Sourced<u32>>,
    budget: Option<&Sourced<u32>>,
) -> Result<(), ConfigError> {
    match (max_tokens, budget) {
        (Some(max), Some(budget)) if max.value <= budget.value => Err(ConfigError::InvalidValue {
            key: Setting::MaxTokens.key().to_owned(),
            origin: max.source.to_string(),
            reason: format!(
                "{} leaves no room for the answer: it must be more than thinking_budget \
                     ({}, from {}), which it includes",
                max.value, budget.value, budget.source
            ),
        }),
        _ => Ok(()),
    }
}

fn or_default<T>(value: Option<Sourced<T>>, default: T) -> Sourced<T> {
    value.unwrap_or_else(|| Sourced::new(default, Source::Default))
}

/// The user's and the project's config files (the ones that exist), their stacked layer,
/// and what an untrusted project's file set that was ignored.
fn read_files(
    rein_home: &Path,
    project_root: &Path,
) -> Result<(Vec<PathBuf>, Layer, Vec<String>), ConfigError> {
    let mut files = Vec::new();
    let mut layer = Layer::default();
    let mut ignored = Vec::new();
    let user = rein_home.join(super::USER_CONFIG_FILE);
    if let Some(found) = read_layer(&user, Source::UserFile(user.clone()))? {
        layer.stack(found);
        files.push(user.clone());
    }
    let project = project_root.join(".rein").join("config.toml");
    // With REIN_HOME at the project's `.rein`, the two layers are one file.
    if project != user
        && let Some(mut found) = read_layer(&project, Source::ProjectFile(project.clone()))?
    {
        if !TrustStore::new(rein_home).is_trusted(project_root) {
            ignored = withhold_from_untrusted(&mut found);
        }
        layer.stack(found);
        files.push(project);
    }
    Ok((files, layer, ignored))
}

/// Takes out of an untrusted project's layer what a cloned repository could use against the
/// person: rules that let calls run without asking, secrets passed to commands, and where
/// requests (with the API key) go, unless to a server on this machine. Its deny and ask rules stay: they only add caution.
/// Returns what was taken, for a warning.
fn withhold_from_untrusted(layer: &mut Layer) -> Vec<String> {
    let mut ignored = Vec::new();
    let allow = std::mem::take(&mut layer.tables.rules.allow);
    if !allow.is_empty() {
        let rules: Vec<&str> = allow.iter().map(|rule| rule.text.as_str()).collect();
        ignored.push(format!("allow rules ({})", rules.join(", ")));
    }
    if !layer.tables.pass_env.is_empty() {
        ignored.push(format!(
            "[secrets] pass_env ({})",
            std::mem::take(&mut layer.tables.pass_env).join(", ")
        ));
    }
    // A server on this machine gets nothing the person's machine does not already hold.
    let remote_url = layer
        .base_url
        .as_ref()
        .is_some_and(|url| !rein_llm::is_loopback_url(&url.value));
    for (key, taken) in [
        ("base_url", remote_url && layer.base_url.take().is_some()),
        ("api_key_env", layer.api_key_env.take().is_some()),
        ("ca_file", layer.ca_file.take().is_some()),
    ] {
        if taken {
            ignored.push(key.to_owned());
        }
    }
    ignored
}

/// Base URLs set explicitly, before `OPENAI_BASE_URL` is placed between them.
struct BaseUrls {
    /// From `--base-url` or `REIN_BASE_URL`.
    above_files: Option<Sourced<String>>,
    /// From the config files.
    from_files: Option<Sourced<String>>,
}

/// Where requests go, as who, to which model.
struct Endpoint {
    provider: Sourced<ProviderKind>,
    model: Sourced<String>,
    base_url: Sourced<String>,
    key: Option<(ApiKey, Source)>,
}

fn resolve_endpoint(
    stacked: &Layer,
    base_urls: BaseUrls,
    flag_key: Option<ApiKey>,
    env: &Env<'_>,
) -> Result<Endpoint, ConfigError> {
    let provider = match &stacked.provider {
        Some(provider) => provider.clone(),
        None => Sourced::new(
            infer_provider(stacked, flag_key.as_ref(), env),
            Source::Default,
        ),
    };
    let key = find_key(provider.value, stacked.api_key_env.as_ref(), flag_key, env);
    let openai_base_url = match provider.value {
        ProviderKind::OpenAi => checked_base_url(env.get(OPENAI_BASE_URL_VAR))?,
        ProviderKind::Anthropic => None,
    };
    let explicit_base_url = base_urls
        .above_files
        .or(openai_base_url)
        .or(base_urls.from_files);
    let key_from_deepseek_var = key.as_ref().is_some_and(|(_, source)| {
        matches!(source, Source::Env(var) | Source::DotEnv { var, .. } if var == DEEPSEEK_API_KEY)
    });
    let deepseek = provider.value == ProviderKind::OpenAi
        && match &explicit_base_url {
            Some(url) => rein_llm::is_on_domain(&url.value, "deepseek.com"),
            None => key_from_deepseek_var,
        };
    let (default_url, default_model) = match provider.value {
        ProviderKind::OpenAi if deepseek => (DEEPSEEK_BASE_URL, DEEPSEEK_DEFAULT_MODEL),
        ProviderKind::OpenAi => (provider.value.default_base_url(), OPENAI_DEFAULT_MODEL),
        ProviderKind::Anthropic => (provider.value.default_base_url(), ANTHROPIC_DEFAULT_MODEL),
    };
    Ok(Endpoint {
        base_url: or_default(explicit_base_url, default_url.to_owned()),
        model: or_default(stacked.model.clone(), default_model.to_owned()),
        provider,
        key,
    })
}

const OPENAI_BASE_URL_VAR: &str = "OPENAI_BASE_URL";

/// The settings that have a variable ([`Setting::env_var`]): `REIN_MODEL`, `REIN_PROVIDER`,
/// `REIN_BASE_URL`, `SSL_CERT_FILE`, `REIN_THINKING_BUDGET`, `REIN_*_TIMEOUT_SECS`.
fn env_layer(env: &Env<'_>) -> Result<Layer, ConfigError> {
    let mut layer = Layer::default();
    if let Some(model) = env_value(env, Setting::Model) {
        let value = check_model(&model.value).map_err(|reason| invalid(&model, reason))?;
        layer.model = Some(Sourced::new(value, model.source));
    }
    if let Some(provider) = env_value(env, Setting::Provider) {
        let value = provider
            .value
            .parse()
            .map_err(|e: rein_llm::UnknownProvider| invalid(&provider, e.to_string()))?;
        layer.provider = Some(Sourced::new(value, provider.source));
    }
    layer.base_url = checked_base_url(env_value(env, Setting::BaseUrl))?;
    layer.thinking_budget = env_number(env, Setting::ThinkingBudget, "tokens", |n| {
        check_thinking_budget(n)
    })?;
    for setting in [
        Setting::ConnectTimeout,
        Setting::FirstByteTimeout,
        Setting::StreamIdleTimeout,
        Setting::RequestTimeout,
    ] {
        let value = env_number(env, setting, "seconds", |secs| {
            let secs = u64::try_from(secs).map_err(|_| format!("{secs} is less than 1"))?;
            check_network_timeout(std::time::Duration::from_secs(secs))
        })?;
        if let Some(slot) = layer.timeout_mut(setting) {
            *slot = value;
        }
    }
    // `SSL_CERT_FILE`: the variable OpenSSL and most HTTP clients read for extra trusted
    // certificates.
    if let Some(file) = env_value(env, Setting::CaFile) {
        layer.ca_file = Some(Sourced::new(PathBuf::from(file.value), file.source));
    }
    Ok(layer)
}

/// The whole number in `setting`'s variable, checked; `unit` names what it counts.
fn env_number<T>(
    env: &Env<'_>,
    setting: Setting,
    unit: &str,
    check: impl Fn(i64) -> Result<T, String>,
) -> Result<Option<Sourced<T>>, ConfigError> {
    let Some(raw) = env_value(env, setting) else {
        return Ok(None);
    };
    let value = raw
        .value
        .trim()
        .parse::<i64>()
        .map_err(|_| format!("\"{}\" is not a whole number of {unit}", raw.value))
        .and_then(check)
        .map_err(|reason| invalid(&raw, reason))?;
    Ok(Some(Sourced::new(value, raw.source)))
}

/// The value of `setting`'s environment variable, for a setting that has one.
fn env_value(env: &Env<'_>, setting: Setting) -> Option<Sourced<String>> {
    env.get(setting.env_var()?)
}

/// A base URL from a variable, checked.
fn checked_base_url(url: Option<Sourced<String>>) -> Result<Option<Sourced<String>>, ConfigError> {
    let Some(url) = url else {
        return Ok(None);
    };
    let value = check_base_url(&url.value).map_err(|reason| invalid(&url, reason))?;
    Ok(Some(Sourced::new(value, url.source)))
}

fn invalid(value: &Sourced<String>, reason: String) -> ConfigError {
    let key = match &value.source {
        Source::Env(var) | Source::DotEnv { var, .. } => var.clone(),
        other => other.to_string(),
    };
    ConfigError::InvalidValue {
        key,
        origin: value.source.to_string(),
        reason,
    }
}

/// Which API to use when no layer names one; documented in `docs/config.md`.
fn infer_provider(layers: &Layer, flag_key: Option<&ApiKey>, env: &Env<'_>) -> ProviderKind {
    let anthropic_if = |yes: bool| {
        if yes {
            ProviderKind::Anthropic
        } else {
            ProviderKind::OpenAi
        }
    };
    if layers.base_url.is_some() || layers.model.is_some() {
        let model = layers.model.as_ref().map_or("", |m| m.value.as_str());
        return rein_llm::infer_provider(model, layers.base_url.as_ref().map(|u| u.value.as_str()));
    }
    if let Some(var) = &layers.api_key_env {
        return anthropic_if(var.value == ANTHROPIC_API_KEY);
    }
    let generic_key = flag_key
        .map(|key| key.expose().to_owned())
        .or_else(|| env.get(REIN_API_KEY).map(|k| k.value));
    if let Some(key) = generic_key {
        return anthropic_if(key.starts_with(ANTHROPIC_KEY_PREFIX));
    }
    let openai_hint = [OPENAI_API_KEY, DEEPSEEK_API_KEY, OPENAI_BASE_URL_VAR];
    if openai_hint.iter().any(|var| env.get(var).is_some()) {
        return ProviderKind::OpenAi;
    }
    anthropic_if(env.get(ANTHROPIC_API_KEY).is_some())
}

/// The variables the key is read from, in order.
pub(crate) fn key_variables(provider: ProviderKind, api_key_env: Option<&str>) -> Vec<String> {
    let order: &[&str] = match (api_key_env, provider) {
        (Some(var), _) => return vec![var.to_owned()],
        (None, ProviderKind::OpenAi) => &[REIN_API_KEY, OPENAI_API_KEY, DEEPSEEK_API_KEY],
        (None, ProviderKind::Anthropic) => &[REIN_API_KEY, ANTHROPIC_API_KEY],
    };
    order.iter().map(|var| (*var).to_owned()).collect()
}

fn find_key(
    provider: ProviderKind,
    api_key_env: Option<&Sourced<String>>,
    flag_key: Option<ApiKey>,
    env: &Env<'_>,
) -> Option<(ApiKey, Source)> {
    if let Some(key) = flag_key {
        return Some((key, Source::Flag(const { known_flag(Setting::ApiKey) })));
    }
    key_variables(provider, api_key_env.map(|var| var.value.as_str()))
        .iter()
        .find_map(|var| env.get(var))
        .map(|found| (ApiKey::new(found.value.trim()), found.source))
}
