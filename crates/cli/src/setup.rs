//! Turns the command line, the environment and the configuration files into a ready agent:
//! provider, tools, system prompt and session.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::SystemTime;

use rein_core::agent::{Agent, AgentParts, AgentSettings};
use rein_core::config::{self, ApiKey, Config, ConfigInputs, Overrides};
use rein_core::prompt::{self, PROJECT_INSTRUCTIONS_LIMIT_BYTES, PromptInputs};
use rein_core::session::{LoadedSession, NewSession, Session, SessionError, SessionStore};
use rein_llm::replay::{RecordingProvider, ReplayProvider};
use rein_llm::{NetworkConfig, Provider, ProviderConfig, RetryPolicy};
use rein_tools::{ToolConfig, ToolContext, ToolKind, ToolRegistry};

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

    let provider = provider(args, &config)?;
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
        offload_max_bytes: rein_tools::context::DEFAULT_OFFLOAD_MAX_BYTES,
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
fn provider(args: &Args, config: &Config) -> Result<Arc<dyn Provider>, SetupError> {
    if let Some(path) = &args.replay {
        let replay =
            ReplayProvider::from_path(path).map_err(|e| SetupError::Usage(e.to_string()))?;
        return Ok(Arc::new(replay));
    }
    if config.api_key().is_none() && !is_loopback(&config.base_url) {
        return Err(SetupError::Usage(no_key::message(
            &config.api_key_variables(),
        )));
    }
    let provider_config = ProviderConfig {
        kind: config.provider,
        base_url: Some(config.base_url.clone()),
        api_key: config.api_key().map(str::to_owned),
        network: NetworkConfig {
            // The configured file (`ca_file`), or SSL_CERT_FILE, which the config's
            // environment layer already read, with `.env` files.
            ca_file: config.ca_file.clone(),
            ..NetworkConfig::from_env_vars(process_env)
        },
        retry: RetryPolicy {
            max_retries: config.retries,
            ..RetryPolicy::default()
        },
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

/// Whether `url` points at this machine (a local server needs no key).
fn is_loopback(url: &str) -> bool {
    let rest = url.split_once("://").map_or(url, |(_, r)| r);
    let authority = rest.split(['/', '?', '#']).next().unwrap_or_default();
    let host = if let Some(v6) = authority.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        authority.rsplit_once(':').map_or(authority, |(h, _)| h)
    };
    host == "localhost" || host == "::1" || host.starts_with("127.")
}

/// The tools the model may call; plan mode keeps only those that do not change anything.
pub(crate) fn registry(mode: PermissionMode) -> ToolRegistry {
    let all = ToolRegistry::builtin();
    match mode {
        PermissionMode::Default | PermissionMode::AcceptEdits | PermissionMode::Yolo => all,
        PermissionMode::Plan => {
            let mut read_only = ToolRegistry::new();
            for spec in all.specs() {
                if spec.kind == ToolKind::ReadOnly
                    && let Some(tool) = all.get(&spec.name)
                {
                    read_only.register_arc(Arc::clone(tool));
                }
            }
            read_only
        }
    }
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
    fn loopback_hosts_need_no_key() {
        assert!(is_loopback("http://localhost:11434/v1"));
        assert!(is_loopback("http://127.0.0.1:8080/v1"));
        assert!(is_loopback("http://[::1]:8080/v1"));
        assert!(!is_loopback("https://api.openai.com/v1"));
        assert!(!is_loopback("https://localhost.evil.com/v1"));
    }

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
