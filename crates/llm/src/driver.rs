//! One model call as a stream of events: open, decode, and on a transient failure announce a
//! [`StreamEvent::Retry`], wait, and run the whole call again.
//!
//! Four time limits apply: the connection's (in the HTTP client), the first byte's (from the
//! start of an attempt to the first byte of its body; while it runs, a
//! [`StreamEvent::Waiting`] says so every few seconds), the silence between two chunks, and
//! the whole call's, retries included.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};
use tokio::time::Instant;

use crate::{
    EventStream, LlmError, NetworkConfig, ProviderKind, RetryPolicy, StreamDecoder, StreamEvent,
};

/// A response body as it arrives.
pub(crate) type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, LlmError>> + Send>>;

/// Something that can start one attempt of a call: send the request, hand back the body.
pub(crate) trait Opener: Send + Sync + 'static {
    /// Sends the request once.
    fn open(&self) -> BoxFuture<'static, Result<ByteStream, LlmError>>;

    /// Sends the request once more without streaming, for a server that answered a streamed
    /// one with an empty body: its plain answer says what went wrong. `None` where the
    /// format has no such request.
    fn open_unstreamed(&self) -> Option<BoxFuture<'static, Result<ByteStream, LlmError>>> {
        None
    }

    /// The error that ends the call, with what helps the person fix it.
    fn explain(&self, error: LlmError) -> LlmError {
        error
    }
}

/// The retry and time-limit settings of a call.
#[derive(Debug, Clone)]
pub(crate) struct CallSettings {
    pub(crate) kind: ProviderKind,
    pub(crate) retry: RetryPolicy,
    /// From the start of an attempt to the first byte of its body.
    pub(crate) first_byte_timeout: Duration,
    /// Between two chunks of a body.
    pub(crate) idle_timeout: Duration,
    /// The whole call, retries and their waits included.
    pub(crate) total_timeout: Duration,
    /// How often a wait for the first byte is announced.
    pub(crate) notice_interval: Duration,
}

impl CallSettings {
    /// The settings for calls of `kind` to `url`.
    pub(crate) fn new(
        kind: ProviderKind,
        retry: RetryPolicy,
        network: &NetworkConfig,
        url: &str,
    ) -> Self {
        Self {
            kind,
            retry,
            first_byte_timeout: network.first_byte_timeout_for(url),
            idle_timeout: network.stream_idle_timeout,
            total_timeout: network.request_timeout,
            notice_interval: network.waiting_notice_interval,
        }
    }
}

enum Phase {
    /// An attempt is to start.
    Open,
    /// Waiting before a retry.
    Wait(Duration),
    /// The request is out; no byte of the response body yet.
    Opening {
        request: BoxFuture<'static, Result<ByteStream, LlmError>>,
    },
    Read {
        body: ByteStream,
        decoder: Box<StreamDecoder>,
        /// Whether a byte of the body has come (before it, the first-byte limit applies).
        started: bool,
    },
    Done,
}

struct Call {
    opener: Arc<dyn Opener>,
    settings: CallSettings,
    retries: u32,
    /// Whether the server answered a streamed request with an empty body: every later
    /// attempt of the call is then sent without streaming.
    unstreamed: bool,
    pending: VecDeque<StreamEvent>,
    scratch: Vec<StreamEvent>,
    phase: Phase,
    /// When the call must be over.
    deadline: Instant,
    /// When the current attempt started.
    attempt_started: Instant,
    /// When the next "still waiting" notice is due.
    next_notice: Instant,
}

/// Runs a call with retries, as the stream a [`crate::Provider`] returns.
pub(crate) fn call_stream(opener: Arc<dyn Opener>, settings: CallSettings) -> EventStream {
    let now = Instant::now();
    let call = Call {
        opener,
        deadline: now + settings.total_timeout,
        settings,
        retries: 0,
        unstreamed: false,
        pending: VecDeque::new(),
        scratch: Vec::new(),
        phase: Phase::Open,
        attempt_started: now,
        next_notice: now,
    };
    Box::pin(futures::stream::unfold(call, |mut call| async move {
        let item = call.next().await?;
        Some((item, call))
    }))
}

