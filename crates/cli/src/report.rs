//! The final JSON object of `--output-format json` and `stream-json` (see docs/output-format.md).

use std::path::Path;
use std::time::Duration;

use rein_core::agent::{TurnEnd, TurnOutcome, TurnStop};
use rein_core::face::Usage;
use serde::Serialize;

/// What a headless run achieved.
#[derive(Debug, Serialize)]
pub(crate) struct RunReport {
    /// Always `"result"`, so stream-json readers can tell it from events.
    #[serde(rename = "type")]
    kind: &'static str,
    /// `None` when no session was kept (rein failed before opening one, or the model never
    /// answered in it).
    session_id: Option<String>,
    result: String,
    stop_reason: &'static str,
    rounds: u32,
    /// The same names as the `usage` events of stream-json and the session file; `None`
    /// (`null`) when the server reported none.
    usage: Option<Usage>,
    /// Of `usage`, what sub-agents used.
    subagent_usage: Usage,
    /// Of `usage`, what compactions' summaries used.
    compaction_usage: Usage,
    /// Output tokens of a response that ended before the server reported them, estimated.
    #[serde(skip_serializing_if = "Option::is_none")]
    estimated_output_tokens: Option<u64>,
    cost_usd: Option<f64>,
    files_changed: Vec<String>,
    duration_ms: u64,
    error: Option<String>,
    /// Problems that did not end the run.
    pub(crate) warnings: Vec<String>,
    /// Calls that were not allowed to run.
    pub(crate) permission_denials: Vec<Denial>,
    /// Times the context was compacted to fit the model's window.
    pub(crate) compactions: u32,
}

/// A call that was not allowed to run, and why.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Denial {
    pub(crate) tool: String,
    pub(crate) arguments: serde_json::Value,
    pub(crate) reason: String,
}

impl RunReport {
    /// The report of one turn in `cwd`.
    pub(crate) fn new(
        session_id: Option<&str>,
        outcome: &TurnOutcome,
        changed: &[std::path::PathBuf],
        cwd: &Path,
        duration: Duration,
    ) -> Self {
        RunReport {
            kind: "result",
            session_id: session_id.map(str::to_owned),
            result: outcome.text.clone(),
            stop_reason: outcome.stop().into(),
            rounds: outcome.rounds,
            usage: outcome.usage_reported.then_some(outcome.usage),
            subagent_usage: outcome.subagent_usage,
            compaction_usage: outcome.compaction_usage,
            estimated_output_tokens: (outcome.estimated_output_tokens > 0)
                .then_some(outcome.estimated_output_tokens),
            cost_usd: outcome.cost_usd.filter(|_| outcome.usage_reported),
            files_changed: changed.iter().map(|p| display_path(p, cwd)).collect(),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            error: match &outcome.end {
                TurnEnd::PromptBlocked { reason } => Some(blocked_prompt_message(reason)),
                TurnEnd::SpendingLimit(reached) => Some(reached.message()),
                _ => outcome.error().map(ToString::to_string),
            },
            warnings: Vec::new(),
            permission_denials: Vec::new(),
            compactions: 0,
        }
    }

    /// The report of a run that failed before the model was called (bad configuration, no
    /// key, a session in use), so headless callers still get their one object.
    pub(crate) fn failed_setup(message: &str, duration: Duration) -> Self {
        RunReport {
            kind: "result",
            session_id: None,
            result: String::new(),
            stop_reason: TurnStop::Error.into(),
            rounds: 0,
            usage: None,
            subagent_usage: Usage::default(),
            compaction_usage: Usage::default(),
            estimated_output_tokens: None,
            cost_usd: None,
            files_changed: Vec::new(),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            error: Some(message.to_owned()),
            warnings: Vec::new(),
            permission_denials: Vec::new(),
            compactions: 0,
        }
    }

    /// Reports a failure that came after the turn, unless the turn already failed.
    pub(crate) fn set_error_if_none(&mut self, message: &str) {
        if self.error.is_none() {
            self.error = Some(message.to_owned());
        }
    }

    /// The report as one line of JSON.
    pub(crate) fn to_json_line(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|e| format!(r#"{{"type":"result","error":"{e}"}}"#))
    }
}

/// What the person is told when a UserPromptSubmit hook blocked the request.
pub(crate) fn blocked_prompt_message(reason: &str) -> String {
    format!("a UserPromptSubmit hook blocked the request; it was not sent to the model: {reason}")
}

/// A path relative to the working directory when it is inside it.
fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}

#[cfg(test)]
mod tests {
    use rein_core::face::micro_dollars;

    #[test]
    fn costs_are_whole_micro_dollars() {
        assert_eq!(micro_dollars(0.019_725_000_000_000_003), 0.019_725);
        assert_eq!(micro_dollars(0.000_000_4), 0.0);
        assert_eq!(
            serde_json::to_string(&micro_dollars(0.1 + 0.2)).unwrap(),
            "0.3"
        );
    }
}
