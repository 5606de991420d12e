//! The `compact` tool: the model asks for a compaction (with what to keep in most detail),
//! and it happens before its next request, once the call's result is in the conversation.
//!
//! Each summary costs a model call, so the tool refuses, and says why, when one would buy
//! nothing: nothing was added since the last summary, or the context is still small (below
//! [`COMPACT_TOOL_MIN_USE`] of the usable window). A person's `/compact` is never refused.

use std::sync::Arc;

use parking_lot::Mutex;
use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use schemars::JsonSchema;
use serde::Deserialize;

use super::COMPACT_TOOL_MIN_USE;

/// The tool's name.
pub const COMPACT_TOOL: &str = "compact";

/// Compactions the model asked for, waiting for the next request; shared by the tool and the
/// agent.
#[derive(Debug, Default)]
pub struct CompactRequests {
    /// The focus of the latest request (`Some("")` when it gave none).
    pending: Mutex<Option<String>>,
    /// The context as the agent last sent it.
    last_use: Mutex<ContextUse>,
}

/// The context of the last request, as the agent tells the tool.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextUse {
    /// Its tokens.
    pub used: u64,
    /// The usable window, once known.
    pub usable: Option<u64>,
    /// Messages added since the last summary (`None`: there was none).
    pub added_since_summary: Option<usize>,
}

impl ContextUse {
    /// Why the model's request for a compaction is refused, if it is: the text of the tool's
    /// result.
    pub fn refusal(&self) -> Option<String> {
        if self.added_since_summary == Some(0) {
            return Some(
                "Not compacted: nothing was added to the conversation since the last compaction, so another would cost a summary and free nothing. Go on with the task."
                    .to_owned(),
            );
        }
        let usable = self.usable?;
        let least = (usable as f64 * COMPACT_TOOL_MIN_USE) as u64;
        (self.used < least).then(|| {
            format!(
                "Not compacted: the conversation takes {} tokens, {}% of the {usable} usable, and below {}% a summary costs more than it frees. rein compacts on its own when the context fills up. Go on with the task.",
                self.used,
                self.used * 100 / usable.max(1),
                (COMPACT_TOOL_MIN_USE * 100.0) as u64
            )
        })
    }
}

impl CompactRequests {
    /// The agent's word on the context it sends.
    pub fn observe(&self, context: ContextUse) {
        *self.last_use.lock() = context;
    }

    /// The context as last sent.
    pub fn last_use(&self) -> ContextUse {
        *self.last_use.lock()
    }

    /// Asks for a compaction before the next request.
    pub fn ask(&self, focus: Option<String>) {
        *self.pending.lock() = Some(focus.unwrap_or_default());
    }

    /// Takes the pending request: `Some(focus)` when there is one (the focus may be empty).
    pub fn take(&self) -> Option<String> {
        self.pending.lock().take()
    }
}

/// The tool the model calls to compact the conversation.
#[derive(Debug, Clone)]
pub struct CompactTool {
    requests: Arc<CompactRequests>,
}

impl CompactTool {
    /// The tool, leaving its requests in `requests`.
    pub fn new(requests: Arc<CompactRequests>) -> Self {
        CompactTool { requests }
    }
}

/// The `compact` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CompactArgs {
    /// What to keep in most detail.
    #[serde(default)]
    pub focus: Option<String>,
}

#[async_trait]
impl Tool for CompactTool {
    type Args = CompactArgs;

    fn name(&self) -> &'static str {
        COMPACT_TOOL
    }

    fn description(&self) -> &'static str {
        "Summarise older turns to free context space.\nUse between sub-tasks, when earlier \
         outputs are no longer needed; requests and recent messages stay whole."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn run(&self, args: CompactArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if let Some(refusal) = self.requests.last_use().refusal() {
            return Ok(ToolOutput::error(refusal));
        }
        let focus = args
            .focus
            .map(|f| f.trim().to_owned())
            .filter(|f| !f.is_empty());
        let said = match &focus {
            Some(focus) => format!(" keeping most detail on: {focus}"),
            None => String::new(),
        };
        self.requests.ask(focus);
        Ok(ToolOutput::success(format!(
            "The conversation will be compacted before your next request{said}. Go on with the \
             task."
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compaction_that_would_buy_nothing_is_refused_with_the_reason() {
        let fresh = ContextUse {
            used: 5000,
            usable: Some(10_000),
            added_since_summary: None,
        };
        assert_eq!(fresh.refusal(), None);
        let nothing_new = ContextUse {
            added_since_summary: Some(0),
            ..fresh
        };
        assert!(
            nothing_new
                .refusal()
                .is_some_and(|r| r.contains("nothing was added"))
        );
        let small = ContextUse {
            used: 1500,
            ..fresh
        };
        let refusal = small.refusal().unwrap();
        assert!(
            refusal.contains("1500 tokens, 15% of the 10000 usable"),
            "{refusal}"
        );
        assert!(refusal.contains("below 20%"), "{refusal}");
        // Before the window is known, only "nothing new" is refused.
        let unknown = ContextUse {
            usable: None,
            ..small
        };
        assert_eq!(unknown.refusal(), None);
    }
}
