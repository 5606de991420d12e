//! The interactive REPL: `rein` with no request. Output goes inline into the terminal's
//! normal scrollback (no alternate screen); the input line is rustyline's; while a turn runs
//! rein reads keys itself (Ctrl+C, approvals, type-ahead).

mod approval;
mod attach;
mod banner;
mod commands;
mod custom;
mod editor;
mod keys;
mod pager;
mod paste;
mod prompt;
mod rewind;
mod signals;
pub(crate) mod slash;
mod terminal;
mod turn;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use rein_core::agent::{Agent, EventSink, Events};
use rein_core::hooks::SessionStartSource;
use rustyline::error::ReadlineError;
use tokio_util::sync::CancellationToken;

use crate::args::Args;
use crate::exit::Exit;
use crate::render::{self, Live, LiveOptions, Style};
use crate::setup::{self, McpServers, Prepared, SetupError};
use approval::ReplInteraction;
use banner::ask_trust_once;
use editor::LineEditor;
use keys::{KeyShared, TurnKeys, Typed};
use signals::Signals;

/// What to do after a command.
enum Flow {
    Continue,
    /// Done, with what was typed meanwhile (a command that ran a turn).
    Typed(Typed),
    Exit,
    /// Build the agent again from these arguments (another model, mode or session).
    Rebuild(Box<Rebuild>),
}

struct Rebuild {
    args: Args,
    /// A different session from the one open: its hooks end and start, and its last
    /// exchange is shown.
    other_session: bool,
    /// What to do once the agent has let go of the session file (a conversation rewind).
    then: Option<rewind::Pending>,
}

/// The REPL's state besides the agent.
struct Repl {
    args: Args,
    session_id: String,
    cwd: PathBuf,
    rein_home: PathBuf,
    style: Style,
    live: Arc<Live>,
    keys: Arc<KeyShared>,
    interaction: Arc<ReplInteraction>,
    events: Events,
    signals: Signals,
    editor: Option<LineEditor>,
    /// Output of `!` commands, to go with the next request.
    shell_notes: Vec<String>,
    /// Direct calls so far, for their ids.
    direct_calls: u32,
    /// Tokens the session used before the agent now open (an earlier run, another model).
    earlier_usage: rein_core::face::Usage,
    /// What was said at start about the MCP servers (those left out), for `/mcp`.
    mcp_warnings: Vec<String>,
    /// The custom slash commands (`/help` lists them, Tab completes them).
    custom_commands: Vec<rein_core::commands::CustomCommand>,
}

/// A turn (or a command that may take a while) running, with keys read and the spinner on.
struct Running {
    cancel: CancellationToken,
    keys: TurnKeys,
    ticker: tokio::task::JoinHandle<()>,
    started: Instant,
}

/// Runs the REPL until the person leaves.
pub(crate) async fn run(mut args: Args) -> Exit {
    let style = Style::for_stdout();
    let live = Arc::new(Live::new(
        std::io::stdout(),
        LiveOptions {
            style,
            width: terminal::width(),
            // Only a terminal gets a line replaced in place.
            spinner: std::io::IsTerminal::is_terminal(&std::io::stdout()),
            show_reasoning: !hide_reasoning(),
            interactive: true,
        },
    ));
    live.set_width_probe(terminal::width);
    let keys = KeyShared::new(Arc::clone(&live));
    let interaction = Arc::new(ReplInteraction::new(Arc::clone(&live), Arc::clone(&keys)));
    if let Err(exit) = ask_trust_once(&args, style) {
        return exit;
    }
    banner::settle_mode(&mut args, style);
    let modes = terminal::keys_mode();
    let exit = Box::pin(session(args, style, live, keys, interaction, &modes)).await;
    modes.restore();
    exit
}

