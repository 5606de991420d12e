//! One ACP session: a task that owns its [`Agent`] (the same one the REPL and headless runs
//! drive) and takes the client's requests for it in order: prompts, mode changes. A cancel
//! reaches the running turn through its token, as Ctrl+C does in the REPL.

use std::sync::Arc;

use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    AvailableCommandsUpdate, ContentBlock, Cost, CurrentModeUpdate, PromptResponse, SessionUpdate,
    SetSessionModeResponse, StopReason, UsageUpdate,
};
use parking_lot::Mutex;
use rein_core::commands::CustomCommand;
use rein_core::face::{Agent, Events, Interaction, McpHub, PermissionMode, TurnStop, cost_usd};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::prompt::prompt_text;
use super::updates::Updates;
use crate::args::Args;
use crate::setup::{self, McpServers, Place};

/// What the client asks of a session.
pub(crate) enum Request {
    /// A turn.
    Prompt {
        blocks: Vec<ContentBlock>,
        responder: Responder<PromptResponse>,
    },
    /// Another permission mode from now on.
    SetMode {
        mode: PermissionMode,
        responder: Responder<SetSessionModeResponse>,
    },
}

/// The way to a running session.
pub(crate) struct Handle {
    requests: mpsc::UnboundedSender<Request>,
    /// The running turn's token, while one runs.
    turn: Arc<Mutex<Option<CancellationToken>>>,
    task: tokio::task::JoinHandle<()>,
    advertiser: Arc<Advertiser>,
}

/// What tells the client the session's commands: the custom ones and the MCP prompts,
/// again each time the prompts change.
struct Advertiser {
    updates: Updates,
    custom: Vec<CustomCommand>,
    /// The servers of the session's agent (another after a mode change that restarted them).
    hub: Mutex<Option<Arc<McpHub>>>,
    watcher: Mutex<Option<tokio::task::JoinHandle<()>>>,
}

impl Advertiser {
    fn list(custom: &[CustomCommand], hub: Option<&McpHub>) -> Vec<CustomCommand> {
        rein_core::commands::with_prompts(custom, hub)
    }

    fn send(updates: &Updates, commands: &[CustomCommand]) {
        updates.send(SessionUpdate::AvailableCommandsUpdate(
            AvailableCommandsUpdate::new(super::commands::available(commands)),
        ));
    }

    /// Sends the list now, then again whenever the MCP prompts change.
    fn start(&self) {
        let hub = self.hub.lock().clone();
        // Watching before the first list: a server ready in between is not missed.
        let watch = hub.as_ref().map(|hub| hub.prompt_watch());
        let mut last = Self::list(&self.custom, hub.as_deref());
        Self::send(&self.updates, &last);
        let (Some(hub), Some(mut watch)) = (hub, watch) else {
            self.stop();
            return;
        };
        let (updates, custom) = (self.updates.clone(), self.custom.clone());
        let watcher = tokio::spawn(async move {
            loop {
                watch.changed().await;
                hub.refresh_prompts().await;
                let now = Self::list(&custom, Some(hub.as_ref()));
                if now != last {
                    Self::send(&updates, &now);
                    last = now;
                }
            }
        });
        if let Some(old) = self.watcher.lock().replace(watcher) {
            old.abort();
        }
    }

    fn stop(&self) {
        if let Some(watcher) = self.watcher.lock().take() {
            watcher.abort();
        }
    }

    /// The servers of the agent rebuilt for another mode: when they are not the ones
    /// watched (they started again, in the new sandbox), the list follows them, and the old
    /// ones stop once nothing holds them (the watcher held them too).
    fn follow(&self, hub: Option<Arc<McpHub>>) {
        let mut watched = self.hub.lock();
        let same = match (&*watched, &hub) {
            (Some(old), Some(new)) => Arc::ptr_eq(old, new),
            (None, None) => true,
            (Some(_), None) | (None, Some(_)) => false,
        };
        if same {
            return;
        }
        *watched = hub;
        drop(watched);
        if self.watcher.lock().is_some() {
            self.start();
        }
    }
}

impl Handle {
    /// Tells the client the slash commands (once the session exists), and again whenever
    /// the MCP prompts change.
    pub(crate) fn advertise(&self) {
        self.advertiser.start();
    }

    /// Passes a request on; `Err` gives it back (boxed) when the session has ended.
    pub(crate) fn send(&self, request: Request) -> Result<(), Box<Request>> {
        self.requests.send(request).map_err(|e| Box::new(e.0))
    }

    /// Cancels the running turn, if any (`session/cancel`).
    pub(crate) fn cancel(&self) {
        if let Some(turn) = &*self.turn.lock() {
            turn.cancel();
        }
    }

