//! A call the person makes themselves from the REPL (`!cmd`, `@file`): it takes the same
//! path as the model's calls (arguments, hooks, permissions, approval, output budget), emits
//! the same events, and adds nothing to the history; the caller decides what the model sees.

use rein_llm::{ToolArguments, ToolCall};
use rein_tools::Display;
use tokio_util::sync::CancellationToken;

use super::calls::summarize;
use super::runner::CallEnv;
use super::{Agent, AgentEvent, Events};

/// What a person's own call produced.
#[derive(Debug, Clone, PartialEq)]
pub struct DirectOutcome {
    /// The text the model would have got.
    pub content: String,
    /// Whether the call failed or was refused.
    pub is_error: bool,
    /// What a renderer shows.
    pub display: Display,
    /// The person interrupted it.
    pub cancelled: bool,
    /// Pictures the call gave (read_file on an image, for a model that sees).
    pub images: Vec<rein_llm::Image>,
}

impl Agent {
    /// Pictures for the next request (`@shot.png`): they go with its text.
    pub fn attach_images(&mut self, images: Vec<rein_llm::Image>) {
        self.pending_images.extend(images);
    }

    /// Lets calls `rule` matches run without asking for the rest of the session, as a
    /// "yes for the session" answer does (the REPL carries such answers over when it reopens
    /// the session with another model or mode).
    pub fn allow_for_session(&self, rule: crate::permissions::Rule) {
        self.runner.policy.allow_for_session(rule);
    }

    /// Asks before calls `rules` name, in every mode, until called again (an empty list
    /// ends it): `/init` shows AGENTS.md and asks even where edits run without asking.
    pub fn ask_first(&self, rules: Vec<crate::permissions::Rule>) {
        self.runner.policy.ask_first(rules);
    }

    /// Runs `tool` with `arguments` for the person, through the whole pipeline of a model's
    /// call. Its events go to `events` under the call id `id`; cancelling `cancel` stops it.
    pub async fn run_direct(
        &self,
        id: &str,
        tool: &str,
        arguments: serde_json::Value,
        events: &Events,
        cancel: CancellationToken,
    ) -> DirectOutcome {
        // Masked as a turn's events are: the result, a refusal, a question's reason.
        let events = &crate::secrets::EventMasker::wrap(&self.runner.secrets, events);
        let env = CallEnv {
            runner: std::sync::Arc::clone(&self.runner),
            ctx: self.tool_ctx.with_cancel(cancel.clone()),
            events: events.clone(),
            cancel,
        };
        let call = ToolCall {
            id: id.to_owned(),
            name: tool.to_owned(),
            arguments: ToolArguments::Json { value: arguments },
        };
        let outcome = match env.spawn(&call, None).await {
            Ok(outcome) => outcome,
            Err(e) => {
                return DirectOutcome {
                    content: format!("rein failed to run this call: {e}"),
                    is_error: true,
                    display: Display::Text,
                    cancelled: false,
                    images: Vec::new(),
                };
            }
        };
        events.emit(AgentEvent::ToolResult {
            id: call.id.clone(),
            name: call.name.clone(),
            summary: summarize(&outcome.result.content),
            content: outcome.result.content.clone(),
            is_error: outcome.result.is_error,
            duration: outcome.duration,
            display: outcome.display.clone(),
            changes: outcome.changes.clone(),
        });
        DirectOutcome {
            cancelled: outcome.fatal.is_some() && env.cancel.is_cancelled(),
            content: outcome.result.content,
            is_error: outcome.result.is_error,
            display: outcome.display,
            images: outcome.result.images,
        }
    }
}
