//! The command line, as DESIGN.md fixes it.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// rein: a terminal AI coding agent.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "rein",
    version,
    disable_version_flag = true,
    about = "rein, a terminal AI coding agent: it reads, edits and runs your code through a language model.",
    after_help = "Examples:\n  rein --demo                          watch rein fix a bug offline\n  rein -p \"read main.py and fix the broken import\"\n  git diff | rein -p \"review this diff\"   piped input goes with the request\n  rein                                 an interactive session (/help lists its commands)\n  rein -c                              continue the newest session here\n\nEnvironment: REIN_API_KEY (or OPENAI_API_KEY, DEEPSEEK_API_KEY, ANTHROPIC_API_KEY), REIN_MODEL,\nREIN_BASE_URL (or OPENAI_BASE_URL), REIN_HOME (default ~/.rein). A .env file is read too.\n\nExit status: 0 done; 1 runtime error (API, configuration, a session that could not be saved);\n2 bad usage (including no API key); 3 stopped at a limit (rounds, the same call repeated);\n130 interrupted; 143/129/131 after SIGTERM/SIGHUP/SIGQUIT."
)]
pub(crate) struct Args {
    /// The model to use (e.g. gpt-4o, deepseek-chat, claude-sonnet-4-5).
    #[arg(short = 'm', long)]
    pub(crate) model: Option<String>,

    /// The API's base URL (e.g. http://localhost:11434/v1 for Ollama).
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,

    /// The API key (prefer the environment: flags are visible to other users of the machine).
    #[arg(long, value_name = "KEY", hide_env_values = true)]
    pub(crate) api_key: Option<String>,

    /// The wire format; inferred from the model and base URL when absent.
    #[arg(long, value_enum)]
    pub(crate) provider: Option<ProviderArg>,

    /// Run one request and exit; `-` (or a piped stdin without -p) reads it from stdin. With
    /// TEXT, piped input is attached after it (up to 256 KiB).
    #[arg(short = 'p', long = "prompt", value_name = "TEXT")]
    pub(crate) prompt: Option<String>,

