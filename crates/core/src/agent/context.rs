//! Where the agent keeps its context within the window (see [`crate::context`] for the
//! layers): before every request, after a refused one, and when the person or the model asks
//! (`/compact`, the `compact` tool). Each compaction is recorded before the context changes,
//! so a crash leaves either the old context or the new one, never half of it.

use std::sync::Arc;

use rein_llm::{LlmError, Usage};
use tokio_util::sync::CancellationToken;

use super::compaction::Interrupted;
use super::{Agent, AgentEvent, Events, RoundEnd, TurnEnd, TurnError};
use crate::context::{
    self, CompactRequests, CompactionInfo, CompactionLayer, ContextReport, ContextSettings, Ledger,
    Limits, MAX_REACTIVE_COMPACTIONS_PER_TURN, NextCompaction, PinnedState, Step,
    UNKNOWN_WINDOW_TOKENS, Window, WindowSource,
};

/// The context's state in an agent.
pub(crate) struct ContextState {
    pub(crate) ledger: Ledger,
    pub(crate) settings: ContextSettings,
    /// The window, once known.
    pub(super) window: Option<Window>,
    /// The server only guessed the window: ask it again after the next response.
    ask_again: bool,
    /// No one knew the window: say so after the first response.
    unknown_window: bool,
    warned_unknown: bool,
    pub(crate) pinned: Vec<Arc<dyn PinnedState>>,
    pub(crate) requests: Arc<CompactRequests>,
    /// Compactions this turn made because the provider refused a request as too long.
    pub(crate) reactive_this_turn: u32,
    /// Compactions so far.
    pub(super) compactions: u32,
    /// What summary calls used that the turn has not counted yet.
    pub(crate) unreported_usage: Usage,
}

impl ContextState {
    pub(crate) fn new(
        ledger: Ledger,
        settings: ContextSettings,
        pinned: Vec<Arc<dyn PinnedState>>,
        requests: Arc<CompactRequests>,
    ) -> Self {
        ContextState {
            ledger,
            settings,
            window: None,
            ask_again: false,
            unknown_window: false,
            warned_unknown: false,
            pinned,
            requests,
            reactive_this_turn: 0,
            compactions: 0,
            unreported_usage: Usage::default(),
        }
    }
}

/// How `Agent::compact` ended.
#[derive(Debug, Clone, PartialEq)]
pub enum CompactOutcome {
    /// The context was compacted.
    Compacted(CompactionInfo),
    /// Nothing could be compacted: the conversation is already as short as compaction keeps
    /// it.
    NothingToCompact,
    /// The person interrupted; the context is unchanged.
    Cancelled,
}

impl Agent {
    /// Compacts the conversation now (`/compact [focus]`): older turns are summarised, with
    /// `focus` kept in most detail; the person's requests, the recent messages and the pinned
    /// state are kept word for word. Cancelling `cancel` stops it and leaves the context as
    /// it was.
    pub async fn compact(
        &mut self,
        focus: Option<&str>,
        events: &Events,
        cancel: &CancellationToken,
    ) -> CompactOutcome {
        let focus = focus.map(str::trim).filter(|f| !f.is_empty());
        let done = self
            .summarise(CompactionLayer::Manual, focus, events, cancel)
            .await;
        // Asked between turns: its call counts in the session's total, not the next turn's.
        self.context.unreported_usage = Usage::default();
        match done {
            Ok(Some(info)) => CompactOutcome::Compacted(info),
            Ok(None) => CompactOutcome::NothingToCompact,
            Err(Interrupted) => CompactOutcome::Cancelled,
        }
    }

    /// How much of the window the context uses and by what, and when it is next compacted
    /// (`/context`). Asks the server for the window if no request has yet.
    pub async fn context_report(&mut self) -> ContextReport {
        let window = self.window(&CancellationToken::new()).await;
        let reserve = window.answer_reserve(self.settings.max_tokens);
        let usable = window.usable(self.settings.max_tokens);
        let limits = Limits::new(usable, &self.context.settings);
        let ledger = &self.context.ledger;
        let used = ledger.used();
        // The provider counts the whole; the parts are estimates, scaled to its count.
        let estimated = ledger.system_tokens() + ledger.tools_tokens() + ledger.messages_tokens();
        let scale = |tokens: u64| {
            if estimated == 0 {
                0
            } else {
                (u128::from(tokens) * u128::from(used) / u128::from(estimated)) as u64
            }
        };
        let system_prompt = scale(ledger.system_tokens());
        let tools = scale(ledger.tools_tokens());
        let tool_results = scale(ledger.tool_results_tokens());
        let messages = used.saturating_sub(system_prompt + tools + tool_results);
        let next = match (limits.compact_at, limits.emergency_at) {
            (Some(compact_at), Some(emergency_at)) => Some(if used < compact_at {
                NextCompaction {
                    layer: CompactionLayer::Summary,
                    at_tokens: compact_at,
                }
            } else {
                NextCompaction {
                    layer: CompactionLayer::Emergency,
                    at_tokens: emergency_at,
                }
            }),
            _ => None,
        };
        ContextReport {
            window,
            answer_reserve: reserve,
            usable,
            used,
            measured: ledger.is_measured(),
            system_prompt,
            tools,
            messages,
            tool_results,
            message_count: ledger.len(),
            compactions: self.context.compactions,
            prune_at: limits.prune_at,
            next,
        }
    }

