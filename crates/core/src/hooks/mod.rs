//! Hooks: the person's own commands, run at points of a session with Claude Code's
//! conventions (events, the JSON they read, exit codes, the JSON they may print), so hooks
//! written for it work unchanged.
//!
//! [`Hooks`] is the seam the agent calls; [`NoHooks`] does nothing; [`CommandHooks`] runs the
//! configured commands (`[[hooks.EVENT]]`), the user's always and a project's once the
//! project is trusted ([`runnable_hooks`]). Around a tool call,
//! PreToolUse runs after the arguments are checked and before the permission decision, and
//! PostToolUse after the call, before the output budget (see `agent/runner.rs`).

mod command;
mod input;
mod matcher;
mod process;
mod reply;

use rein_tools::{ToolOutput, async_trait};
use serde_json::Value;

pub use command::{CommandHooks, HookSetup, runnable_hooks};
pub use process::HOOK_OUTPUT_CAP_BYTES;

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

/// What the PreToolUse hooks made of a call.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct PreToolUse {
    /// Their permission decision, if any.
    pub decision: Option<HookDecision>,
    /// Arguments to run the call with instead of the model's (checked again before use).
    pub updated_input: Option<Value>,
    /// Text for the model, added to the call's result.
    pub context: Option<String>,
}

/// A hook's say on whether a call runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookDecision {
    /// Run without asking; a deny rule or the hard deny list still wins.
    Allow {
        /// Why, if the hook said.
        reason: Option<String>,
    },
    /// Ask the person (refused when no one can be asked), even where the policy allows.
    Ask {
        /// Why.
        reason: String,
    },
    /// Do not run it; the model is told the reason.
    Deny {
        /// Why.
        reason: String,
    },
}

/// What the PostToolUse hooks made of a finished call.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PostToolUse {
    /// Text for the model, added to the call's result (a hook's `additionalContext`, or
    /// what it wrote to stderr when it exited 2).
    pub context: Option<String>,
}

/// What the UserPromptSubmit hooks made of the person's request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptCheck {
    /// Send it, with this context for the model (if any) after it.
    Send {
        /// Added after the request.
        context: Option<String>,
    },
    /// Do not send it; the person is told why.
    Block {
        /// Why (a hook's stderr or reason).
        reason: String,
    },
}

/// What the Stop hooks made of a turn that is about to end.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StopCheck {
    /// Let it end.
    End,
    /// Make the model go on, with this reason as the next message.
    Continue {
        /// What the model is told.
        reason: String,
    },
}

/// Why a session starts, for SessionStart hooks (Claude Code's `source`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionStartSource {
    /// A new session.
    Startup,
    /// A resumed one (`-r`, `-c`).
    Resume,
}

/// Things the hooks could not do that the person should know (a hook that failed or hung):
/// each is shown as a warning, and the run goes on.
pub type HookWarnings = Vec<String>;

/// The hooks of a session.
#[async_trait]
pub trait Hooks: Send + Sync {
    /// Before the permission decision of a tool call.
    async fn pre_tool_use(&self, _call: &HookCall<'_>, _warnings: &mut HookWarnings) -> PreToolUse {
        PreToolUse::default()
    }

    /// After a tool call ran (its output not yet cut to the budget).
    async fn post_tool_use(
        &self,
        _call: &HookCall<'_>,
        _output: &ToolOutput,
        _warnings: &mut HookWarnings,
    ) -> PostToolUse {
        PostToolUse::default()
    }

    /// Whether a UserPromptSubmit hook may run (and so change the workspace) when the person
    /// submits a request: the turn's checkpoint must then be whole before it runs.
    fn runs_on_prompt(&self) -> bool {
        true
    }

    /// Whether a PreToolUse or PostToolUse hook may run (and so change the workspace) around
    /// a tool call: calls that only look must then wait for the turn's checkpoint too.
    fn runs_on_tools(&self) -> bool {
        true
    }

    /// Before the person's request reaches the model.
    async fn user_prompt_submit(&self, _prompt: &str, _warnings: &mut HookWarnings) -> PromptCheck {
        PromptCheck::Send { context: None }
    }

    /// When the model answered without a tool call; `stop_hook_active` is true when a Stop
    /// hook already made it go on in this turn.
    async fn stop(&self, _stop_hook_active: bool, _warnings: &mut HookWarnings) -> StopCheck {
        StopCheck::End
    }

    /// When a session starts; returns context for the model, if any.
    async fn session_start(
        &self,
        _source: SessionStartSource,
        _warnings: &mut HookWarnings,
    ) -> Option<String> {
        None
    }

    /// When the session ends.
    async fn session_end(&self, _warnings: &mut HookWarnings) {}

    /// When a sub-agent finished.
    async fn subagent_stop(&self, _warnings: &mut HookWarnings) {}

    /// Before the conversation is compacted.
    async fn pre_compact(&self, _warnings: &mut HookWarnings) {}
}

/// No hooks.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoHooks;

impl Hooks for NoHooks {
    fn runs_on_prompt(&self) -> bool {
        false
    }

    fn runs_on_tools(&self) -> bool {
        false
    }
}
