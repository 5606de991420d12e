//! Writing a planned response: delays, chunks, and the deliberate cuts and stalls.

use std::time::{Duration, Instant};

use tokio::io::{AsyncWrite, AsyncWriteExt};

use crate::{
    CapturedRequest,
    capture::{RequestLog, unix_nanos_now},
    http,
    render::{BodyPlan, StreamEnding, StreamPlan, Truncation},
};

/// How writing a response went.
pub(crate) enum Written {
    /// Completely; the connection may serve another request.
    Done,
    /// Cut on purpose: close the connection.
    Cut,
    /// Stalled on purpose: hold the connection until the client closes it.
    Stalled,
    /// The client closed the connection first.
    ClientGone,
}

/// Whether the connection stays open after a complete response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeepAlive {
    Keep,
    Close,
}

fn with_connection_header(
    mut headers: Vec<(String, String)>,
    keep_alive: KeepAlive,
) -> Vec<(String, String)> {
    match keep_alive {
        KeepAlive::Keep => {}
        KeepAlive::Close => headers.push(("connection".to_owned(), "close".to_owned())),
    }
    headers
}

/// Stamps a request's `responded_at` as its response's last bytes go out.
pub(crate) struct Completion<'a> {
    pub(crate) log: &'a RequestLog,
    pub(crate) request: &'a mut CapturedRequest,
}

impl Completion<'_> {
    /// Sends the last bytes of the response, stamping the request just before, so a client
    /// that has read the whole response never sees it unstamped.
    async fn send_last<W: AsyncWrite + Unpin>(
        &mut self,
        writer: &mut W,
        bytes: &[u8],
        written: Written,
    ) -> Written {
        self.log
            .set_responded(self.request, Some((Instant::now(), unix_nanos_now())));
        match send(writer, bytes).await {
            Ok(()) => written,
            Err(_) => {
                self.log.set_responded(self.request, None);
                Written::ClientGone
            }
        }
    }
}

/// Waits `delay`; no time at all for zero (a zero `sleep` still waits for the next timer
/// tick, about a millisecond, which would swamp every benchmark run against the mock).
async fn pause(delay: Duration) {
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
}

pub(crate) async fn send<W: AsyncWrite + Unpin>(
    writer: &mut W,
    bytes: &[u8],
) -> Result<(), std::io::Error> {
    writer.write_all(bytes).await?;
    writer.flush().await
}

pub(crate) async fn write_body<W: AsyncWrite + Unpin>(
    writer: &mut W,
    plan: BodyPlan,
    keep_alive: KeepAlive,
    completion: &mut Completion<'_>,
) -> Written {
    pause(plan.delay).await;
    let mut headers = plan.headers;
    if !http::has_header(&headers, "content-length") {
        headers.push(("content-length".to_owned(), plan.body.len().to_string()));
    }
    let headers = with_connection_header(headers, keep_alive);
    if send(writer, &http::response_head(plan.status, &headers))
        .await
        .is_err()
    {
        return Written::ClientGone;
    }
    let (sent, written) = match plan.truncation {
        Truncation::Whole => (plan.body.len(), Written::Done),
        Truncation::CutAfter(bytes) => (bytes.min(plan.body.len()), Written::Cut),
        Truncation::StallAfter(bytes) => (bytes.min(plan.body.len()), Written::Stalled),
    };
    match written {
        Written::Done | Written::Cut => {
            completion
                .send_last(writer, &plan.body[..sent], written)
                .await
        }
        Written::Stalled | Written::ClientGone => match send(writer, &plan.body[..sent]).await {
            Ok(()) => written,
            Err(_) => Written::ClientGone,
        },
    }
}

pub(crate) async fn write_stream<W: AsyncWrite + Unpin>(
    writer: &mut W,
    plan: StreamPlan,
    keep_alive: KeepAlive,
    completion: &mut Completion<'_>,
) -> Written {
    pause(plan.response_delay).await;
    let headers = with_connection_header(plan.headers, keep_alive);
    if send(writer, &http::response_head(200, &headers))
        .await
        .is_err()
    {
        return Written::ClientGone;
    }
    let last = plan.events.len();
    // Cuts and errors never go past the terminator; a stall may come after it.
    let before_terminator = last.saturating_sub(1);
    let stop_at = match &plan.ending {
        StreamEnding::Complete => None,
        StreamEnding::CutAfter(events) | StreamEnding::ErrorAfter { events, .. } => {
            Some((*events).min(before_terminator))
        }
        StreamEnding::StallAfter(events) => Some((*events).min(last)),
    };
    for position in 0..=last {
        if position > 0 && position < last {
            pause(plan.chunk_delay).await;
        }
        for malformed in plan
            .malformed
            .iter()
            .filter(|malformed| malformed.before_event.min(last) == position)
        {
            let line = format!("{}\n\n", malformed.line);
            if send(writer, &http::chunk(line.as_bytes())).await.is_err() {
                return Written::ClientGone;
            }
        }
        if stop_at == Some(position) {
            return match &plan.ending {
                StreamEnding::Complete => Written::Done,
                StreamEnding::CutAfter(_) => completion.send_last(writer, &[], Written::Cut).await,
                StreamEnding::StallAfter(_) => Written::Stalled,
                StreamEnding::ErrorAfter { event, .. } => {
                    let mut bytes = http::chunk(event.as_bytes());
                    bytes.extend_from_slice(http::LAST_CHUNK);
                    completion.send_last(writer, &bytes, Written::Done).await
                }
            };
        }
        let Some(event) = plan.events.get(position) else {
            break;
        };
        if send(writer, &http::chunk(event.as_bytes())).await.is_err() {
            return Written::ClientGone;
        }
    }
    completion
        .send_last(writer, http::LAST_CHUNK, Written::Done)
        .await
}
