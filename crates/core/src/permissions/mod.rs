//! Permissions: what may run without asking, what asks, what is refused.
//!
//! A [`Policy`] decides for each call, after its arguments are checked. The built-in one,
//! [`ModePolicy`], follows the permission mode (DESIGN.md) and the rules the person added
//! during the session ("yes for the rest of the session"). The hard deny list of dangerous
//! commands is enforced by the bash tool itself, in every mode.

mod mode;
mod rule;

use std::path::PathBuf;
use std::sync::Mutex;

use rein_tools::ToolKind;
use serde_json::Value;

pub use mode::PermissionMode;
pub use rule::{Pattern, Rule, canonical_tool_name};

/// A call as the policy sees it.
#[derive(Debug, Clone, Copy)]
pub struct CallView<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// What kind of effect the tool has.
    pub kind: ToolKind,
    /// The checked arguments.
    pub arguments: &'a Value,
    /// Where the call's `file_path` points, resolved, when it has one.
    pub path: Option<&'a PathTarget>,
    /// For a shell call, each simple command of its command line, as text (`None` for other
    /// tools, or when the command line could not be parsed).
    pub simple_commands: Option<&'a [String]>,
}

/// A file a call names, resolved against the workspace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PathTarget {
    /// The path, absolute.
    pub absolute: PathBuf,
    /// The path relative to the workspace root, when it is inside it.
    pub in_workspace: Option<PathBuf>,
}

/// What may happen to a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Run it.
    Allow,
    /// Ask the person first (refused when no one can be asked).
    Ask {
        /// Why, for the person.
        reason: String,
        /// A hook's "allow" cannot wave it (an ask rule the person wrote, an edit outside
        /// the workspace); only the person can.
        firm: bool,
    },
    /// Do not run it.
    Deny {
        /// Why, for the model and the person.
        reason: String,
    },
}

/// Decides whether calls run.
pub trait Policy: Send + Sync {
    /// The decision for one call.
    fn decide(&self, call: &CallView<'_>) -> Decision;
    /// Allows calls `rule` matches for the rest of the session (the person said so).
    fn allow_for_session(&self, rule: Rule);
    /// How the person can allow what this policy asks about when no one can be asked.
    fn how_to_allow(&self, call: &CallView<'_>) -> String;
}

/// The permission mode, plus the rules added during the session.
#[derive(Debug)]
pub struct ModePolicy {
    mode: PermissionMode,
    session_rules: Mutex<Vec<Rule>>,
}

impl ModePolicy {
    /// The policy of `mode`, with no session rules yet.
    pub fn new(mode: PermissionMode) -> Self {
        ModePolicy {
            mode,
            session_rules: Mutex::default(),
        }
    }

    /// The mode.
    pub fn mode(&self) -> PermissionMode {
        self.mode
    }
}

impl Policy for ModePolicy {
    fn decide(&self, call: &CallView<'_>) -> Decision {
        let by_mode = self.mode.decide(call);
        if matches!(by_mode, Decision::Ask { .. })
            && self
                .session_rules
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .iter()
                .any(|rule| rule.names_call(call))
        {
            return Decision::Allow;
        }
        by_mode
    }

    fn allow_for_session(&self, rule: Rule) {
        let mut rules = self
            .session_rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !rules.contains(&rule) {
            rules.push(rule);
        }
    }

    fn how_to_allow(&self, call: &CallView<'_>) -> String {
        self.mode.how_to_allow(call)
    }
}
