//! Stacking the layers and filling what none of them set: the provider, the key, the base
//! URL and the model are inferred from each other and from which API keys are present.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::claude::read_claude_settings;
use super::defaults::{
    ANTHROPIC_DEFAULT_MODEL, DEEPSEEK_BASE_URL, DEEPSEEK_DEFAULT_MODEL, OPENAI_DEFAULT_MODEL,
};
use super::dotenv::Env;
use super::file::read_layer;
use super::layer::{Layer, Sourced};
use super::settings::flag;
use super::untrusted::Withheld;
use super::{
    ApiKey, Config, ConfigError, ConfigInputs, ProviderKind, Settings, Source, find_project_root,
};
use crate::trust::TrustStore;

const REIN_API_KEY: &str = "REIN_API_KEY";
const OPENAI_API_KEY: &str = "OPENAI_API_KEY";
const DEEPSEEK_API_KEY: &str = "DEEPSEEK_API_KEY";
const ANTHROPIC_API_KEY: &str = "ANTHROPIC_API_KEY";
const ANTHROPIC_KEY_PREFIX: &str = "sk-ant-";

/// Reads every layer and resolves the result.
pub(crate) fn load(inputs: &ConfigInputs<'_>) -> Result<Config, ConfigError> {
    let project = find_project_root(inputs.cwd);
    let trusted = TrustStore::new(inputs.rein_home, inputs.home_dir).is_trusted(&project.dir);
    let mut env = Env::load(inputs.env, inputs.cwd, inputs.home_dir, &project.dir)?;
    let mut withheld = Withheld::from_dotenv(&mut env, trusted);
    let (files, mut stacked) = read_files(
        inputs.rein_home,
        inputs.home_dir,
        &project.dir,
        trusted,
        &mut withheld,
    )?;
    stacked.stack(Layer::from_env(&env)?);
    let (from_flags, flag_key) = Layer::from_overrides(inputs.overrides)?;
    stacked.stack(from_flags);
    let settings = stacked.settings()?;
    let endpoint = resolve_endpoint(&stacked, &settings, flag_key, &env, &mut withheld)?;

    // Only Anthropic thinks within `max_tokens`; other providers ignore the budget. An unset
    // limit stays unset: the client knows each model's default and makes room for thinking.
    if endpoint.provider.value == ProviderKind::Anthropic {
        check_room_for_thinking(&stacked, &settings)?;
    }

    let mut sources: BTreeMap<String, Source> = (stacked.values.iter())
        .map(|(key, value)| (key.clone(), value.source.clone()))
        .collect();
    sources.insert("provider".to_owned(), endpoint.provider.source);
    sources.insert("model".to_owned(), endpoint.model.source);
    sources.insert("base_url".to_owned(), endpoint.base_url.source);
    let key = endpoint.key.map(|(key, source)| {
        sources.insert("api_key".to_owned(), source);
        key
    });

    Ok(Config {
        provider: endpoint.provider.value,
        model: endpoint.model.value,
        base_url: endpoint.base_url.value,
        api_key: key,
        withheld_api_key: endpoint.withheld_key,
        keyless_endpoint: endpoint.keyless_note,
        settings,
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
        tool_search: stacked.tables.tool_search,
        table_values: stacked.tables.values,
        pricing: stacked.tables.pricing,
        dotenv_secrets: env.dotenv_secrets(),
        untrusted_ignored: withheld.config_items,
        untrusted_tables: withheld.tables,
        untrusted_dotenv: withheld.dotenv_items,
        home_dir: inputs.home_dir.map(Path::to_path_buf),
        shown: (stacked.values.iter())
            .map(|(key, value)| (key.clone(), value.value.to_string()))
            .collect(),
        env: stacked.tables.env,
        claude_ignored: stacked.tables.claude_ignored,
        sources,
    })
}

