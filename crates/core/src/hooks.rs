//! The hook seams of the tool pipeline: PreToolUse runs after a call's arguments are checked
//! and before the permission decision; PostToolUse runs after the call, before the output
//! budget. Empty today: the permissions-and-hooks work fills them with the person's commands.

use rein_tools::{ToolOutput, async_trait};
use serde_json::Value;

/// A call as hooks see it.
#[derive(Debug, Clone, Copy)]
pub struct HookCall<'a> {
    /// The call's id.
    pub id: &'a str,
    /// The tool's name.
    pub tool: &'a str,
    /// The checked arguments.
    pub arguments: &'a Value,
}

/// What a PreToolUse hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PreToolUse {
    /// Go on to the permission decision.
    Continue,
    /// Do not run the call; the model is told why.
    Deny {
        /// Why, for the model.
        reason: String,
    },
}

/// Hooks around each tool call.
#[async_trait]
pub trait ToolHooks: Send + Sync {
    /// Before the permission decision.
    async fn pre_tool_use(&self, _call: &HookCall<'_>) -> PreToolUse {
        PreToolUse::Continue
    }

    /// After the call ran (its output not yet cut to the budget).
    async fn post_tool_use(&self, _call: &HookCall<'_>, _output: &ToolOutput) {}
}

/// No hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl ToolHooks for NoHooks {}
