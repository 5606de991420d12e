//! Whole-binary tests: the real `rein` in temp directories, rein-testkit as the model.

#![allow(clippy::unwrap_used, clippy::expect_used, reason = "test code")]

mod pty;
mod support;

mod background;
mod big_output;
mod checkpoint_crash;
mod checkpoint_repl;
mod checkpoints;
mod context;
mod dead_endpoint;
mod demo;
mod deny_modes;
mod endpoint_errors;
mod env;
mod eval;
mod eval_ray;
mod first_start;
mod fix_import;
mod gateways;
mod headless;
mod hooks;
mod interrupt;
mod killed;
mod local_servers;
mod log;
mod lose_nothing;
mod mcp;
mod mcp_auto;
mod mcp_config;
mod mcp_lifecycle;
mod mcp_npm;
mod orphans;
mod parallel;
mod permissions;
mod repl;
mod repl_round_two;
mod responses;
mod rounds;
mod sandbox;
mod sandbox_network;
mod sandbox_process;
mod sandbox_view;
mod secrets;
mod sessions;
mod skills;
mod subagents;
mod text_output;
mod text_tool_calls;
mod thinking;
mod todos;
mod tool_calls;
mod trust;
