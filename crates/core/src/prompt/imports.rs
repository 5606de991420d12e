//! `@path` imports in AGENTS.md / CLAUDE.md, as Claude Code reads them: a word `@path`
//! (outside code) naming a file pulls that file in after the one that names it. Relative
//! paths are relative to the importing file, `~/` is the home directory; imports nest up to
//! [`MAX_IMPORT_DEPTH`] deep, a file already included is not included again (cycles end),
//! and a file outside the workspace and the home directory is not read: a cloned project
//! must not pull `/etc/...` or another project into the prompt (a warning names it).

use std::path::{Path, PathBuf};

/// How deep imports nest (an import of an import of ... counts each step).
pub const MAX_IMPORT_DEPTH: usize = 5;

/// Where imports may point.
pub(crate) struct ImportBounds<'a> {
    /// The workspace (project root).
    pub(crate) workspace: &'a Path,
    /// The home directory.
    pub(crate) home: Option<&'a Path>,
}

/// The files `text` (the content of `file`) imports, recursively, each with its content,
/// in reading order; `seen` holds the files included so far. Warnings say what was not
/// followed and why.
pub(crate) fn resolve_imports(
    file: &Path,
    text: &str,
    bounds: &ImportBounds<'_>,
    seen: &mut Vec<PathBuf>,
    depth: usize,
    warnings: &mut Vec<String>,
) -> Vec<(PathBuf, String)> {
    let mut found = Vec::new();
    let dir = file.parent().unwrap_or(Path::new("."));
    for raw in mentions(text) {
        let path = match (raw.strip_prefix("~/"), bounds.home) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => dir.join(&raw),
        };
        let Ok(path) = std::fs::canonicalize(&path) else {
            continue;
        };
        if !path.is_file() || seen.contains(&path) {
            continue;
        }
        let inside = path.starts_with(bounds.workspace)
            || bounds.home.is_some_and(|home| path.starts_with(home));
        if !inside {
            warnings.push(format!(
                "{} imports @{raw}, outside the workspace and the home directory: not read",
                file.display()
            ));
            continue;
        }
        if depth >= MAX_IMPORT_DEPTH {
            warnings.push(format!(
                "{} imports @{raw} past {MAX_IMPORT_DEPTH} levels of imports: not read",
                file.display()
            ));
            continue;
        }
        let Ok(content) = std::fs::read_to_string(&path) else {
            continue;
        };
        seen.push(path.clone());
        let nested = resolve_imports(&path, &content, bounds, seen, depth + 1, warnings);
        found.push((path, content.trim().to_owned()));
        found.extend(nested);
    }
    found
}

/// The `@path` words of `text` outside code blocks and code spans.
fn mentions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            continue;
        }
        if fenced {
            continue;
        }
        // Code spans: every other piece between backticks is code.
        for (i, piece) in line.split('`').enumerate() {
            if i % 2 == 1 {
                continue;
            }
            for word in piece.split_whitespace() {
                let Some(path) = word.strip_prefix('@') else {
                    continue;
                };
                let path = path.trim_end_matches([',', '.', ';', ':', ')', ']']);
                if !path.is_empty() && !out.iter().any(|p| p == path) {
                    out.push(path.to_owned());
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mentions_skip_code_and_emails() {
        let text = "See @docs/a.md and @b.md.\n`@not-this` me@host\n```\n@nor-this\n```\n";
        assert_eq!(mentions(text), ["docs/a.md", "b.md"]);
    }
}
