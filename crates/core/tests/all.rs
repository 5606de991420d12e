//! rein-core's integration tests: one binary, one module per feature.

// Test helpers outside `#[test]` functions unwrap too: a failed setup step fails the test.
#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod agent;
mod config;
mod context;
mod decisions;
mod hooks;
mod pipeline;
mod prompt;
mod session_repair;
mod sessions;
