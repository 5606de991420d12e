//! Where the project starts: the nearest ancestor holding `.git`, found without running git.

use std::path::{Path, PathBuf};

/// The project a working directory belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRoot {
    /// The nearest ancestor of the working directory (itself included) containing `.git`,
    /// else the working directory.
    pub dir: PathBuf,
    /// Whether a `.git` (directory, or file for worktrees and submodules) was found.
    pub is_git_repo: bool,
}

/// Finds the project root of `cwd` by walking up to the nearest `.git`.
pub fn find_project_root(cwd: &Path) -> ProjectRoot {
    let git_root = cwd
        .ancestors()
        .find(|dir| dir.join(".git").symlink_metadata().is_ok());
    match git_root {
        Some(dir) => ProjectRoot {
            dir: dir.to_path_buf(),
            is_git_repo: true,
        },
        None => ProjectRoot {
            dir: cwd.to_path_buf(),
            is_git_repo: false,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_nearest_git_dir_or_file() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let deep = repo.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(
            find_project_root(&deep),
            ProjectRoot {
                dir: deep.clone(),
                is_git_repo: false
            }
        );

        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(
            find_project_root(&deep),
            ProjectRoot {
                dir: repo.clone(),
                is_git_repo: true
            }
        );

        // A worktree or submodule has a `.git` file pointing elsewhere.
        std::fs::write(repo.join("a/.git"), "gitdir: ../.git/modules/a\n").unwrap();
        assert_eq!(find_project_root(&deep).dir, repo.join("a"));
    }
}
