//! A compaction as the session file records it: what was replaced by what, so a resume
//! replays it on the same messages and rebuilds exactly the context the run had. The
//! messages themselves stay in the file as they were: the whole conversation is kept.

use rein_llm::{Message, Part, Role, Usage};
use serde::{Deserialize, Serialize};

/// Which layer of context management made a compaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, strum::IntoStaticStr)]
#[serde(rename_all = "snake_case")]
#[strum(serialize_all = "snake_case")]
pub enum CompactionLayer {
    /// Old tool results cut to their first and last lines (above half the window).
    Prune,
    /// Older turns summarised (above the compaction threshold).
    Summary,
    /// The summary and the last few messages only (above 95% of the window).
    Emergency,
    /// The provider refused a request as too long: as `Emergency`, then the request again.
    Reactive,
    /// Asked for by the person (`/compact`).
    Manual,
    /// Asked for by the model (the `compact` tool).
    Tool,
}

impl CompactionLayer {
    /// Whether this layer summarises (all but pruning do).
    pub fn summarises(self) -> bool {
        match self {
            CompactionLayer::Prune => false,
            CompactionLayer::Summary
            | CompactionLayer::Emergency
            | CompactionLayer::Reactive
            | CompactionLayer::Manual
            | CompactionLayer::Tool => true,
        }
    }
}

/// A tool result whose content was cut, and what it holds now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PrunedResult {
    /// The call the result answers.
    pub call_id: String,
    /// The content the model sees from now on.
    pub content: String,
}

/// One compaction: the first `replaced` messages of the context gave way to `with`, and the
/// results named in `pruned` were cut. Applied in that order: the results first, wherever
/// they are, then the messages at the start.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompactionRecord {
    /// The layer that made it.
    pub layer: CompactionLayer,
    /// How many messages at the start of the context were replaced (0 when none were).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub replaced: usize,
    /// What replaced them: the summary.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub with: Vec<Message>,
    /// Tool results cut to their first and last lines.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pruned: Vec<PrunedResult>,
    /// The context's size before, in tokens (the provider's count where there was one).
    pub tokens_before: u64,
    /// Its estimated size after.
    pub tokens_after: u64,
    /// What the summary call used, when the model wrote the summary.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// Why a compaction does not fit the context it is applied to (a result it names is not
/// there, it would part a tool call from its result).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CompactionMismatch(String);

impl CompactionRecord {
    /// Applies this compaction to `context`; when it does not fit (a result it names is not
    /// there, it would part a tool call from its result), says why and leaves `context` as it
    /// was.
    pub fn apply(&self, context: &mut Vec<Message>) -> Result<(), CompactionMismatch> {
        self.apply_checked(context).map_err(CompactionMismatch)
    }

    fn apply_checked(&self, context: &mut Vec<Message>) -> Result<(), String> {
        if self.replaced > context.len() {
            return Err(format!(
                "it replaces {} messages but the conversation has {}",
                self.replaced,
                context.len()
            ));
        }
        if context
            .get(self.replaced)
            .is_some_and(|m| m.role == Role::Tool)
        {
            return Err("it would part tool calls from their results".to_owned());
        }
        let mut places = Vec::with_capacity(self.pruned.len());
        for pruned in &self.pruned {
            let place = context.iter().enumerate().find_map(|(m, message)| {
                (message.role == Role::Tool)
                    .then(|| {
                        message.parts.iter().position(|part| {
                            matches!(part, Part::ToolResult(r) if r.call_id == pruned.call_id)
                        })
                    })
                    .flatten()
                    .map(|p| (m, p))
            });
            match place {
                Some(place) => places.push(place),
                None => {
                    return Err(format!(
                        "it cuts the result of call {}, which is not there",
                        pruned.call_id
                    ));
                }
            }
        }
        for ((m, p), pruned) in places.into_iter().zip(&self.pruned) {
            if let Some(Part::ToolResult(result)) = context[m].parts.get_mut(p) {
                result.content.clone_from(&pruned.content);
            }
        }
        context.splice(..self.replaced, self.with.iter().cloned());
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use rein_llm::{ToolArguments, ToolCall, ToolResult};

    use super::*;

    fn text(role: Role, text: &str) -> Message {
        Message {
            role,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    fn call(id: &str) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: id.into(),
                name: "bash".into(),
                arguments: ToolArguments::Json {
                    value: serde_json::json!({}),
                },
            })],
        }
    }

    fn result(id: &str, content: &str) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: content.into(),
                is_error: false,
                images: Vec::new(),
            })],
        }
    }

    #[test]
    fn results_are_cut_then_the_start_replaced() {
        let mut context = vec![
            text(Role::User, "a"),
            call("1"),
            result("1", "long"),
            text(Role::User, "b"),
            call("2"),
            result("2", "longer"),
        ];
        let record = CompactionRecord {
            layer: CompactionLayer::Summary,
            replaced: 3,
            with: vec![text(Role::User, "summary")],
            pruned: vec![PrunedResult {
                call_id: "2".into(),
                content: "cut".into(),
            }],
            tokens_before: 10,
            tokens_after: 5,
            usage: None,
        };
        record.apply(&mut context).unwrap();
        assert_eq!(context.len(), 4);
        assert_eq!(context[0], text(Role::User, "summary"));
        assert_eq!(context[3], result("2", "cut"));
    }

    #[test]
    fn a_record_that_does_not_fit_changes_nothing() {
        let context = vec![text(Role::User, "a"), call("1"), result("1", "x")];
        let bad = [
            (2, Vec::new()),
            (9, Vec::new()),
            (
                0,
                vec![PrunedResult {
                    call_id: "nope".into(),
                    content: String::new(),
                }],
            ),
        ];
        for (replaced, pruned) in bad {
            let mut changed = context.clone();
            let record = CompactionRecord {
                layer: CompactionLayer::Prune,
                replaced,
                with: Vec::new(),
                pruned,
                tokens_before: 0,
                tokens_after: 0,
                usage: None,
            };
            assert!(record.apply(&mut changed).is_err());
            assert_eq!(changed, context);
        }
    }

    #[test]
    fn the_line_is_flat_and_small() {
        let record = CompactionRecord {
            layer: CompactionLayer::Prune,
            replaced: 0,
            with: Vec::new(),
            pruned: vec![PrunedResult {
                call_id: "c".into(),
                content: "x".into(),
            }],
            tokens_before: 9,
            tokens_after: 3,
            usage: None,
        };
        assert_eq!(
            serde_json::to_string(&record).unwrap(),
            r#"{"layer":"prune","pruned":[{"call_id":"c","content":"x"}],"tokens_before":9,"tokens_after":3}"#
        );
    }
}
