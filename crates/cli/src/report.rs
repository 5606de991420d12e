//! The final JSON object of `--output-format json` and `stream-json` (see docs/output-format.md).

use std::path::Path;
use std::time::Duration;

use rein_core::agent::{TurnOutcome, TurnStop};
use serde::Serialize;

/// What a headless run achieved.
#[derive(Debug, Serialize)]
pub(crate) struct RunReport {
    /// Always `"result"`, so stream-json readers can tell it from events.
    #[serde(rename = "type")]
    kind: &'static str,
    session_id: String,
    result: String,
    stop_reason: &'static str,
    rounds: u32,
    usage: UsageReport,
    cost_usd: Option<f64>,
    files_changed: Vec<String>,
    duration_ms: u64,
    error: Option<String>,
}

#[derive(Debug, Serialize)]
struct UsageReport {
    prompt: u64,
    completion: u64,
    cached: u64,
}

impl RunReport {
    /// The report of one turn of `model` in `cwd`.
    pub(crate) fn new(
        session_id: &str,
        model: &str,
        outcome: &TurnOutcome,
        changed: &[std::path::PathBuf],
        cwd: &Path,
        duration: Duration,
    ) -> Self {
        RunReport {
            kind: "result",
            session_id: session_id.to_owned(),
            result: outcome.text.clone(),
            stop_reason: outcome.stop.as_str(),
            rounds: outcome.rounds,
            usage: UsageReport {
                prompt: outcome.usage.prompt_tokens,
                completion: outcome.usage.completion_tokens,
                cached: outcome.usage.cached_prompt_tokens,
            },
            cost_usd: rein_llm::pricing::cost_usd(model, &outcome.usage),
            files_changed: changed.iter().map(|p| display_path(p, cwd)).collect(),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            error: outcome.error.as_ref().map(ToString::to_string),
        }
    }

    /// The report of a run that failed before the model was called (bad configuration, no
    /// key, a session in use), so headless callers still get their one object.
    pub(crate) fn failed_setup(message: &str, duration: Duration) -> Self {
        RunReport {
            kind: "result",
            session_id: String::new(),
            result: String::new(),
            stop_reason: TurnStop::Error.as_str(),
            rounds: 0,
            usage: UsageReport {
                prompt: 0,
                completion: 0,
                cached: 0,
            },
            cost_usd: None,
            files_changed: Vec::new(),
            duration_ms: u64::try_from(duration.as_millis()).unwrap_or(u64::MAX),
            error: Some(message.to_owned()),
        }
    }

    /// The report as one line of JSON.
    pub(crate) fn to_json_line(&self) -> String {
        serde_json::to_string(self)
            .unwrap_or_else(|e| format!(r#"{{"type":"result","error":"{e}"}}"#))
    }
}

/// A path relative to the working directory when it is inside it.
fn display_path(path: &Path, cwd: &Path) -> String {
    path.strip_prefix(cwd).unwrap_or(path).display().to_string()
}