    /// Resume the session with this id; without one, pick from this directory's sessions
    /// (a list when not on a terminal).
    #[arg(
        short = 'r',
        long = "resume",
        value_name = "ID",
        num_args = 0..=1,
        default_missing_value = "",
        conflicts_with = "continue_session"
    )]
    pub(crate) resume: Option<String>,

    /// With -r or -c: continue in a new session that starts from that one's history,
    /// leaving it untouched.
    #[arg(long)]
    pub(crate) fork: bool,

    /// Continue the newest session of the current directory.
    #[arg(short = 'c', long = "continue")]
    pub(crate) continue_session: bool,

    /// How to report a one-shot run (and `rein sessions`, `rein rewind`).
    #[arg(long, value_enum, value_name = "FORMAT", global = true)]
    pub(crate) output_format: Option<OutputFormat>,

    /// How a run takes its prompts: `stream-json` reads one JSON message a line from stdin,
    /// each answered as a turn (with --output-format stream-json; see docs/output-format.md).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub(crate) input_format: Option<InputFormat>,

    /// Who answers what would ask: `stdin` puts each question on stdout as a
    /// permission_request and waits for its permission_response line (with --input-format
    /// stream-json); without it, what would ask is refused.
    #[arg(long, value_enum, value_name = "FROM")]
    pub(crate) permission_prompt: Option<PermissionPrompt>,

    /// What rein may do without asking [default: default; the REPL's: `[repl]
    /// permission_mode` in the config]
    #[arg(long, value_enum, value_name = "MODE", global = true)]
    pub(crate) permission_mode: Option<PermissionMode>,

    /// The OS sandbox commands run in (default: the config's, else workspace-write).
    #[arg(long, value_enum, value_name = "LEVEL", global = true)]
    pub(crate) sandbox: Option<SandboxArg>,

    /// Let calls a rule names run without asking, e.g. `bash(npm test:*)`, `edit_file(src/**)`
    /// (repeatable; adds to the config's allow list).
    #[arg(long, value_name = "RULE", global = true)]
    pub(crate) allow: Vec<String>,

    /// Never run calls a rule names, e.g. `bash(git push:*)`, `read_file(**/.env)`
    /// (repeatable; adds to the config's deny list).
    #[arg(long, value_name = "RULE", global = true)]
    pub(crate) deny: Vec<String>,

    /// When to colour output (NO_COLOR is honoured with `auto`).
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value = "auto",
        global = true
    )]
    pub(crate) color: crate::render::ColorChoice,

    /// Model responses allowed in one turn (default 50).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_rounds: Option<u32>,

    /// Stop before a request that would take the run's cost past USD dollars (exit 3).
    #[arg(long, value_name = "USD", allow_hyphen_values = true, value_parser = parse_max_cost)]
    pub(crate) max_cost: Option<f64>,

    /// Stop before a request that would take the run's input plus output tokens past N (exit 3).
    #[arg(long, value_name = "N", allow_hyphen_values = true, value_parser = parse_max_tokens)]
    pub(crate) max_tokens: Option<u64>,

    /// Play the model's side back from a cassette instead of calling a model.
    #[arg(long, value_name = "FILE", conflicts_with = "record")]
    pub(crate) replay: Option<PathBuf>,

    /// Record the model's responses of this run into a cassette.
    #[arg(long, value_name = "FILE")]
    pub(crate) record: Option<PathBuf>,

    /// Text added after the system prompt.
    #[arg(long, value_name = "TEXT", global = true)]
    pub(crate) append_system_prompt: Option<String>,

    /// A file whose text replaces rein's system prompt ({cwd}, {tools}... are filled in;
    /// the project's instructions still follow).
    #[arg(long, value_name = "FILE", global = true)]
    pub(crate) system_prompt_file: Option<PathBuf>,

    /// Another directory file tools may read and write, writable in the sandbox (repeatable).
    #[arg(long = "add-dir", value_name = "DIR", global = true)]
    pub(crate) add_dir: Vec<PathBuf>,

    /// Watch rein fix a small project, offline: no API key needed.
    #[arg(long, conflicts_with_all = ["prompt", "resume", "continue_session", "replay", "record"])]
    pub(crate) demo: bool,

    /// Print the version.
    #[arg(short = 'v', long, action = clap::ArgAction::Version)]
    version: Option<bool>,

    /// A command for people, not needed by the agent.
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

/// Sub-commands for people.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum Command {
    /// Trust a project (default: this directory's): its hooks and MCP servers may run.
    Trust {
        /// The project directory.
        dir: Option<PathBuf>,
        /// Withdraw the trust instead.
        #[arg(long)]
        revoke: bool,
        /// List the trusted projects.
        #[arg(long, conflicts_with_all = ["dir", "revoke"])]
        list: bool,
    },
    /// The configuration in effect here: every setting with where it came from, the
    /// rules, hooks and variables, the files read and what was left out.
    Config {
        /// Print the merged settings (the only action for now; the default).
        #[arg(long)]
        show: bool,
    },
    /// Say whether a call would run, ask or be refused here, and which rule or reason
    /// decides, e.g. `rein explain-permission 'bash(rm -rf build)'`.
    ExplainPermission {
        /// The call, written as a rule: `tool(argument)`, e.g. `bash(git push)`,
        /// `edit_file(src/main.rs)`, `read_file(.env)`.
        call: String,
    },
    /// Run a command in the configured OS sandbox, to test the settings
    /// (`rein sandbox -- touch ~/x`), or say what is enforced here (`--explain`).
    Sandbox {
        /// Print what the sandbox enforces on this machine, and run nothing.
        #[arg(long)]
        explain: bool,
        /// The command and its arguments (after `--`).
        #[arg(last = true, value_name = "CMD", required_unless_present = "explain")]
        command: Vec<std::ffi::OsString>,
    },
    /// This directory's sessions: id, when, model, turns, cost, first prompt.
    Sessions {
        /// Every directory's sessions.
        #[arg(long)]
        all: bool,
    },
    /// Take turns back: list a session's turns (`--list`), or restore the point before
    /// turn N (`--to N`): its files, its conversation or both.
    Rewind {
        /// The session (default: the newest of this directory).
        #[arg(short = 'r', long = "resume", value_name = "ID")]
        session: Option<String>,
        /// List the turns, numbered from 1, with their prompts and the files they changed.
        #[arg(long, conflicts_with = "to", required_unless_present = "to")]
        list: bool,
        /// Restore the point before this turn.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        to: Option<u32>,
        /// Restore the files only.
        #[arg(long, conflicts_with_all = ["conversation", "both"], requires = "to")]
        code: bool,
        /// Restore the conversation only.
        #[arg(long, conflicts_with_all = ["code", "both"], requires = "to")]
        conversation: bool,
        /// Restore both (the default).
        #[arg(long, conflicts_with_all = ["code", "conversation"], requires = "to")]
        both: bool,
    },
    /// Run a task suite and score it: each task in a fresh workspace, checked by its
    /// validation script (see docs/eval.md).
    Eval(Box<EvalArgs>),
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, JetBrains IDEs,
    /// Neovim): see docs/editors.md.
    Acp,
    /// The MCP servers configured here (`[mcp_servers.NAME]`, `.mcp.json`).
    Mcp {
        /// What to do.
        #[command(subcommand)]
        command: McpCommand,
    },
}

