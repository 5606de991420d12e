//! Turns the command line, the environment and the configuration files into a ready agent,
//! through rein-core's builder: what is the CLI's own here is reading the process (working
//! directory, environment, flags) and choosing the session.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rein_core::agent::Agent;
use rein_core::build::{AgentBuilder, BuildError};
use rein_core::commands::CustomCommand;
use rein_core::config::{self, ApiKey, ConfigInputs, Overrides};
use rein_core::face::Provider;
use rein_core::face::{RecordingProvider, ReplayProvider};
use rein_core::interaction::Interaction;
use rein_core::session::{LoadedSession, NewSession, Session, SessionError, SessionStore};
use rein_core::trust::{Trust, TrustStore};

use crate::args::Args;
use crate::no_key;

/// Why rein could not get ready; each maps to its exit status.
#[derive(Debug)]
pub(crate) enum SetupError {
    /// Bad usage, or nothing to do (no key): exit 2.
    Usage(String),
    /// Configuration or I/O failure: exit 1.
    Runtime(String),
}

impl SetupError {
    /// Says why, as an error; the exit status it maps to.
    pub(crate) fn report(self) -> crate::exit::Exit {
        let (message, exit) = match self {
            SetupError::Usage(message) => (message, crate::exit::Exit::Usage),
            SetupError::Runtime(message) => (message, crate::exit::Exit::Runtime),
        };
        crate::render::error(&message);
        exit
    }
}

/// An agent ready for its turn, and what the report needs about it.
pub(crate) struct Prepared {
    pub(crate) agent: Agent,
    pub(crate) session_id: String,
    pub(crate) cwd: PathBuf,
    /// rein's home: sessions, history, trust.
    pub(crate) rein_home: PathBuf,
    /// Tokens a resumed session used before this run.
    pub(crate) earlier_usage: rein_core::face::Usage,
    /// Things the person should know before the turn starts.
    pub(crate) warnings: Vec<String>,
    /// Those of them about the MCP servers (for `/mcp`).
    pub(crate) mcp_warnings: Vec<String>,
    /// The custom slash commands of this project and person.
    pub(crate) custom_commands: Vec<CustomCommand>,
}

/// Where a prepared agent's MCP servers and sandbox come from.
#[derive(Debug, Clone)]
pub(crate) enum McpServers {
    /// Started now, from the configuration (the sandbox made now).
    Start,
    /// Those of the agent the new one replaces (the REPL's `/model`, `/clear`), running
    /// already: switching the model does not restart them (none: started now). Its sandbox
    /// too, kept while its policy is unchanged: the hosts answered about stay answered, and
    /// the commands' private `TMPDIR` stays the one the kept servers have. When the policy
    /// changes, the servers configured to run in the sandbox start again in the new one.
    Keep {
        hub: Option<Arc<rein_core::face::McpHub>>,
        sandbox: Option<rein_core::face::KeptSandbox>,
    },
}

impl McpServers {
    /// What the agent `replaced` leaves to the one built in its place.
    pub(crate) fn of(replaced: &rein_core::face::Agent) -> Self {
        McpServers::Keep {
            hub: replaced.mcp_hub().cloned(),
            sandbox: replaced.sandbox().cloned(),
        }
    }
}

/// Reads a variable of the process environment.
pub(crate) fn process_env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// The configuration a run in this directory with these flags reads, and the directory.
pub(crate) fn configuration(args: &Args) -> Result<(config::Config, PathBuf), SetupError> {
    let cwd = working_dir()?;
    let home = std::env::home_dir();
    let config = config::load_config(&ConfigInputs {
        rein_home: &rein_home(home.as_deref())?,
        cwd: &cwd,
        home_dir: home.as_deref(),
        env: &process_env,
        overrides: &overrides_from(args),
    })
    .map_err(|e| SetupError::Runtime(e.to_string()))?;
    Ok((config, cwd))
}

/// The process's working directory, canonical.
fn working_dir() -> Result<PathBuf, SetupError> {
    std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| SetupError::Runtime(format!("cannot determine the working directory: {e}")))
}

/// rein's home (`REIN_HOME`, or `~/.rein`).
fn rein_home(home: Option<&Path>) -> Result<PathBuf, SetupError> {
    config::default_rein_home(&process_env, home).ok_or_else(|| {
        SetupError::Runtime(
            "cannot find the home directory: set REIN_HOME to where rein may keep its files".into(),
        )
    })
}

