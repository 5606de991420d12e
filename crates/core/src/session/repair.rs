//! Making a history valid for the next request: every tool call gets exactly one result,
//! right after the assistant message that made it.
//!
//! A crash can leave calls without results, anywhere in the file once a session was resumed
//! and continued. Results are matched to the nearest earlier unanswered call with the same
//! id (some servers reuse ids across turns), wherever in the file they were written; calls
//! still unanswered get a synthetic "interrupted" result.

use std::collections::HashMap;

use rein_llm::{Message, Part, Role, ToolResult};

use super::record::{LoadWarning, SessionEvent};

/// The content of the result given to a call that never finished.
pub const INTERRUPTED_RESULT: &str =
    "interrupted: the session ended before this tool call finished";

/// A message or event read from the file, with its 1-based line number.
pub(crate) enum Entry {
    Message { line: usize, message: Message },
    Event(SessionEvent),
}

/// An event and where it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedEvent {
    /// How many messages of the repaired history came before it. A tool call and its
    /// results are never split: an event recorded between them counts as after the results.
    pub after_messages: usize,
    /// The event.
    pub event: SessionEvent,
}

/// The repaired history.
pub(crate) struct Repaired {
    pub(crate) messages: Vec<Message>,
    pub(crate) events: Vec<RecordedEvent>,
    /// The synthetic results added, in history order: to be recorded in the file.
    pub(crate) synthetic: Vec<ToolResult>,
    pub(crate) warnings: Vec<LoadWarning>,
}

enum Item {
    /// A non-tool message and one result slot per tool call it makes.
    Message {
        message: Message,
        results: Vec<Option<ToolResult>>,
    },
    Event(SessionEvent),
}

pub(crate) fn repair(entries: Vec<Entry>) -> Repaired {
    let mut items = Vec::with_capacity(entries.len());
    let mut warnings = Vec::new();
    // Unanswered calls by id: (item, slot), the most recent last.
    let mut unanswered: HashMap<String, Vec<(usize, usize)>> = HashMap::new();

    for entry in entries {
        match entry {
            Entry::Message { line, message } if message.role == Role::Tool => {
                for part in message.parts {
                    // A tool message holds only results; anything else in one is dropped.
                    let Part::ToolResult(result) = part else {
                        continue;
                    };
                    let slot = unanswered.get_mut(&result.call_id).and_then(Vec::pop);
                    match slot.and_then(|(item, slot)| slot_of(&mut items, item, slot)) {
                        Some(slot) => *slot = Some(result),
                        None => warnings.push(LoadWarning::OrphanToolResult {
                            line,
                            call_id: result.call_id,
                        }),
                    }
                }
            }
            Entry::Message { message, .. } => {
                let index = items.len();
                let mut slots = 0;
                for part in &message.parts {
                    if let Part::ToolCall(call) = part {
                        unanswered
                            .entry(call.id.clone())
                            .or_default()
                            .push((index, slots));
                        slots += 1;
                    }
                }
                items.push(Item::Message {
                    message,
                    results: vec![None; slots],
                });
            }
            Entry::Event(event) => items.push(Item::Event(event)),
        }
    }

    let mut messages = Vec::with_capacity(items.len() * 2);
    let mut events = Vec::new();
    let mut synthetic = Vec::new();
    for item in items {
        match item {
            Item::Event(event) => events.push(RecordedEvent {
                after_messages: messages.len(),
                event,
            }),
            Item::Message { message, results } => {
                let calls: Vec<String> = message
                    .parts
                    .iter()
                    .filter_map(|part| match part {
                        Part::ToolCall(call) => Some(call.id.clone()),
                        Part::Text { .. } | Part::Reasoning { .. } | Part::ToolResult(_) => None,
                    })
                    .collect();
                messages.push(message);
                if calls.is_empty() {
                    continue;
                }
                let parts = calls
                    .into_iter()
                    .zip(results)
                    .map(|(call_id, result)| {
                        let result = result.unwrap_or_else(|| {
                            let made = ToolResult {
                                call_id,
                                content: INTERRUPTED_RESULT.to_owned(),
                                is_error: true,
                            };
                            synthetic.push(made.clone());
                            made
                        });
                        Part::ToolResult(result)
                    })
                    .collect();
                messages.push(Message {
                    role: Role::Tool,
                    parts,
                });
            }
        }
    }
    if !synthetic.is_empty() {
        let call_ids = synthetic
            .iter()
            .map(|result| result.call_id.clone())
            .collect();
        warnings.push(LoadWarning::InterruptedToolCalls { call_ids });
    }
    Repaired {
        messages,
        events,
        synthetic,
        warnings,
    }
}