/// `rein eval`.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Examples:\n  rein eval evals/smoke                       run a suite, results in rein-eval/<time>/\n  rein eval suite.toml -j 4 --repeat 3        pass@1 and pass@3\n  rein eval suite.toml --replay recordings/   offline, from recorded model traffic\n  rein eval suite.toml --ray 127.0.0.1:6379   on a Ray cluster\n  rein eval --compare a/results.jsonl b/results.jsonl\n\nExit status: 0 the suite ran (whatever passed); 1 --fail-under not met, or a failure; 2 bad input."
)]
pub(crate) struct EvalArgs {
    /// The suite: a TOML file, or a directory holding suite.toml.
    #[arg(value_name = "SUITE", required_unless_present = "compare")]
    pub(crate) suite: Option<PathBuf>,
    /// Where results go [default: rein-eval/<timestamp>/].
    #[arg(long, value_name = "DIR")]
    pub(crate) out: Option<PathBuf>,
    /// Attempts run at once [default: the number of cores; with --ray, the cluster's CPUs].
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub(crate) jobs: Option<u32>,
    /// Attempts per task, for pass@k.
    #[arg(long, value_name = "K", default_value_t = 1)]
    pub(crate) repeat: u32,
    /// Only the tasks whose id matches (`*` for any characters; repeatable).
    #[arg(long, value_name = "ID")]
    pub(crate) filter: Vec<String>,
    /// The model, over the suite's.
    #[arg(short = 'm', long)]
    pub(crate) model: Option<String>,
    /// The wire format, over the suite's.
    #[arg(long, value_enum)]
    pub(crate) provider: Option<ProviderArg>,
    /// The API's base URL.
    #[arg(long, value_name = "URL")]
    pub(crate) base_url: Option<String>,
    /// Finish an interrupted run: skip the attempts its results.jsonl already holds.
    #[arg(long)]
    pub(crate) resume: bool,
    /// Also write the summary as Markdown to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) report: Option<PathBuf>,
    /// Exit 1 when pass@1 is below RATE (0 to 1).
    #[arg(long, value_name = "RATE")]
    pub(crate) fail_under: Option<f64>,
    /// Save each attempt's model traffic in DIR (TASK.jsonl, TASK.N.jsonl).
    #[arg(long, value_name = "DIR", conflicts_with = "replay")]
    pub(crate) record: Option<PathBuf>,
    /// Play each task's recording in DIR back: no model, no network.
    #[arg(long, value_name = "DIR")]
    pub(crate) replay: Option<PathBuf>,
    /// Run the attempts on the Ray cluster at ADDRESS (as `ray start --head` prints it, or
    /// `auto`).
    #[arg(long, value_name = "ADDRESS")]
    pub(crate) ray: Option<String>,
    /// The Python that has Ray, for --ray [default: python3].
    #[arg(long, value_name = "PATH", requires = "ray")]
    pub(crate) python: Option<PathBuf>,
    /// Show per-task differences between two runs' results.jsonl files.
    #[arg(long, num_args = 2, value_names = ["A", "B"], conflicts_with_all = ["suite", "resume", "ray"])]
    pub(crate) compare: Vec<PathBuf>,
    /// Run one attempt (TASK:N) here and print its record (what a Ray worker runs).
    #[arg(long, value_name = "TASK:N", hide = true)]
    pub(crate) attempt: Option<String>,
}

