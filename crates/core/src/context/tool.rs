//! The `compact` tool: the model asks for a compaction (with what to keep in most detail),
//! and it happens before its next request, once the call's result is in the conversation.

use std::sync::{Arc, Mutex, PoisonError};

use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use schemars::JsonSchema;
use serde::Deserialize;

/// The tool's name.
pub const COMPACT_TOOL: &str = "compact";

/// Compactions the model asked for, waiting for the next request; shared by the tool and the
/// agent.
#[derive(Debug, Default)]
pub struct CompactRequests {
    /// The focus of the latest request (`Some("")` when it gave none).
    pending: Mutex<Option<String>>,
}

impl CompactRequests {
    /// Asks for a compaction before the next request.
    pub fn ask(&self, focus: Option<String>) {
        *self.lock() = Some(focus.unwrap_or_default());
    }

    /// Takes the pending request: `Some(focus)` when there is one (the focus may be empty).
    pub fn take(&self) -> Option<String> {
        self.lock().take()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<String>> {
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
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
