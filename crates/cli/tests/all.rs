//! Whole-binary tests: the real `rein` in temp directories, rein-testkit as the model.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod support;

mod big_output;
mod context;
mod dead_endpoint;
mod demo;
mod endpoint_errors;
mod env;
mod fix_import;
mod gateways;
mod headless;
mod hooks;
mod interrupt;
mod lose_nothing;
mod mcp;
mod mcp_npm;
mod orphans;
mod parallel;
mod permissions;
mod rounds;
mod secrets;
mod sessions;
mod text_output;
mod thinking;
mod tool_calls;
mod trust;
