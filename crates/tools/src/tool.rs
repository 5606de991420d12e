//! The tool trait: typed arguments for the author, an erased form for the agent that checks
//! the arguments once, into the typed ones, and then previews or runs the call.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::ToolContext;
use crate::display::{Display, FileChange, Preview};

/// What a tool does to the machine; drives both permissions and concurrency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Only looks: may run concurrently with other read-only calls.
    ReadOnly,
    /// Changes files.
    Edit,
    /// Runs programs.
    Execute,
}

/// What a tool call gives back: the text the model sees, and for the person the facts to
/// show and the files it changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model sees.
    pub content: String,
    /// Whether the call failed (the model should correct itself).
    pub is_error: bool,
    /// What a renderer shows.
    pub display: Display,
    /// The files the call changed.
    pub changes: Vec<FileChange>,
    /// Pictures for the model (only when it takes images).
    pub images: Vec<crate::image::ImageData>,
}

impl ToolOutput {
    /// A successful result, shown as plain text.
    pub fn success(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
            display: Display::Text,
            changes: Vec::new(),
            images: Vec::new(),
        }
    }

    /// A failed call the model should see and correct.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
            display: Display::Text,
            changes: Vec::new(),
            images: Vec::new(),
        }
    }

    /// The same result, shown with `display`.
    pub fn with_display(mut self, display: Display) -> Self {
        self.display = display;
        self
    }

    /// The same result, with a picture for the model.
    pub fn with_image(mut self, image: crate::image::ImageData) -> Self {
        self.images.push(image);
        self
    }

    /// The same result, recording that it changed a file.
    pub fn with_change(mut self, change: FileChange) -> Self {
        self.changes.push(change);
        self
    }
}

/// Why a tool call did not produce a normal result.
#[derive(Debug, thiserror::Error)]
pub enum ToolError {
    /// A failure the model should see and correct: bad arguments, text not found, refused path.
    #[error("{0}")]
    Model(String),
    /// The call was cancelled; carries what the tool produced before it stopped.
    #[error("cancelled")]
    Cancelled {
        /// Output produced before cancellation, with a notice.
        partial: String,
    },
    /// rein itself failed (I/O on its own files): ends the turn.
    #[error("internal error: {0}")]
    Internal(String),
}

impl ToolError {
    /// A failure the model should see and correct.
    pub fn model(message: impl Into<String>) -> Self {
        ToolError::Model(message.into())
    }
}

/// A tool with typed arguments. Implement this; the agent uses it through [`DynTool`], which
/// every `Tool` gets for free: the JSON arguments are checked by deserialising them into
/// [`Tool::Args`] (a mistake becomes an error result naming the parameter), and the schema the
/// model sees is derived from the same type.
///
/// A complete tool:
///
/// ```
/// use rein_tools::{async_trait, Tool, ToolConfig, ToolContext, ToolError, ToolKind, ToolOutput};
/// use rein_tools::ToolRegistry;
///
/// /// Arguments of `word_count`; doc comments become the schema's descriptions.
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// #[serde(deny_unknown_fields)]
/// struct WordCountArgs {
///     /// The text to count the words of.
///     text: String,
/// }
///
/// struct WordCount;
///
/// #[async_trait]
/// impl Tool for WordCount {
///     type Args = WordCountArgs;
///     fn name(&self) -> &'static str { "word_count" }
///     fn description(&self) -> &'static str { "Counts the words in a text." }
///     fn kind(&self) -> ToolKind { ToolKind::ReadOnly }
///     async fn run(&self, args: WordCountArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
///         Ok(ToolOutput::success(args.text.split_whitespace().count().to_string()))
///     }
/// }
///
/// let mut registry = ToolRegistry::builtin();
/// registry.register(WordCount);
/// let ctx = ToolContext::new(ToolConfig::new("/nonexistent/ws", "/nonexistent/offload"));
/// let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
/// let tool = registry.get("word_count").unwrap();
/// let call = tool.clone().prepare(&serde_json::json!({"text": "one two three"})).unwrap();
/// let out = rt.block_on(call.run(&ctx)).unwrap();
/// assert_eq!(out, ToolOutput::success("3"));
/// let bad = tool.clone().prepare(&serde_json::json!({"txt": "x"})).err().unwrap();
/// assert!(bad.contains("unknown parameter `txt`"));
/// ```
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The arguments, deserialised from the model's JSON; their schema is what the model sees.
    /// Mark the struct `#[serde(deny_unknown_fields)]` so invented parameters are refused.
    type Args: DeserializeOwned + JsonSchema + Send + Sync + 'static;
    /// The name the model calls the tool by.
    fn name(&self) -> &'static str;
    /// What the tool does, for the model (built once per agent, so it may list what the
    /// agent was set up with).
    fn description(&self) -> &str;
    /// What kind of effect the tool has.
    fn kind(&self) -> ToolKind;
    /// Runs the tool.
    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;

    /// What the call would do, for the person to see before approving it; `None` shows the
    /// arguments. Must not change anything.
    async fn preview(&self, _args: &Self::Args, _ctx: &ToolContext) -> Option<Preview> {
        None
    }

    /// The error the call would certainly fail with, found without changing anything (an
    /// edit of a file never read): the person is not asked about a call that can only fail.
    async fn doomed(&self, _args: &Self::Args, _ctx: &ToolContext) -> Option<String> {
        None
    }
}

