//! One client connection: read a request, capture it, answer it, and again while kept alive.

use std::{sync::Arc, time::Instant};

use tokio::{
    io::{AsyncReadExt, AsyncWriteExt, BufReader},
    net::TcpStream,
};

use crate::{
    CapturedRequest,
    capture::unix_nanos_now,
    http::{self, RawRequest, ReadError},
    render::{self, Plan},
    respond::{Completion, KeepAlive, Written, send, write_body, write_stream},
    server::Shared,
};

pub(crate) async fn serve_connection(stream: TcpStream, connection: u64, shared: Arc<Shared>) {
    // Each event must leave at once, not wait for Nagle to fill a segment.
    let _ = stream.set_nodelay(true);
    let (reader, mut writer) = stream.into_split();
    let mut reader = BufReader::new(reader);
    loop {
        let raw = match http::read_request(&mut reader, &mut writer).await {
            Ok(Some(raw)) => raw,
            Ok(None) | Err(ReadError::Io(_)) => return,
            Err(ReadError::Bad { status, message }) => {
                let body = serde_json::json!({
                    "error": { "message": message, "type": "invalid_request_error" },
                });
                let body = body.to_string();
                let headers = [
                    ("content-type".to_owned(), "application/json".to_owned()),
                    ("content-length".to_owned(), body.len().to_string()),
                    ("connection".to_owned(), "close".to_owned()),
                ];
                let mut response = http::response_head(status, &headers);
                response.extend_from_slice(body.as_bytes());
                // The connection closes either way; a client that left needs no answer.
                let _ = send(&mut writer, &response).await;
                let _ = writer.shutdown().await;
                return;
            }
        };
        let keep_alive = if raw.keep_alive {
            KeepAlive::Keep
        } else {
            KeepAlive::Close
        };
        let (request, parse_error) = capture(raw, connection);
        let route = shared
            .routes
            .iter()
            .find(|route| route.method == request.method && route.path == request.path);
        let metadata = route.is_some() || request.method != "POST";
        let log = if metadata {
            &shared.metadata_log
        } else {
            &shared.log
        };
        let mut request = log.record(request);
        let plan = match (route, parse_error) {
            (Some(route), _) => render::plan(route.reply.clone(), &request),
            (None, _) if metadata => render::error_plan(
                &request,
                404,
                "not_found_error",
                &format!("no route for {} {}", request.method, request.path),
            ),
            (None, Some(error)) => render::error_plan(
                &request,
                400,
                "invalid_request_error",
                &format!("the request body is not valid JSON: {error}"),
            ),
            (None, None) => {
                let reply = shared.script.lock().next_reply();
                match reply {
                    Some(reply) => render::plan(reply, &request),
                    None => render::exhausted_plan(&request),
                }
            }
        };
        let mut completion = Completion {
            log,
            request: &mut request,
        };
        let written = match plan {
            Plan::Body(body) => write_body(&mut writer, body, keep_alive, &mut completion).await,
            Plan::Stream(stream) => {
                write_stream(&mut writer, stream, keep_alive, &mut completion).await
            }
            Plan::Silent => Written::Stalled,
        };
        match written {
            // Model calls only: metadata requests are kept apart here too.
            Written::Done | Written::Cut if !metadata => {
                if let Some(hook) = &shared.on_response {
                    hook(&request);
                }
            }
            Written::Done | Written::Cut => {
                if let Some(hook) = &shared.on_metadata {
                    hook(&request);
                }
            }
            Written::Stalled | Written::ClientGone => {}
        }
        match written {
            Written::Done if keep_alive == KeepAlive::Keep => {}
            Written::Done | Written::Cut | Written::ClientGone => {
                let _ = writer.shutdown().await;
                return;
            }
            Written::Stalled => {
                // Hold the connection open until the client gives up.
                let mut scratch = [0_u8; 1024];
                while matches!(reader.read(&mut scratch).await, Ok(read) if read > 0) {}
                return;
            }
        }
    }
}

/// The captured form of a raw request, and the JSON error if its body did not parse.
fn capture(raw: RawRequest, connection: u64) -> (CapturedRequest, Option<serde_json::Error>) {
    let (body, parse_error) = if raw.body.iter().all(u8::is_ascii_whitespace) {
        (serde_json::Value::Null, None)
    } else {
        match serde_json::from_slice(&raw.body) {
            Ok(body) => (body, None),
            Err(error) => (serde_json::Value::Null, Some(error)),
        }
    };
    let request = CapturedRequest {
        index: 0,
        connection,
        method: raw.method,
        path: http::target_path(&raw.target),
        target: raw.target,
        headers: raw.headers,
        body,
        raw_body: raw.body,
        received_at: Instant::now(),
        received_unix_nanos: unix_nanos_now(),
        responded_at: None,
        responded_unix_nanos: None,
    };
    (request, parse_error)
}