/// Anthropic counts thinking within `max_tokens`, which must exceed the budget: a configured
/// limit that leaves no room for the answer is an error naming both settings.
fn check_room_for_thinking(stacked: &Layer, settings: &Settings) -> Result<(), ConfigError> {
    match (settings.max_tokens, settings.thinking_budget_tokens) {
        (Some(max), Some(budget)) if max <= budget => Err(ConfigError::invalid(
            "max_tokens",
            stacked.source("max_tokens"),
            format!(
                "{max} leaves no room for the answer: it must be more than thinking_budget \
                 ({budget}, from {}), which it includes",
                stacked.source("thinking_budget")
            ),
        )),
        _ => Ok(()),
    }
}

fn or_default<T>(value: Option<Sourced<T>>, default: T) -> Sourced<T> {
    value.unwrap_or_else(|| Sourced::new(default, Source::Default))
}

/// The user's and the project's config files (the ones that exist) and their stacked
/// layer; what an untrusted project's file may not set goes to `withheld`.
fn read_files(
    rein_home: &Path,
    home_dir: Option<&Path>,
    project_root: &Path,
    trusted: bool,
    withheld: &mut Withheld,
) -> Result<(Vec<PathBuf>, Layer), ConfigError> {
    let mut files = Vec::new();
    let mut layer = Layer::default();
    let user = rein_home.join(super::USER_CONFIG_FILE);
    if let Some(found) = read_layer(&user, Source::UserFile(user.clone()))? {
        layer.stack(found);
        files.push(user.clone());
    }
    // The person's Claude Code settings, only when they opted in.
    let import = (layer.values.get("import_claude_settings"))
        .is_some_and(|v| v.value.as_bool() == Some(true));
    if import && let Some(home) = home_dir {
        let path = home.join(".claude").join("settings.json");
        if let Some(found) = read_claude_settings(&path, Source::UserFile(path.clone()))? {
            layer.stack(found);
            files.push(path);
        }
    }
    let project = project_root.join(".rein").join("config.toml");
    // With REIN_HOME at the project's `.rein`, the two layers are one file.
    if project != user
        && let Some(mut found) = read_layer(&project, Source::ProjectFile(project.clone()))?
    {
        if !trusted {
            withheld.withhold_from_config_file(&mut found, &Source::ProjectFile(project.clone()));
        }
        layer.stack(found);
        files.push(project);
    }
    for name in super::CLAUDE_PROJECT_FILES {
        let path = project_root.join(name);
        if let Some(mut found) = read_claude_settings(&path, Source::ProjectFile(path.clone()))? {
            if !trusted {
                withheld.withhold_from_settings_file(&mut found, &path);
            }
            layer.stack(found);
            files.push(path);
        }
    }
    Ok((files, layer))
}

/// Where requests go, as who, to which model.
struct Endpoint {
    provider: Sourced<ProviderKind>,
    model: Sourced<String>,
    base_url: Sourced<String>,
    key: Option<(ApiKey, Source)>,
    /// The key found but not sent: the base URL came from an untrusted project.
    withheld_key: Option<(String, ApiKey)>,
    /// Why the key is not sent, for the person.
    keyless_note: Option<String>,
}

