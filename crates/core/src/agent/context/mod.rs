//! Where the agent keeps its context within the window (see [`crate::context`] for the
//! layers): before every request, after a refused one, and when the person or the model asks
//! (`/compact`, the `compact` tool). Each compaction is recorded before the context changes,
//! so a crash leaves either the old context or the new one, never half of it.

pub(super) mod compaction;
pub(super) mod cut;
pub(super) mod summary_call;

use std::sync::Arc;

use rein_llm::{LlmError, Message, Part, ToolCall, Usage};
use tokio_util::sync::CancellationToken;

use super::{Agent, Events, RoundEnd, TurnEnd, TurnError};
use crate::context::{
    self, ANSWER_FLOOR_TOKENS, CompactRequests, CompactionInfo, CompactionLayer, ContextReport,
    ContextSettings, ContextUse, Ledger, Limits, MAX_REACTIVE_COMPACTIONS_PER_REQUEST,
    NextCompaction, PinnedState, RESULT_SHARE, Step, UNKNOWN_WINDOW_TOKENS, Window, WindowSource,
};
use compaction::Interrupted;

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
    /// The window Ollama has loaded the model with, when Ollama said so.
    ollama_window: Option<u64>,
    warned_ollama: bool,
    pub(crate) pinned: Vec<Arc<dyn PinnedState>>,
    pub(crate) requests: Arc<CompactRequests>,
    /// Compactions made in a row because the provider refused the request as too long; back
    /// to 0 once a request is answered.
    pub(crate) reactive_streak: u32,
    /// The window as known before any refusal corrected it: a refusal that names no limit
    /// may lower the window to half of it at most.
    pub(super) window_before_refusals: Option<u64>,
    /// How many messages the context held after the last summary: what was added since is
    /// what another summary would take in.
    pub(super) len_after_summary: Option<usize>,
    /// Compactions so far.
    pub(super) compactions: u32,
    /// What summary calls used that the turn has not counted yet.
    pub(crate) unreported_usage: Usage,
    /// The server's answer about the window, asked beside the first request so that the
    /// round after the first answer does not wait for it.
    pub(super) window_probe: Option<tokio::task::JoinHandle<Option<rein_llm::ServerWindow>>>,
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
            ollama_window: None,
            warned_ollama: false,
            pinned,
            requests,
            reactive_streak: 0,
            window_before_refusals: None,
            len_after_summary: None,
            compactions: 0,
            unreported_usage: Usage::default(),
            window_probe: None,
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
                let said = match self.context.window_probe.take() {
                    Some(mut probe) => tokio::select! {
                        biased;
                        () = cancel.cancelled() => {
                            probe.abort();
                            None
                        }
                        said = &mut probe => said.ok().flatten(),
                    },
                    None => tokio::select! {
                        biased;
                        () = cancel.cancelled() => None,
                        said = provider.context_window(&self.settings.model) => said,
                    },
                };
                match said {
                    Some(said) => {
                        self.context.ask_again = !said.settled;
                        self.context.ollama_window = said.ollama_loaded.then_some(said.tokens);
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

    /// Asks the server about the window in the background, before the first request goes,
    /// when it will be needed (no configured window) and is not known yet.
    pub(super) fn start_window_probe(&mut self) {
        if self.context.window.is_some()
            || self.context.settings.window_tokens.is_some()
            || self.context.window_probe.is_some()
        {
            return;
        }
        let provider = Arc::clone(&self.provider);
        let model = self.settings.model.clone();
        self.context.window_probe = Some(tokio::spawn(async move {
            provider.context_window(&model).await
        }));
    }

    /// After a response: the request was answered, so the next refusal starts a new streak;
    /// a server that only guessed the window is asked again, now that it has loaded the model.
    pub(super) fn after_response(&mut self) {
        self.context.reactive_streak = 0;
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
            events.warn(format!(
                "the context window of {} is not known (rein's table does not list it and \
                     the server does not say): rein assumes {UNKNOWN_WINDOW_TOKENS} tokens; set \
                     context_window in the configuration to the model's window",
                self.settings.model
            ));
        }
    }

    /// Says once that Ollama has loaded the model with a window smaller than the request about
    /// to go (the prompt and room for the answer), with the fix: Ollama cuts such a prompt
    /// without a word, and no compaction can shrink the system prompt and the tools.
    fn warn_of_a_small_ollama_window(&mut self, window: &Window, events: &Events) {
        let Some(loaded) = self.context.ollama_window else {
            return;
        };
        let needed = self.context.ledger.used() + window.answer_reserve(self.settings.max_tokens);
        if self.context.warned_ollama || needed <= loaded {
            return;
        }
        self.context.warned_ollama = true;
        let suggested = needed.next_power_of_two().max(OLLAMA_SUGGESTED_MIN_TOKENS);
        events.warn(format!(
                "Ollama has loaded {} with a context of {loaded} tokens, but this session needs about {needed}: Ollama cuts a longer prompt without saying so. Restart Ollama with OLLAMA_CONTEXT_LENGTH={suggested}, or set ollama_num_ctx = {suggested} in rein's configuration",
                self.settings.model
            ));
    }

    /// Before each request: what the model asked for, then the layers, cheapest first; then
    /// the answer's limit, so that the prompt and the answer together fit the window.
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
            let known =
                self.context.window.is_some() || self.context.settings.window_tokens.is_some();
            let window = if known {
                Some(self.window(cancel).await)
            } else {
                None
            };
            self.settle_request(window.as_ref());
            return Ok(());
        }
        let window = self.window(cancel).await;
        self.warn_of_an_unknown_window(events);
        self.warn_of_a_small_ollama_window(&window, events);
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
        self.settle_request(Some(&window));
        Ok(())
    }

    /// The request as it goes: its `max_tokens` within what the window leaves, and what the
    /// `compact` tool judges a request by.
    fn settle_request(&mut self, window: Option<&Window>) {
        let used = self.context.ledger.used();
        if let Some(window) = window {
            self.request.max_tokens = answer_limit(self.settings.max_tokens, used, window);
        }
        let len = self.context.ledger.len();
        self.context.requests.observe(ContextUse {
            used,
            usable: window.map(|w| w.usable(self.settings.max_tokens)),
            added_since_summary: self
                .context
                .len_after_summary
                .map(|after| len.saturating_sub(after)),
        });
    }

    /// A round's tool results as they enter the context: each within a quarter of the usable
    /// window ([`RESULT_SHARE`]), whatever the configured output budget, so that one result
    /// cannot fill a small window. A longer one is cut to its two ends, the whole saved to a
    /// file the cut names (or the file it was already saved to).
    pub(super) async fn fit_results(
        &mut self,
        results: &mut Message,
        calls: &[ToolCall],
        cancel: &CancellationToken,
    ) {
        // Interrupted, the turn ends with results the output budget bounds: the next
        // request's compaction takes care of them, and no server is asked meanwhile.
        if cancel.is_cancelled() {
            return;
        }
        let window = self.window(cancel).await;
        let usable = window.usable(self.settings.max_tokens);
        let share = (usable as f64 * RESULT_SHARE) as u64;
        // Within what the window has left too, shared among the round's results, so that a
        // round cannot take the context over the window before the next compaction; never
        // below a sixteenth of the window (the compaction then makes room).
        let count = results
            .parts
            .iter()
            .filter(|p| matches!(p, Part::ToolResult(_)))
            .count()
            .max(1) as u64;
        let room = usable.saturating_sub(self.context.ledger.used()) / count;
        let cap = share.min(room.max(usable / 16));
        for part in &mut results.parts {
            let Part::ToolResult(result) = part else {
                continue;
            };
            let tool = calls
                .iter()
                .find(|c| c.id == result.call_id)
                .map_or("tool", |c| c.name.as_str());
            if let Some(cut) =
                context::fit_result(&result.content, cap, self.tool_ctx.config(), tool)
            {
                result.content = cut;
            }
        }
    }

    /// After a request failed: when the provider said it was too long, compacts (the summary
    /// and the last few messages, or the long results cut) and asks again, twice in a row at
    /// most: a request that is answered starts the count again, so a long task survives
    /// any number of refusals as long as each is cured. Any other failure, or one compaction
    /// cannot help, ends the round as it was.
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
        if self.context.reactive_streak >= MAX_REACTIVE_COMPACTIONS_PER_REQUEST {
            return end;
        }
        self.context.reactive_streak += 1;
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

    /// A refused request may show the window is smaller than assumed (see
    /// [`Window::after_refusal`] for what a refusal is believed to say).
    async fn learn_window(&mut self, message: &str, cancel: &CancellationToken) {
        let window = self.window(cancel).await;
        let before = *self
            .context
            .window_before_refusals
            .get_or_insert(window.tokens);
        let sent = self.context.ledger.used()
            + self
                .request
                .max_tokens
                .map_or_else(|| window.answer_reserve(None), u64::from);
        let named = rein_llm::context_limit_in_message(message);
        if let Some(learned) = window.after_refusal(named, sent, before) {
            self.context.window = Some(learned);
        }
    }
}