    /// The model's window: the configured one, else what the server says, else rein's
    /// table, else a conservative default. Asked once (twice when the server only guessed).
    pub(super) async fn window(&mut self, cancel: &CancellationToken) -> Window {
        if let Some(window) = &self.context.window {
            return window.clone();
        }
        let window = match self.context.settings.window_tokens {
            Some(tokens) => Window {
                tokens,
                source: WindowSource::Config,
            },
            None => {
                let provider = Arc::clone(&self.provider);
                let said = tokio::select! {
                    biased;
                    () = cancel.cancelled() => None,
                    said = provider.context_window(&self.settings.model) => said,
                };
                match said {
                    Some(said) => {
                        self.context.ask_again = !said.settled;
                        Window {
                            tokens: said.tokens,
                            source: WindowSource::Server {
                                said: said.source.to_owned(),
                            },
                        }
                    }
                    None => match rein_llm::context_window_for(&self.settings.model) {
                        Some(tokens) => Window {
                            tokens,
                            source: WindowSource::Table,
                        },
                        None => {
                            self.context.unknown_window = true;
                            Window {
                                tokens: UNKNOWN_WINDOW_TOKENS,
                                source: WindowSource::Default,
                            }
                        }
                    },
                }
            }
        };
        if !cancel.is_cancelled() {
            self.context.window = Some(window.clone());
        }
        window
    }

    /// After a response: a server that only guessed the window is asked again, now that it
    /// has loaded the model.
    pub(super) fn after_response(&mut self) {
        if self.context.ask_again {
            self.context.ask_again = false;
            self.context.window = None;
        }
    }

    /// Says once that the window is unknown. Only once the model has answered (the window is
    /// not asked for before): a server that does not answer has its own error to show.
    fn warn_of_an_unknown_window(&mut self, events: &Events) {
        if self.context.unknown_window && !self.context.warned_unknown {
            self.context.warned_unknown = true;
            events.emit(AgentEvent::Warning {
                message: format!(
                    "the context window of {} is not known (rein's table does not list it and \
                     the server does not say): rein assumes {UNKNOWN_WINDOW_TOKENS} tokens; set \
                     context_window in the configuration to the model's window",
                    self.settings.model
                ),
            });
        }
    }

    /// Before each request: what the model asked for, then the layers, cheapest first.
    pub(super) async fn prepare_context(
        &mut self,
        events: &Events,
        cancel: &CancellationToken,
    ) -> Result<(), TurnEnd> {
        if let Some(focus) = self.context.requests.take() {
            let focus = Some(focus.as_str()).filter(|f| !f.is_empty());
            self.summarise(CompactionLayer::Tool, focus, events, cancel)
                .await
                .map_err(|Interrupted| TurnEnd::Cancelled)?;
        }
        // Before the model's first response there is nothing to compact: the window is not
        // needed yet, and the first request does not wait for the server to be asked.
        if !self.context.ledger.has_responses() {
            return Ok(());
        }
        let window = self.window(cancel).await;
        self.warn_of_an_unknown_window(events);
        let limits = Limits::new(
            window.usable(self.settings.max_tokens),
            &self.context.settings,
        );
        // Each step lowers the context or finds nothing to do; three cover them all.
        for _ in 0..3 {
            let layer = match context::next_step(&self.context.ledger, &limits) {
                Step::Nothing => break,
                Step::Prune => {
                    if self.prune(&limits, events).is_none() {
                        break;
                    }
                    continue;
                }
                Step::Summarise => CompactionLayer::Summary,
                Step::Emergency => CompactionLayer::Emergency,
            };
            let done = self
                .summarise(layer, None, events, cancel)
                .await
                .map_err(|Interrupted| TurnEnd::Cancelled)?;
            if done.is_none() {
                break;
            }
        }
        Ok(())
    }

    /// After a request failed: when the provider said it was too long, compacts (the summary
    /// and the last few messages) and asks again, twice a turn at most. Any other failure, or
    /// one compaction cannot help, ends the round as it was.
    pub(super) async fn after_failed_request(
        &mut self,
        end: RoundEnd,
        events: &Events,
        cancel: &CancellationToken,
    ) -> RoundEnd {
        let RoundEnd::Stop(TurnEnd::Failed(TurnError::Model(LlmError::ContextTooLong(message)))) =
            &end
        else {
            return end;
        };
        if self.context.reactive_this_turn >= MAX_REACTIVE_COMPACTIONS_PER_TURN {
            return end;
        }
        self.context.reactive_this_turn += 1;
        self.learn_window(message, cancel).await;
        match self
            .summarise(CompactionLayer::Reactive, None, events, cancel)
            .await
        {
            Ok(Some(_)) => RoundEnd::Continue,
            Ok(None) => end,
            Err(Interrupted) => RoundEnd::Stop(TurnEnd::Cancelled),
        }
    }

    /// A refused request shows the window is smaller than assumed: the limit the refusal
    /// names, else a tenth below what was sent.
    async fn learn_window(&mut self, message: &str, cancel: &CancellationToken) {
        let window = self.window(cancel).await;
        let sent = self.context.ledger.used() + window.answer_reserve(self.settings.max_tokens);
        let limit = rein_llm::context_limit_in_message(message).unwrap_or(sent * 9 / 10);
        if limit < window.tokens {
            self.context.window = Some(Window {
                tokens: limit.max(1024),
                source: WindowSource::Refusal,
            });
        }
    }
}