fn resolve_endpoint(
    stacked: &Layer,
    settings: &Settings,
    flag_key: Option<ApiKey>,
    env: &Env<'_>,
    withheld: &mut Withheld,
) -> Result<Endpoint, ConfigError> {
    let provider = match settings.provider {
        Some(provider) => Sourced::new(provider, stacked.source("provider").clone()),
        None => Sourced::new(
            infer_provider(settings, flag_key.as_ref(), env),
            Source::Default,
        ),
    };
    let mut key = find_key(
        provider.value,
        settings.api_key_env.as_deref(),
        flag_key,
        env,
    );
    // OPENAI_BASE_URL sits between the files and the rest (REIN_BASE_URL, --base-url), and
    // only for OpenAI, which is not known until everything else is stacked.
    let openai_base_url = match provider.value {
        ProviderKind::OpenAi | ProviderKind::OpenAiResponses => openai_base_url(env)?,
        ProviderKind::Anthropic => None,
    };
    let configured = (settings.base_url.clone())
        .map(|url| Sourced::new(url, stacked.source("base_url").clone()));
    let from_file = configured
        .as_ref()
        .is_some_and(|url| matches!(url.source, Source::UserFile(_) | Source::ProjectFile(_)));
    let mut explicit_base_url = if from_file {
        openai_base_url.or(configured)
    } else {
        configured.or(openai_base_url)
    };
    // An untrusted project's server on this machine, when the person named none: never
    // with the person's key.
    let local = match &explicit_base_url {
        Some(_) => None,
        None => withheld.local_fallback(provider.value).cloned(),
    };
    withheld.unused_local_urls(local.as_ref());
    let mut withheld_key = None;
    let mut keyless_note = None;
    if let Some(url) = local {
        if let Some((found, source)) =
            key.take_if(|(_, source)| !super::untrusted::key_may_follow(source, &url.source))
        {
            let name = match &source {
                Source::Env(var) | Source::DotEnv { var, .. } => var.clone(),
                _ => "api_key".to_owned(),
            };
            withheld_key = Some((name, found));
        }
        keyless_note = Some(super::untrusted::keyless_note(
            &url,
            withheld_key.is_some(),
            key.is_some(),
        ));
        explicit_base_url = Some(url);
    }
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
        ProviderKind::OpenAi | ProviderKind::OpenAiResponses => {
            (provider.value.default_base_url(), OPENAI_DEFAULT_MODEL)
        }
        ProviderKind::Anthropic => (provider.value.default_base_url(), ANTHROPIC_DEFAULT_MODEL),
    };
    let model =
        (settings.model.clone()).map(|model| Sourced::new(model, stacked.source("model").clone()));
    Ok(Endpoint {
        base_url: or_default(explicit_base_url, default_url.to_owned()),
        model: or_default(model, default_model.to_owned()),
        provider,
        key,
        withheld_key,
        keyless_note,
    })
}

const OPENAI_BASE_URL_VAR: &str = "OPENAI_BASE_URL";

/// `OPENAI_BASE_URL`, checked like `base_url`.
fn openai_base_url(env: &Env<'_>) -> Result<Option<Sourced<String>>, ConfigError> {
    let Some(url) = env.get(OPENAI_BASE_URL_VAR) else {
        return Ok(None);
    };
    match super::check::check_base_url(&url.value) {
        Ok(value) => Ok(Some(Sourced::new(value, url.source))),
        Err(reason) => Err(ConfigError::invalid(
            OPENAI_BASE_URL_VAR,
            url.source,
            reason,
        )),
    }
}

/// Which API to use when no layer names one; documented in `docs/config.md`.
fn infer_provider(settings: &Settings, flag_key: Option<&ApiKey>, env: &Env<'_>) -> ProviderKind {
    let anthropic_if = |yes: bool| {
        if yes {
            ProviderKind::Anthropic
        } else {
            ProviderKind::OpenAi
        }
    };
    if settings.base_url.is_some() || settings.model.is_some() {
        let model = settings.model.as_deref().unwrap_or("");
        return rein_llm::infer_provider(model, settings.base_url.as_deref());
    }
    if let Some(var) = &settings.api_key_env {
        return anthropic_if(var == ANTHROPIC_API_KEY);
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
        (None, ProviderKind::OpenAiResponses) => &[REIN_API_KEY, OPENAI_API_KEY],
    };
    order.iter().map(|var| (*var).to_owned()).collect()
}

fn find_key(
    provider: ProviderKind,
    api_key_env: Option<&str>,
    flag_key: Option<ApiKey>,
    env: &Env<'_>,
) -> Option<(ApiKey, Source)> {
    if let Some(key) = flag_key {
        return Some((key, Source::Flag(flag("api_key"))));
    }
    key_variables(provider, api_key_env)
        .iter()
        .find_map(|var| env.get(var))
        .map(|found| (ApiKey::new(found.value.trim()), found.source))
}
