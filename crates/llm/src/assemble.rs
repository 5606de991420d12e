//! The one accumulator that turns a provider's events into the assistant's message.

use std::collections::HashSet;

use crate::{
    LlmError, Message, Part, Role, StopReason, StreamEvent, ToolArguments, ToolCall, Usage,
};

/// The name given to a tool call that arrived without one: every provider refuses a call
/// with an empty name in the history, so the call is kept under this name and the model is
/// told that no such tool exists.
pub const UNNAMED_TOOL: &str = "unnamed_tool";

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
/// complete with that event (on `ToolCallEnd`, when another call starts, or at `Finish`),
/// each exactly once, so read-only tools can start before the response ends. A `Retry` event
/// discards everything built so far, including calls already reported: the caller should drop
/// work it started for them. After `Finish`, call [`finish`](Self::finish) for the message.
///
/// Every call gets an id unique in the conversation: the provider's id when it is new, else
/// `<id>_2`, `<id>_3`, ... (`call_rein_<index>` when the provider sent none). The ids already
/// used earlier come in with [`with_taken_ids`](Self::with_taken_ids) and go back out, with
/// this response's added, through [`into_taken_ids`](Self::into_taken_ids), so the caller
/// keeps the set from round to round without rescanning the history. A call without a name
/// is named [`UNNAMED_TOOL`].
/// An id for a call, unique among `taken`: the provider's `id` when it is new, else
/// `<id>_2`, `<id>_3`, ...; `call_rein_<index>` (`index`: the call's place in its response)
/// when the provider sent none or an empty one, since the result must still refer to the
/// call. The assembler and the session loader name calls the same way.
pub fn unique_call_id(id: Option<&str>, index: usize, taken: &HashSet<String>) -> String {
    // Some local servers send no id.
    let base = match id {
        Some(id) if !id.trim().is_empty() => id.to_owned(),
        Some(_) | None => format!("call_rein_{index}"),
    };
    if !taken.contains(&base) {
        return base;
    }
    (2_u64..)
        .map(|n| format!("{base}_{n}"))
        .find(|candidate| !taken.contains(candidate))
        .unwrap_or(base)
}

#[derive(Debug, Default)]
pub struct Assembler {
    parts: Vec<Slot>,
    calls: Vec<PendingCall>,
    usage: Option<Usage>,
    stop_reason: Option<StopReason>,
    /// Call ids used earlier in the conversation, and by the calls of this response so far.
    taken: HashSet<String>,
    /// The ids the current attempt added to `taken`: a retry gives them back.
    added: Vec<String>,
}

#[derive(Debug)]
enum Slot {
    Text(String),
    Reasoning {
        text: String,
        signature: Option<String>,
        redacted: Option<String>,
    },
    /// Position of a call in `calls`.
    Call(usize),
}

#[derive(Debug)]
struct PendingCall {
    index: usize,
    /// The id the provider sent, if any.
    provider_id: Option<String>,
    /// The id the call goes by, fixed when the call is first reported.
    id: Option<String>,
    name: String,
    arguments: String,
    reported: bool,
}

impl Assembler {
    /// An empty assembler, for one model response of a conversation with no tool calls yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// An empty assembler for a conversation whose earlier tool calls used `taken` ids.
    pub fn with_taken_ids(taken: HashSet<String>) -> Self {
        Self {
            taken,
            ..Self::default()
        }
    }

    /// The ids used so far: those handed in, plus those of this response's calls.
    #[cfg(test)]
    pub(crate) fn taken_ids(&self) -> &HashSet<String> {
        &self.taken
    }

