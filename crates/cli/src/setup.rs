//! Turns the command line, the environment and the configuration files into a ready agent:
//! provider, tools, system prompt and session.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rein_core::agent::{Agent, AgentParts, AgentSettings};
use rein_core::config::{self, ApiKey, Config, ConfigInputs, Overrides, ProviderKind, Setting};
use rein_core::hooks::NoHooks;
use rein_core::interaction::Unattended;
use rein_core::permissions::ModePolicy;
use rein_core::prompt::{self, PROJECT_INSTRUCTIONS_LIMIT_BYTES, PromptInputs};
use rein_core::session::{LoadedSession, NewSession, Session, SessionError, SessionStore};
use rein_llm::replay::{RecordingProvider, ReplayProvider};
use rein_llm::{NetworkConfig, Provider, ProviderConfig, RetryPolicy};
use rein_tools::{ToolConfig, ToolContext, ToolRegistry};

use crate::args::{Args, PermissionMode, ProviderArg};
use crate::no_key;

/// Why rein could not get ready; each maps to its exit status.
#[derive(Debug)]
pub(crate) enum SetupError {
    /// Bad usage, or nothing to do (no key): exit 2.
    Usage(String),
    /// Configuration or I/O failure: exit 1.
    Runtime(String),
}

/// An agent ready for its turn, and what the report needs about it.
pub(crate) struct Prepared {
    pub(crate) agent: Agent,
    pub(crate) session_id: String,
    pub(crate) cwd: PathBuf,
    /// Things the person should know before the turn starts.
    pub(crate) warnings: Vec<String>,
}

/// Reads a variable of the process environment.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Builds the agent for this run.
pub(crate) fn prepare(args: &Args) -> Result<Prepared, SetupError> {
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| SetupError::Runtime(format!("cannot determine the working directory: {e}")))?;
    let home = std::env::home_dir();
    let env: &dyn Fn(&str) -> Option<String> = &process_env;
    let rein_home = config::default_rein_home(env, home.as_deref()).ok_or_else(|| {
        SetupError::Runtime(
            "cannot find the home directory: set REIN_HOME to where rein may keep its files".into(),
        )
    })?;
    let store = SessionStore::new(&rein_home);
    let mut warnings = Vec::new();

    let mut overrides = overrides_from(args);
    let resumed = resume(args, &store, &cwd)?;
    if let Some((_, loaded)) = &resumed {
        let (model, provider) = loaded.model();
        overrides.resume_session(model, provider);
        warnings.extend(loaded.warnings.iter().map(ToString::to_string));
    }
    let config = config::load_config(&ConfigInputs {
        rein_home: &rein_home,
        cwd: &cwd,
        home_dir: home.as_deref(),
        env,
        overrides: &overrides,
    })
    .map_err(|e| SetupError::Runtime(e.to_string()))?;

    let provider = provider(args, &config, &mut warnings)?;
    let registry = Arc::new(registry(args.permission_mode));
    let (session, history) = match resumed {
        Some((session, loaded)) => (session, loaded.messages),
        None => {
            let session = store
                .create(NewSession {
                    model: &config.model,
                    provider: config.provider,
                    cwd: &cwd,
                })
                .map_err(|e| SetupError::Runtime(e.to_string()))?;
            (session, Vec::new())
        }
    };
    let session_id = session.id().to_owned();
    let tool_ctx = ToolContext::new(ToolConfig {
        workspace_root: cwd.clone(),
        extra_allowed_dirs: Vec::new(),
        offload_dir: rein_home.join("tool-output").join(&session_id),
        output_budget_chars: config.tool_output_budget_chars,
        bash_default_timeout: config.bash_default_timeout,
        home_dir: home.clone(),
    });
    let system_prompt = system_prompt(&config, &cwd, &registry, &mut warnings);
    let agent = Agent::new(AgentParts {
        provider,
        registry,
        tool_ctx,
        system_prompt,
        settings: AgentSettings {
            model: config.model.clone(),
            provider: config.provider,
            temperature: config.temperature,
            max_tokens: config.max_tokens,
            max_rounds: config.max_rounds,
        },
        history,
        transcript: Some(Box::new(session)),
        policy: Arc::new(ModePolicy::new(args.permission_mode.into())),
        // A one-shot run has no one to ask: what would ask is refused, and the model told.
        interaction: Arc::new(Unattended),
        hooks: Arc::new(NoHooks),
    });
    Ok(Prepared {
        agent,
        session_id,
        cwd,
        warnings,
    })
}

fn overrides_from(args: &Args) -> Overrides {
    Overrides {
        model: args.model.clone(),
        provider: args.provider.map(|p| match p {
            ProviderArg::Openai => config::ProviderKind::OpenAi,
            ProviderArg::Anthropic => config::ProviderKind::Anthropic,
        }),
        base_url: args.base_url.clone(),
        api_key: args.api_key.clone().map(ApiKey::new),
        max_rounds: args.max_rounds,
        ..Overrides::default()
    }
}

