//! The set of tools the model may call: their descriptions for the request, and one entry
//! point that looks a tool up, checks the arguments, runs it and applies the output budget.

use std::sync::Arc;

use crate::budget::apply_output_budget;
use crate::{DynTool, ToolContext, ToolError, ToolKind, ToolOutput};

/// How a tool presents itself to the model; `rein-llm` renders it into each wire format.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name the model calls the tool by.
    pub name: String,
    /// What the tool does.
    pub description: String,
    /// JSON Schema of the parameters object.
    pub parameters: serde_json::Value,
    /// What kind of effect the tool has.
    pub kind: ToolKind,
}

struct Entry {
    tool: Arc<dyn DynTool>,
    spec: ToolSpec,
}

/// The tools of one agent, in registration order (stable, so requests stay cache-friendly).
#[derive(Default)]
pub struct ToolRegistry {
    entries: Vec<Entry>,
}

impl std::fmt::Debug for ToolRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.entries.iter().map(|e| &e.spec.name))
            .finish()
    }
}

impl ToolRegistry {
    /// An empty registry.
    pub fn new() -> Self {
        ToolRegistry::default()
    }

    /// Every built-in tool: read_file, write_file, edit_file, glob, grep, bash.
    pub fn builtin() -> Self {
        let mut registry = ToolRegistry::new();
        registry.register(crate::read_file::ReadFile);
        registry.register(crate::write_file::WriteFile);
        registry.register(crate::edit::EditFile);
        registry.register(crate::glob::Glob);
        registry.register(crate::grep::Grep);
        registry.register(crate::bash::BashTool);
        registry
    }

    /// Adds a tool; one with the same name is replaced in place.
    pub fn register(&mut self, tool: impl DynTool + 'static) {
        self.register_arc(Arc::new(tool));
    }

    /// Adds a shared tool; one with the same name is replaced in place.
    pub fn register_arc(&mut self, tool: Arc<dyn DynTool>) {
        // The schema is built once here, not on every request.
        let spec = ToolSpec {
            name: tool.name().to_owned(),
            description: tool.description().to_owned(),
            parameters: tool.parameters(),
            kind: tool.kind(),
        };
        let entry = Entry { tool, spec };
        match self
            .entries
            .iter_mut()
            .find(|e| e.spec.name == entry.spec.name)
        {
            Some(existing) => *existing = entry,
            None => self.entries.push(entry),
        }
    }

    /// The tool called `name`.
    pub fn get(&self, name: &str) -> Option<&Arc<dyn DynTool>> {
        self.entries
            .iter()
            .find(|e| e.spec.name == name)
            .map(|e| &e.tool)
    }

    /// The descriptions of every tool, in registration order, for the request.
    pub fn specs(&self) -> Vec<ToolSpec> {
        self.entries.iter().map(|e| e.spec.clone()).collect()
    }

    /// The tools whose kind `offer` accepts, in the same order (plan mode offers only
    /// read-only ones).
    pub fn offered(&self, offer: impl Fn(ToolKind) -> bool) -> ToolRegistry {
        ToolRegistry {
            entries: self
                .entries
                .iter()
                .filter(|e| offer(e.spec.kind))
                .map(|e| Entry {
                    tool: Arc::clone(&e.tool),
                    spec: e.spec.clone(),
                })
                .collect(),
        }
    }

    /// The names of every tool, in registration order.
    pub fn names(&self) -> Vec<&str> {
        self.entries.iter().map(|e| e.spec.name.as_str()).collect()
    }

    /// Checks a call without running it (for hooks and permission prompts that come first).
    /// The error is the message for the model.
    pub fn validate(&self, name: &str, args: &serde_json::Value) -> Result<(), String> {
        match self.get(name) {
            Some(tool) => tool.validate(args),
            None => Err(self.unknown_tool_message(name)),
        }
    }

    /// Runs a call from the model's raw argument text. See [`ToolRegistry::call_value`].
    pub async fn call(
        &self,
        name: &str,
        args_json: &str,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        match crate::args::parse_arguments_json(args_json) {
            Ok(args) => self.call_value(name, args, ctx).await,
            Err(message) => {
                let message = match self.get(name) {
                    Some(_) => message,
                    None => format!("{} {message}", self.unknown_tool_message(name)),
                };
                Ok(ToolOutput::error(message))
            }
        }
    }

    /// Runs a call: an unknown tool or bad arguments become an error result naming the problem,
    /// the tool's own refusals become error results, and every result passes the output
    /// budget. `Err` is only [`ToolError::Cancelled`] (its partial output budgeted too) or
    /// [`ToolError::Internal`]: they end the turn.
    pub async fn call_value(
        &self,
        name: &str,
        args: serde_json::Value,
        ctx: &ToolContext,
    ) -> Result<ToolOutput, ToolError> {
        let Some(tool) = self.get(name) else {
            return Ok(ToolOutput::error(self.unknown_tool_message(name)));
        };
        let output = match tool.call(args, ctx).await {
            Ok(output) => output,
            Err(ToolError::Model(message)) => ToolOutput::error(message),
            Err(ToolError::Cancelled { partial }) => {
                let partial = apply_output_budget(partial, ctx.config(), name);
                return Err(ToolError::Cancelled { partial });
            }
            Err(err @ ToolError::Internal(_)) => return Err(err),
        };
        let content = apply_output_budget(output.content, ctx.config(), name);
        Ok(ToolOutput {
            content,
            is_error: output.is_error,
        })
    }

    fn unknown_tool_message(&self, name: &str) -> String {
        format!(
            "There is no tool named `{name}`. The tools are: {}.",
            self.names().join(", ")
        )
    }
}
