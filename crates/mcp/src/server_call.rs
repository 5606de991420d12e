//! A call to a server's tool: through the live connection (or one from a restart when the
//! server died), within the call timeout, its progress routed to the caller, and cancellable
//! (the server is told).

use std::time::Duration;

use rmcp::RoleClient;
use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, JsonObject, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, ServiceError};
use tokio_util::sync::CancellationToken;

use super::{CallFailure, RESTARTS, Server};
use crate::connect;
use crate::status::ServerState;
use rein_tools::ProgressSink;

/// How long telling a server that a call is cancelled may take.
const CANCEL_NOTICE_LIMIT: Duration = Duration::from_secs(1);

/// Sends `notifications/cancelled` for request `id`, and waits until it is sent: rein may be
/// about to close the connection, which must not overtake it.
async fn tell_cancelled(peer: &Peer<RoleClient>, id: RequestId, reason: &str) {
    let notice = CancelledNotificationParam::new(Some(id), Some(reason.to_owned()));
    let _ = tokio::time::timeout(CANCEL_NOTICE_LIMIT, peer.notify_cancelled(notice)).await;
}

/// A call's progress route, removed when the call ends however it ends.
struct ProgressRoute {
    routes: crate::connect::ProgressRoutes,
    token: rmcp::model::ProgressToken,
}

impl Drop for ProgressRoute {
    fn drop(&mut self) {
        self.routes.lock().remove(&self.token);
    }
}

impl Server {
    /// Calls `tool` with `arguments`, within the server's call timeout; `cancel` stops the
    /// call (the server is told, with a cancellation notification).
    pub(crate) async fn call(
        &self,
        tool: &str,
        arguments: JsonObject,
        cancel: &CancellationToken,
        progress: Option<ProgressSink>,
    ) -> Result<CallToolResult, CallFailure> {
        let peer = self.peer_for_call(cancel).await?;
        let name = &self.config.name;
        let params = CallToolRequestParams::new(tool.to_owned()).with_arguments(arguments);
        let (idle, most) = (self.config.call_timeout, self.config.call_max_timeout);
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
        // Progress from the server resets the idle limit; the hard maximum holds regardless.
        let mut options = PeerRequestOptions::with_timeout(idle);
        options.reset_timeout_on_progress = true;
        options.max_total_timeout = Some(most.max(idle));
        let outcome = match peer.send_request_with_option(request, options).await {
            Ok(handle) => {
                let id = handle.id.clone();
                let route = progress.map(|sink| {
                    let token = handle.progress_token.clone();
                    self.listener.progress.lock().insert(token.clone(), sink);
                    ProgressRoute {
                        routes: self.listener.progress.clone(),
                        token,
                    }
                });
                let answer = tokio::select! {
                    biased;
                    () = cancel.cancelled() => {
                        tell_cancelled(&peer, id, "the person interrupted the call").await;
                        return Err(CallFailure::Cancelled);
                    }
                    answer = handle.await_response() => answer,
                };
                drop(route);
                answer
            }
            Err(error) => Err(error),
        };
        let outcome = match outcome {
            // rmcp has told the server the call is cancelled.
            Err(ServiceError::Timeout { timeout }) => Err(timeout),
            other => Ok(other),
        };
        let outcome = outcome.map(|answer| {
            answer.and_then(|result| match result {
                ServerResult::CallToolResult(result) => Ok(result),
                // Some servers answer a call that has nothing to say with `{}`.
                ServerResult::EmptyResult(_) => Ok(CallToolResult::success(Vec::new())),
                _ => Err(ServiceError::UnexpectedResponse),
            })
        });
        match outcome {
            Ok(Ok(result)) => Ok(result),
            Err(limit) if limit >= most.max(idle) && most > idle => {
                Err(CallFailure::Message(format!(
                    "MCP server `{name}` did not finish this call within {} s (its \
                     `call_max_timeout`), though it reported progress; the call was cancelled. \
                     Try something smaller, or go on without it.",
                    limit.as_secs_f64()
                )))
            }
            Err(limit) => Err(CallFailure::Message(format!(
                "MCP server `{name}` did not answer this call within {} s (its `call_timeout`, \
                 counted from its last progress report); the call was cancelled. Try something \
                 smaller, or go on without it.",
                limit.as_secs_f64()
            ))),
            Ok(Err(ServiceError::McpError(error))) => Err(CallFailure::Message(format!(
                "MCP server `{name}` refused the call: {}",
                error.message
            ))),
            Ok(Err(error)) if self.died() => {
                let restart = if self.lock().restarts < RESTARTS {
                    "rein will start it again for the next call"
                } else {
                    "it had been restarted already, so its tools stay unavailable for this session"
                };
                Err(CallFailure::Message(self.with_log_hint(format!(
                    "MCP server `{name}` stopped during this call ({}); {restart}.",
                    connect::without_transport_name(error.to_string())
                ))))
            }
            Ok(Err(error)) => Err(CallFailure::Message(format!(
                "The call to MCP server `{name}` failed: {}",
                connect::without_transport_name(error.to_string())
            ))),
        }
    }