    /// Ends the session: the running turn cancelled, what it started stopped, its record
    /// saved.
    pub(crate) async fn close(self) {
        self.advertiser.stop();
        self.cancel();
        drop(self.requests);
        let _ = self.task.await;
    }
}

/// A session's agent and what rebuilding it (for a new mode) takes.
pub(crate) struct Live {
    pub(crate) agent: Agent,
    pub(crate) args: Args,
    pub(crate) place: Place,
    pub(crate) interaction: Arc<dyn Interaction>,
    pub(crate) updates: Updates,
    pub(crate) id: String,
    /// The custom commands (files) of the project and person.
    pub(crate) custom_commands: Vec<CustomCommand>,
}

/// Starts the session's task.
pub(crate) fn start(live: Live) -> Handle {
    let (requests, received) = mpsc::unbounded_channel();
    let turn = Arc::new(Mutex::new(None));
    let advertiser = Arc::new(Advertiser {
        updates: live.updates.clone(),
        custom: live.custom_commands.clone(),
        hub: Mutex::new(live.agent.mcp_hub().cloned()),
        watcher: Mutex::new(None),
    });
    let task = tokio::spawn(serve(
        live,
        received,
        Arc::clone(&turn),
        Arc::clone(&advertiser),
    ));
    Handle {
        requests,
        turn,
        task,
        advertiser,
    }
}

async fn serve(
    mut live: Live,
    mut requests: mpsc::UnboundedReceiver<Request>,
    turn: Arc<Mutex<Option<CancellationToken>>>,
    advertiser: Arc<Advertiser>,
) {
    while let Some(request) = requests.recv().await {
        match request {
            Request::Prompt { blocks, responder } => {
                let cancel = CancellationToken::new();
                *turn.lock() = Some(cancel.clone());
                let stop = live.prompt(&blocks, cancel).await;
                *turn.lock() = None;
                let _ = responder.respond(PromptResponse::new(stop));
            }
            Request::SetMode { mode, responder } => {
                let (next, result) = live.into_mode(mode);
                let _ = match result {
                    Ok(()) => responder.respond(SetSessionModeResponse::new()),
                    Err(message) => responder.respond_with_error(
                        agent_client_protocol::Error::invalid_params().data(message),
                    ),
                };
                match next {
                    Some(next) => live = next,
                    None => return,
                }
                advertiser.follow(live.agent.mcp_hub().cloned());
            }
        }
    }
    live.finish().await;
}

impl Live {
    /// One turn; how it stopped, in the protocol's words.
    async fn prompt(&mut self, blocks: &[ContentBlock], cancel: CancellationToken) -> StopReason {
        let input = prompt_text(blocks);
        let events = Events::new(self.updates.clone());
        if let Some(stop) = self.slash(&input, &events, &cancel).await {
            return stop;
        }
        let input = match self.custom(&input, &events, &cancel).await {
            Ok(Some(request)) => request,
            Ok(None) => input,
            Err(why) => {
                // Nothing was sent to the model.
                self.updates.say(format!("rein: {why}"));
                return if cancel.is_cancelled() {
                    StopReason::Cancelled
                } else {
                    StopReason::EndTurn
                };
            }
        };
        let outcome = self.agent.run_turn(&input, &events, cancel).await;
        if outcome.stop() == TurnStop::Cancelled {
            // As after Ctrl+C: the commands the turn left running end with it.
            self.agent.tool_context().processes().kill_all().await;
        }
        if let Some(error) = outcome.error() {
            self.updates.say(format!("\n\nrein: {error}"));
        }
        if let Err(e) = self.agent.save_session() {
            self.updates.say(format!(
                "\n\nrein: the session could not be saved completely: {e}"
            ));
        }
        self.usage().await;
        stop_reason(outcome.stop())
    }

    /// The slash commands that make sense in an editor; `None` when `input` is not one of
    /// them (it goes to the model).
    async fn slash(
        &mut self,
        input: &str,
        events: &Events,
        cancel: &CancellationToken,
    ) -> Option<StopReason> {
        let (name, rest) = super::commands::parse(input)?;
        match name {
            "compact" => {
                let focus = (!rest.is_empty()).then_some(rest);
                let done = self.agent.compact(focus, events, cancel).await;
                self.updates.say(super::commands::compacted(&done));
                let _ = self.agent.save_session();
            }
            "todos" => self
                .updates
                .say(super::commands::todos(&self.agent.todos())),
            "cost" | "tokens" | "context" => {
                let report = self.agent.context_report().await;
                self.updates
                    .say(super::commands::spending(&self.agent, &report));
            }
            _ => return None,
        }
        Some(if cancel.is_cancelled() {
            StopReason::Cancelled
        } else {
            StopReason::EndTurn
        })
    }

