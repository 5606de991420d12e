//! The lines of a session file: one JSON object each, tagged by `type`.
//!
//! ```text
//! {"type":"header","format":1,"id":"20250102-150405-k3x9qa","model":"gpt-4o","provider":"openai","cwd":"/src/app","created":"2025-01-02T15:04:05.123Z","rein_version":"0.1.0"}
//! {"type":"message","role":"user","parts":[{"type":"text","text":"fix the import"}]}
//! {"type":"event","kind":"usage","model":"gpt-4o","usage":{"prompt_tokens":900,...}}
//! ```

use std::path::PathBuf;

use rein_llm::{Message, Usage};

use crate::agent::TurnStop;
use crate::context::CompactionRecord;
use crate::tools::TodoItem;
use serde::{Deserialize, Serialize};
use strum::{IntoStaticStr, VariantNames};

use crate::config::ProviderKind;

/// The version of the file format this rein writes.
pub const SESSION_FORMAT_VERSION: u32 = 1;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// The file format's version.
    pub format: u32,
    /// The session's id (also its file name).
    pub id: String,
    /// The model the session started with.
    pub model: String,
    /// The provider the session started with.
    pub provider: ProviderKind,
    /// The working directory the session belongs to.
    pub cwd: PathBuf,
    /// When it was created: RFC 3339, UTC, milliseconds.
    pub created: String,
    /// The rein version that created it.
    pub rein_version: String,
    /// The session this one was forked from, when it was.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

/// Something that happened in a session besides a message. Readers skip kinds they do not
/// know, so adding a variant is compatible ([`SessionEvent::KINDS`] follows the variants).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, IntoStaticStr, VariantNames)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum SessionEvent {
    /// Tokens used by one model call.
    Usage {
        /// The model called.
        model: String,
        /// The API it was called through (absent in files of earlier versions).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        provider: Option<ProviderKind>,
        /// What the provider counted.
        usage: Usage,
    },
    /// A turn ended.
    TurnFinished {
        /// Why the turn ended.
        stop_reason: TurnStop,
    },
    /// The context was compacted: what was replaced by what. The messages it replaced stay
    /// in the file; a resume replays the compaction on them.
    Compaction(CompactionRecord),
    /// The todo list was replaced; a resume restores the last one.
    Todos {
        /// The whole list.
        todos: Vec<TodoItem>,
    },
    /// Tokens a sub-agent used (its own transcript has each call): counted in the session's
    /// total, never taken for the model the session resumes with.
    SubagentUsage {
        /// The model the sub-agent ran on.
        model: String,
        /// The type of sub-agent.
        agent: String,
        /// What it used in all.
        usage: Usage,
    },
    /// The conversation was rewound: what the file holds after line `to_line` (but the
    /// tokens used, which were spent) no longer belongs to it.
    Rewind {
        /// The last line kept (1-based; the header is line 1).
        to_line: u64,
        /// The rewind's id (a rewind completed after a crash is recorded once).
        id: String,
    },
}

impl SessionEvent {
    /// The `kind` of every variant, as written.
    pub const KINDS: &[&str] = <Self as VariantNames>::VARIANTS;

    /// This event's `kind`.
    pub fn kind(&self) -> &'static str {
        self.into()
    }
}

/// A line as written.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum LineRef<'a> {
    Header(&'a SessionHeader),
    Message(&'a Message),
    Event(&'a SessionEvent),
}

/// A line as read.
#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub(crate) enum Line {
    Header(SessionHeader),
    Message(Message),
    Event(SessionEvent),
}

/// The line types this rein knows.
const LINE_TYPES: [&str; 3] = ["header", "message", "event"];

/// Something wrong in a session file that loading worked around.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum LoadWarning {
    /// The last line was cut off (rein stopped while writing it); it was dropped.
    #[error("line {line} was cut off when rein stopped; it was dropped")]
    TruncatedLastLine {
        /// Its 1-based line number.
        line: usize,
    },
    /// A line held bytes that are not UTF-8; they were read as U+FFFD and the record kept.
    #[error("line {line} held bytes that are not UTF-8; they were replaced with \u{FFFD}")]
    InvalidUtf8 {
        /// Its 1-based line number.
        line: usize,
    },
    /// A line that is not a valid record was skipped.
    #[error("line {line} is not a valid record and was skipped: {reason}")]
    MalformedLine {
        /// Its 1-based line number.
        line: usize,
        /// Why it did not parse.
        reason: String,
    },
    /// An event of a kind this rein does not know (from a newer rein) was skipped.
    #[error("line {line} holds an event of unknown kind \"{kind}\"; skipped")]
    UnknownEvent {
        /// Its 1-based line number.
        line: usize,
        /// Its `kind`.
        kind: String,
    },
    /// A line of a type this rein does not know (from a newer rein) was skipped.
    #[error("line {line} holds a record of unknown type \"{kind}\"; skipped")]
    UnknownLine {
        /// Its 1-based line number.
        line: usize,
        /// Its `type`.
        kind: String,
    },
    /// Tool calls that never got a result were given an "interrupted" one.
    #[error(
        "{} tool call(s) had no result and were marked interrupted: {}",
        call_ids.len(),
        call_ids.join(", ")
    )]
    InterruptedToolCalls {
        /// The calls' ids.
        call_ids: Vec<String>,
    },
    /// Tool calls that reused an id (a provider rejects that) were renamed, with their
    /// results.
    #[error("{} tool call(s) reused an id and were renamed: {}", renamed.len(), renamed_list(renamed))]
    DuplicateCallIds {
        /// Each renamed call: its id in the file, and the id it has now.
        renamed: Vec<(String, String)>,
    },
    /// A tool result that answers no earlier call was dropped.
    #[error("line {line} answers unknown tool call \"{call_id}\"; dropped")]
    OrphanToolResult {
        /// Its 1-based line number.
        line: usize,
        /// The call id it names.
        call_id: String,
    },
    /// A compaction that does not fit the messages before it was not replayed: the
    /// messages it would have replaced are kept whole.
    #[error(
        "compaction {number} of the session was not replayed ({reason}); the messages it \
         replaced are kept whole"
    )]
    CompactionSkipped {
        /// Which compaction of the file, from 1.
        number: usize,
        /// Why it does not fit.
        reason: String,
    },
}

