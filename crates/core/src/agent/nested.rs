//! AGENTS.md files in subdirectories (as Codex reads them): not in the prompt at start, but
//! added to the result of the first call that reads or edits a file below them, once per
//! session, so a large repository's per-package instructions cost nothing until they matter.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

/// The instruction files read in a directory, the first that exists.
const NESTED_FILES: [&str; 2] = ["AGENTS.md", "CLAUDE.md"];

/// The most of one nested file added to a result.
const NESTED_LIMIT_BYTES: usize = 16 * 1024;

/// The nested instruction files of a workspace, and which were given already.
#[derive(Debug)]
pub struct NestedInstructions {
    root: PathBuf,
    given: Mutex<HashSet<PathBuf>>,
}

impl NestedInstructions {
    /// For the project at `root`, the files in the prompt already (`loaded`) counted as
    /// given.
    pub fn new(root: &Path, loaded: impl IntoIterator<Item = PathBuf>) -> Self {
        let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
        let given = loaded
            .into_iter()
            .map(|p| std::fs::canonicalize(&p).unwrap_or(p))
            .collect();
        NestedInstructions {
            root,
            given: Mutex::new(given),
        }
    }

    /// The instruction files between `file`'s directory and the project root (root
    /// excluded) not given yet, outermost first, each with its content; they count as given
    /// from now on.
    pub fn for_file(&self, file: &Path) -> Vec<(PathBuf, String)> {
        let Some(dir) = file.parent() else {
            return Vec::new();
        };
        if !dir.starts_with(&self.root) || dir == self.root {
            return Vec::new();
        }
        let mut found = Vec::new();
        let mut given = self.given.lock();
        for dir in dir.ancestors().take_while(|d| *d != self.root) {
            let Some(path) = NESTED_FILES
                .iter()
                .map(|n| dir.join(n))
                .find(|p| p.is_file())
            else {
                continue;
            };
            if !given.insert(path.clone()) {
                continue;
            }
            let Ok(text) = std::fs::read_to_string(&path) else {
                continue;
            };
            let mut text = text.trim().to_owned();
            if text.len() > NESTED_LIMIT_BYTES {
                text.truncate(text.floor_char_boundary(NESTED_LIMIT_BYTES));
                text.push_str("\n[cut; read the file for the rest]");
            }
            found.push((path, text));
        }
        found.reverse();
        found
    }
}

/// The text added to a call's result for the files [`NestedInstructions::for_file`] found.
pub(crate) fn note(files: &[(PathBuf, String)]) -> String {
    let mut out = String::new();
    for (path, text) in files {
        out.push_str(&format!(
            "\n\n<instructions file=\"{}\">\nThis directory's own instructions; follow them \
             for files below it.\n\n{text}\n</instructions>",
            path.display()
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_nested_file_is_given_once_outermost_first() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        std::fs::write(root.join("AGENTS.md"), "root").unwrap();
        std::fs::write(root.join("a/AGENTS.md"), "in a").unwrap();
        std::fs::write(root.join("a/b/CLAUDE.md"), "in b").unwrap();
        let nested = NestedInstructions::new(&root, [root.join("AGENTS.md")]);
        assert!(nested.for_file(&root.join("top.rs")).is_empty());
        let found = nested.for_file(&root.join("a/b/x.rs"));
        let texts: Vec<&str> = found.iter().map(|(_, t)| t.as_str()).collect();
        assert_eq!(texts, ["in a", "in b"]);
        assert!(nested.for_file(&root.join("a/b/y.rs")).is_empty());
        assert!(nested.for_file(&root.join("a/z.rs")).is_empty());
    }
}
