//! A scriptable mock model server for rein's tests and benchmarks.
//!
//! [`MockServer`] listens on 127.0.0.1 (a free port), on its own thread with its own tokio
//! runtime, so it works from plain `#[test]`s and `#[tokio::test]`s alike, and stops when
//! dropped. It serves the replies of a [`Script`] in order, one per request, and renders each
//! [`Turn`] in the wire format of the request's path — `/v1/chat/completions` as OpenAI
//! `chat.completion.chunk` SSE, `/v1/messages` as Anthropic events, `/v1/responses` as the
//! Responses API's `response.*` events — as real chunked SSE over
//! HTTP/1.1, or as one JSON body when the request did not ask for `"stream": true`. It can
//! also misbehave on purpose: HTTP errors with headers, streams cut or stalled after N events,
//! malformed lines, error events. Every request is captured for assertions.
//!
//! A request the server cannot parse as HTTP/1.1 gets a 400 and is neither captured nor
//! given a reply; one whose body is not JSON is captured and gets a 400 without using a reply.
//! When the script runs out, every further request gets 500 "script exhausted".
//!
//! Requests that are not model calls — those a route answers ([`MockOptions::route`], such as
//! llama.cpp's `GET /props` from [`MockOptions::context_window`]), and any other than POST —
//! use no reply of the script and are kept apart ([`MockServer::metadata_requests`]); an
//! unrouted one gets 404.
//!
//! ```
//! use rein_testkit::{MockServer, MockToolCall, MockUsage, Reply, Script, Turn};
//!
//! let server = MockServer::start(
//!     Script::new()
//!         .reply(Turn::text("Hello").chunks(["Hel", "lo"]).usage(MockUsage::new(10, 5).cached(3)))
//!         .reply(Turn::new().tool_call(
//!             MockToolCall::new("call_1", "read_file", r#"{"file_path":"a.txt"}"#).split_every(5),
//!         ))
//!         .reply(Reply::rate_limited(1)),
//! );
//! assert!(server.base_url().starts_with("http://127.0.0.1:"));
//! assert!(server.openai_base_url().ends_with("/v1"));
//! assert!(server.requests().is_empty());
//! ```
//!
//! The `rein-mock` binary serves a script written as JSON (see [`Script`]) for benchmarks and
//! manual runs.

mod anthropic;
mod capture;
mod connection;
mod duration_ms;
mod http;
pub mod mcp;
mod mcp_prompts;
pub mod oauth;
mod openai;
mod render;
mod respond;
mod responses;
mod script;
mod server;
mod tool_call;
mod turn;
mod usage;

use std::time::Duration;

pub use capture::{Capture, CapturedRequest, WireFormat};
pub use script::{ApiError, ApiErrorKind, DynamicReply, HttpReply, Reply, Script};
pub use server::{ListedModel, MockOptions, MockServer};
pub use tool_call::{ArgumentSplit, MockToolCall};
pub use turn::{
    DEFAULT_THINKING_SIGNATURE, Interruption, MalformedLine, MockStopReason, StreamError, Turn,
    UsageChunk,
};
pub use usage::MockUsage;

/// Why the mock server could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum MockError {
    /// The port could not be bound.
    #[error("could not listen on 127.0.0.1:{port}: {source}")]
    Bind {
        /// The port asked for (0 for any).
        port: u16,
        /// Why.
        source: std::io::Error,
    },
    /// The server's socket or runtime could not be set up.
    #[error("could not set up the mock server: {0}")]
    Runtime(std::io::Error),
    /// The server's thread could not be started.
    #[error("could not start the mock server's thread: {0}")]
    Thread(std::io::Error),
    /// A script file is not valid.
    #[error("invalid mock script: {0}")]
    Script(#[from] serde_json::Error),
    /// Fewer requests than awaited arrived in time.
    #[error("waited {waited:?} for {wanted} request(s) but {got} arrived")]
    WaitTimeout {
        /// How many requests were awaited.
        wanted: usize,
        /// How many had arrived.
        got: usize,
        /// How long the wait was.
        waited: Duration,
    },
}