/// The builder a run in this directory with these flags would use, without a session or a
/// model endpoint (for `rein explain-permission`).
pub(crate) fn configured_builder(args: &Args) -> Result<AgentBuilder, SetupError> {
    let builder = builder_in_mode(args, args.mode())?;
    checked_rules(&builder)?;
    prompt_flags(builder, args)
}

/// `--system-prompt-file`, `--append-system-prompt` and `--add-dir` applied to `builder`;
/// a file that cannot be read or a directory that is not one is bad usage.
pub(crate) fn prompt_flags(
    mut builder: AgentBuilder,
    args: &Args,
) -> Result<AgentBuilder, SetupError> {
    if let Some(path) = &args.system_prompt_file {
        let text = std::fs::read_to_string(path).map_err(|e| {
            SetupError::Usage(format!(
                "rein: --system-prompt-file: cannot read {}: {e}",
                path.display()
            ))
        })?;
        if text.trim().is_empty() {
            return Err(SetupError::Usage(format!(
                "rein: --system-prompt-file: {} is empty",
                path.display()
            )));
        }
        builder = builder.prompt_template(text);
    }
    if let Some(text) = args
        .append_system_prompt
        .as_deref()
        .filter(|t| !t.trim().is_empty())
    {
        builder = builder.append_system_prompt(text);
    }
    for dir in &args.add_dir {
        let canonical = std::fs::canonicalize(dir)
            .ok()
            .filter(|d| d.is_dir())
            .ok_or_else(|| {
                SetupError::Usage(format!(
                    "rein: --add-dir: {} is not a directory",
                    dir.display()
                ))
            })?;
        builder = builder.add_dir(canonical);
    }
    Ok(builder)
}

/// Refuses to start when a rule names no tool (a misspelled deny rule would protect
/// nothing); returns the warnings about rules for MCP servers not configured.
pub(crate) fn checked_rules(builder: &AgentBuilder) -> Result<Vec<String>, SetupError> {
    let check = builder.check_rules();
    if check.errors.is_empty() {
        return Ok(check.warnings);
    }
    Err(SetupError::Usage(format!(
        "rein: {}",
        check.errors.join("\nrein: ")
    )))
}

/// Why `auto` could not start here, or `None` when it could (the sandbox is enforced).
pub(crate) fn auto_refusal(args: &Args) -> Option<String> {
    match builder_in_mode(args, rein_core::permissions::PermissionMode::Auto) {
        Ok(builder) => builder.auto_refusal(),
        Err(SetupError::Usage(m) | SetupError::Runtime(m)) => Some(m),
    }
}

/// The configured builder of this directory, in `mode` and `--sandbox`'s level.
fn builder_in_mode(
    args: &Args,
    mode: rein_core::permissions::PermissionMode,
) -> Result<AgentBuilder, SetupError> {
    let (config, cwd) = configuration(args)?;
    let home = std::env::home_dir();
    Ok(
        AgentBuilder::from_config(&config, &cwd, home.as_deref(), &process_env)
            .mode(mode)
            .sandbox_level(args.sandbox.map(Into::into)),
    )
}

/// The configured permission rules (for `/permissions`).
pub(crate) fn rule_lists(args: &Args) -> Result<config::RuleLists, String> {
    configuration(args)
        .map(|(config, _)| config.rules)
        .map_err(|e| match e {
            SetupError::Usage(m) | SetupError::Runtime(m) => m,
        })
}

/// Where the REPL's permission mode comes from when `--permission-mode` is not given.
pub(crate) enum ReplMode {
    /// `[repl] permission_mode` in the config.
    Configured(rein_core::permissions::PermissionMode),
    /// Nothing configured, and auto could start here: the person may be offered it, and the
    /// answer recorded in this file (rein's own config).
    Offer(PathBuf),
    /// Nothing configured, and auto could not start (or the config is unreadable: the
    /// set-up that follows says why).
    Default,
}

/// The REPL's permission mode without `--permission-mode`.
pub(crate) fn repl_mode(args: &Args) -> ReplMode {
    let Ok((config, cwd)) = configuration(args) else {
        return ReplMode::Default;
    };
    if let Some(mode) = config.repl.permission_mode {
        return ReplMode::Configured(mode);
    }
    let home = std::env::home_dir();
    let auto = AgentBuilder::from_config(&config, &cwd, home.as_deref(), &process_env)
        .mode(rein_core::permissions::PermissionMode::Auto)
        .sandbox_level(args.sandbox.map(Into::into));
    if auto.auto_refusal().is_some() {
        return ReplMode::Default;
    }
    let file = config.rein_home.join("config.toml");
    // A `[repl]` table without the mode: the person set it up; rein does not add to it.
    match std::fs::read_to_string(&file) {
        Ok(text) if config::has_repl_table(&text) => ReplMode::Default,
        Ok(_) => ReplMode::Offer(file),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => ReplMode::Offer(file),
        Err(_) => ReplMode::Default,
    }
}