/// The erased form of a [`Tool`], as the agent uses it: JSON arguments checked once into
/// the typed ones ([`DynTool::prepare`]), then previewed or run.
pub trait DynTool: Send + Sync {
    /// The name the model calls the tool by (an MCP server's tools are named at run time).
    fn name(&self) -> &str;
    /// What the tool does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of the parameters object. Built on each call: [`crate::ToolRegistry`]
    /// builds it once per tool and keeps it.
    fn parameters(&self) -> std::sync::Arc<serde_json::Value>;
    /// What kind of effect the tool has.
    fn kind(&self) -> ToolKind;
    /// Whether what it does stays inside rein's OS sandbox when one is enforced: rein's own
    /// tools do; an MCP server's run in their server, and do only when it runs sandboxed.
    fn confined(&self) -> bool {
        true
    }
    /// Checks the arguments, giving the call ready to preview or run; the error is the
    /// message for the model.
    fn prepare(self: Arc<Self>, args: &serde_json::Value) -> Result<Box<dyn PreparedCall>, String>;
}

/// A call whose arguments passed the check.
#[async_trait]
pub trait PreparedCall: Send + Sync {
    /// What the call would do (see [`Tool::preview`]).
    async fn preview(&self, ctx: &ToolContext) -> Option<Preview>;
    /// The error the call would certainly fail with (see [`Tool::doomed`]).
    async fn doomed(&self, _ctx: &ToolContext) -> Option<String> {
        None
    }
    /// Runs the call.
    async fn run(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

impl<T: Tool> DynTool for T {
    fn name(&self) -> &str {
        Tool::name(self)
    }

    fn description(&self) -> &str {
        Tool::description(self)
    }

    fn parameters(&self) -> std::sync::Arc<serde_json::Value> {
        crate::schema::parameters_schema::<T::Args>()
    }

    fn kind(&self) -> ToolKind {
        Tool::kind(self)
    }

    fn prepare(self: Arc<Self>, args: &serde_json::Value) -> Result<Box<dyn PreparedCall>, String> {
        let args = crate::args::parse_args::<T::Args>(Tool::name(&*self), args)?;
        Ok(Box::new(Prepared { tool: self, args }))
    }
}

/// A typed tool and its checked arguments.
struct Prepared<T: Tool> {
    tool: Arc<T>,
    args: T::Args,
}

#[async_trait]
impl<T: Tool> PreparedCall for Prepared<T> {
    async fn preview(&self, ctx: &ToolContext) -> Option<Preview> {
        self.tool.preview(&self.args, ctx).await
    }

    async fn doomed(&self, ctx: &ToolContext) -> Option<String> {
        self.tool.doomed(&self.args, ctx).await
    }

    async fn run(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Prepared { tool, args } = *self;
        tool.run(args, ctx).await
    }
}
