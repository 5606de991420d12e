//! rein's model layer: one provider-neutral conversation model, mapped to and from the
//! OpenAI Chat Completions and Anthropic Messages wire formats, streamed over SSE, with
//! classified errors, retries, usage accounting, pricing and offline replay.

pub mod error;
pub mod event;
pub mod message;
pub mod provider;

pub use error::LlmError;
pub use event::{StopReason, StreamEvent, Usage};
pub use message::{Message, Part, Role, ToolArguments, ToolCall, ToolResult};
pub use provider::{EventStream, Provider, Request, ToolSpec};
