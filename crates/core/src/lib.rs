//! rein's agent: the loop, sessions, configuration and system prompt.

pub mod agent;
pub mod build;
pub mod checkpoint;
pub mod commands;
pub mod config;
pub mod context;
pub mod face;
pub mod frontmatter;
pub mod hooks;
pub mod interaction;
pub mod mcp;
pub mod mcp_edit;
mod network_gate;
pub mod permissions;
pub mod prompt;
mod sandboxing;
pub mod secrets;
pub mod session;
pub mod suggest;
pub mod tools;
pub mod trust;
