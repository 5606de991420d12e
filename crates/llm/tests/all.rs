//! Integration tests of rein-llm against the rein-testkit mock server (and a few local
//! servers of its own): one test binary, one module per feature.

#![allow(
    clippy::unwrap_used,
    reason = "test setup that fails should fail the test, loudly"
)]

#[path = "all/support.rs"]
mod support;

#[path = "all/anthropic.rs"]
mod anthropic;
#[path = "all/network.rs"]
mod network;
#[path = "all/openai.rs"]
mod openai;
#[path = "all/prompt_cache.rs"]
mod prompt_cache;
#[path = "all/replay.rs"]
mod replay;
#[path = "all/retries.rs"]
mod retries;
#[path = "all/stream_options.rs"]
mod stream_options;
#[path = "all/timeouts.rs"]
mod timeouts;
#[path = "all/tls.rs"]
mod tls;
#[path = "all/window.rs"]
mod window;
