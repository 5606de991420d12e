//! `--output-format stream-json`: every event as one JSON line on stdout.

use std::io::Write;

use std::path::Path;

use rein_core::agent::{AgentEvent, EventSink};
use rein_core::face::ProviderKind;

/// Writes each event as a line of JSON.
#[derive(Debug, Default)]
pub(crate) struct StreamJson;

impl EventSink for StreamJson {
    fn emit(&self, event: AgentEvent) {
        if let Ok(mut line) = serde_json::to_vec(&event) {
            line.push(b'\n');
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&line);
            let _ = out.flush();
        }
    }
}

/// The first line of a stream-json run: which session this is, before any event.
pub(crate) fn session_line(
    session_id: &str,
    model: &str,
    provider: ProviderKind,
    cwd: &Path,
    resumed: bool,
) -> String {
    serde_json::json!({
        "type": "session",
        "session_id": session_id,
        "model": model,
        "provider": provider,
        "cwd": cwd,
        "resumed": resumed,
        "rein_version": env!("CARGO_PKG_VERSION"),
    })
    .to_string()
}
