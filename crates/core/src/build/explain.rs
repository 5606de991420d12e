//! What the permission engine would decide for a call, without an agent (`rein
//! explain-permission`).

use rein_tools::ToolContext;

use crate::permissions::{CallView, ModePolicy, Rule, RuleError, Verdict};

use super::AgentBuilder;

/// Why a call could not be explained.
#[derive(Debug, thiserror::Error)]
pub enum ExplainError {
    /// The call, written as a rule, does not parse.
    #[error(transparent)]
    Rule(#[from] RuleError),
    /// The tool itself refuses the call before any permission check (a path it cannot
    /// resolve, say).
    #[error(transparent)]
    Tool(#[from] rein_tools::ToolError),
}

impl AgentBuilder {
    /// What the policy this builder would give the agent decides for a call written as a
    /// rule (`bash(git push)`, `edit_file(src/main.rs)`, `read_file(.env)`), and why: for
    /// `rein explain-permission`.
    pub fn explain(&self, call: &str) -> Result<Verdict, ExplainError> {
        let rule = Rule::parse(call, self.tool_config.home_dir.as_deref())?;
        let tool = rule.tool.as_str();
        // The argument as written: a rule's text is normalised (spaces, line breaks), and a
        // command must be judged as the model would send it.
        let argument = rule.pattern.as_ref().map(|_| {
            let open = call.find('(').map_or(0, |i| i + 1);
            let close = call.rfind(')').filter(|&i| i >= open).unwrap_or(call.len());
            call[open..close].to_owned()
        });
        let arguments = match (tool, argument) {
            ("bash", Some(command)) => serde_json::json!({ "command": command }),
            (_, Some(path)) => serde_json::json!({ "file_path": path }),
            (_, None) => serde_json::json!({}),
        };
        self.explain_call(tool, &arguments)
    }

    /// The decision for a call of `tool` with `arguments` (JSON, as the model sends them),
    /// under this builder's mode and rules, and what made it; an error when the call fails
    /// before any permission check (a path that cannot be resolved, say).
    pub fn explain_call(
        &self,
        tool: &str,
        arguments: &serde_json::Value,
    ) -> Result<Verdict, ExplainError> {
        let registry = self.tools_offered();
        let kind = registry
            .get(tool)
            .map_or(rein_tools::ToolKind::Execute, |t| t.kind());
        // An MCP tool is not listed until its server runs: judged as one outside the sandbox.
        let confined = registry
            .get(tool)
            .map_or(!tool.starts_with("mcp__"), |t| t.confined());
        let ctx = ToolContext::new(self.tool_config.clone());
        let path = crate::permissions::facts::path_target(&ctx, arguments)?;
        let shell = crate::permissions::facts::shell_facts(&ctx, tool, arguments);
        let policy = ModePolicy::with_rules(self.mode, self.rules.clone());
        Ok(policy.explain(&CallView {
            tool,
            kind,
            arguments,
            path: path.as_ref(),
            shell: shell.as_ref(),
            confined,
        }))
    }
}