/// Records `mode` as the REPL's in rein's config file `path` (a `[repl]` table appended to
/// what the file holds; the file is replaced whole, so a crash leaves the old one).
pub(crate) fn record_repl_mode(
    path: &Path,
    mode: rein_core::permissions::PermissionMode,
) -> std::io::Result<bool> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(e),
    };
    if config::has_repl_table(&text) {
        return Ok(false);
    }
    // A config that links into a dotfiles repository is written there, the link kept.
    let path = &std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let temp = dir.join(format!(".config.toml.{}.tmp", std::process::id()));
    std::fs::write(&temp, config::with_repl_mode(&text, mode))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&temp, meta.permissions());
    }
    std::fs::rename(&temp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&temp);
    })?;
    Ok(true)
}

/// A project whose hooks and MCP servers do not run until the person trusts it.
#[derive(Debug)]
pub(crate) struct Untrusted {
    /// The project's root.
    pub(crate) project: PathBuf,
    /// The files that configure them.
    pub(crate) files: Vec<String>,
    /// What they configure: "hooks", "MCP servers", both, or "endpoint settings".
    pub(crate) what: &'static str,
    /// What that does, in words.
    pub(crate) effect: &'static str,
    /// What they do once trusted: "run" or "apply".
    pub(crate) verb: &'static str,
    /// It was trusted, but its files changed since.
    pub(crate) changed: bool,
}

/// The project of this directory, when it has hooks or MCP servers and is not trusted yet.
pub(crate) fn untrusted_project(args: &Args) -> Option<Untrusted> {
    let (config, _) = configuration(args).ok()?;
    let mut files: Vec<String> = Vec::new();
    let mut add = |path: &Path| {
        let file = path.display().to_string();
        if !files.contains(&file) {
            files.push(file);
        }
    };
    let mut hooks = false;
    for hook in &config.hooks {
        if let config::Source::ProjectFile(path) = &hook.source {
            hooks = true;
            add(path);
        }
    }
    let mut servers = false;
    for server in &config.mcp_servers {
        if let config::Source::ProjectFile(path) = &server.source {
            servers = true;
            add(path);
        }
    }
    let mcp_json = config.project_root.join(rein_core::mcp::MCP_JSON);
    if !rein_core::mcp::read_mcp_json(&mcp_json).servers.is_empty() {
        servers = true;
        add(&mcp_json);
    }
    // Endpoint settings in its `.env` (where requests, with your key, would go).
    let endpoints = !config.untrusted_dotenv.is_empty() || config.keyless_endpoint.is_some();
    if endpoints && let Some(file) = &config.dotenv_file {
        add(file);
    }
    let trust = config.trust_store().status(&config.project_root);
    if files.is_empty() || trust == Trust::Trusted {
        return None;
    }
    Some(Untrusted {
        changed: trust == Trust::Changed,
        project: config.project_root,
        files,
        what: match (hooks, servers, endpoints) {
            (true, true, _) => "hooks and MCP servers",
            (false, true, _) => "MCP servers",
            (true, false, _) => "hooks",
            (false, false, _) => "endpoint settings",
        },
        effect: if hooks || servers {
            "that run programs on your machine"
        } else {
            "that say where your requests and your API key go"
        },
        verb: if hooks || servers { "run" } else { "apply" },
    })
}

/// Trusts `project` (as `rein trust` does).
pub(crate) fn trust(project: &Path) -> std::io::Result<()> {
    let env: &dyn Fn(&str) -> Option<String> = &process_env;
    let home = std::env::home_dir();
    let rein_home = config::default_rein_home(env, home.as_deref())
        .ok_or_else(|| std::io::Error::other("cannot find rein's home"))?;
    TrustStore::new(&rein_home, home.as_deref())
        .trust(project)
        .map(|_| ())
}

/// Builds the agent for this run; `interaction` answers its questions (a one-shot run
/// passes [`rein_core::interaction::Unattended`]: what would ask is refused).
pub(crate) fn prepare(
    args: &Args,
    interaction: Arc<dyn Interaction>,
    mcp: McpServers,
) -> Result<Prepared, SetupError> {
    prepare_at(args, &Place::new(working_dir()?), interaction, mcp)
}