/// The session, once the terminal is in keys mode.
async fn session(
    args: Args,
    style: Style,
    live: Arc<Live>,
    keys: Arc<KeyShared>,
    interaction: Arc<ReplInteraction>,
    modes: &terminal::SavedModes,
) -> Exit {
    let prepared = match setup::prepare(&args, Arc::clone(&interaction) as _, McpServers::Start) {
        Ok(prepared) => prepared,
        Err(SetupError::Usage(message)) => {
            render::notice(&message);
            return Exit::Usage;
        }
        Err(SetupError::Runtime(message)) => {
            render::error(&message);
            return Exit::Runtime;
        }
    };
    let Prepared {
        agent,
        session_id,
        cwd,
        rein_home,
        earlier_usage,
        warnings,
        mcp_warnings,
        custom_commands,
    } = prepared;
    let mut agent = agent;
    let signals = Signals::install(
        agent.tool_context().processes().clone(),
        agent.mcp_hub().cloned(),
        modes.clone(),
    );
    let history = rein_home.join("history");
    let completions = editor::custom_completions(&custom_commands);
    let hub = agent.mcp_hub().cloned();
    let editor = match editor::new(&cwd, &history, style.is_colored(), completions, hub) {
        Ok(editor) => editor,
        Err(e) => {
            render::error(&format!("cannot set up the input line: {e}"));
            return Exit::Runtime;
        }
    };
    let mut repl = Repl {
        events: Events::shared(Arc::clone(&live) as Arc<dyn EventSink>),
        args,
        session_id,
        cwd,
        rein_home,
        style,
        live,
        keys,
        interaction,
        signals,
        editor: Some(editor),
        shell_notes: Vec::new(),
        direct_calls: 0,
        earlier_usage,
        mcp_warnings,
        custom_commands,
    };
    // Forked once: later rebuilds reopen the fork itself.
    repl.args.fork = false;
    repl.banner(&agent);
    for warning in &warnings {
        repl.say(&style.warn(&format!("warning: {}", render::neutralize(warning))));
    }
    let resumed = repl.args.resume.is_some() || repl.args.continue_session;
    if resumed {
        repl.show_last_exchange(&agent);
    }
    let source = if resumed {
        SessionStartSource::Resume
    } else {
        SessionStartSource::Startup
    };
    agent
        .start_session(source, &repl.events, &CancellationToken::new())
        .await;
    // The first code block must not wait for the syntaxes to load.
    render::warm_up_highlighting();
    repl.main_loop(agent, &history).await
}

