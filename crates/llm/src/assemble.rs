//! The one accumulator that turns a provider's events into the assistant's message.

use crate::{
    LlmError, Message, Part, Role, StopReason, StreamEvent, ToolArguments, ToolCall, Usage,
};

/// A finished model response.
#[derive(Debug, Clone, PartialEq)]
pub struct AssembledResponse {
    /// The assistant's message: reasoning, text and tool calls in the order they arrived.
    pub message: Message,
    /// The tokens this call used, when the provider reported them.
    pub usage: Option<Usage>,
    /// Why the model stopped.
    pub stop_reason: StopReason,
}

/// Builds the assistant [`Message`] from [`StreamEvent`]s, whatever the provider.
///
/// Feed every event to [`push`](Self::push). It returns the tool calls whose arguments became
/// complete with that event (on `ToolCallEnd`, when a call with another index starts, or at
/// `Finish`), each exactly once, so read-only tools can start before the response ends. A
/// `Retry` event discards everything built so far, including calls already reported: the
/// caller should drop work it started for them. After `Finish`, call
/// [`finish`](Self::finish) for the message.
#[derive(Debug, Default)]
pub struct Assembler {
    parts: Vec<Slot>,
    calls: Vec<PendingCall>,
    usage: Option<Usage>,
    stop_reason: Option<StopReason>,
}

#[derive(Debug)]
enum Slot {
    Text(String),
    Reasoning {
        text: String,
        signature: Option<String>,
    },
    /// Position of a call in `calls`.
    Call(usize),
}

#[derive(Debug)]
struct PendingCall {
    index: usize,
    id: Option<String>,
    name: String,
    arguments: String,
    reported: bool,
}

impl Assembler {
    /// An empty assembler, for one model response.
    pub fn new() -> Self {
        Self::default()
    }

    /// Takes one event; returns the tool calls it completed.
    pub fn push(&mut self, event: &StreamEvent) -> Vec<ToolCall> {
        match event {
            StreamEvent::TextDelta { text } => {
                if let Some(Slot::Text(last)) = self.parts.last_mut() {
                    last.push_str(text);
                } else if !text.is_empty() {
                    self.parts.push(Slot::Text(text.clone()));
                }
                Vec::new()
            }
            StreamEvent::ReasoningDelta { text } => {
                if let Some(Slot::Reasoning { text: last, .. }) = self.parts.last_mut() {
                    last.push_str(text);
                } else if !text.is_empty() {
                    self.parts.push(Slot::Reasoning {
                        text: text.clone(),
                        signature: None,
                    });
                }
                Vec::new()
            }
            StreamEvent::ReasoningSignature { signature } => {
                let last_reasoning = self.parts.iter_mut().rev().find_map(|p| match p {
                    Slot::Reasoning { signature, .. } => Some(signature),
                    Slot::Text(_) | Slot::Call(_) => None,
                });
                match last_reasoning {
                    Some(slot) => *slot = Some(signature.clone()),
                    None => self.parts.push(Slot::Reasoning {
                        text: String::new(),
                        signature: Some(signature.clone()),
                    }),
                }
                Vec::new()
            }
            StreamEvent::ToolCallDelta {
                index,
                id,
                name,
                arguments_fragment,
            } => self.tool_fragment(*index, id.as_deref(), name.as_deref(), arguments_fragment),
            StreamEvent::ToolCallEnd { index } => self
                .calls
                .iter()
                .position(|c| c.index == *index)
                .and_then(|pos| self.report(pos))
                .into_iter()
                .collect(),
            StreamEvent::Usage(usage) => {
                self.usage = Some(*usage);
                Vec::new()
            }
            StreamEvent::Retry { .. } => {
                *self = Self::default();
                Vec::new()
            }
            StreamEvent::Finish { stop_reason } => {
                self.stop_reason = Some(stop_reason.clone());
                (0..self.calls.len())
                    .filter_map(|pos| self.report(pos))
                    .collect()
            }
        }
    }

    fn tool_fragment(
        &mut self,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        fragment: &str,
    ) -> Vec<ToolCall> {
        if let Some(pos) = self.calls.iter().rposition(|c| c.index == index) {
            let call = &mut self.calls[pos];
            if call.reported {
                // A fragment for a call already reported complete: the server interleaved
                // calls. The final message still gets every byte; only the early report was
                // premature, and it is not repeated.
                tracing::warn!(
                    index,
                    "tool-call arguments arrived after the call was complete"
                );
            }
            if call.id.is_none() {
                call.id = id.map(str::to_owned);
            }
            if call.name.is_empty()
                && let Some(name) = name
            {
                call.name = name.to_owned();
            }
            call.arguments.push_str(fragment);
            return Vec::new();
        }
        // A new index: the calls before it are complete.
        let done: Vec<ToolCall> = (0..self.calls.len())
            .filter_map(|pos| self.report(pos))
            .collect();
        self.parts.push(Slot::Call(self.calls.len()));
        self.calls.push(PendingCall {
            index,
            id: id.map(str::to_owned),
            name: name.unwrap_or_default().to_owned(),
            arguments: fragment.to_owned(),
            reported: false,
        });
        done
    }