fn slot_of(items: &mut [Item], item: usize, slot: usize) -> Option<&mut Option<ToolResult>> {
    match items.get_mut(item)? {
        Item::Message { results, .. } => results.get_mut(slot),
        Item::Event(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use rein_llm::{ToolArguments, ToolCall};

    use super::*;

    fn text(role: Role, text: &str) -> Message {
        Message {
            role,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    fn calls(ids: &[&str]) -> Message {
        let parts = ids
            .iter()
            .map(|id| {
                Part::ToolCall(ToolCall {
                    id: (*id).into(),
                    name: "bash".into(),
                    arguments: ToolArguments::Json {
                        value: serde_json::json!({}),
                    },
                })
            })
            .collect();
        Message {
            role: Role::Assistant,
            parts,
        }
    }

    fn results(ids: &[&str]) -> Message {
        let parts = ids
            .iter()
            .map(|id| {
                Part::ToolResult(ToolResult {
                    call_id: (*id).into(),
                    content: format!("ok {id}"),
                    is_error: false,
                })
            })
            .collect();
        Message {
            role: Role::Tool,
            parts,
        }
    }

    fn entries(messages: Vec<Message>) -> Vec<Entry> {
        messages
            .into_iter()
            .enumerate()
            .map(|(i, message)| Entry::Message {
                line: i + 2,
                message,
            })
            .collect()
    }

    fn result_ids(message: &Message) -> Vec<(String, String)> {
        message
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::ToolResult(r) => Some((r.call_id.clone(), r.content.clone())),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn split_results_are_merged_in_call_order() {
        let repaired = repair(entries(vec![
            calls(&["a", "b"]),
            results(&["b"]),
            results(&["a"]),
        ]));
        assert_eq!(repaired.messages.len(), 2);
        assert_eq!(
            result_ids(&repaired.messages[1]),
            [("a".into(), "ok a".into()), ("b".into(), "ok b".into())]
        );
        assert!(repaired.synthetic.is_empty() && repaired.warnings.is_empty());
    }

    #[test]
    fn reused_ids_match_the_nearest_unanswered_call() {
        let repaired = repair(entries(vec![
            calls(&["0"]),
            text(Role::User, "go on"),
            calls(&["0"]),
            results(&["0"]),
        ]));
        let ids: Vec<_> = repaired.messages.iter().map(|m| m.role).collect();
        assert_eq!(
            ids,
            [
                Role::Assistant,
                Role::Tool,
                Role::User,
                Role::Assistant,
                Role::Tool
            ]
        );
        assert_eq!(result_ids(&repaired.messages[1])[0].1, INTERRUPTED_RESULT);
        assert_eq!(result_ids(&repaired.messages[4])[0].1, "ok 0");
    }

    #[test]
    fn orphan_results_are_dropped_with_a_warning() {
        let repaired = repair(entries(vec![text(Role::User, "hi"), results(&["zzz"])]));
        assert_eq!(repaired.messages.len(), 1);
        assert_eq!(
            repaired.warnings,
            [LoadWarning::OrphanToolResult {
                line: 3,
                call_id: "zzz".into()
            }]
        );
    }
}