    /// The peer for a request other than a tool call (a resource, a prompt): a failure as
    /// the message a person reads.
    pub(super) async fn peer_for_request(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Peer<RoleClient>, String> {
        self.peer_for_call(cancel)
            .await
            .map_err(|failure| match failure {
                CallFailure::Message(message) => message,
                CallFailure::Cancelled => "cancelled".to_owned(),
            })
    }

    /// A peer to call through: the live one, or one from a restart when the server died.
    pub(super) async fn peer_for_call(
        &self,
        cancel: &CancellationToken,
    ) -> Result<Peer<RoleClient>, CallFailure> {
        if let Some(peer) = self.peer() {
            return Ok(peer);
        }
        self.died();
        let name = &self.config.name;
        let state = self.lock().state.clone();
        match state {
            ServerState::Ready => {}
            ServerState::Starting | ServerState::TimedOut => {
                // Still starting: wait for it within its startup timeout.
                let mut watch = self.watch();
                let wait =
                    watch.wait_for(|s| !matches!(s, ServerState::Starting | ServerState::TimedOut));
                tokio::select! {
                    () = cancel.cancelled() => return Err(CallFailure::Cancelled),
                    _ = tokio::time::timeout(self.config.startup_timeout, wait) => {}
                }
            }
            ServerState::Exited => {
                self.lock().restarts += 1;
                tokio::select! {
                    () = cancel.cancelled() => return Err(CallFailure::Cancelled),
                    () = self.restart() => {}
                }
            }
            ServerState::Failed | ServerState::NeedsLogin => {}
        }
        self.peer().ok_or_else(|| {
            let error = self
                .lock()
                .last_error
                .clone()
                .unwrap_or_else(|| "it is not running".to_owned());
            CallFailure::Message(format!(
                "MCP server `{name}` is not available: {error}. Its tools cannot be used in this \
                 session; go on without them."
            ))
        })
    }

    /// Reads resource `uri` as text (binary contents are described, not given), within the
    /// server's call timeout.
    pub(crate) async fn read_resource(
        &self,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let name = &self.config.name;
        let peer = self.peer_for_request(cancel).await?;
        let params = rmcp::model::ReadResourceRequestParams::new(uri.to_owned());
        let read = tokio::select! {
            () = cancel.cancelled() => return Err("cancelled".to_owned()),
            read = tokio::time::timeout(self.config.call_timeout, peer.read_resource(params)) => read,
        };
        let result = match read {
            Ok(Ok(result)) => result,
            Ok(Err(ServiceError::McpError(error))) => {
                return Err(format!("MCP server `{name}` refused: {}", error.message));
            }
            Ok(Err(error)) => {
                return Err(format!(
                    "reading it from MCP server `{name}` failed: {}",
                    connect::without_transport_name(error.to_string())
                ));
            }
            Err(_) => {
                return Err(format!(
                    "MCP server `{name}` did not answer within {} s",
                    self.config.call_timeout.as_secs_f64()
                ));
            }
        };
        let parts: Vec<String> = result
            .contents
            .into_iter()
            .map(|content| match content {
                rmcp::model::ResourceContents::TextResourceContents { text, .. } => text,
                rmcp::model::ResourceContents::BlobResourceContents {
                    uri,
                    mime_type,
                    blob,
                    ..
                } => format!(
                    "[binary resource {uri}: {}, {} bytes base64; not included]",
                    mime_type.as_deref().unwrap_or("unknown type"),
                    blob.len()
                ),
                _ => "[a resource of a kind rein does not read]".to_owned(),
            })
            .collect();
        Ok(parts.join("\n"))
    }
}