/// `rein mcp` sub-commands.
#[derive(Debug, Clone, Subcommand)]
pub(crate) enum McpCommand {
    /// Start the configured MCP servers, then show each one's state, tool count and last
    /// error.
    List,
    /// Add a server: `rein mcp add NAME -- CMD ARGS...` or `rein mcp add NAME --url URL`.
    #[command(
        after_help = "Examples:\n  rein mcp add fs -- npx -y @modelcontextprotocol/server-filesystem .\n  rein mcp add gh --env GITHUB_TOKEN='${GITHUB_TOKEN}' -- gh-mcp\n  rein mcp add docs --url http://127.0.0.1:8931/mcp --header 'Authorization=Bearer ${DOCS_TOKEN}'\n  rein mcp add fs --scope project -- npx -y @modelcontextprotocol/server-filesystem ."
    )]
    Add {
        /// The server's name (its tools are `mcp__NAME__TOOL`).
        name: String,
        /// A streamable-HTTP server at URL, instead of a command.
        #[arg(long, value_name = "URL", conflicts_with_all = ["command", "env"])]
        url: Option<String>,
        /// Which config file: yours ($REIN_HOME/config.toml) or the project's
        /// (.rein/config.toml).
        #[arg(long, value_enum, default_value_t = McpScope::User)]
        scope: McpScope,
        /// A variable for the server, KEY=VALUE (repeatable; `${VAR}` is expanded at start).
        #[arg(long, value_name = "KEY=VALUE")]
        env: Vec<String>,
        /// A header for an HTTP server, NAME=VALUE (repeatable).
        #[arg(long, value_name = "NAME=VALUE", requires = "url")]
        header: Vec<String>,
        /// The command and its arguments, after `--`.
        #[arg(last = true, value_name = "CMD")]
        command: Vec<String>,
    },
    /// Sign in to a server reached by URL that asks for it (OAuth): opens the browser,
    /// keeps the tokens in $REIN_HOME/mcp-auth/NAME.json (mode 0600).
    Login {
        /// The server's name.
        name: String,
        /// How long to wait for the sign-in in the browser, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = rein_core::mcp::LOGIN_WAIT.as_secs())]
        timeout: u64,
    },
    /// Forget the sign-in of a server (its stored tokens).
    Logout {
        /// The server's name.
        name: String,
    },
    /// Remove a server from your config file or the project's.
    Remove {
        /// The server's name.
        name: String,
        /// Which config file (default: wherever it is configured, the project's first).
        #[arg(long, value_enum)]
        scope: Option<McpScope>,
    },
}

/// `--scope` of `rein mcp add|remove`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum McpScope {
    /// Yours: $REIN_HOME/config.toml.
    User,
    /// The project's: .rein/config.toml (its servers start once it is trusted).
    Project,
}

/// `--provider`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProviderArg {
    /// OpenAI-compatible Chat Completions.
    Openai,
    /// Anthropic Messages.
    Anthropic,
    /// The OpenAI Responses API (models offered only there).
    OpenaiResponses,
}

impl From<ProviderArg> for rein_core::config::ProviderKind {
    fn from(provider: ProviderArg) -> Self {
        match provider {
            ProviderArg::Openai => Self::OpenAi,
            ProviderArg::Anthropic => Self::Anthropic,
            ProviderArg::OpenaiResponses => Self::OpenAiResponses,
        }
    }
}

/// `--input-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum InputFormat {
    /// A prompt (-p, or stdin) for one turn.
    Text,
    /// One JSON message a line on stdin, each a turn of one conversation.
    StreamJson,
}

