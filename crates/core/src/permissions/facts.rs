//! What the policy needs to know about a call beyond its arguments: where a file tool
//! points, and what a shell command line holds. Worked out the same way for a run and for
//! `rein explain-permission`.

use rein_tools::ToolContext;
use serde_json::Value;

use super::{PathTarget, ShellFacts};

/// Where a file tool's `file_path` points, resolved as the tool resolves it. An error is
/// the tool's own message (a path it would refuse).
pub(crate) fn path_target(
    ctx: &ToolContext,
    arguments: &Value,
) -> Result<Option<PathTarget>, String> {
    let Some(raw) = arguments.get("file_path").and_then(Value::as_str) else {
        return Ok(None);
    };
    let absolute = rein_tools::paths::resolve_anywhere(ctx, raw).map_err(|e| e.to_string())?;
    Ok(Some(PathTarget {
        outside: !rein_tools::paths::is_allowed(ctx, &absolute),
        in_workspace: absolute
            .strip_prefix(ctx.workspace_root())
            .ok()
            .map(std::path::Path::to_path_buf),
        absolute,
    }))
}

/// What a shell call's command line holds; `None` for other tools.
pub(crate) fn shell_facts(_ctx: &ToolContext, tool: &str, arguments: &Value) -> Option<ShellFacts> {
    if tool != "bash" {
        return None;
    }
    let command = arguments.get("command").and_then(Value::as_str)?;
    Some(ShellFacts {
        simple_commands: vec![command.split_whitespace().collect::<Vec<_>>().join(" ")],
        read_only: Err("rein could not prove it read-only".to_owned()),
        danger: None,
    })
}