/// Opens the session to resume (`-r ID` or `-c`), locked.
fn resume(
    args: &Args,
    store: &SessionStore,
    cwd: &Path,
) -> Result<Option<(Session, LoadedSession)>, SetupError> {
    let id = if let Some(id) = &args.resume {
        id.clone()
    } else if args.continue_session {
        let newest = store
            .newest_for_cwd(cwd)
            .map_err(|e| SetupError::Runtime(e.to_string()))?;
        match newest {
            Some(summary) => summary.header.id,
            None => {
                return Err(SetupError::Usage(format!(
                    "no session to continue in {}: start one with rein -p \"...\"",
                    cwd.display()
                )));
            }
        }
    } else {
        return Ok(None);
    };
    store.open(&id).map(Some).map_err(|e| match e {
        // A wrong id is a mistake on the command line, not a failure of rein.
        SessionError::NotFound { .. } | SessionError::InvalidId { .. } => {
            SetupError::Usage(e.to_string())
        }
        _ => SetupError::Runtime(e.to_string()),
    })
}

/// The model endpoint: a cassette for `--replay`, else the configured API (recorded for
/// `--record`).
fn provider(
    args: &Args,
    config: &Config,
    warnings: &mut Vec<String>,
) -> Result<Arc<dyn Provider>, SetupError> {
    if let Some(path) = &args.replay {
        let replay =
            ReplayProvider::from_path(path).map_err(|e| SetupError::Usage(e.to_string()))?;
        return Ok(Arc::new(replay));
    }
    if config.api_key().is_none() && !rein_llm::is_loopback_url(&config.base_url) {
        return Err(SetupError::Usage(no_key::message(
            &config.api_key_variables(),
        )));
    }
    let provider_config = ProviderConfig {
        kind: config.provider,
        base_url: Some(config.base_url.clone()),
        api_key: config.api_key().map(str::to_owned),
        api_key_origin: config.api_key_origin(),
        network: NetworkConfig {
            // The configured file (`ca_file`), or SSL_CERT_FILE, which the config's
            // environment layer already read, with `.env` files.
            ca_file: config.ca_file.clone(),
            connect_timeout: config.timeouts.connect,
            first_byte_timeout: config.timeouts.first_byte,
            stream_idle_timeout: config.timeouts.stream_idle,
            request_timeout: config.timeouts.request,
            ..NetworkConfig::from_env_vars(process_env)
        },
        retry: RetryPolicy {
            max_retries: config.retries,
            ..RetryPolicy::default()
        },
        thinking_budget_tokens: thinking_budget(config, warnings),
    };
    let live = rein_llm::build_provider(&provider_config)
        .map_err(|e| SetupError::Runtime(e.to_string()))?;
    match &args.record {
        Some(path) => {
            let recorder = RecordingProvider::create(live, path)
                .map_err(|e| SetupError::Runtime(e.to_string()))?;
            Ok(Arc::new(recorder))
        }
        None => Ok(live),
    }
}

/// The thinking budget to send: Anthropic's API is the one that takes it.
fn thinking_budget(config: &Config, warnings: &mut Vec<String>) -> Option<u32> {
    let budget = config.thinking_budget_tokens?;
    match config.provider {
        ProviderKind::Anthropic => Some(budget),
        ProviderKind::OpenAi => {
            warnings.push(format!(
                "thinking_budget (from {}) applies to the Anthropic API only; it is not sent to \
                 this OpenAI-compatible endpoint",
                config.source(Setting::ThinkingBudget)
            ));
            None
        }
    }
}

/// The tools the model may call; plan mode keeps only those that do not change anything.
pub(crate) fn registry(mode: PermissionMode) -> ToolRegistry {
    let mode = rein_core::permissions::PermissionMode::from(mode);
    let all = ToolRegistry::builtin();
    let mut offered = ToolRegistry::new();
    for spec in all.specs() {
        if mode.offers(spec.kind)
            && let Some(tool) = all.get(&spec.name)
        {
            offered.register_arc(Arc::clone(tool));
        }
    }
    offered
}

fn system_prompt(
    config: &Config,
    cwd: &Path,
    registry: &ToolRegistry,
    warnings: &mut Vec<String>,
) -> String {
    let instructions = match prompt::find_project_instructions(
        &config.project_root,
        cwd,
        PROJECT_INSTRUCTIONS_LIMIT_BYTES,
    ) {
        Ok(found) => found,
        Err(e) => {
            warnings.push(format!("project instructions skipped: {e}"));
            None
        }
    };
    render_prompt(
        cwd,
        config.is_git_repo,
        registry,
        instructions.as_ref().map(|i| i.text.as_str()),
    )
}

/// The system prompt for `registry`'s tools in `cwd`, dated today.
pub(crate) fn render_prompt(
    cwd: &Path,
    is_git_repo: bool,
    registry: &ToolRegistry,
    project_instructions: Option<&str>,
) -> String {
    let specs = registry.specs();
    let tools: Vec<(&str, &str)> = specs
        .iter()
        .map(|s| {
            (
                s.name.as_str(),
                s.description.lines().next().unwrap_or_default(),
            )
        })
        .collect();
    let date = prompt::utc_date(SystemTime::now());
    prompt::build_system_prompt(&PromptInputs {
        cwd,
        os: std::env::consts::OS,
        // The bash tool runs every command with `bash -c`, whatever the person's login shell.
        shell: "bash",
        date: &date,
        is_git_repo,
        tools: &tools,
        project_instructions,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_mode_offers_only_read_only_tools() {
        let names: Vec<String> = registry(PermissionMode::Plan)
            .specs()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert_eq!(names, ["read_file", "glob", "grep"]);
        let all: Vec<String> = registry(PermissionMode::Yolo)
            .specs()
            .into_iter()
            .map(|s| s.name)
            .collect();
        assert!(all.contains(&"bash".to_owned()) && all.contains(&"edit_file".to_owned()));
    }
}
