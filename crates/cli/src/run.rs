//! One run of rein: the one-shot and headless modes (the REPL is in `repl`).

use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Instant;

use parking_lot::Mutex;
use rein_core::agent::{Agent, AgentEvent, EventSink, Events, TurnEnd, TurnOutcome, TurnStop};
use rein_core::commands::CommandError;
use rein_core::face::{Display, HostPort, NETWORK_QUESTION};
use rein_core::hooks::SessionStartSource;
use rein_core::interaction::Unattended;
use tokio_util::sync::CancellationToken;

use crate::args::{Args, InputFormat, OutputFormat};
use crate::exit::Exit;
use crate::report::{self, Denial, RunReport};
use crate::setup::{self, HeadlessCommand, McpServers, SetupError};
use crate::{commands, demo, input, interrupt, render, repl};

/// Runs what the command line asks for and returns how rein should exit.
pub(crate) async fn run(args: Args) -> Exit {
    if args.demo {
        return demo::run().await;
    }
    if let Some(command) = &args.command {
        return commands::run(&args, command).await;
    }
    let mut args = args;
    if args.fork && args.resume.is_none() && !args.continue_session {
        render::notice("rein: --fork goes with -r ID or -c: the session to fork");
        return Exit::Usage;
    }
    if args.resume.as_deref() == Some("") {
        // `-r` without an id: a picker on a terminal, the list otherwise.
        match commands::sessions::pick(&args) {
            Ok(Some(id)) => args.resume = Some(id),
            Ok(None) => return Exit::Done,
            Err(message) => {
                render::error(&message);
                return Exit::Usage;
            }
        }
    }
    if args.input_format == Some(InputFormat::StreamJson) {
        return Box::pin(crate::conversation::run(&args)).await;
    }
    if args.permission_prompt.is_some() {
        render::notice("rein: --permission-prompt stdin goes with --input-format stream-json");
        return Exit::Usage;
    }
    let prompt = match input::one_shot_prompt(args.prompt.as_deref(), &render::notice) {
        Ok(Some(prompt)) => prompt,
        Ok(None) => return Box::pin(repl::run(args)).await,
        Err(message) => {
            render::error(&message);
            return Exit::Usage;
        }
    };
    let started = Instant::now();
    let format = args.output_format.unwrap_or(OutputFormat::Text);
    let command = match setup::headless_command(&args, &prompt) {
        Ok(command) => command,
        Err(SetupError::Usage(message) | SetupError::Runtime(message)) => {
            // A command that cannot run here (`/init` headless in default mode, an unknown
            // one): a usage mistake, reported in the JSON formats like any failed set-up.
            return failed_setup(SetupError::Usage(message), format, started);
        }
    };
    // The model a command asks for, unless the command line names one.
    if let Some(HeadlessCommand::File(command, _)) = &command
        && args.model.is_none()
    {
        args.model.clone_from(&command.model);
    }
    let prepared = match set_up(&args, format, started) {
        Ok(prepared) => prepared,
        Err(exit) => return exit,
    };
    // Boxed: the one-shot run holds the agent and its event sink across many awaits.
    Box::pin(one_shot(&args, &prompt, command, prepared, format, started)).await
}

/// Set-up: the agent as the command line and the configuration describe it; a failure is
/// shown (and, in the JSON formats, reported) and gives the exit.
fn set_up(args: &Args, format: OutputFormat, started: Instant) -> Result<setup::Prepared, Exit> {
    setup::prepare(args, Arc::new(Unattended), McpServers::Start)
        .map_err(|error| failed_setup(error, format, started))
}

/// Shows a set-up failure (and, in the JSON formats, reports it) and gives the exit.
fn failed_setup(error: SetupError, format: OutputFormat, started: Instant) -> Exit {
    let (message, exit) = match error {
        SetupError::Usage(message) => {
            render::notice(&message);
            (message, Exit::Usage)
        }
        SetupError::Runtime(message) => {
            render::error(&message);
            (message, Exit::Runtime)
        }
    };
    if format != OutputFormat::Text {
        render::stdout_line(&RunReport::failed_setup(&message, started.elapsed()).to_json_line());
    }
    exit
}

/// The live view's spinner, ticking while the turn runs (nothing without a live view).
struct Spinner {
    live: Option<Arc<render::Live>>,
    ticker: Option<tokio::task::JoinHandle<()>>,
}