/// Where a prepared agent works, when a front-end says (an ACP client's `session/new`)
/// rather than the process's working directory.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    /// The working directory (canonical).
    pub(crate) cwd: PathBuf,
    /// MCP servers besides the configured ones (the client's).
    pub(crate) mcp_servers: Vec<config::McpServerEntry>,
    /// Tools read and write files through this instead of the disk (an editor's buffers).
    pub(crate) files: Option<Arc<dyn rein_core::face::ClientFiles>>,
}

impl Place {
    /// The directory alone: the configured MCP servers, files on disk.
    pub(crate) fn new(cwd: PathBuf) -> Self {
        Place {
            cwd,
            mcp_servers: Vec::new(),
            files: None,
        }
    }
}

/// [`prepare`] in `place`.
pub(crate) fn prepare_at(
    args: &Args,
    place: &Place,
    interaction: Arc<dyn Interaction>,
    mcp: McpServers,
) -> Result<Prepared, SetupError> {
    let cwd = place.cwd.clone();
    let home = std::env::home_dir();
    let rein_home = rein_home(home.as_deref())?;
    let store = SessionStore::new(&rein_home);
    // A rewind a stopped rein left half-done is completed before anything else.
    let mut warnings = rein_core::checkpoint::recover(&rein_home);

    let mut overrides = overrides_from(args);
    let resumed = resume(args, &store, &cwd)?;
    let earlier_usage = resumed
        .as_ref()
        .map(|(_, loaded)| loaded.total_usage())
        .unwrap_or_default();
    if let Some((session, loaded)) = &resumed
        && args.fork
        && let Some(parent) = &loaded.header.parent
    {
        warnings.push(format!(
            "this is session {}, a fork of {parent} (left unchanged)",
            session.id()
        ));
    }
    if let Some((_, loaded)) = &resumed {
        let (model, provider) = loaded.model();
        overrides.resume_session(model, provider);
        warnings.extend(loaded.warnings.iter().map(ToString::to_string));
    }
    let mut config = config::load_config(&ConfigInputs {
        rein_home: &rein_home,
        cwd: &cwd,
        home_dir: home.as_deref(),
        env: &process_env,
        overrides: &overrides,
    })
    .map_err(|e| SetupError::Runtime(e.to_string()))?;
    for server in &place.mcp_servers {
        config.mcp_servers.retain(|s| s.name != server.name);
        config.mcp_servers.push(server.clone());
    }

    let builder = AgentBuilder::from_config(&config, &cwd, home.as_deref(), &process_env);
    warnings.extend(checked_rules(&builder)?);
    let (custom_commands, skipped) =
        rein_core::commands::available_commands(&config.project_root, Some(&config.rein_home));
    warnings.extend(skipped);
    let builder = prompt_flags(builder, args)?;
    // The limits themselves are the configuration's (flags included), set by from_config.
    if config.max_cost.is_some() && builder.model_price().is_none() {
        return Err(SetupError::Usage(format!(
            "rein: a cost limit needs the price of {model}, which rein does not know: set it in \
             the configuration ([pricing.\"{model}\"] with input and output in USD per million \
             tokens), or limit tokens instead with --max-tokens N",
            model = config.model
        )));
    }
    let builder = builder
        .mode(args.mode())
        // The level before the servers start: those configured to run in the sandbox run
        // in this one.
        .sandbox_level(args.sandbox.map(Into::into))
        .tool_config(|tools| tools.client_files.clone_from(&place.files));
    // MCP servers start before anything slow: the prompt never waits for them, the first
    // request as little as can be.
    let builder = match mcp {
        McpServers::Start => builder.start_mcp(),
        McpServers::Keep { hub, sandbox } => {
            let builder = match sandbox {
                Some(sandbox) => builder.keep_sandbox(sandbox),
                None => builder,
            };
            match hub {
                Some(hub) => builder.keep_mcp_hub(hub),
                None => builder.start_mcp(),
            }
        }
    }
    .interaction(interaction);
    let mcp_warnings = builder.mcp_warnings();
    warnings.extend(builder.warnings().iter().cloned());
    if let Some(why) = builder.auto_refusal() {
        return Err(SetupError::Usage(format!(
            "rein: the auto permission mode needs the OS sandbox, which cannot be enforced here: \
             {why}. Use another mode (default, accept-edits, yolo); `rein sandbox --explain` \
             says what this machine enforces"
        )));
    }
    // Said once: commands then run with the permission checks alone.
    warnings.extend(builder.sandbox_warning());
    warnings.extend(builder.project_network_warning());
    // The endpoint first: a missing key must not leave a session file behind.
    let builder = endpoint(builder, args, &config)?;
    let builder = session(builder, resumed, &store, &config, &cwd)?;
    let session_id = builder.session_id().unwrap_or_default().to_owned();
    let agent = builder
        .build()
        .map_err(|e| SetupError::Runtime(e.to_string()))?;
    Ok(Prepared {
        agent,
        session_id,
        cwd,
        rein_home,
        earlier_usage,
        warnings,
        mcp_warnings,
        custom_commands,
    })
}