    /// Gives back the ids used so far, for the next response's assembler.
    pub fn into_taken_ids(self) -> HashSet<String> {
        self.taken
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
                self.reasoning(text);
                Vec::new()
            }
            StreamEvent::ReasoningSignature { signature } => {
                self.signature(signature);
                Vec::new()
            }
            StreamEvent::RedactedReasoning { data } => {
                self.parts.push(Slot::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some(data.clone()),
                });
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
                .rposition(|c| c.index == *index)
                .and_then(|pos| self.report(pos))
                .into_iter()
                .collect(),
            StreamEvent::Usage(usage) => {
                self.usage = Some(*usage);
                Vec::new()
            }
            StreamEvent::Waiting { .. } => Vec::new(),
            StreamEvent::Retry { .. } => {
                self.restart();
                Vec::new()
            }
            StreamEvent::Finish { stop_reason } => {
                self.stop_reason = Some(stop_reason.clone());
                self.report_all()
            }
        }
    }

    /// Forgets the abandoned attempt, and only it: ids from earlier responses stay taken.
    fn restart(&mut self) {
        for id in self.added.drain(..) {
            self.taken.remove(&id);
        }
        self.parts.clear();
        self.calls.clear();
        self.usage = None;
        self.stop_reason = None;
    }

    fn reasoning(&mut self, text: &str) {
        match self.parts.last_mut() {
            // A signed or redacted block is closed: what follows is a new block.
            Some(Slot::Reasoning {
                text: last,
                signature: None,
                redacted: None,
            }) => last.push_str(text),
            _ if text.is_empty() => {}
            _ => self.parts.push(Slot::Reasoning {
                text: text.to_owned(),
                signature: None,
                redacted: None,
            }),
        }
    }

    fn signature(&mut self, signature: &str) {
        let open = self.parts.iter_mut().rev().find_map(|p| match p {
            Slot::Reasoning {
                signature,
                redacted: None,
                ..
            } => Some(signature),
            Slot::Reasoning { .. } | Slot::Text(_) | Slot::Call(_) => None,
        });
        match open {
            Some(slot @ None) => *slot = Some(signature.to_owned()),
            // No block, or the last one is signed already: the signature closes an empty one.
            Some(Some(_)) | None => self.parts.push(Slot::Reasoning {
                text: String::new(),
                signature: Some(signature.to_owned()),
                redacted: None,
            }),
        }
    }

    fn tool_fragment(
        &mut self,
        index: usize,
        id: Option<&str>,
        name: Option<&str>,
        fragment: &str,
    ) -> Vec<ToolCall> {
        let id = id.filter(|id| !id.trim().is_empty());
        let continues = self
            .calls
            .iter()
            .rposition(|c| c.index == index)
            .filter(|&pos| {
                // A different id at an index in use is another call: some servers (Ollama) send
                // whole calls that all say `index: 0`.
                match (&self.calls[pos].provider_id, id) {
                    (Some(current), Some(id)) => current == id,
                    (None, _) | (_, None) => true,
                }
            });
        if let Some(pos) = continues {
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
            if call.provider_id.is_none() {
                call.provider_id = id.map(str::to_owned);
            }
            if call.name.is_empty()
                && let Some(name) = name
            {
                call.name = name.to_owned();
            }
            call.arguments.push_str(fragment);
            return Vec::new();
        }
        // A new call: the calls before it are complete.
        let done = self.report_all();
        self.parts.push(Slot::Call(self.calls.len()));
        self.calls.push(PendingCall {
            index,
            provider_id: id.map(str::to_owned),
            id: None,
            name: name.unwrap_or_default().to_owned(),
            arguments: fragment.to_owned(),
            reported: false,
        });
        done
    }

    fn report_all(&mut self) -> Vec<ToolCall> {
        (0..self.calls.len())
            .filter_map(|pos| self.report(pos))
            .collect()
    }

    /// Marks a call reported and returns it, unless it was reported already.
    fn report(&mut self, pos: usize) -> Option<ToolCall> {
        if self.calls[pos].reported {
            return None;
        }
        self.calls[pos].reported = true;
        Some(self.finished_call(pos))
    }

    /// The call at `pos` as it stands, its id fixed on first use.
    fn finished_call(&mut self, pos: usize) -> ToolCall {
        let id = self.call_id(pos);
        let call = &self.calls[pos];
        let name = if call.name.trim().is_empty() {
            UNNAMED_TOOL.to_owned()
        } else {
            call.name.clone()
        };
        ToolCall {
            id,
            name,
            arguments: parse_arguments(&call.arguments),
        }
    }

    /// The call's id, unique among the taken ones: chosen once, then kept.
    fn call_id(&mut self, pos: usize) -> String {
        let call = &self.calls[pos];
        if let Some(id) = &call.id {
            return id.clone();
        }
        let id = unique_call_id(call.provider_id.as_deref(), call.index, &self.taken);
        self.taken.insert(id.clone());
        self.added.push(id.clone());
        self.calls[pos].id = Some(id.clone());
        id
    }

    /// The usage the current attempt reported so far (Anthropic reports the input at the
    /// start), for a response that ends before it finishes.
    pub fn usage(&self) -> Option<Usage> {
        self.usage
    }

    /// Output streamed so far, in characters: text, reasoning and tool arguments (an
    /// interrupted response's tokens are estimated from it).
    pub fn streamed_chars(&self) -> usize {
        let parts: usize = self
            .parts
            .iter()
            .map(|p| match p {
                Slot::Text(t) => t.len(),
                Slot::Reasoning { text, .. } => text.len(),
                Slot::Call(_) => 0,
            })
            .sum();
        parts + self.calls.iter().map(|c| c.arguments.len()).sum::<usize>()
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
    /// The ids of its calls stay taken (see [`into_taken_ids`](Self::into_taken_ids)).
    pub fn finish(&mut self) -> Result<AssembledResponse, LlmError> {
        let Some(stop_reason) = self.stop_reason.take() else {
            return Err(LlmError::Protocol(
                "the response ended without a finish event".into(),
            ));
        };
        let mut calls: Vec<Option<ToolCall>> = (0..self.calls.len())
            .map(|pos| Some(self.finished_call(pos)))
            .collect();
        let parts = std::mem::take(&mut self.parts)
            .into_iter()
            .filter_map(|slot| match slot {
                Slot::Text(text) => Some(Part::Text { text }),
                Slot::Reasoning {
                    text,
                    signature,
                    redacted,
                } => Some(Part::Reasoning {
                    text,
                    signature,
                    redacted,
                }),
                Slot::Call(pos) => calls
                    .get_mut(pos)
                    .and_then(Option::take)
                    .map(Part::ToolCall),
            })
            .collect();
        self.calls.clear();
        // The ids are in the message now: a later retry event must not give them back.
        self.added.clear();
        Ok(AssembledResponse {
            message: Message {
                role: Role::Assistant,
                parts,
            },
            usage: self.usage.take(),
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
#[path = "assemble_tests.rs"]
mod tests;