impl Spinner {
    fn start(live: Option<&Arc<render::Live>>) -> Self {
        let ticker = live.map(|live| {
            live.begin("thinking");
            let live = Arc::clone(live);
            tokio::spawn(async move {
                let mut every = tokio::time::interval(crate::render::SPINNER_TICK);
                loop {
                    every.tick().await;
                    live.tick();
                }
            })
        });
        let live = live.cloned();
        Spinner { live, ticker }
    }

    /// Stops the ticks and ends the live view's line.
    fn stop(self) {
        if let Some(ticker) = self.ticker {
            ticker.abort();
        }
        if let Some(live) = &self.live {
            live.end();
        }
    }
}

/// One prompt, one turn: the event sink, the turn, and the finish (session, report, exit).
async fn one_shot(
    args: &Args,
    prompt: &str,
    command: Option<HeadlessCommand>,
    prepared: setup::Prepared,
    format: OutputFormat,
    started: Instant,
) -> Exit {
    let mut agent = prepared.agent;
    for warning in &prepared.warnings {
        render::notice(&format!("rein: warning: {warning}"));
    }
    let cancel = CancellationToken::new();
    let interrupts = interrupt::install(
        cancel.clone(),
        agent.tool_context().processes().clone(),
        agent.mcp_hub().cloned(),
    );

    if format == OutputFormat::StreamJson {
        // First, so a wrapper knows what to resume or where to look before anything else.
        render::stdout_line(&render::session_line(
            &prepared.session_id,
            agent.model(),
            agent.provider_kind(),
            &prepared.cwd,
            args.resume.is_some() || args.continue_session,
        ));
    }
    let (live, log) = event_sink(format, prepared.warnings.clone());
    let events = Events::shared(log.clone());
    let resumed = args.resume.is_some() || args.continue_session;
    let source = if resumed {
        SessionStartSource::Resume
    } else {
        SessionStartSource::Startup
    };
    agent.start_session(source, &events, &cancel).await;
    let spinner = Spinner::start(live.as_ref());
    let prompt = match command_request(&mut agent, prompt, command, &events, &cancel).await {
        Ok(prompt) => prompt,
        Err((message, exit)) => {
            // Nothing was sent: no session to keep, nothing left running.
            spinner.stop();
            // As set-up problems are shown: the person's mistake as a notice, a failure as
            // an error.
            if exit == Exit::Usage {
                render::notice(&format!("rein: {message}"));
            } else {
                render::error(&message);
            }
            if format != OutputFormat::Text {
                render::stdout_line(
                    &RunReport::failed_setup(&message, started.elapsed()).to_json_line(),
                );
            }
            let _ = agent.discard_unanswered_session();
            agent.shutdown_mcp().await;
            return exit;
        }
    };
    let outcome = agent.run_turn(&prompt, &events, cancel).await;
    spinner.stop();
    let (session_id, unsaved) =
        keep_session(&mut agent, &outcome, &events, resumed, &prepared.session_id);
    agent.end_session(&events).await;
    let changed = agent.tool_context().changed_files();
    let mut report = RunReport::new(
        session_id,
        &outcome,
        &changed,
        &prepared.cwd,
        started.elapsed(),
    );
    (
        report.warnings,
        report.permission_denials,
        report.compactions,
    ) = log.take();
    if let Some(message) = &unsaved {
        report.set_error_if_none(message);
    }
    show_outcome(format, live.as_ref(), &agent, &outcome, session_id, &report);
    // Servers and other background processes the commands started end with rein, and so
    // do the MCP servers.
    agent.tool_context().processes().kill_all().await;
    agent.tool_context().background().stop_all().await;
    agent.shutdown_mcp().await;
    if let Some(signalled) = interrupts.exit() {
        // SIGTERM, SIGHUP and SIGQUIT end the turn like Ctrl+C, with their own status.
        return signalled;
    }
    match unsaved {
        // A run whose record is incomplete did not fully succeed, whatever the model did.
        Some(_) if Exit::for_stop(outcome.stop()) == Exit::Done => Exit::Runtime,
        Some(_) | None => Exit::for_stop(outcome.stop()),
    }
}

