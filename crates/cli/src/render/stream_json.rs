//! `--output-format stream-json`: every event as one JSON line on stdout.

use std::io::Write;

use rein_core::agent::{AgentEvent, EventSink};

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