/// The smallest window rein suggests loading a model with in Ollama: a coding session's
/// system prompt and tools alone take several thousand tokens.
const OLLAMA_SUGGESTED_MIN_TOKENS: u64 = 16_384;

/// The `max_tokens` a request asks for: the configured limit, lowered when the prompt and it
/// would not fit the window together (a server that checks both against the window, as vLLM
/// does, refuses such a request), with a twentieth of the prompt to spare for the estimate's
/// error; never below [`ANSWER_FLOOR_TOKENS`] (or the configured limit, when smaller).
/// Unset stays unset: the server then gives the answer what the window leaves.
fn answer_limit(configured: Option<u32>, used: u64, window: &Window) -> Option<u32> {
    let configured = configured?;
    let room = window.tokens.saturating_sub(used + used / 20);
    let floor = ANSWER_FLOOR_TOKENS.min(u64::from(configured));
    Some(u32::try_from(room.max(floor)).map_or(configured, |room| room.min(configured)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_limit_leaves_the_prompt_its_room() {
        let window = Window {
            tokens: 8192,
            source: WindowSource::Config,
        };
        // Room for all of it.
        assert_eq!(answer_limit(Some(1000), 4000, &window), Some(1000));
        // 8192 - 6000 - 300: lowered.
        assert_eq!(answer_limit(Some(4000), 6000, &window), Some(1892));
        // Never below the floor, nor above what was configured.
        assert_eq!(answer_limit(Some(4000), 8000, &window), Some(1024));
        assert_eq!(answer_limit(Some(500), 8000, &window), Some(500));
        assert_eq!(answer_limit(None, 8000, &window), None);
    }
}