/// The request a headless command makes (the input itself when it is none); `Err` when
/// nothing is to be sent: why, and the exit.
async fn command_request(
    agent: &mut Agent,
    input: &str,
    command: Option<HeadlessCommand>,
    events: &Events,
    cancel: &CancellationToken,
) -> Result<String, (String, Exit)> {
    let (command, arguments) = match command {
        None => return Ok(input.to_owned()),
        Some(HeadlessCommand::Init) => {
            let root = rein_core::config::find_project_root(&agent.tool_context().cwd()).dir;
            events.warn(
                "/init: AGENTS.md is written without asking (the permission mode \
                          allows edits); review it with `git diff` or in your editor",
            );
            return Ok(rein_core::commands::init_prompt(&root));
        }
        Some(HeadlessCommand::File(command, arguments)) => (command, arguments),
        Some(HeadlessCommand::McpPrompt { name, arguments }) => {
            let hub = agent.mcp_hub().cloned();
            match rein_core::commands::find_prompt(hub.as_deref(), &name, cancel).await {
                Ok(command) => (command, arguments),
                Err(rein_core::commands::PromptMissing::ServerDown(why)) => {
                    return Err((why, Exit::Runtime));
                }
                Err(rein_core::commands::PromptMissing::Unknown(why)) => {
                    return Err((why, Exit::Usage));
                }
            }
        }
    };
    let expanded =
        rein_core::commands::prepare(agent, &command, &arguments, events, cancel.clone()).await;
    match expanded {
        Ok(expanded) => {
            for warning in expanded.warnings {
                events.warn(warning);
            }
            Ok(expanded.prompt)
        }
        // A missing argument is the person's to fix; a server or prompt that failed is not.
        Err(CommandError::Usage(why)) => Err((why, Exit::Usage)),
        Err(CommandError::Failed(why)) => Err((why, Exit::Runtime)),
    }
}

/// The event sink: how the run shows what happens (live on a terminal, plain text, nothing
/// until the end, or JSON lines), behind a log that keeps what the report lists.
pub(crate) fn event_sink(
    format: OutputFormat,
    earlier_warnings: Vec<String>,
) -> (Option<Arc<render::Live>>, Arc<RunLog>) {
    // On a terminal, text mode streams as the REPL does: Markdown as it comes, a spinner.
    let live = (format == OutputFormat::Text && std::io::stderr().is_terminal()).then(|| {
        Arc::new(render::Live::new(
            std::io::stderr(),
            render::LiveOptions {
                style: render::Style::for_stderr(),
                width: render::terminal_width(),
                spinner: true,
                show_reasoning: true,
                interactive: false,
            },
        ))
    });
    let shown: Box<dyn EventSink> = match (format, &live) {
        (OutputFormat::Text, Some(live)) => Box::new(SharedLive(Arc::clone(live))),
        (OutputFormat::Text, None) => Box::new(render::TextProgress::new()),
        (OutputFormat::Json, _) => Box::new(|_| {}),
        (OutputFormat::StreamJson, _) => Box::new(render::StreamJson),
    };
    (live, Arc::new(RunLog::new(shown, earlier_warnings)))
}

/// Keeps the session, or drops one the model never answered; the session's id (`None` when
/// dropped) and why its record is incomplete, if it is.
pub(crate) fn keep_session<'a>(
    agent: &mut Agent,
    outcome: &TurnOutcome,
    events: &Events,
    resumed: bool,
    session_id: &'a str,
) -> (Option<&'a str>, Option<String>) {
    let mut session_id = Some(session_id);
    let mut unsaved = None;
    let unanswered = matches!(
        outcome.stop(),
        TurnStop::Error | TurnStop::Cancelled | TurnStop::PromptBlocked
    );
    if unanswered && outcome.rounds == 0 && !resumed {
        // Nothing but a prompt the model never answered (it failed, or the person stopped
        // it first): not a session worth resuming. One with streamed text is kept.
        match agent.discard_unanswered_session() {
            Ok(true) => session_id = None,
            Ok(false) => {}
            Err(e) => events.warn(format!("could not delete the unanswered session: {e}")),
        }
    }
    if let Err(e) = agent.save_session() {
        let message = format!("the session could not be saved completely: {e}");
        events.warn(message.clone());
        unsaved = Some(message);
    }
    (session_id, unsaved)
}