/// The model endpoint: a replayed recording, or the configured one (recorded on request).
fn endpoint(
    builder: AgentBuilder,
    args: &Args,
    config: &config::Config,
) -> Result<AgentBuilder, SetupError> {
    let builder = match &args.replay {
        Some(path) => {
            let replay =
                ReplayProvider::from_path(path).map_err(|e| SetupError::Usage(e.to_string()))?;
            builder.provider(Arc::new(replay))
        }
        None => builder.connect().map_err(|e| match e {
            BuildError::NoApiKey { .. } => {
                SetupError::Usage(no_key::message(&config.api_key_variables()))
            }
            other => SetupError::Runtime(other.to_string()),
        })?,
    };
    Ok(match &args.record {
        Some(path) => builder
            .wrap_provider(|live| {
                RecordingProvider::create(live, path).map(|r| Arc::new(r) as Arc<dyn Provider>)
            })
            .map_err(|e| SetupError::Runtime(e.to_string()))?,
        None => builder,
    })
}

/// The session the agent writes to: the resumed one, or a new one.
fn session(
    builder: AgentBuilder,
    resumed: Option<(Session, LoadedSession)>,
    store: &SessionStore,
    config: &config::Config,
    cwd: &Path,
) -> Result<AgentBuilder, SetupError> {
    Ok(match resumed {
        Some((session, loaded)) => builder.resume(session, loaded),
        None => {
            let session = store
                .create(NewSession {
                    model: &config.model,
                    provider: config.provider,
                    cwd,
                    parent: None,
                })
                .map_err(|e| SetupError::Runtime(e.to_string()))?;
            builder.session(session, Vec::new())
        }
    })
}

/// What a headless `-p "/name args"` asks for.
#[derive(Debug, Clone)]
pub(crate) enum HeadlessCommand {
    /// A command from a file, with its arguments.
    File(CustomCommand, String),
    /// A name of an MCP prompt's form (`mcp__server__prompt`): looked up once the servers
    /// have started.
    McpPrompt {
        /// The name without the slash.
        name: String,
        /// What followed it.
        arguments: String,
    },
    /// `/init`, under a mode that lets it write AGENTS.md without asking.
    Init,
}

/// The command `input` uses (`/name args`); `Ok(None)` when the input is no slash command;
/// an error naming the known commands when it is an unknown one (a headless run has no
/// built-in slash commands but `/init`).
pub(crate) fn headless_command(
    args: &Args,
    input: &str,
) -> Result<Option<HeadlessCommand>, SetupError> {
    let Some(name) = slash_name(input) else {
        return Ok(None);
    };
    let (config, _) = configuration(args)?;
    let (commands, _) =
        rein_core::commands::available_commands(&config.project_root, Some(&config.rein_home));
    let arguments = input.trim()[1 + name.len()..].trim().to_owned();
    if name == "init" {
        return headless_init(args).map(Some);
    }
    match commands.iter().find(|c| c.name == name) {
        Some(command) => Ok(Some(HeadlessCommand::File(command.clone(), arguments))),
        None if name.starts_with("mcp__") => Ok(Some(HeadlessCommand::McpPrompt {
            name: name.to_owned(),
            arguments,
        })),
        None => {
            let names: Vec<&str> = commands.iter().map(|c| c.name.as_str()).collect();
            let hint = match rein_core::suggest::closest(name, names.iter().copied()) {
                Some(close) => format!("; did you mean /{close}?"),
                None if names.is_empty() => format!(
                    "; custom commands are Markdown files in {}/.rein/commands, \
                     .claude/commands or {}/commands",
                    config.project_root.display(),
                    config.rein_home.display()
                ),
                None => format!("; the custom commands are: /{}", names.join(", /")),
            };
            Err(SetupError::Usage(format!(
                "rein: unknown command /{name}{hint}"
            )))
        }
    }
}

