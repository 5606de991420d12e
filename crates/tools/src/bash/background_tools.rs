//! `bash_output` and `kill_shell`: the model's handles on its background commands (see
//! `background.rs`).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Room left in the output budget for the status lines around a read.
const STATUS_RESERVE_CHARS: usize = 600;

/// Arguments of `bash_output`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashOutputArgs {
    /// Its id (bg1).
    pub id: String,
    /// From this byte (default: the unread part).
    #[serde(default)]
    pub offset: Option<u64>,
}

/// The `bash_output` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashOutputTool;

#[async_trait]
impl Tool for BashOutputTool {
    type Args = BashOutputArgs;

    fn name(&self) -> &'static str {
        "bash_output"
    }

    fn description(&self) -> &'static str {
        "New output of a background command, and if it ended."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn run(&self, args: BashOutputArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let budget = ctx
            .config()
            .output_budget_chars
            .saturating_sub(STATUS_RESERVE_CHARS)
            .max(1024);
        let read = ctx
            .background()
            .read(args.id.trim(), args.offset, budget)
            .map_err(|e| ToolError::Model(e.to_string()))?;
        let mut text = if read.text.is_empty() {
            "(no new output)\n".to_owned()
        } else {
            read.text.clone()
        };
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let more = if read.next < read.size {
            format!(
                "; {} more bytes: call again (offset {})",
                read.size - read.next,
                read.next
            )
        } else {
            String::new()
        };
        text.push_str(&format!(
            "({} {}; bytes {}..{} of {}{more}; file {})",
            args.id.trim(),
            read.status,
            read.from,
            read.next,
            read.size,
            read.file.display()
        ));
        Ok(ToolOutput::success(text))
    }
}

/// Arguments of `kill_shell`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct KillShellArgs {
    /// Its id (bg1).
    pub id: String,
}

/// The `kill_shell` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct KillShellTool;

#[async_trait]
impl Tool for KillShellTool {
    type Args = KillShellArgs;

    fn name(&self) -> &'static str {
        "kill_shell"
    }

    fn description(&self) -> &'static str {
        "Stop a background command and its process group."
    }

    fn kind(&self) -> ToolKind {
        // It only stops what rein itself started for the model.
        ToolKind::ReadOnly
    }

    async fn run(&self, args: KillShellArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        ctx.background()
            .kill(args.id.trim())
            .await
            .map(ToolOutput::success)
            .map_err(|e| ToolError::Model(e.to_string()))
    }
}