    /// Marks a call reported and returns it, unless it was reported already.
    fn report(&mut self, pos: usize) -> Option<ToolCall> {
        let call = &mut self.calls[pos];
        if call.reported {
            return None;
        }
        call.reported = true;
        let call = &self.calls[pos];
        Some(self.finished_call(call))
    }

    fn finished_call(&self, call: &PendingCall) -> ToolCall {
        let id = call.id.clone().unwrap_or_else(|| {
            // Some local servers send no id; the result must still be able to refer to it.
            format!("call_rein_{}", call.index)
        });
        ToolCall {
            id,
            name: call.name.clone(),
            arguments: parse_arguments(&call.arguments),
        }
    }

    /// The text streamed so far (for a caller that shows progress without keeping its own).
    pub fn text(&self) -> String {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Slot::Text(t) => Some(t.as_str()),
                Slot::Reasoning { .. } | Slot::Call(_) => None,
            })
            .collect()
    }

    /// The message, once `Finish` has been pushed; an error if the response never finished.
    pub fn finish(self) -> Result<AssembledResponse, LlmError> {
        let Some(stop_reason) = self.stop_reason.clone() else {
            return Err(LlmError::Protocol(
                "the response ended without a finish event".into(),
            ));
        };
        let mut calls: Vec<Option<ToolCall>> = self
            .calls
            .iter()
            .map(|c| Some(self.finished_call(c)))
            .collect();
        let parts = self
            .parts
            .into_iter()
            .filter_map(|slot| match slot {
                Slot::Text(text) => Some(Part::Text { text }),
                Slot::Reasoning { text, signature } => Some(Part::Reasoning { text, signature }),
                Slot::Call(pos) => calls
                    .get_mut(pos)
                    .and_then(Option::take)
                    .map(Part::ToolCall),
            })
            .collect();
        Ok(AssembledResponse {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            usage: self.usage,
            stop_reason,
        })
    }
}

/// Parses a call's accumulated arguments: empty means `{}`; invalid JSON is kept raw, with
/// the parser's complaint, for the agent to hand back to the model.
pub fn parse_arguments(raw: &str) -> ToolArguments {
    if raw.trim().is_empty() {
        return ToolArguments::Json {
            value: serde_json::Value::Object(serde_json::Map::new()),
        };
    }
    match serde_json::from_str(raw) {
        Ok(value) => ToolArguments::Json { value },
        Err(e) => ToolArguments::Invalid {
            raw: raw.to_owned(),
            error: e.to_string(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_retry_event_discards_the_partial_message() {
        let mut assembler = Assembler::new();
        assembler.push(&StreamEvent::TextDelta {
            text: "half".into(),
        });
        assembler.push(&StreamEvent::ToolCallDelta {
            index: 0,
            id: Some("a".into()),
            name: Some("x".into()),
            arguments_fragment: "{".into(),
        });
        assembler.push(&StreamEvent::Retry {
            attempt: 1,
            wait: std::time::Duration::ZERO,
            reason: "cut".into(),
        });
        assembler.push(&StreamEvent::TextDelta {
            text: "whole".into(),
        });
        assembler.push(&StreamEvent::Finish {
            stop_reason: StopReason::EndTurn,
        });
        let response = assembler.finish().unwrap();
        assert_eq!(
            response.message.parts,
            vec![Part::Text {
                text: "whole".into()
            }]
        );
    }

    #[test]
    fn each_call_is_reported_once_and_a_missing_finish_is_an_error() {
        let mut assembler = Assembler::new();
        let delta = StreamEvent::ToolCallDelta {
            index: 0,
            id: Some("a".into()),
            name: Some("x".into()),
            arguments_fragment: "{}".into(),
        };
        assert!(assembler.push(&delta).is_empty());
        assert_eq!(
            assembler.push(&StreamEvent::ToolCallEnd { index: 0 }).len(),
            1
        );
        assert!(
            assembler
                .push(&StreamEvent::ToolCallEnd { index: 0 })
                .is_empty()
        );
        assert!(
            assembler
                .push(&StreamEvent::Finish {
                    stop_reason: StopReason::ToolUse
                })
                .is_empty()
        );
        assert!(Assembler::new().finish().is_err());
    }
}
