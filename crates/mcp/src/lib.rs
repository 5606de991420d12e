//! rein's MCP client: the configured servers started in the background and their tools
//! offered to the model as `mcp__<server>__<tool>`. rmcp (the official SDK) speaks the
//! protocol; this crate decides when servers start and stop, how their tools are named and
//! described, and what a call that fails tells the model.

pub mod auth;
pub mod config;
mod connect;
mod content;
mod error;
mod hub;
pub mod naming;
mod process;
mod prompts;
mod schema;
mod server;
mod status;
mod tasks;
mod tool;
mod unreachable;

pub use config::{
    DEFAULT_CALL_MAX_TIMEOUT, DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT, ServerConfig,
    TransportConfig, expand_vars,
};
pub use error::McpError;
pub use hub::{McpHub, McpSetup, StartReport};
pub use prompts::{
    McpPrompt, PromptArgument, PromptContent, PromptMessage, PromptRole, PromptWatch,
};
pub use schema::clean_schema;
pub use status::{ServerState, ServerStatus, Transport};
