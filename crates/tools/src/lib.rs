//! rein's machine tools: the [`Tool`] trait, the context tools run in, and the built-in
//! file and shell tools.

pub mod context;
pub mod tool;

pub use context::{FileStamp, ToolConfig, ToolContext};
pub use tool::{DynTool, Tool, ToolError, ToolKind, ToolOutput};