impl Repl {
    async fn main_loop(&mut self, mut agent: Agent, history: &Path) -> Exit {
        let mut queued: VecDeque<String> = VecDeque::new();
        let mut prefill = String::new();
        let mut warned = false;
        loop {
            if let Some(exit) = self.signals.exit() {
                return self.leave(agent, exit).await;
            }
            let line = match queued.pop_front() {
                Some(line) => {
                    self.say(&format!(
                        "{}{}",
                        self.style.accent(editor::PROMPT),
                        render::neutralize(&line)
                    ));
                    line
                }
                None => match self.read_line(std::mem::take(&mut prefill)).await {
                    Ok(line) => line,
                    Err(ReadlineError::Interrupted) => {
                        if self.interrupted(&agent, &mut warned, &mut prefill).await {
                            break;
                        }
                        continue;
                    }
                    Err(ReadlineError::Eof) => break,
                    Err(e) => {
                        render::error(&format!("cannot read the input: {e}"));
                        break;
                    }
                },
            };
            warned = false;
            let input = editor::joined(&line);
            if input.trim().is_empty() {
                continue;
            }
            if self.lost_paste(&input) {
                prefill = input;
                continue;
            }
            if let Some(editor) = self.editor.as_mut() {
                editor::remember(editor, history, &input);
            }
            // Shown and remembered with its pastes' placeholders; acted on with them whole.
            let input = match self.editor.as_ref().and_then(|e| e.helper()) {
                Some(helper) => helper.expand_pastes(&input),
                None => input,
            };
            let custom = match slash::parse(&input) {
                Some(slash::Slash::Unknown(name)) => self.custom_command(&agent, &name).await,
                _ => None,
            };
            let typed = if let Some(command) = custom {
                let arguments = input.trim()[1 + command.name.len()..].trim().to_owned();
                match self.custom(&mut agent, &command, &arguments).await {
                    Ok(typed) => typed,
                    Err(not_sent) => {
                        if not_sent.typed.leave {
                            break;
                        }
                        prefill = self.refill(not_sent, &mut queued);
                        continue;
                    }
                }
            } else if let Some(command) = slash::parse(&input) {
                match self.slash(&mut agent, command).await {
                    Flow::Continue => Typed::default(),
                    Flow::Typed(typed) => typed,
                    Flow::Exit => break,
                    Flow::Rebuild(rebuild) => {
                        // Lines typed meanwhile are kept, as during a turn (rustyline drops
                        // what it read past the line it returns).
                        let keys = self.keys.start(CancellationToken::new());
                        let rebuilt = self.rebuild(agent, *rebuild).await;
                        let typed = keys.finish();
                        match rebuilt {
                            Ok(rebuilt) => {
                                agent = rebuilt;
                                typed
                            }
                            Err(exit) => return exit,
                        }
                    }
                }
            } else if let Some(command) = input.trim_start().strip_prefix('!') {
                self.shell(&agent, command.trim()).await
            } else {
                match self.turn(&mut agent, &input).await {
                    Ok(typed) => typed,
                    Err(not_sent) => {
                        if not_sent.typed.leave {
                            break;
                        }
                        prefill = self.refill(not_sent, &mut queued);
                        continue;
                    }
                }
            };
            if typed.leave {
                break;
            }
            // Whole lines typed during the turn are sent in order; the rest waits at the
            // prompt, after the rest typed before (it waits while queued lines run).
            let (lines, rest) = typed.split();
            queued.extend(lines);
            prefill.push_str(&rest);
        }
        self.leave(agent, Exit::Done).await
    }

    /// Builds the agent again (another model, mode or session).
    async fn rebuild(&mut self, agent: Agent, rebuild: Rebuild) -> Result<Agent, Exit> {
        let mut agent = agent;
        let model_before = agent.model().to_owned();
        if rebuild.other_session {
            self.close_session(&mut agent).await;
        } else {
            let _ = agent.save_session();
        }
        // The MCP servers stay up: the next agent offers the same ones, and runs in the same
        // sandbox while its policy is unchanged.
        let kept = McpServers::of(&agent);
        if rebuild.other_session
            && let McpServers::Keep {
                sandbox: Some(sandbox),
                ..
            } = &kept
        {
            // A host answer holds for its session, as a rule allowed for it does.
            sandbox.forget_hosts().await;
        }
        let servers = || kept.clone();
        // The session file is locked by the agent holding it: that one goes first.
        drop(agent);
        if let Some(pending) = rebuild.then {
            self.finish_rewind(pending);
        }
        let previous = std::mem::replace(&mut self.args, rebuild.args);
        let mut prepared =
            setup::prepare(&self.args, Arc::clone(&self.interaction) as _, servers());
        if let Err(error) = &prepared {
            let message = match error {
                SetupError::Usage(m) | SetupError::Runtime(m) => m.clone(),
            };
            self.say_error(&render::neutralize(&message));
            // Back to where it was (another session started meanwhile cannot be helped).
            self.args = previous;
            if !rebuild.other_session {
                self.args.resume = Some(self.session_id.clone());
                self.args.continue_session = false;
            }
            prepared = setup::prepare(&self.args, Arc::clone(&self.interaction) as _, servers());
        }
        let prepared = match prepared {
            Ok(prepared) => prepared,
            Err(SetupError::Usage(m) | SetupError::Runtime(m)) => {
                render::error(&m);
                return Err(Exit::Runtime);
            }
        };
        let mut agent = prepared.agent;
        self.session_id = prepared.session_id;
        self.earlier_usage = prepared.earlier_usage;
        self.mcp_warnings = prepared.mcp_warnings;
        self.custom_commands = prepared.custom_commands;
        // What holds the old MCP servers lets go of them: servers started again in a new
        // sandbox are the ones to complete from and to stop on a signal, and the old ones stop.
        let hub = agent.mcp_hub().cloned();
        self.signals
            .follow(agent.tool_context().processes().clone(), hub.clone());
        if let Some(helper) = self.editor.as_mut().and_then(|e| e.helper_mut()) {
            helper.follow(hub);
        }
        for warning in &prepared.warnings {
            self.say_warn(&format!("warning: {}", render::neutralize(warning)));
        }
        if !rebuild.other_session {
            // The same session: what the person allowed for it still holds.
            for rule in self.interaction.granted() {
                agent.allow_for_session(rule);
            }
            // `/model NAME`: a name the server does not serve is said now, not at the next
            // request.
            agent.check_model(&self.events).await;
            if agent.model() != model_before {
                self.switched(&mut agent).await;
            }
        }
        if rebuild.other_session {
            let what = if self.args.resume.is_some() {
                "resumed"
            } else {
                "new"
            };
            self.say_dim(&format!("{what} session {}", self.session_id));
            self.live.clear_edits();
            self.interaction.forget_granted();
            self.shell_notes.clear();
            let source = if self.args.resume.is_some() {
                self.show_last_exchange(&agent);
                SessionStartSource::Resume
            } else {
                SessionStartSource::Startup
            };
            agent
                .start_session(source, &self.events, &CancellationToken::new())
                .await;
        }
        Ok(agent)
    }