/// What a wait for the server ended with.
enum Waited<T> {
    Ready(T),
    /// A notice is due; the wait goes on.
    Notice,
    TimedOut(LlmError),
}

impl Call {
    async fn next(&mut self) -> Option<Result<StreamEvent, LlmError>> {
        loop {
            if let Some(event) = self.pending.pop_front() {
                return Some(Ok(event));
            }
            if let Phase::Done = self.phase {
                return None;
            }
            if let Err(error) = self.step().await
                && let Some(end) = self.fail(error)
            {
                return Some(end);
            }
        }
    }

    /// Advances the call by one wait, one connection, one notice or one chunk of body.
    async fn step(&mut self) -> Result<(), LlmError> {
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Done => Ok(()),
            Phase::Wait(wait) => {
                tokio::time::sleep(wait).await;
                self.phase = Phase::Open;
                Ok(())
            }
            Phase::Open => {
                let now = Instant::now();
                self.attempt_started = now;
                self.next_notice = now + self.settings.notice_interval;
                tracing::debug!(attempt = self.retries + 1, "request sent");
                // Once streaming has been answered with silence, a retry asks unstreamed again:
                // llama-cpp-python may break the connection the unstreamed answer came on, and
                // a streamed retry would only meet the same silence.
                let unstreamed = self.unstreamed.then(|| self.opener.open_unstreamed());
                self.phase = Phase::Opening {
                    request: unstreamed.flatten().unwrap_or_else(|| self.opener.open()),
                };
                Ok(())
            }
            Phase::Opening { mut request } => match self.first_byte(&mut request).await {
                Waited::Ready(body) => {
                    tracing::debug!(
                        elapsed = ?self.attempt_started.elapsed(),
                        ok = body.is_ok(),
                        "response headers"
                    );
                    self.phase = Phase::Read {
                        body: body?,
                        decoder: Box::new(StreamDecoder::new(self.settings.kind)),
                        started: false,
                    };
                    Ok(())
                }
                Waited::Notice => {
                    self.phase = Phase::Opening { request };
                    Ok(())
                }
                Waited::TimedOut(error) => Err(error),
            },
            Phase::Read {
                mut body,
                mut decoder,
                started,
            } => {
                let chunk = if started {
                    self.next_chunk(&mut body).await?
                } else {
                    match self.first_byte(body.next()).await {
                        Waited::Ready(chunk) => {
                            tracing::debug!(
                                elapsed = ?self.attempt_started.elapsed(),
                                "first byte"
                            );
                            chunk
                        }
                        Waited::Notice => {
                            self.phase = Phase::Read {
                                body,
                                decoder,
                                started,
                            };
                            return Ok(());
                        }
                        Waited::TimedOut(error) => return Err(error),
                    }
                };
                match chunk {
                    Some(bytes) => {
                        decoder.feed(&bytes?, &mut self.scratch)?;
                        if decoder.is_complete() {
                            decoder.finish(&mut self.scratch)?;
                            drain_ready(&mut body);
                        } else {
                            self.phase = Phase::Read {
                                body,
                                decoder,
                                started: true,
                            };
                        }
                    }
                    None if !decoder.has_body() && !self.unstreamed => {
                        // llama-cpp-python answers a streamed request it cannot take (a prompt
                        // too long) with 200 and nothing: the same request unstreamed gets the
                        // real error, once, rather than a retry of the same silence.
                        self.unstreamed = true;
                        match self.opener.open_unstreamed() {
                            Some(request) => {
                                tracing::info!(
                                    "empty streamed reply; asking again without streaming"
                                );
                                self.phase = Phase::Opening { request };
                            }
                            None => decoder.finish(&mut self.scratch)?,
                        }
                    }
                    None => decoder.finish(&mut self.scratch)?,
                }
                if matches!(self.phase, Phase::Done) {
                    tracing::debug!(elapsed = ?self.attempt_started.elapsed(), "response complete");
                }
                self.pending.extend(self.scratch.drain(..));
                Ok(())
            }
        }
    }

    /// Waits for `future` within the first-byte limit, stopping when a notice is due (and
    /// queueing it). A dropped future is never lost: callers pass a borrowed one.
    async fn first_byte<F: Future + Unpin>(&mut self, future: F) -> Waited<F::Output> {
        let limit = self.attempt_started + self.settings.first_byte_timeout;
        let wake = limit.min(self.deadline).min(self.next_notice);
        match tokio::time::timeout_at(wake, future).await {
            Ok(output) => Waited::Ready(output),
            Err(_) => {
                let now = Instant::now();
                if now >= self.deadline {
                    Waited::TimedOut(self.over_total())
                } else if now >= limit {
                    Waited::TimedOut(LlmError::Timeout(format!(
                        "no response within {} (first_byte_timeout_secs)",
                        secs(self.settings.first_byte_timeout)
                    )))
                } else {
                    self.pending.push_back(StreamEvent::Waiting {
                        elapsed: now - self.attempt_started,
                    });
                    self.next_notice += self.settings.notice_interval;
                    Waited::Notice
                }
            }
        }
    }

    /// The next chunk of a body already flowing, within the idle and total limits.
    async fn next_chunk(
        &mut self,
        body: &mut ByteStream,
    ) -> Result<Option<Result<Bytes, LlmError>>, LlmError> {
        let idle = Instant::now() + self.settings.idle_timeout;
        match tokio::time::timeout_at(idle.min(self.deadline), body.next()).await {
            Ok(chunk) => Ok(chunk),
            Err(_) if Instant::now() >= self.deadline => Err(self.over_total()),
            Err(_) => Err(LlmError::Timeout(format!(
                "the server sent nothing for {} in the middle of the response \
                 (stream_idle_timeout_secs)",
                secs(self.settings.idle_timeout)
            ))),
        }
    }

    fn over_total(&self) -> LlmError {
        LlmError::Timeout(format!(
            "the model call took more than {} in all (request_timeout_secs)",
            secs(self.settings.total_timeout)
        ))
    }

    /// Handles a failed attempt: `None` when a retry is scheduled (its event queued),
    /// otherwise the error to end the stream with.
    fn fail(&mut self, error: LlmError) -> Option<Result<StreamEvent, LlmError>> {
        self.scratch.clear();
        self.pending.clear();
        self.retries += 1;
        let wait = self
            .settings
            .retry
            .delay_for(self.retries, &error)
            // A retry that could not finish before the whole call's limit is not started.
            .filter(|wait| Instant::now() + *wait < self.deadline);
        match wait {
            Some(wait) => {
                tracing::warn!(retry = self.retries, ?wait, %error, "model call failed; retrying");
                self.pending.push_back(StreamEvent::Retry {
                    attempt: self.retries,
                    wait,
                    reason: error.summary(),
                });
                self.phase = Phase::Wait(wait);
                None
            }
            None => {
                self.phase = Phase::Done;
                Some(Err(self.opener.explain(error)))
            }
        }
    }
}

/// A duration for a message: whole seconds when it is whole, else with decimals.
fn secs(duration: Duration) -> String {
    if duration.subsec_nanos() == 0 {
        format!("{} s", duration.as_secs())
    } else {
        format!("{} s", duration.as_secs_f64())
    }
}

/// Reads what is left of a finished body (the HTTP/1.1 chunk terminator, typically) as far
/// as it has already arrived, without waiting: a connection whose body was read to the end
/// goes back to the pool, so the next call skips the TCP and TLS handshakes.
fn drain_ready(body: &mut ByteStream) {
    const DRAIN_MAX_CHUNKS: usize = 4;
    for _ in 0..DRAIN_MAX_CHUNKS {
        match body.next().now_or_never() {
            Some(Some(Ok(_))) => {}
            Some(None | Some(Err(_))) | None => break,
        }
    }
}
