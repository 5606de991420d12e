//! Making a history valid for the next request: every tool call gets exactly one result,
//! right after the assistant message that made it.
//!
//! A crash can leave calls without results, anywhere in the file once a session was resumed
//! and continued. Results are matched to the nearest earlier unanswered call with the same
//! id (some servers reuse ids across turns), wherever in the file they were written; calls
//! still unanswered get a synthetic "interrupted" result.

use std::collections::{HashMap, HashSet};

use rein_llm::{Message, Part, Role, ToolResult};

use super::record::{LoadWarning, SessionEvent};

/// The name given to a recorded tool call that had none (providers reject an empty name);
/// the same one the assembler gives such a call as it streams.
pub use rein_llm::UNNAMED_TOOL;

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
    let (items, warnings) = pair_results(entries);
    fill_unanswered(items, warnings)
}

/// First pass: each result set beside the call it answers, calls renamed where their ids
/// repeat, and what could not be paired.
fn pair_results(entries: Vec<Entry>) -> (Vec<Item>, Vec<LoadWarning>) {
    let mut items = Vec::with_capacity(entries.len());
    let mut warnings = Vec::new();
    // Unanswered calls by id — their id now, and the id in the file when it was renamed:
    // (item, slot), in file order.
    let mut unanswered: HashMap<String, Vec<(usize, usize)>> = HashMap::new();
    // Every call id so far: a provider rejects a history that uses one twice.
    let mut taken: HashSet<String> = HashSet::new();
    let mut renamed = Vec::new();

    for entry in entries {
        match entry {
            Entry::Message { line, message } if message.role == Role::Tool => {
                for part in message.parts {
                    // A tool message holds only results; anything else in one is dropped.
                    let Part::ToolResult(mut result) = part else {
                        continue;
                    };
                    match take_unanswered(&mut unanswered, &mut items, &result.call_id) {
                        Some((call_id, slot)) => {
                            result.call_id = call_id;
                            *slot = Some(result);
                        }
                        None => warnings.push(LoadWarning::OrphanToolResult {
                            line,
                            call_id: result.call_id,
                        }),
                    }
                }
            }
            Entry::Message { mut message, .. } => {
                let index = items.len();
                let mut slots = 0;
                for part in &mut message.parts {
                    if let Part::ToolCall(call) = part {
                        if call.name.trim().is_empty() {
                            call.name = UNNAMED_TOOL.to_owned();
                        }
                        let unique = rein_llm::unique_call_id(Some(&call.id), slots, &taken);
                        if unique != call.id {
                            renamed.push((call.id.clone(), unique.clone()));
                            unanswered
                                .entry(std::mem::replace(&mut call.id, unique))
                                .or_default()
                                .push((index, slots));
                        }
                        taken.insert(call.id.clone());
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
    if !renamed.is_empty() {
        warnings.push(LoadWarning::DuplicateCallIds { renamed });
    }
    (items, warnings)
}

/// Second pass: the messages in order, each call's result after it, an interrupted call
/// given a result that says so.
fn fill_unanswered(items: Vec<Item>, mut warnings: Vec<LoadWarning>) -> Repaired {
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
                    .filter_map(Part::as_tool_call)
                    .map(|call| call.id.clone())
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
                                images: Vec::new(),
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

/// The unanswered call a result with `id` answers: among the calls known by that id, one
/// of the most recent message (some servers reuse ids across turns), the first of them
/// there (results come in call order). Returns the call's id and its result slot.
fn take_unanswered<'a>(
    unanswered: &mut HashMap<String, Vec<(usize, usize)>>,
    items: &'a mut [Item],
    id: &str,
) -> Option<(String, &'a mut Option<ToolResult>)> {
    let candidates = unanswered.get_mut(id)?;
    // A call known by two ids (renamed) may have been answered through the other one.
    candidates.retain(|&(item, slot)| matches!(slot_ref(items, item, slot), Some(None)));
    let latest = candidates.iter().map(|&(item, _)| item).max()?;
    let pos = candidates.iter().position(|&(item, _)| item == latest)?;
    let (item, slot) = candidates.remove(pos);
    match items.get_mut(item)? {
        Item::Message { message, results } => {
            let call_id = message
                .parts
                .iter()
                .filter_map(Part::as_tool_call)
                .map(|call| call.id.clone())
                .nth(slot)?;
            Some((call_id, results.get_mut(slot)?))
        }
        Item::Event(_) => None,
    }
}

fn slot_ref(items: &[Item], item: usize, slot: usize) -> Option<&Option<ToolResult>> {
    match items.get(item)? {
        Item::Message { results, .. } => results.get(slot),
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
                    images: Vec::new(),
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
        assert_eq!(
            result_ids(&repaired.messages[1]),
            [("0".into(), INTERRUPTED_RESULT.into())]
        );
        // The second call with id 0 is renamed, and its result with it.
        assert_eq!(
            result_ids(&repaired.messages[4]),
            [("0_2".into(), "ok 0".into())]
        );
    }

    fn call_ids(message: &Message) -> Vec<String> {
        message
            .parts
            .iter()
            .filter_map(|part| match part {
                Part::ToolCall(c) => Some(c.id.clone()),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn duplicate_ids_in_one_response_are_renamed_with_their_results_in_order() {
        let mut results_message = results(&["x", "x"]);
        if let Part::ToolResult(r) = &mut results_message.parts[1] {
            r.content = "second".into();
        }
        let repaired = repair(entries(vec![calls(&["x", "x"]), results_message]));
        assert_eq!(call_ids(&repaired.messages[0]), ["x", "x_2"]);
        assert_eq!(
            result_ids(&repaired.messages[1]),
            [("x".into(), "ok x".into()), ("x_2".into(), "second".into())]
        );
        assert!(repaired.synthetic.is_empty());
        assert_eq!(
            repaired.warnings,
            [LoadWarning::DuplicateCallIds {
                renamed: vec![("x".into(), "x_2".into())]
            }]
        );
    }

    #[test]
    fn a_synthetic_result_for_a_renamed_call_matches_it_on_the_next_load() {
        // First load: the renamed call was interrupted and gets a synthetic result...
        let first = repair(entries(vec![calls(&["x"]), results(&["x"]), calls(&["x"])]));
        assert_eq!(first.synthetic.len(), 1);
        assert_eq!(first.synthetic[0].call_id, "x_2");
        // ...which the file then holds, and which answers the same call next time.
        let second = repair(entries(vec![
            calls(&["x"]),
            results(&["x"]),
            calls(&["x"]),
            Message {
                role: Role::Tool,
                parts: vec![Part::ToolResult(first.synthetic[0].clone())],
            },
        ]));
        assert!(second.synthetic.is_empty(), "{:?}", second.warnings);
        assert_eq!(second.messages.len(), 4);
    }

    #[test]
    fn a_call_without_a_name_gets_a_placeholder_and_an_empty_id_a_real_one() {
        let mut message = calls(&[""]);
        if let Part::ToolCall(call) = &mut message.parts[0] {
            call.name = " ".into();
        }
        let repaired = repair(entries(vec![message]));
        let Part::ToolCall(call) = &repaired.messages[0].parts[0] else {
            panic!("not a call");
        };
        assert_eq!(
            (call.name.as_str(), call.id.as_str()),
            (UNNAMED_TOOL, "call_rein_0"),
            "the name the assembler gives a call without an id"
        );
        assert_eq!(result_ids(&repaired.messages[1])[0].0, "call_rein_0");
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
