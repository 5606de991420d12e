//! rein's machine tools: the [`Tool`] trait, the context tools run in, and the built-in
//! file and shell tools.

pub mod bash;
pub mod context;
pub mod tool;

mod args;
mod atomic;
mod beneath;
mod blocking;
mod budget;
mod diff;
pub mod display;
pub mod edit;
pub mod glob;
pub mod grep;
pub mod image;
pub mod mask;
mod offload;
pub mod path_glob;
pub mod paths;
pub mod read_file;
mod registry;
pub mod sandbox;
mod schema;
mod stamp;
mod text_style;
mod walk;
pub mod write_file;

pub use async_trait::async_trait;
pub use blocking::warm_threads;
pub use budget::{apply_output_budget, saved_output_path};
pub use context::{
    CallScope, ClientFiles, FileStamp, Progress, ProgressSink, ReadGuard, ToolConfig, ToolContext,
};
pub use display::{ContentId, Display, FileChange, HostPort, Preview};
pub use image::ImageData;
pub use mask::{MaskStream, OutputMask, SharedMask};
pub use path_glob::PathGlob;
pub use registry::{ToolInfo, ToolRegistry};
pub use schema::parameters_schema;
pub use tool::{DynTool, PreparedCall, Tool, ToolError, ToolKind, ToolOutput};
