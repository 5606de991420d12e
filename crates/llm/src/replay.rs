//! Offline model responses: a provider that plays a cassette back, and a provider wrapper
//! that records one from a live run.
//!
//! # Cassette format
//!
//! A cassette is a text file in JSON Lines: **one line per model response**, played back in
//! order, one per [`Provider::stream`] call. Blank lines and lines starting with `#` are
//! skipped, so a hand-written cassette can carry comments. Each line is a JSON object in one
//! of two forms.
//!
//! The recorded form lists the response's [`StreamEvent`]s exactly (it must end with a
//! `finish` event); this is what [`RecordingProvider`] writes:
//!
//! ```text
//! {"events":[{"type":"text_delta","text":"Hi"},{"type":"usage","prompt_tokens":12,"completion_tokens":1},{"type":"finish","stop_reason":"end_turn"}]}
//! ```
//!
//! The shorthand form is for writing by hand. Every field is optional, but a line needs text
//! or a tool call:
//!
//! ```text
//! # the model reads a file, then answers
//! {"text":"Let me look.","tool_calls":[{"id":"call_1","name":"read_file","arguments":{"file_path":"main.py"}}]}
//! {"reasoning":"The import is wrong.","text":"Fixed it.","usage":{"prompt_tokens":900,"completion_tokens":40}}
//! ```
//!
//! - `text`, `reasoning`: strings;
//! - `tool_calls`: `[{id?, name, arguments}]`; `arguments` is a JSON object, or a string taken
//!   verbatim (to replay malformed arguments); `id` defaults to `call_<n>`;
//! - `usage`: `{prompt_tokens, completion_tokens, cached_prompt_tokens, cache_creation_tokens}`,
//!   any of them;
//! - `stop_reason`: `"end_turn"`, `"tool_use"`, `"max_tokens"`; by default `tool_use` when
//!   there are tool calls, else `end_turn`;
//! - `comment`: ignored.
//!
//! Asking for more responses than the cassette holds is an [`LlmError::Cassette`] error.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use serde::Deserialize;

use crate::{EventStream, LlmError, Provider, Request, StopReason, StreamEvent, Usage};

pub use crate::record::RecordingProvider;

/// A cassette that could not be loaded or created.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CassetteError {
    /// The file could not be read or created.
    #[error("cannot open cassette {path}: {message}")]
    Io {
        /// The cassette's path.
        path: PathBuf,
        /// The operating system's reason.
        message: String,
    },
    /// A line is not a valid response.
    #[error("{source_name}, line {line}: {message}")]
    Invalid {
        /// The cassette's path or name.
        source_name: String,
        /// The line number, from 1.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Line {
    #[serde(default)]
    events: Option<Vec<StreamEvent>>,
    #[serde(default)]
    text: Option<String>,
    #[serde(default)]
    reasoning: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ShortCall>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    stop_reason: Option<StopReason>,
    #[serde(default)]
    #[expect(
        dead_code,
        reason = "accepted so hand-written cassettes can explain themselves"
    )]
    comment: Option<serde_json::Value>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShortCall {
    #[serde(default)]
    id: Option<String>,
    name: String,
    #[serde(default)]
    arguments: Option<serde_json::Value>,
}

impl Line {
    fn into_events(self) -> Result<Vec<StreamEvent>, String> {
        let shorthand = self.text.is_some()
            || self.reasoning.is_some()
            || !self.tool_calls.is_empty()
            || self.usage.is_some()
            || self.stop_reason.is_some();
        if let Some(events) = self.events {
            if shorthand {
                return Err("use either \"events\" or the shorthand fields, not both".into());
            }
            return match events.last() {
                Some(StreamEvent::Finish { .. }) => Ok(events),
                _ => Err("the events must end with a finish event".into()),
            };
        }
        if self.text.is_none() && self.reasoning.is_none() && self.tool_calls.is_empty() {
            return Err("a response needs \"events\", \"text\" or \"tool_calls\"".into());
        }
        let mut events = Vec::new();
        if let Some(text) = self.reasoning {
            events.push(StreamEvent::ReasoningDelta { text });
        }
        if let Some(text) = self.text {
            events.push(StreamEvent::TextDelta { text });
        }
        let has_calls = !self.tool_calls.is_empty();
        for (index, call) in self.tool_calls.into_iter().enumerate() {
            let arguments_fragment = match call.arguments {
                None => String::new(),
                Some(serde_json::Value::String(raw)) => raw,
                Some(value) => value.to_string(),
            };
            events.push(StreamEvent::ToolCallDelta {
                index,
                id: Some(call.id.unwrap_or_else(|| format!("call_{}", index + 1))),
                name: Some(call.name),
                arguments_fragment,
            });
            events.push(StreamEvent::ToolCallEnd { index });
        }
        if let Some(usage) = self.usage {
            events.push(StreamEvent::Usage(usage));
        }
        let stop_reason = self.stop_reason.unwrap_or(if has_calls {
            StopReason::ToolUse
        } else {
            StopReason::EndTurn
        });
        events.push(StreamEvent::Finish { stop_reason });
        Ok(events)
    }
}

/// Plays a cassette back: each call to [`Provider::stream`] yields the next response.
#[derive(Debug)]
pub struct ReplayProvider {
    source_name: String,
    responses: Vec<Vec<StreamEvent>>,
    next: AtomicUsize,
}

impl ReplayProvider {
    /// Loads the cassette at `path`.
    pub fn from_path(path: &Path) -> Result<Self, CassetteError> {
        let text = std::fs::read_to_string(path).map_err(|e| CassetteError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        Self::parse(&text, &path.display().to_string())
    }

    /// Parses cassette text; `source_name` names it in error messages.
    pub fn parse(text: &str, source_name: &str) -> Result<Self, CassetteError> {
        let mut responses = Vec::new();
        for (n, raw) in text.lines().enumerate() {
            let trimmed = raw.trim();
            if trimmed.is_empty() || trimmed.starts_with('#') {
                continue;
            }
            let invalid = |message: String| CassetteError::Invalid {
                source_name: source_name.to_owned(),
                line: n + 1,
                message,
            };
            let line: Line = serde_json::from_str(trimmed).map_err(|e| invalid(e.to_string()))?;
            responses.push(line.into_events().map_err(invalid)?);
        }
        Ok(Self {
            source_name: source_name.to_owned(),
            responses,
            next: AtomicUsize::new(0),
        })
    }

    /// How many responses have not been played yet.
    pub fn remaining(&self) -> usize {
        self.responses
            .len()
            .saturating_sub(self.next.load(Ordering::Relaxed))
    }
}

impl Provider for ReplayProvider {
    fn stream(&self, _request: &Request) -> EventStream {
        let index = self.next.fetch_add(1, Ordering::Relaxed);
        match self.responses.get(index) {
            Some(events) => Box::pin(futures::stream::iter(events.clone().into_iter().map(Ok))),
            None => {
                let error = LlmError::Cassette(format!(
                    "{} holds {} response(s), all played; the run asked for response {}",
                    self.source_name,
                    self.responses.len(),
                    index + 1
                ));
                Box::pin(futures::stream::once(async move { Err(error) }))
            }
        }
    }
}

#[cfg(test)]
#[path = "replay_tests.rs"]
mod tests;
