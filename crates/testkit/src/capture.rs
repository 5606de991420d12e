//! The record of every request the server received, for assertions.

use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use parking_lot::{Condvar, Mutex};

use crate::MockError;

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct CapturedRequest {
    /// Its position among all requests to this server, from 0.
    pub index: usize,
    /// Which TCP connection it came on (from 0, in accept order): equal numbers mean the
    /// client reused a connection.
    pub connection: u64,
    /// The method, e.g. `POST`.
    pub method: String,
    /// The request target exactly as sent: `/v1/messages`, or `http://host/v1/...` through a proxy.
    pub target: String,
    /// The target's path, without scheme, authority or query.
    pub path: String,
    /// The headers in the order sent, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body parsed as JSON; `Null` when empty or not JSON.
    pub body: serde_json::Value,
    /// The body's bytes as received (after removing any chunked transfer encoding).
    pub raw_body: Vec<u8>,
    /// When the request had fully arrived.
    pub received_at: Instant,
    /// The same moment as wall-clock nanoseconds since the Unix epoch.
    pub received_unix_nanos: u64,
    /// When the response finished being written (also after a deliberate cut); `None` while it
    /// is being written, when it stalls, or when the client went away first. Stamped just
    /// before the last bytes are handed to the socket, so a client that has read the whole
    /// response always finds it set.
    pub responded_at: Option<Instant>,
    /// The same moment as wall-clock nanoseconds since the Unix epoch.
    pub responded_unix_nanos: Option<u64>,
}

impl CapturedRequest {
    /// The first value of header `name` (any case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    /// The wire format the request speaks, from its path (`.../chat/completions` or
    /// `.../messages`), else from an `anthropic-version` header, else OpenAI.
    pub fn wire_format(&self) -> WireFormat {
        if self.path.ends_with("/messages") {
            WireFormat::Anthropic
        } else if self.path.ends_with("/responses") {
            WireFormat::Responses
        } else if self.path.ends_with("/chat/completions") {
            WireFormat::OpenAi
        } else if self.header("anthropic-version").is_some() {
            WireFormat::Anthropic
        } else {
            WireFormat::OpenAi
        }
    }

    /// Whether the body asked for a stream (`"stream": true`).
    pub fn wants_stream(&self) -> bool {
        self.body.get("stream").and_then(serde_json::Value::as_bool) == Some(true)
    }

    /// Whether the body set `stream_options.include_usage` (OpenAI).
    pub fn wants_usage_chunk(&self) -> bool {
        self.body
            .pointer("/stream_options/include_usage")
            .and_then(serde_json::Value::as_bool)
            == Some(true)
    }

    /// The `model` field of the body, if any.
    pub fn model(&self) -> Option<&str> {
        self.body.get("model").and_then(serde_json::Value::as_str)
    }

    /// The body as text (lossy), for substring assertions.
    pub fn body_text(&self) -> String {
        String::from_utf8_lossy(&self.raw_body).into_owned()
    }
}

/// The two wire formats the server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WireFormat {
    /// OpenAI Chat Completions (`POST {base}/v1/chat/completions`).
    OpenAi,
    /// Anthropic Messages (`POST {base}/v1/messages`).
    Anthropic,
    /// The OpenAI Responses API (`POST {base}/v1/responses`).
    Responses,
}

/// What the server keeps of each request.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Capture {
    /// Every request, for [`crate::MockServer::requests`].
    #[default]
    KeepAll,
    /// Only the count (long benchmark runs that must not grow in memory); `requests()` is empty.
    CountOnly,
}

/// Wall-clock nanoseconds since the Unix epoch.
pub(crate) fn unix_nanos_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |since| {
            u64::try_from(since.as_nanos()).unwrap_or(u64::MAX)
        })
}

#[derive(Debug, Default)]
struct LogState {
    kept: Vec<CapturedRequest>,
    total: usize,
}

/// The shared log the connections write to and the test reads.
#[derive(Debug)]
pub(crate) struct RequestLog {
    state: Mutex<LogState>,
    arrived: Condvar,
    arrived_async: tokio::sync::Notify,
    capture: Capture,
}

impl RequestLog {
    pub(crate) fn new(capture: Capture) -> Self {
        Self {
            state: Mutex::new(LogState::default()),
            arrived: Condvar::new(),
            arrived_async: tokio::sync::Notify::new(),
            capture,
        }
    }

    /// Numbers the request, stores it and wakes waiters; returns it with its index.
    pub(crate) fn record(&self, mut request: CapturedRequest) -> CapturedRequest {
        {
            let mut state = self.state.lock();
            request.index = state.total;
            state.total += 1;
            match self.capture {
                Capture::KeepAll => state.kept.push(request.clone()),
                Capture::CountOnly => {}
            }
        }
        self.arrived.notify_all();
        self.arrived_async.notify_waiters();
        request
    }

    /// Stamps the moment the response to `request` was written (or, with `None`, takes the
    /// stamp back because the last write failed).
    pub(crate) fn set_responded(&self, request: &mut CapturedRequest, at: Option<(Instant, u64)>) {
        request.responded_at = at.map(|(instant, _)| instant);
        request.responded_unix_nanos = at.map(|(_, unix)| unix);
        let mut state = self.state.lock();
        if let Some(kept) = state.kept.get_mut(request.index) {
            kept.responded_at = request.responded_at;
            kept.responded_unix_nanos = request.responded_unix_nanos;
        }
    }

    pub(crate) fn snapshot(&self) -> Vec<CapturedRequest> {
        self.state.lock().kept.clone()
    }

    pub(crate) fn count(&self) -> usize {
        self.state.lock().total
    }

    /// Blocks until `wanted` requests have arrived or `timeout` passes.
    pub(crate) fn wait_blocking(
        &self,
        wanted: usize,
        timeout: Duration,
    ) -> Result<Vec<CapturedRequest>, MockError> {
        let deadline = Instant::now() + timeout;
        let mut state = self.state.lock();
        while state.total < wanted {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(MockError::WaitTimeout {
                    wanted,
                    got: state.total,
                    waited: timeout,
                });
            }
            self.arrived.wait_for(&mut state, left);
        }
        Ok(state.kept.clone())
    }

    /// Waits, without blocking the async runtime, until `wanted` requests have arrived.
    pub(crate) async fn wait_async(
        &self,
        wanted: usize,
        timeout: Duration,
    ) -> Result<Vec<CapturedRequest>, MockError> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.arrived_async.notified();
            tokio::pin!(notified);
            // Registered before the check, so an arrival between the check and the await wakes us.
            notified.as_mut().enable();
            {
                let state = self.state.lock();
                if state.total >= wanted {
                    return Ok(state.kept.clone());
                }
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Err(MockError::WaitTimeout {
                    wanted,
                    got: self.count(),
                    waited: timeout,
                });
            }
        }
    }
}
