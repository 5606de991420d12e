//! One model call as a stream of events: open, decode, and on a transient failure announce a
//! [`StreamEvent::Retry`], wait, and run the whole call again.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use futures::{FutureExt, Stream, StreamExt};

use crate::{EventStream, LlmError, ProviderKind, RetryPolicy, StreamDecoder, StreamEvent};

/// A response body as it arrives.
pub(crate) type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes, LlmError>> + Send>>;

/// Something that can start one attempt of a call: send the request, hand back the body.
pub(crate) trait Opener: Send + Sync + 'static {
    /// Sends the request once.
    fn open(&self) -> BoxFuture<'static, Result<ByteStream, LlmError>>;

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
    pub(crate) idle_timeout: Duration,
}

enum Phase {
    Open,
    Wait(Duration),
    Read {
        body: ByteStream,
        decoder: Box<StreamDecoder>,
    },
    Done,
}

struct Call {
    opener: Arc<dyn Opener>,
    settings: CallSettings,
    retries: u32,
    pending: VecDeque<StreamEvent>,
    scratch: Vec<StreamEvent>,
    phase: Phase,
}

/// Runs a call with retries, as the stream a [`crate::Provider`] returns.
pub(crate) fn call_stream(opener: Arc<dyn Opener>, settings: CallSettings) -> EventStream {
    let call = Call {
        opener,
        settings,
        retries: 0,
        pending: VecDeque::new(),
        scratch: Vec::new(),
        phase: Phase::Open,
    };
    Box::pin(futures::stream::unfold(call, |mut call| async move {
        let item = call.next().await?;
        Some((item, call))
    }))
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

    /// Advances the call by one wait, one connection or one chunk of body.
    async fn step(&mut self) -> Result<(), LlmError> {
        let idle = self.settings.idle_timeout;
        match std::mem::replace(&mut self.phase, Phase::Done) {
            Phase::Done => Ok(()),
            Phase::Wait(wait) => {
                tokio::time::sleep(wait).await;
                self.phase = Phase::Open;
                Ok(())
            }
            Phase::Open => {
                // The HTTP layer has its own limits; this one also covers other openers.
                let body = tokio::time::timeout(idle, self.opener.open())
                    .await
                    .map_err(|_| silence(idle))??;
                self.phase = Phase::Read {
                    body,
                    decoder: Box::new(StreamDecoder::new(self.settings.kind)),
                };
                Ok(())
            }
            Phase::Read {
                mut body,
                mut decoder,
            } => {
                let chunk = tokio::time::timeout(idle, body.next())
                    .await
                    .map_err(|_| silence(idle))?;
                match chunk {
                    Some(bytes) => {
                        decoder.feed(&bytes?, &mut self.scratch)?;
                        if decoder.is_complete() {
                            decoder.finish(&mut self.scratch)?;
                            drain_ready(&mut body);
                        } else {
                            self.phase = Phase::Read { body, decoder };
                        }
                    }
                    None => decoder.finish(&mut self.scratch)?,
                }
                self.pending.extend(self.scratch.drain(..));
                Ok(())
            }
        }
    }

    /// Handles a failed attempt: `None` when a retry is scheduled (its event queued),
    /// otherwise the error to end the stream with.
    fn fail(&mut self, error: LlmError) -> Option<Result<StreamEvent, LlmError>> {
        self.scratch.clear();
        self.pending.clear();
        self.retries += 1;
        match self.settings.retry.delay_for(self.retries, &error) {
            Some(wait) => {
                tracing::warn!(retry = self.retries, ?wait, %error, "model call failed; retrying");
                self.pending.push_back(StreamEvent::Retry {
                    attempt: self.retries,
                    wait,
                    reason: error.to_string(),
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

fn silence(idle: Duration) -> LlmError {
    LlmError::Timeout(format!(
        "the server sent nothing for {} s",
        idle.as_secs_f64()
    ))
}
