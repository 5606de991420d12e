//! One line of `results.jsonl`: how one attempt at one task went.

use std::path::Path;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Why an attempt scored as it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) enum Reason {
    /// The validation exited 0.
    #[serde(rename = "passed")]
    Passed,
    /// The validation exited non-zero or timed out.
    #[serde(rename = "validate failed")]
    ValidateFailed,
    /// The setup failed or timed out: the agent never ran.
    #[serde(rename = "setup failed")]
    SetupFailed,
    /// rein ended with an error (the API, its configuration, a missing recording).
    #[serde(rename = "agent error")]
    AgentError,
    /// The agent overran its time limit and was stopped.
    #[serde(rename = "timeout")]
    Timeout,
}

impl Reason {
    /// The word the results and the summary use.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Reason::Passed => "passed",
            Reason::ValidateFailed => "validate failed",
            Reason::SetupFailed => "setup failed",
            Reason::AgentError => "agent error",
            Reason::Timeout => "timeout",
        }
    }
}

/// One attempt's result, as written to `results.jsonl`.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Record {
    pub(crate) task: String,
    pub(crate) attempt: u32,
    pub(crate) passed: bool,
    pub(crate) reason: Reason,
    /// What went wrong, in words, when it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) detail: Option<String>,
    /// Model responses (`null` when rein never reported).
    pub(crate) rounds: Option<u64>,
    /// As in rein's headless JSON.
    pub(crate) usage: Value,
    pub(crate) cost_usd: Option<f64>,
    pub(crate) duration_ms: u64,
    pub(crate) stop_reason: Option<String>,
    pub(crate) permission_denials: Vec<Value>,
    pub(crate) session_id: Option<String>,
    pub(crate) session_file: Option<String>,
    pub(crate) workspace: String,
    pub(crate) model: Option<String>,
    pub(crate) started_at_ms: u64,
    pub(crate) ended_at_ms: u64,
    /// The attempt was run again on another worker after the first died (`--ray`).
    #[serde(default)]
    pub(crate) retried: bool,
}

impl Record {
    /// An attempt just started.
    pub(crate) fn new(task: &str, attempt: u32, workspace: &Path, started_at_ms: u64) -> Record {
        Record {
            task: task.to_owned(),
            attempt,
            passed: false,
            reason: Reason::AgentError,
            detail: None,
            rounds: None,
            usage: Value::Null,
            cost_usd: None,
            duration_ms: 0,
            stop_reason: None,
            permission_denials: Vec::new(),
            session_id: None,
            session_file: None,
            workspace: workspace.display().to_string(),
            model: None,
            started_at_ms,
            ended_at_ms: started_at_ms,
            retried: false,
        }
    }

    /// Takes what rein's final JSON object says of the run.
    pub(crate) fn take_report(&mut self, report: Option<&Value>, rein_home: &Path) {
        let Some(report) = report else { return };
        self.rounds = report.get("rounds").and_then(Value::as_u64);
        self.usage = report.get("usage").cloned().unwrap_or(Value::Null);
        self.cost_usd = report.get("cost_usd").and_then(Value::as_f64);
        self.stop_reason = report
            .get("stop_reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.permission_denials = report
            .get("permission_denials")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        self.session_id = report
            .get("session_id")
            .and_then(Value::as_str)
            .map(str::to_owned);
        self.session_file = self.session_id.as_ref().map(|id| {
            rein_home
                .join("sessions")
                .join(format!("{id}.jsonl"))
                .display()
                .to_string()
        });
    }

    /// Scores the attempt.
    pub(crate) fn finish(
        &mut self,
        reason: Reason,
        detail: Option<String>,
        clock: Instant,
        ended_at_ms: u64,
    ) {
        self.reason = reason;
        self.passed = reason == Reason::Passed;
        self.detail = detail;
        self.duration_ms = u64::try_from(clock.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.ended_at_ms = ended_at_ms;
    }

    /// Input plus output tokens, where rein reported them.
    pub(crate) fn tokens(&self) -> Option<u64> {
        let input = self.usage.get("prompt_tokens").and_then(Value::as_u64);
        let output = self.usage.get("completion_tokens").and_then(Value::as_u64);
        match (input, output) {
            (None, None) => None,
            (i, o) => Some(i.unwrap_or(0) + o.unwrap_or(0)),
        }
    }

    /// The JSON line.
    pub(crate) fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}