/// `--permission-prompt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum PermissionPrompt {
    /// Questions as permission_request lines on stdout, answers read from stdin.
    Stdin,
}

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum OutputFormat {
    /// The final answer on stdout; progress on stderr.
    Text,
    /// One JSON object at the end.
    Json,
    /// Every event as a JSON line, then the final object.
    StreamJson,
}

/// `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum SandboxArg {
    /// Nothing writable but /dev/null and a private temporary directory; no network.
    ReadOnly,
    /// The workspace, a private TMPDIR, the tool caches and /tmp are writable.
    WorkspaceWrite,
    /// No sandbox.
    Off,
}

impl From<SandboxArg> for rein_core::face::SandboxLevel {
    fn from(level: SandboxArg) -> Self {
        match level {
            SandboxArg::ReadOnly => Self::ReadOnly,
            SandboxArg::WorkspaceWrite => Self::WorkspaceWrite,
            SandboxArg::Off => Self::Off,
        }
    }
}

/// `--permission-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum PermissionMode {
    /// Reads run; edits and commands ask (a one-shot run has no one to ask, so it refuses
    /// them and tells the model).
    Default,
    /// Reads and edits inside the workspace run; commands ask.
    AcceptEdits,
    /// Read-only: no edits, no commands.
    Plan,
    /// Inside the workspace everything runs without asking, commands in the OS sandbox;
    /// only leaving the sandbox asks. Refuses to start where the sandbox cannot be enforced.
    Auto,
    /// Everything without asking, but the hard deny list of destructive commands.
    Yolo,
}

impl PermissionMode {
    /// The name `--permission-mode` takes.
    pub(crate) fn name(self) -> &'static str {
        rein_core::permissions::PermissionMode::from(self).into()
    }
}

impl Args {
    /// The permission mode of this run: `--permission-mode`, else the default one.
    pub(crate) fn mode(&self) -> rein_core::permissions::PermissionMode {
        self.permission_mode.map(Into::into).unwrap_or_default()
    }
}

impl From<rein_core::permissions::PermissionMode> for PermissionMode {
    fn from(mode: rein_core::permissions::PermissionMode) -> Self {
        use rein_core::permissions::PermissionMode as Core;
        match mode {
            Core::Default => Self::Default,
            Core::AcceptEdits => Self::AcceptEdits,
            Core::Plan => Self::Plan,
            Core::Auto => Self::Auto,
            Core::Yolo => Self::Yolo,
        }
    }
}

impl From<PermissionMode> for rein_core::permissions::PermissionMode {
    fn from(mode: PermissionMode) -> Self {
        match mode {
            PermissionMode::Default => Self::Default,
            PermissionMode::AcceptEdits => Self::AcceptEdits,
            PermissionMode::Plan => Self::Plan,
            PermissionMode::Auto => Self::Auto,
            PermissionMode::Yolo => Self::Yolo,
        }
    }
}

/// `--max-cost`: US dollars above zero.
fn parse_max_cost(text: &str) -> Result<f64, String> {
    let usd: f64 = text
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("{text:?} is not an amount of US dollars (e.g. 0.50)"))?;
    rein_core::config::check_max_cost(usd).map_err(|e| e.to_string())
}

/// `--max-tokens`: a whole number of tokens above zero.
fn parse_max_tokens(text: &str) -> Result<u64, String> {
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(format!("{text:?} is not a number of tokens above 0")),
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    #[test]
    fn the_command_line_is_well_formed() {
        Args::command().debug_assert();
    }

    #[test]
    fn short_v_prints_the_version() {
        let err = Args::try_parse_from(["rein", "-v"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
    }

    #[test]
    fn the_help_names_the_real_default_round_limit() {
        let help = Args::command().render_long_help().to_string();
        let default = rein_core::agent::DEFAULT_MAX_ROUNDS;
        assert!(help.contains(&format!("(default {default})")), "{help}");
    }

    #[test]
    fn resume_and_continue_conflict() {
        let err = Args::try_parse_from(["rein", "-r", "x", "-c"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::ArgumentConflict);
    }
}