    /// A custom command or MCP prompt used as `/name args`: the request it makes; `Ok(None)`
    /// when `input` is none (it goes to the model as typed); `Err` when nothing is to be
    /// sent, and why.
    async fn custom(
        &mut self,
        input: &str,
        events: &Events,
        cancel: &CancellationToken,
    ) -> Result<Option<String>, String> {
        let Some(name) = crate::setup::slash_name(input) else {
            return Ok(None);
        };
        let arguments = input.trim()[1 + name.len()..].trim().to_owned();
        let mut command = self
            .custom_commands
            .iter()
            .find(|c| c.name == name)
            .cloned();
        if command.is_none()
            && let Some(hub) = self.agent.mcp_hub().cloned()
        {
            hub.refresh_prompts().await;
            command = rein_core::commands::prompt_commands(Some(hub.as_ref()))
                .into_iter()
                .find(|c| c.name == name);
        }
        let Some(command) = command else {
            return Ok(None);
        };
        let expanded = rein_core::commands::prepare(
            &mut self.agent,
            &command,
            &arguments,
            events,
            cancel.clone(),
        )
        .await
        .map_err(|e| e.to_string())?;
        for warning in &expanded.warnings {
            self.updates.say(format!("rein: {warning}\n\n"));
        }
        Ok(Some(expanded.prompt))
    }

    /// Sends the context window's use and the session's cost.
    async fn usage(&mut self) {
        let report = self.agent.context_report().await;
        let mut update = UsageUpdate::new(report.used, report.window.tokens);
        if let Some(cost) = cost_usd(self.agent.model(), &self.agent.total_usage()) {
            update = update.cost(Cost::new(cost, "USD"));
        }
        self.updates.send(SessionUpdate::UsageUpdate(update));
    }

    /// The agent rebuilt on the same session in `mode` (as the REPL's `/permissions`); when
    /// that cannot be (auto without a sandbox), rebuilt as it was, and why. `None`: not even
    /// that worked, and the session is over.
    fn into_mode(self, mode: PermissionMode) -> (Option<Live>, Result<(), String>) {
        if mode == self.args.mode() {
            return (Some(self), Ok(()));
        }
        let Live {
            mut agent,
            args: old_args,
            place,
            interaction,
            updates,
            id,
            custom_commands,
        } = self;
        let _ = agent.save_session();
        let kept = McpServers::of(&agent);
        // The old agent lets go of the session before the new one opens it.
        drop(agent);
        let build = |args: &Args| {
            setup::prepare_at(args, &place, Arc::clone(&interaction), kept.clone())
                .map(|prepared| prepared.agent)
                .map_err(|e| match e {
                    setup::SetupError::Usage(m) | setup::SetupError::Runtime(m) => m,
                })
        };
        let mut args = old_args.clone();
        args.permission_mode = Some(mode.into());
        args.resume = Some(id.clone());
        args.continue_session = false;
        args.fork = false;
        let (agent, args, result) = match build(&args) {
            Ok(agent) => {
                updates.send(SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(
                    mode.to_string(),
                )));
                (agent, args, Ok(()))
            }
            Err(message) => {
                let mut old = old_args;
                old.resume = Some(id.clone());
                old.continue_session = false;
                old.fork = false;
                match build(&old) {
                    Ok(agent) => (agent, old, Err(message)),
                    Err(again) => {
                        return (None, Err(format!("{message}; the session ended: {again}")));
                    }
                }
            }
        };
        let live = Live {
            agent,
            args,
            place,
            interaction,
            updates,
            id,
            custom_commands,
        };
        (Some(live), result)
    }

    /// The session ends: saved, what it started stopped.
    async fn finish(mut self) {
        if let Err(e) = self.agent.save_session() {
            tracing::warn!("session {} not saved completely: {e}", self.id);
        }
        let events = Events::new(self.updates.clone());
        self.agent.end_session(&events).await;
        self.agent.tool_context().processes().kill_all().await;
        self.agent.tool_context().background().stop_all().await;
        self.agent.shutdown_mcp().await;
    }
}

/// How a turn stopped, in the protocol's words.
fn stop_reason(stop: TurnStop) -> StopReason {
    match stop {
        TurnStop::EndTurn | TurnStop::Error => StopReason::EndTurn,
        TurnStop::MaxTokens | TurnStop::MaxCost | TurnStop::MaxSessionTokens => {
            StopReason::MaxTokens
        }
        TurnStop::MaxRounds | TurnStop::RepeatedCalls => StopReason::MaxTurnRequests,
        TurnStop::Cancelled => StopReason::Cancelled,
        TurnStop::PromptBlocked => StopReason::Refusal,
    }
}
