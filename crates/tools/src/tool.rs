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

/// A tool with typed arguments. Implement this; the agent uses it through [`DynTool`].
#[async_trait]
pub trait Tool: Send + Sync + 'static {
    /// The arguments, deserialised from the model's JSON; their schema is what the model sees.
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
    /// JSON Schema of the parameters object.
    fn parameters(&self) -> serde_json::Value;
    /// What kind of effect the tool has.
    fn kind(&self) -> ToolKind;
    /// Validates the arguments and runs the tool.
    async fn call(&self, args: serde_json::Value, ctx: &ToolContext) -> Result<ToolOutput, ToolError>;
}
