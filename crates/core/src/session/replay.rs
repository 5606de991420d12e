//! Rebuilding the context a session had: its messages with each compaction replayed where it
//! happened, and the provider's last count when it still applies. A compaction that does not
//! fit is skipped with a warning, leaving the messages it would have replaced whole: more to
//! send, nothing lost.

use rein_llm::Message;

use super::record::{LoadWarning, SessionEvent};
use super::repair::RecordedEvent;
use crate::context::PromptAnchor;

/// The context a session had when it stopped.
pub(crate) struct Replayed {
    pub(crate) messages: Vec<Message>,
    pub(crate) anchor: Option<PromptAnchor>,
    pub(crate) compactions: usize,
    pub(crate) warnings: Vec<LoadWarning>,
}

/// Replays `events` (placed among `messages`, the whole conversation) to get the context.
pub(crate) fn replay(messages: Vec<Message>, events: &[RecordedEvent]) -> Replayed {
    let mut context = Vec::with_capacity(messages.len());
    let mut whole = messages.into_iter();
    let mut taken = 0;
    let mut anchor = None;
    let mut number = 0;
    let mut compactions = 0;
    let mut warnings = Vec::new();
    for recorded in events {
        while taken < recorded.after_messages {
            context.extend(whole.next());
            taken += 1;
        }
        match &recorded.event {
            // Recorded before the response it counts: the request held the context as it is.
            SessionEvent::Usage { usage, .. } => {
                anchor = (usage.prompt_tokens > 0).then_some(PromptAnchor {
                    prompt_tokens: usage.prompt_tokens,
                    messages: context.len(),
                });
            }
            SessionEvent::Compaction(record) => {
                number += 1;
                match record.apply(&mut context) {
                    Ok(()) => {
                        compactions += 1;
                        anchor = None;
                    }
                    Err(reason) => warnings.push(LoadWarning::CompactionSkipped {
                        number,
                        reason: reason.to_string(),
                    }),
                }
            }
            // The context changed under the last count.
            SessionEvent::Rewind { .. } => anchor = None,
            SessionEvent::TurnFinished { .. }
            | SessionEvent::Todos { .. }
            | SessionEvent::SubagentUsage { .. } => {}
        }
    }
    context.extend(whole);
    Replayed {
        messages: context,
        anchor,
        compactions,
        warnings,
    }
}
