//! What glob and grep share: the gitignore-aware parallel walk (ripgrep's `ignore` crate) and
//! the meaning of a file pattern.

use std::path::{Path, PathBuf};

use globset::GlobBuilder;
use ignore::WalkBuilder;

use crate::ToolError;
use crate::path_glob::PathGlob;

/// A parallel walker over `root` with ripgrep's defaults: `.gitignore`, `.ignore` and
/// `.rgignore` honoured (in a git repository or not), hidden files skipped unless asked for,
/// symlinks not followed. `.git` itself is never walked.
pub(crate) fn walker(root: &Path, include_hidden: bool) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder.hidden(!include_hidden).require_git(false);
    if include_hidden {
        builder.filter_entry(|entry| entry.file_name() != ".git");
    }
    builder
}

/// A file pattern as the model means it, matched like a line of `.gitignore` or ripgrep's
/// `-g`: without a `/` it matches file names at any depth (`*.rs`); with one it matches the
/// path from the search root (`src/**/*.rs`, `*` staying within one directory).
#[derive(Debug, Clone)]
pub(crate) struct FilePattern {
    matcher: PathGlob,
    names_only: bool,
    mentions_hidden: bool,
}

impl FilePattern {
    /// Compiles `pattern`; an invalid one is an error naming it.
    pub(crate) fn new(pattern: &str, parameter: &str) -> Result<FilePattern, ToolError> {
        let cleaned = pattern.strip_prefix("./").unwrap_or(pattern);
        let names_only = !cleaned.trim_end_matches('/').contains('/');
        let glob = GlobBuilder::new(cleaned.trim_start_matches('/'))
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|err| {
                ToolError::Model(format!("Invalid {parameter} `{pattern}`: {}.", err.kind()))
            })?;
        let mentions_hidden = cleaned
            .split('/')
            .any(|part| part.starts_with('.') && part != "." && part != "..");
        Ok(FilePattern {
            matcher: PathGlob::new(&glob),
            names_only,
            mentions_hidden,
        })
    }

    /// Whether the pattern names hidden files or directories (then the walk includes them).
    pub(crate) fn mentions_hidden(&self) -> bool {
        self.mentions_hidden
    }

    /// Whether the file at `path` (under `root`) matches.
    pub(crate) fn is_match(&self, root: &Path, path: &Path) -> bool {
        if self.names_only {
            return path
                .file_name()
                .is_some_and(|name| self.matcher.is_match(name));
        }
        match path.strip_prefix(root) {
            Ok(rel) => self.matcher.is_match(rel),
            Err(_) => self.matcher.is_match(path),
        }
    }
}

/// Splits an absolute pattern (`/work/src/**/*.rs`) into the directory part without glob
/// characters and the rest, so it can be searched from that directory.
pub(crate) fn split_absolute_pattern(pattern: &str) -> Option<(PathBuf, String)> {
    if !pattern.starts_with('/') && !pattern.starts_with("~/") {
        return None;
    }
    let parts: Vec<&str> = pattern.split('/').collect();
    let literal = parts
        .iter()
        .take_while(|p| !p.contains(['*', '?', '[', '{']))
        .count();
    // Keep at least one component as the pattern.
    let literal = literal.min(parts.len() - 1);
    let base = parts[..literal].join("/");
    let base = if base.is_empty() {
        "/".to_owned()
    } else {
        base
    };
    Some((PathBuf::from(base), parts[literal..].join("/")))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matches(pattern: &str, path: &str) -> bool {
        FilePattern::new(pattern, "pattern")
            .unwrap()
            .is_match(Path::new("/r"), &Path::new("/r").join(path))
    }

    #[test]
    fn pattern_semantics_follow_gitignore() {
        assert!(matches("*.rs", "a.rs"));
        assert!(matches("*.rs", "src/deep/a.rs"));
        assert!(matches("**/*.rs", "src/a.rs"));
        assert!(matches("**/*.rs", "a.rs"));
        assert!(matches("src/*.rs", "src/a.rs"));
        assert!(!matches("src/*.rs", "src/x/a.rs"));
        assert!(matches("src/**/*.rs", "src/x/a.rs"));
        assert!(matches("./src/*.rs", "src/a.rs"));
        assert!(matches("*.{rs,toml}", "Cargo.toml"));
        assert!(!matches("*.rs", "a.rsx"));
    }

    #[test]
    fn invalid_pattern_is_named() {
        let err = FilePattern::new("src/[a", "pattern").unwrap_err();
        assert!(
            err.to_string().contains("Invalid pattern `src/[a`"),
            "{err}"
        );
    }

    #[test]
    fn hidden_mentions() {
        assert!(
            FilePattern::new(".github/**/*.yml", "p")
                .unwrap()
                .mentions_hidden()
        );
        assert!(FilePattern::new("**/.env", "p").unwrap().mentions_hidden());
        assert!(
            !FilePattern::new("./src/*.rs", "p")
                .unwrap()
                .mentions_hidden()
        );
    }

    #[test]
    fn absolute_patterns_split_at_the_first_glob() {
        assert_eq!(
            split_absolute_pattern("/work/src/**/*.rs"),
            Some((PathBuf::from("/work/src"), "**/*.rs".to_owned()))
        );
        assert_eq!(
            split_absolute_pattern("/work/a.rs"),
            Some((PathBuf::from("/work"), "a.rs".to_owned()))
        );
        assert_eq!(split_absolute_pattern("src/*.rs"), None);
    }
}
