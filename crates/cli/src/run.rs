//! One run of rein: the one-shot and headless modes.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rein_core::agent::{AgentEvent, EventSink, Events, TurnEnd, TurnStop};
use rein_core::hooks::SessionStartSource;
use tokio_util::sync::CancellationToken;

use crate::args::{Args, OutputFormat};
use crate::exit::Exit;
use crate::report::{self, Denial, RunReport};
use crate::setup::{self, SetupError};
use crate::{commands, demo, input, interrupt, render};

/// Runs what the command line asks for and returns how rein should exit.
pub(crate) async fn run(args: Args) -> Exit {
    if args.demo {
        return demo::run().await;
    }
    if let Some(command) = &args.command {
        return commands::run(&args, command).await;
    }
    let prompt = match input::one_shot_prompt(args.prompt.as_deref(), &render::notice) {
        Ok(Some(prompt)) => prompt,
        Ok(None) => {
            render::notice(
                "rein: interactive mode is not available yet; give a request with -p \"...\" (or pipe it in).\n\
                 Try `rein --demo` to watch rein work offline, or `rein --help`.",
            );
            return Exit::Usage;
        }
        Err(message) => {
            render::error(&message);
            return Exit::Usage;
        }
    };
    let started = Instant::now();
    let format = args.output_format.unwrap_or(OutputFormat::Text);
    let prepared = match setup::prepare(&args) {
        Ok(prepared) => prepared,
        Err(error) => {
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
                render::stdout_line(
                    &RunReport::failed_setup(&message, started.elapsed()).to_json_line(),
                );
            }
            return exit;
        }
    };
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
    let shown: Box<dyn EventSink> = match format {
        OutputFormat::Text => Box::new(render::TextProgress::new()),
        OutputFormat::Json => Box::new(|_| {}),
        OutputFormat::StreamJson => Box::new(render::StreamJson),
    };
    let log = Arc::new(RunLog::new(shown, prepared.warnings.clone()));
    let events = Events::shared(log.clone());
    let resumed = args.resume.is_some() || args.continue_session;
    let source = if resumed {
        SessionStartSource::Resume
    } else {
        SessionStartSource::Startup
    };
    agent.start_session(source, &events, &cancel).await;
    let outcome = agent.run_turn(&prompt, &events, cancel).await;
    let mut session_id = Some(prepared.session_id.as_str());
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
            Err(e) => events.emit(AgentEvent::Warning {
                message: format!("could not delete the unanswered session: {e}"),
            }),
        }
    }
    if let Err(e) = agent.save_session() {
        let message = format!("the session could not be saved completely: {e}");
        events.emit(AgentEvent::Warning {
            message: message.clone(),
        });
        unsaved = Some(message);
    }
    agent.end_session(&events).await;
    let changed = agent.tool_context().changed_files();
    let mut report = RunReport::new(
        session_id,
        agent.model(),
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
    match format {
        OutputFormat::Text => {
            if !outcome.text.is_empty() {
                render::answer(&outcome.text);
            }
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
                TurnStop::PromptBlocked => {
                    if let TurnEnd::PromptBlocked { reason } = &outcome.end {
                        render::notice(&format!(
                            "rein: {}",
                            report::blocked_prompt_message(reason)
                        ));
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
        OutputFormat::Json | OutputFormat::StreamJson => {
            render::stdout_line(&report.to_json_line());
        }
    }
    // Servers and other background processes the commands started end with rein, and so
    // do the MCP servers.
    agent.tool_context().processes().kill_all().await;
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

/// Passes events on to the renderer and keeps what the final report lists: warnings, the
/// calls that were not allowed to run, and how many times the context was compacted.
struct RunLog {
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

    fn take(&self) -> (Vec<String>, Vec<Denial>, u32) {
        std::mem::take(
            &mut *self
                .kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        )
    }
}

impl EventSink for RunLog {
    fn emit(&self, event: AgentEvent) {
        match &event {
            AgentEvent::Warning { message } => self
                .kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .0
                .push(message.clone()),
            AgentEvent::PermissionDenied {
                name,
                arguments,
                reason,
                ..
            } => self
                .kept
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .1
                .push(Denial {
                    tool: name.clone(),
                    arguments: arguments.clone(),
                    reason: reason.clone(),
                }),
            AgentEvent::Compaction(_) => {
                self.kept
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner)
                    .2 += 1;
            }
            _ => {}
        }
        self.inner.emit(event);
    }
}