    /// After `/model NAME`: the model now answering, and its window as `/context` has it.
    async fn switched(&self, agent: &mut Agent) {
        let window = agent.context_report().await.window;
        self.say(&format!(
            "now on {} ({}) · context window {} tokens (from {})",
            self.style.bold(&render::neutralize(agent.model())),
            agent.provider_kind(),
            window.tokens,
            render::neutralize(&window.source.to_string())
        ));
    }

    /// Ends the session: what was not written is written, an empty one is deleted, the
    /// SessionEnd hooks run. Returns whether it was kept.
    async fn close_session(&mut self, agent: &mut Agent) -> bool {
        let kept = !matches!(agent.discard_unanswered_session(), Ok(true));
        if let Err(e) = agent.save_session() {
            self.say_error(&format!("the session could not be saved completely: {e}"));
        }
        agent.end_session(&self.events).await;
        kept
    }

    /// Leaves rein: saves, stops what rein started, says how to come back.
    async fn leave(&mut self, mut agent: Agent, exit: Exit) -> Exit {
        let kept = self.close_session(&mut agent).await;
        agent.tool_context().processes().kill_all().await;
        agent.shutdown_mcp().await;
        if kept {
            self.say_dim(&format!(
                "Resume this session with: rein -r {}   (or rein -c)",
                self.session_id
            ));
        }
        exit
    }

    /// Writes one line of rein's own (already safe).
    fn say(&self, line: &str) {
        self.live.write(&format!("{line}\n"));
    }

    /// Says `text` as a warning.
    fn say_warn(&self, text: &str) {
        self.say(&self.style.warn(text));
    }

    /// Says `text` dimmed.
    fn say_dim(&self, text: &str) {
        self.say(&self.style.dim(text));
    }

    /// Says `text` as an error.
    fn say_error(&self, text: &str) {
        self.say(&self.style.error(text));
    }
}

/// Whether reasoning is hidden (`REIN_HIDE_REASONING=1`).
fn hide_reasoning() -> bool {
    std::env::var("REIN_HIDE_REASONING").is_ok_and(|v| !v.is_empty() && v != "0")
}
