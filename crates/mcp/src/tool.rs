//! An MCP server's tool as one of rein's: its name prefixed, its schema cleaned, its kind
//! from the server's `readOnlyHint` (anything else may change things, so it asks).

use std::sync::Arc;

use rein_tools::{
    DynTool, PreparedCall, Preview, ToolContext, ToolError, ToolKind, ToolOutput, async_trait,
};
use rmcp::model::{JsonObject, Tool};
use serde_json::Value;

use crate::server::{CallFailure, Server};

/// One tool of one server.
pub(crate) struct McpTool {
    name: String,
    description: String,
    parameters: Arc<Value>,
    kind: ToolKind,
    /// Its name on the server.
    remote: String,
    server: Arc<Server>,
}

impl McpTool {
    pub(crate) fn new(name: String, tool: &Tool, server: Arc<Server>) -> Self {
        let read_only = tool
            .annotations
            .as_ref()
            .and_then(|a| a.read_only_hint)
            .unwrap_or(false);
        let description = tool
            .description
            .as_deref()
            .or(tool.title.as_deref())
            .map_or_else(
                || {
                    format!(
                        "Tool `{}` of MCP server `{}`.",
                        tool.name, server.config.name
                    )
                },
                str::to_owned,
            );
        McpTool {
            name,
            description,
            parameters: Arc::new(crate::schema::clean_schema(&tool.input_schema)),
            kind: if read_only {
                ToolKind::ReadOnly
            } else {
                ToolKind::Execute
            },
            remote: tool.name.to_string(),
            server,
        }
    }
}

impl DynTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }

    fn description(&self) -> &str {
        &self.description
    }

    fn parameters(&self) -> Arc<Value> {
        Arc::clone(&self.parameters)
    }

    fn kind(&self) -> ToolKind {
        self.kind
    }

    fn confined(&self) -> bool {
        self.server.confined()
    }

    fn prepare(self: Arc<Self>, args: &Value) -> Result<Box<dyn PreparedCall>, String> {
        // The server checks the arguments against its schema; rein only needs an object.
        let arguments = match args {
            Value::Object(map) => map.clone(),
            Value::Null => JsonObject::new(),
            other => {
                return Err(format!(
                    "The arguments for `{}` must be a JSON object, not {other}.",
                    self.name
                ));
            }
        };
        Ok(Box::new(McpCall {
            tool: self,
            arguments,
        }))
    }
}

/// A call with its arguments.
struct McpCall {
    tool: Arc<McpTool>,
    arguments: JsonObject,
}

#[async_trait]
impl PreparedCall for McpCall {
    async fn preview(&self, _ctx: &ToolContext) -> Option<Preview> {
        None
    }

    async fn run(self: Box<Self>, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let McpCall { tool, arguments } = *self;
        match tool
            .server
            .call(
                &tool.remote,
                arguments,
                ctx.cancel_token(),
                ctx.progress_sink(),
            )
            .await
        {
            Ok(result) => Ok(crate::content::tool_output(&result, ctx.config().vision)),
            Err(CallFailure::Message(message)) => Ok(ToolOutput::error(message)),
            Err(CallFailure::Cancelled) => Err(ToolError::Cancelled {
                partial: String::new(),
            }),
        }
    }
}
