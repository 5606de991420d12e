//! The project's own instructions: `AGENTS.md` (or `CLAUDE.md` where there is none) in each
//! directory from the project root down to the working directory.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The most project instructions the prompt carries, notice included.
pub const PROJECT_INSTRUCTIONS_LIMIT_BYTES: usize = 32 * 1024;

/// The file read in a directory, and the one read where it is missing.
const INSTRUCTION_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The instructions found, ready for [`super::PromptInputs::project_instructions`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectInstructions {
    /// Each file's content introduced by its path, root first.
    pub text: String,
    /// The files read, root first.
    pub files: Vec<PathBuf>,
    /// Whether the text was cut at the limit.
    pub truncated: bool,
    /// Imports not followed (outside the workspace and home, too deep), one line each.
    pub warnings: Vec<String>,
}

/// A project instruction file exists but could not be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {}: {source}", path.display())]
pub struct PromptError {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub source: io::Error,
}

/// Reads the instruction files from `root` down to `cwd` (only `cwd` when it is outside
/// `root`), each introduced by its path, cut to `limit_bytes` in all with a notice.
/// `None` when there are none.
pub fn find_project_instructions(
    root: &Path,
    cwd: &Path,
    home: Option<&Path>,
    limit_bytes: usize,
) -> Result<Option<ProjectInstructions>, PromptError> {
    let dirs: Vec<&Path> = if cwd.starts_with(root) {
        let mut dirs: Vec<&Path> = cwd
            .ancestors()
            .take_while(|dir| dir.starts_with(root))
            .collect();
        dirs.reverse();
        dirs
    } else {
        vec![cwd]
    };

    let mut text = String::new();
    let mut files = Vec::new();
    let mut warnings = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    let workspace = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let home = home.map(|h| std::fs::canonicalize(h).unwrap_or_else(|_| h.to_path_buf()));
    let bounds = super::imports::ImportBounds {
        workspace: &workspace,
        home: home.as_deref(),
    };
    for dir in dirs {
        let Some(path) = INSTRUCTION_FILES
            .iter()
            .map(|name| dir.join(name))
            .find(|p| p.is_file())
        else {
            continue;
        };
        // Never more than the limit from one file, however large it is.
        let Some(content) = read_prefix(&path, limit_bytes.saturating_add(1))? else {
            continue;
        };
        let content = content.trim();
        if content.is_empty() {
            continue;
        }
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(&format!("## {}\n\n{content}", path.display()));
        seen.extend(std::fs::canonicalize(&path).ok());
        let imports =
            super::imports::resolve_imports(&path, content, &bounds, &mut seen, 0, &mut warnings);
        files.push(path);
        for (imported, content) in imports {
            if content.is_empty() {
                continue;
            }
            text.push_str(&format!(
                "\n\n## {} (imported)\n\n{content}",
                imported.display()
            ));
            files.push(imported);
        }
    }
    if files.is_empty() {
        return Ok(None);
    }

    let truncated = text.len() > limit_bytes;
    if truncated {
        let notice = format!(
            "\n\n[Project instructions cut at {} KiB; read the files above for the rest.]",
            limit_bytes / 1024
        );
        let keep = text.floor_char_boundary(limit_bytes.saturating_sub(notice.len()));
        text.truncate(keep);
        text.push_str(&notice);
    }
    Ok(Some(ProjectInstructions {
        text,
        files,
        truncated,
        warnings,
    }))
}

/// The first `max_bytes` of a file as text (invalid UTF-8 replaced); `None` if it vanished.
fn read_prefix(path: &Path, max_bytes: usize) -> Result<Option<String>, PromptError> {
    let error = |source| PromptError {
        path: path.to_path_buf(),
        source,
    };
    let file = match File::open(path) {
        Ok(file) => file,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(err) => return Err(error(err)),
    };
    let mut bytes = Vec::new();
    file.take(max_bytes as u64)
        .read_to_end(&mut bytes)
        .map_err(error)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}