/// Shows how the turn ended: the answer and a closing line in text, the report in JSON.
fn show_outcome(
    format: OutputFormat,
    live: Option<&Arc<render::Live>>,
    agent: &Agent,
    outcome: &TurnOutcome,
    session_id: Option<&str>,
    report: &RunReport,
) {
    match format {
        OutputFormat::Text => {
            // Streamed to the same terminal already: once is enough there.
            let streamed_here = live.is_some() && std::io::stdout().is_terminal();
            if !outcome.text.is_empty() && !streamed_here {
                render::answer(&outcome.text);
            }
            if let Some(live) = live {
                live.write(&format!(
                    "{}\n",
                    render::closing_line(
                        render::Style::for_stderr(),
                        agent.model(),
                        outcome,
                        session_id,
                    )
                ));
            }
            notice_stop(outcome);
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            render::stdout_line(&report.to_json_line());
        }
    }
}

/// Says why a text-mode turn stopped, when it did not simply end.
fn notice_stop(outcome: &TurnOutcome) {
    match outcome.stop() {
        TurnStop::EndTurn => {}
        TurnStop::MaxTokens => {
            render::notice("rein: the answer was cut at the model's output token limit");
        }
        TurnStop::MaxRounds => render::notice(&format!(
            "rein: stopped after {} rounds (the limit); continue with: rein -c -p \"continue\"",
            outcome.rounds
        )),
        TurnStop::RepeatedCalls => render::notice(
            "rein: stopped: the model kept making the same call with the same result; \
             continue with: rein -c -p \"...\" and a hint on how to go on",
        ),
        TurnStop::Cancelled => render::notice("rein: interrupted"),
        TurnStop::MaxCost | TurnStop::MaxSessionTokens => {
            if let TurnEnd::SpendingLimit(reached) = &outcome.end {
                render::notice(&format!("rein: {}", reached.message()));
            }
        }
        TurnStop::PromptBlocked => {
            if let TurnEnd::PromptBlocked { reason } = &outcome.end {
                render::notice(&format!("rein: {}", report::blocked_prompt_message(reason)));
            }
        }
        TurnStop::Error => {
            let message = outcome
                .error()
                .map_or_else(|| "the turn failed".to_owned(), ToString::to_string);
            render::error(&message);
        }
    }
}

/// The live renderer, shared with the run that starts and ends its spinner.
struct SharedLive(Arc<render::Live>);

impl EventSink for SharedLive {
    fn emit(&self, event: AgentEvent) {
        self.0.emit(event);
    }
}

/// Passes events on to the renderer and keeps what the final report lists: warnings, the
/// calls that were not allowed to run, and how many times the context was compacted.
pub(crate) struct RunLog {
    inner: Box<dyn EventSink>,
    kept: Mutex<(Vec<String>, Vec<Denial>, u32)>,
}

impl RunLog {
    fn new(inner: Box<dyn EventSink>, earlier_warnings: Vec<String>) -> Self {
        RunLog {
            inner,
            kept: Mutex::new((earlier_warnings, Vec::new(), 0)),
        }
    }

    pub(crate) fn take(&self) -> (Vec<String>, Vec<Denial>, u32) {
        std::mem::take(&mut *self.kept.lock())
    }
}

impl EventSink for RunLog {
    fn emit(&self, event: AgentEvent) {
        // A sub-agent's refusals and warnings are the run's too.
        let inner = match &event {
            AgentEvent::Nested(nested) => nested.event.as_ref(),
            other => other,
        };
        match inner {
            AgentEvent::Warning { message } => self.kept.lock().0.push(message.clone()),
            AgentEvent::PermissionDenied {
                name,
                arguments,
                reason,
                ..
            } => self.kept.lock().1.push(Denial {
                tool: name.clone(),
                arguments: arguments.clone(),
                reason: reason.clone(),
            }),
            AgentEvent::Compaction(_) => {
                self.kept.lock().2 += 1;
            }
            AgentEvent::ToolResult {
                display: Display::Command { hosts_refused, .. },
                ..
            } if !hosts_refused.is_empty() => {
                let refused = hosts_refused.iter().map(host_denial);
                self.kept.lock().1.extend(refused);
            }
            _ => {}
        }
        self.inner.emit(event);
    }
}

/// A connection the person refused when rein's proxy asked, as the permission denial a
/// refused tool call would be: the question's own name (`network`) and arguments.
fn host_denial(refused: &HostPort) -> Denial {
    let HostPort { host, port } = refused;
    Denial {
        tool: NETWORK_QUESTION.to_owned(),
        arguments: serde_json::json!({ "host": host, "port": port }),
        reason: format!(
            "refused when asked: a sandboxed command's connection to {host}:{port} through \
             rein's network proxy ({host} is not in [sandbox] allow_domains)"
        ),
    }
}
