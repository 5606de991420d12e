//! The tool trait: typed arguments for the author, an erased, validating form for the agent.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::de::DeserializeOwned;

use crate::ToolContext;

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

/// What a tool call gives back to the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model sees.
    pub content: String,
    /// Whether the call failed (the model should correct itself).
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn success(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failed call the model should see and correct.
    pub fn error(content: impl Into<String>) -> Self {
        ToolOutput {
            content: content.into(),
            is_error: true,
        }
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
/// let out = rt.block_on(registry.call("word_count", r#"{"text": "one two three"}"#, &ctx)).unwrap();
/// assert_eq!(out, ToolOutput::success("3"));
/// let bad = rt.block_on(registry.call("word_count", r#"{"txt": "x"}"#, &ctx)).unwrap();
/// assert!(bad.is_error && bad.content.contains("unknown parameter `txt`"));
/// ```
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The arguments, deserialised from the model's JSON; their schema is what the model sees.
    /// Mark the struct `#[serde(deny_unknown_fields)]` so invented parameters are refused.
    type Args: DeserializeOwned + JsonSchema + Send;
    /// The name the model calls the tool by.
    fn name(&self) -> &'static str;
    /// What the tool does, for the model.
    fn description(&self) -> &'static str;
    /// What kind of effect the tool has.
    fn kind(&self) -> ToolKind;
    /// Runs the tool.
    async fn run(&self, args: Self::Args, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}

/// The erased form of a [`Tool`]: JSON in, validated against the schema, result out.
#[async_trait]
pub trait DynTool: Send + Sync {
    /// The name the model calls the tool by.
    fn name(&self) -> &'static str;
    /// What the tool does, for the model.
    fn description(&self) -> &'static str;
    /// JSON Schema of the parameters object. Built on each call: [`crate::ToolRegistry`]
    /// builds it once per tool and keeps it.
    fn parameters(&self) -> serde_json::Value;
    /// What kind of effect the tool has.
    fn kind(&self) -> ToolKind;
    /// Checks the arguments without running the tool; the error is the message for the model.
    fn validate(&self, args: &serde_json::Value) -> Result<(), String>;
    /// Validates the arguments and runs the tool.
    async fn call(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError>;
}

#[async_trait]
impl<T: Tool> DynTool for T {
    fn name(&self) -> &'static str {
        Tool::name(self)
    }

    fn description(&self) -> &'static str {
        Tool::description(self)
    }

    fn parameters(&self) -> serde_json::Value {
        crate::schema::parameters_schema::<T::Args>()
    }

    fn kind(&self) -> ToolKind {
        Tool::kind(self)
    }

    fn validate(&self, args: &serde_json::Value) -> Result<(), String> {
        crate::args::parse_args::<T::Args>(Tool::name(self), args).map(drop)
    }

    async fn call(
        &self,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let args = crate::args::parse_args::<T::Args>(Tool::name(self), &args)
            .map_err(ToolError::Model)?;
        self.run(args, ctx).await
    }
}
