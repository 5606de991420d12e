//! Recording a cassette from a live run (the format is described in [`crate::replay`]).

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use futures::StreamExt;
use serde::Serialize;

use crate::replay::CassetteError;
use crate::{EventStream, LlmError, Provider, Request, StreamEvent};

/// Wraps a provider and writes every completed response to a cassette, one JSON line each,
/// written out as soon as the response finishes. Events of attempts that were retried are
/// dropped; a response that fails is not recorded.
pub struct RecordingProvider {
    inner: Arc<dyn Provider>,
    sink: Arc<Sink>,
}

struct Sink {
    path: PathBuf,
    file: Mutex<File>,
}

#[derive(Serialize)]
struct RecordedLine<'a> {
    events: &'a [StreamEvent],
}

impl std::fmt::Debug for RecordingProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecordingProvider")
            .field("path", &self.sink.path)
            .finish_non_exhaustive()
    }
}

impl RecordingProvider {
    /// Starts a new cassette at `path` (replacing any file there) recording `inner`.
    pub fn create(inner: Arc<dyn Provider>, path: &Path) -> Result<Self, CassetteError> {
        let file = File::create(path).map_err(|e| CassetteError::Io {
            path: path.to_owned(),
            message: e.to_string(),
        })?;
        Ok(Self {
            inner,
            sink: Arc::new(Sink {
                path: path.to_owned(),
                file: Mutex::new(file),
            }),
        })
    }
}

impl Sink {
    fn write(&self, events: &[StreamEvent]) -> Result<(), LlmError> {
        let mut line =
            serde_json::to_vec(&RecordedLine { events }).map_err(|e| self.error(&e.to_string()))?;
        line.push(b'\n');
        let mut file = self
            .file
            .lock()
            .map_err(|_| self.error("a previous write panicked"))?;
        // One write of the whole line, so concurrent calls never interleave.
        file.write_all(&line)
            .and_then(|()| file.flush())
            .map_err(|e| self.error(&e.to_string()))
    }

    fn error(&self, why: &str) -> LlmError {
        LlmError::Cassette(format!("could not write to {}: {why}", self.path.display()))
    }
}

impl Provider for RecordingProvider {
    fn stream(&self, request: &Request) -> EventStream {
        let sink = self.sink.clone();
        let mut recorded: Vec<StreamEvent> = Vec::new();
        let stream = self.inner.stream(request).map(move |item| {
            let event = match item {
                Ok(event) => event,
                Err(e) => return Err(e),
            };
            match &event {
                StreamEvent::Retry { .. } => recorded.clear(),
                // A notice of this run's timing, not part of the response.
                StreamEvent::Waiting { .. } => {}
                StreamEvent::Finish { .. } => {
                    recorded.push(event.clone());
                    sink.write(&recorded)?;
                    recorded.clear();
                }
                StreamEvent::TextDelta { .. }
                | StreamEvent::ReasoningDelta { .. }
                | StreamEvent::ReasoningSignature { .. }
                | StreamEvent::RedactedReasoning { .. }
                | StreamEvent::ToolCallDelta { .. }
                | StreamEvent::ToolCallEnd { .. }
                | StreamEvent::Usage(_) => recorded.push(event.clone()),
            }
            Ok(event)
        });
        Box::pin(stream)
    }

    fn context_window<'a>(
        &'a self,
        model: &'a str,
    ) -> futures::future::BoxFuture<'a, Option<crate::ServerWindow>> {
        self.inner.context_window(model)
    }

    fn model_listing<'a>(
        &'a self,
        model: &'a str,
    ) -> futures::future::BoxFuture<'a, Option<crate::ModelListing>> {
        self.inner.model_listing(model)
    }
}