/// `/init` headless: no one can be shown the file or asked, so it runs only where the person
/// has already said edits need no asking (accept-edits, auto, yolo), and is refused before
/// any request otherwise (the model would study the project for nothing, then be refused
/// the write).
fn headless_init(args: &Args) -> Result<HeadlessCommand, SetupError> {
    use rein_core::permissions::PermissionMode as Mode;
    match args.mode() {
        Mode::AcceptEdits | Mode::Auto | Mode::Yolo => Ok(HeadlessCommand::Init),
        Mode::Default | Mode::Plan => Err(SetupError::Usage(format!(
            "rein: /init writes AGENTS.md, and a headless run cannot show it and ask first \
             ({} mode would refuse the write): run /init in the REPL, or pass \
             --permission-mode accept-edits to have it written without asking",
            args.mode()
        ))),
    }
}

/// The name of the slash command `input` starts with (`/name args`), or `None` when it is
/// a request (a path like `/usr/bin/x` is one).
pub(crate) fn slash_name(input: &str) -> Option<&str> {
    let rest = input.trim().strip_prefix('/')?;
    let name = rest.split(char::is_whitespace).next().unwrap_or("");
    (!name.is_empty() && !name.contains('/')).then_some(name)
}

fn overrides_from(args: &Args) -> Overrides {
    Overrides {
        model: args.model.clone(),
        provider: args.provider.map(Into::into),
        base_url: args.base_url.clone(),
        api_key: args.api_key.clone().map(ApiKey::new),
        max_rounds: args.max_rounds,
        max_cost: args.max_cost,
        max_session_tokens: args.max_tokens,
        allow: args.allow.clone(),
        deny: args.deny.clone(),
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
    let id = if args.fork {
        let child = store.fork(&id, None).map_err(|e| match e {
            SessionError::NotFound { .. } | SessionError::InvalidId { .. } => {
                SetupError::Usage(e.to_string())
            }
            _ => SetupError::Runtime(e.to_string()),
        })?;
        let home = store.dir().parent().unwrap_or(store.dir());
        if let Err(e) = rein_core::checkpoint::copy_for_fork(home, &id, &child, None) {
            return Err(SetupError::Runtime(format!(
                "cannot copy the checkpoints of {id} to its fork: {e}"
            )));
        }
        child
    } else {
        id
    };
    store.open(&id).map(Some).map_err(|e| match e {
        // A wrong id is a mistake on the command line, not a failure of rein.
        SessionError::NotFound { .. } | SessionError::InvalidId { .. } => {
            SetupError::Usage(e.to_string())
        }
        _ => SetupError::Runtime(e.to_string()),
    })
}

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};
    use rein_core::config::FLAGS;

    use super::*;

    #[test]
    fn every_flag_the_config_names_is_one_rein_has() {
        let longs: Vec<String> = Args::command()
            .get_arguments()
            .filter_map(|arg| arg.get_long())
            .map(|long| format!("--{long}"))
            .collect();
        let named: Vec<&str> = FLAGS.iter().map(|(_, flag)| *flag).collect();
        assert!(!named.is_empty());
        for flag in named {
            assert!(longs.iter().any(|long| long == flag), "{flag} is no flag");
        }
    }

    #[test]
    fn every_setting_flag_reaches_the_overrides() {
        let args = Args::try_parse_from([
            "rein",
            "-m",
            "qwen",
            "--provider",
            "anthropic",
            "--base-url",
            "http://127.0.0.1:1/v1",
            "--api-key",
            "k",
            "--max-rounds",
            "7",
            "--max-cost",
            "$0.50",
            "--max-tokens",
            "20000",
            "--allow",
            "bash(npm test:*)",
            "--deny",
            "read_file(**/.env)",
            "--allow",
            "Edit",
        ])
        .unwrap();
        assert_eq!(
            overrides_from(&args),
            Overrides {
                model: Some("qwen".into()),
                provider: Some(config::ProviderKind::Anthropic),
                base_url: Some("http://127.0.0.1:1/v1".into()),
                api_key: Some(ApiKey::new("k")),
                max_rounds: Some(7),
                max_cost: Some(0.5),
                max_session_tokens: Some(20_000),
                allow: vec!["bash(npm test:*)".into(), "Edit".into()],
                deny: vec!["read_file(**/.env)".into()],
            }
        );
    }
}
