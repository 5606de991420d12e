//! What the policy needs to know about a call beyond its arguments: where a file tool
//! points, and what a shell command line holds. Worked out the same way for a run and for
//! `rein explain-permission`.

use std::path::{Component, Path, PathBuf};

use rein_tools::ToolContext;
use rein_tools::bash::{CheckPlaces, SimpleCommand};
use serde_json::Value;

use super::{PathTarget, ShellFacts};

/// Where a file tool's `file_path` points, resolved as the tool resolves it. An error is
/// the tool's own message (a path it would refuse).
pub fn path_target(ctx: &ToolContext, arguments: &Value) -> Result<Option<PathTarget>, String> {
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

/// The most file names taken from one command line for file rules (a generated command
/// line of thousands of words must not cost thousands of matches).
const MAX_FILES: usize = 256;

/// What a shell call's command line holds, from rein-tools' parser; `None` for other tools.
pub fn shell_facts(ctx: &ToolContext, tool: &str, arguments: &Value) -> Option<ShellFacts> {
    if tool != "bash" {
        return None;
    }
    let command = arguments.get("command").and_then(Value::as_str)?;
    let cwd = ctx.cwd();
    let places = CheckPlaces {
        workspace_root: ctx.workspace_root().to_path_buf(),
        home_dir: ctx.config().home_dir.clone(),
        cwd: Some(cwd.clone()),
    };
    let analysis = rein_tools::bash::analyze(command, &places);
    let files = named_files(&analysis.simple_commands, &cwd, ctx.workspace_root());
    let structure_ok = analysis.structure.is_ok();
    Some(ShellFacts {
        harmless: analysis
            .simple_commands
            .iter()
            .map(|c| structure_ok && c.read_only.is_ok())
            .collect(),
        simple_commands: analysis
            .simple_commands
            .into_iter()
            .map(|c| c.text)
            .collect(),
        read_only: analysis.read_only,
        danger: analysis.danger.map(|d| d.reason),
        files,
    })
}

/// The words of `commands` that may name files: operands (not the program, not options)
/// known before the command runs, and redirection targets; resolved lexically against
/// `cwd` (no file system access: this runs for every command).
fn named_files(commands: &[SimpleCommand], cwd: &Path, workspace: &Path) -> Vec<PathTarget> {
    let operands = commands.iter().flat_map(|command| {
        let words = command
            .argv
            .iter()
            .skip(1)
            .flatten()
            .map(String::as_str)
            .filter(|word| !word.is_empty() && !word.starts_with('-'));
        let targets = command.redirects.iter().filter_map(|redirect| {
            let target =
                redirect.trim_start_matches(|c: char| c.is_ascii_digit() || "<>&|".contains(c));
            let target = target.trim().trim_matches(|c| c == '\'' || c == '"');
            (!target.is_empty() && !target.starts_with('-') && !redirect.contains("<<"))
                .then_some(target)
        });
        words.chain(targets)
    });
    operands
        .take(MAX_FILES)
        .map(|word| {
            let absolute = normalize(&cwd.join(word));
            PathTarget {
                in_workspace: absolute.strip_prefix(workspace).ok().map(Path::to_path_buf),
                outside: !absolute.starts_with(workspace),
                absolute,
            }
        })
        .collect()
}

/// `path` with `.` and `..` taken out, as text (links are not followed).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