/// The renamed calls of [`LoadWarning::DuplicateCallIds`]: `old → new, …`.
fn renamed_list(renamed: &[(String, String)]) -> String {
    let pairs: Vec<String> = renamed
        .iter()
        .map(|(from, to)| format!("{from} → {to}"))
        .collect();
    pairs.join(", ")
}

/// What one line of a file holds.
pub(crate) enum Parsed {
    Line(Line),
    /// A record read after replacing bytes that are not UTF-8 (a disk or editor mishap must
    /// not drop the person's prompt).
    Lossy(Line, LoadWarning),
    Skipped(LoadWarning),
}

/// Parses one complete line (without its newline); `number` is 1-based.
pub(crate) fn parse_line(bytes: &[u8], number: usize) -> Parsed {
    let error = match serde_json::from_slice::<Line>(bytes) {
        Ok(line) => return Parsed::Line(line),
        Err(error) => error,
    };
    // Slow path, only for lines that failed.
    if std::str::from_utf8(bytes).is_err() {
        let text = String::from_utf8_lossy(bytes);
        return match parse_line(text.as_bytes(), number) {
            Parsed::Line(line) | Parsed::Lossy(line, _) => {
                Parsed::Lossy(line, LoadWarning::InvalidUtf8 { line: number })
            }
            skipped @ Parsed::Skipped(_) => skipped,
        };
    }
    // Say why, and tell "newer rein" from "broken".
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes) else {
        return Parsed::Skipped(LoadWarning::MalformedLine {
            line: number,
            reason: error.to_string(),
        });
    };
    let field = |name: &str| {
        value
            .get(name)
            .and_then(serde_json::Value::as_str)
            .map(str::to_owned)
    };
    let warning = match (field("type"), field("kind")) {
        (Some(kind), _) if !LINE_TYPES.contains(&kind.as_str()) => {
            LoadWarning::UnknownLine { line: number, kind }
        }
        (Some(kind), Some(event))
            if kind == "event" && !SessionEvent::KINDS.contains(&event.as_str()) =>
        {
            LoadWarning::UnknownEvent {
                line: number,
                kind: event,
            }
        }
        _ => LoadWarning::MalformedLine {
            line: number,
            reason: error.to_string(),
        },
    };
    Parsed::Skipped(warning)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_list_every_variant() {
        let events = [
            SessionEvent::Usage {
                model: "m".into(),
                provider: None,
                usage: Usage::default(),
            },
            SessionEvent::TurnFinished {
                stop_reason: TurnStop::EndTurn,
            },
            SessionEvent::Compaction(CompactionRecord {
                layer: crate::context::CompactionLayer::Prune,
                replaced: 0,
                with: Vec::new(),
                pruned: Vec::new(),
                tokens_before: 1,
                tokens_after: 0,
                usage: None,
            }),
            SessionEvent::Todos { todos: Vec::new() },
            SessionEvent::SubagentUsage {
                model: "m".into(),
                agent: "explore".into(),
                usage: Usage::default(),
            },
            SessionEvent::Rewind {
                to_line: 3,
                id: "x".into(),
            },
        ];
        for event in &events {
            let json = serde_json::to_value(event).unwrap();
            assert_eq!(json["kind"], event.kind());
            assert!(SessionEvent::KINDS.contains(&event.kind()));
        }
        assert_eq!(events.len(), SessionEvent::KINDS.len());
    }

    #[test]
    fn lines_are_tagged_and_flat() {
        let event = SessionEvent::TurnFinished {
            stop_reason: TurnStop::MaxTokens,
        };
        let json = serde_json::to_string(&LineRef::Event(&event)).unwrap();
        assert_eq!(
            json,
            r#"{"type":"event","kind":"turn_finished","stop_reason":"max_tokens"}"#
        );
        assert!(
            matches!(parse_line(json.as_bytes(), 1), Parsed::Line(Line::Event(e)) if e == event)
        );
    }

    #[test]
    fn unknown_and_broken_lines_are_told_apart() {
        let skipped = |text: &str| match parse_line(text.as_bytes(), 7) {
            Parsed::Skipped(warning) => warning,
            Parsed::Line(_) | Parsed::Lossy(..) => panic!("{text} parsed"),
        };
        assert_eq!(
            skipped(r#"{"type":"event","kind":"compaction2","x":1}"#),
            LoadWarning::UnknownEvent {
                line: 7,
                kind: "compaction2".into()
            }
        );
        assert_eq!(
            skipped(r#"{"type":"bookmark"}"#),
            LoadWarning::UnknownLine {
                line: 7,
                kind: "bookmark".into()
            }
        );
        assert!(matches!(
            skipped(r#"{"type":"message","role":"nobody"}"#),
            LoadWarning::MalformedLine { line: 7, .. }
        ));
        assert!(matches!(
            skipped("{\"type\":\"mess"),
            LoadWarning::MalformedLine { .. }
        ));
    }
}
