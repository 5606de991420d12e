//! What stays protected in a repository's git directories, so that a sandboxed command
//! cannot plant code that git runs at the person's next git command outside the sandbox.
//!
//! - `hooks/` and `config` (core.fsmonitor, core.hooksPath, aliases...) of the git directory,
//!   of each submodule's (`modules/*`) and the per-worktree files of each linked worktree
//!   (`worktrees/*/{commondir,config.worktree}`) are read-only.
//! - Each of those git directories, and the directories between them, are pinned: bound onto
//!   themselves, so `mv .git .git-old && cp -a .git-old .git` fails (a mount point cannot be
//!   renamed), and a `.git` file in the workspace is read-only.
//! - What would redirect git but does not exist when a command starts (`commondir`,
//!   `config.worktree`, a missing `hooks/` or `config`) cannot be bind-mounted: it is
//!   watched, and removed when the command creates it ([`PlantWatch`]).
//!
//! Which of these exist is seen at each command (a `.git` made by `git init` in a
//! workspace that had none gets read-only `hooks/` and `config` from the next command on,
//! but nothing is watched or pinned there until the next session).
//!
//! The rest (objects, refs, the index, `HEAD`) stays writable: `git commit`, `git checkout
//! -b`, `git stash` and `git rebase` work in the sandbox.

use std::path::{Path, PathBuf};

/// How deep submodules are looked for (`modules/a/modules/b/...`; a submodule's name may
/// hold slashes, each one level).
const MODULES_MAX_DEPTH: usize = 6;

/// The protections of a workspace's repository.
#[derive(Debug, Default)]
pub(crate) struct Guards {
    pub(crate) read_only: Vec<PathBuf>,
    pub(crate) pinned: Vec<PathBuf>,
    pub(crate) watched: Vec<PathBuf>,
}

impl Guards {
    /// `path` read-only while it exists, removed should a command create it.
    fn keep(&mut self, path: PathBuf) {
        self.read_only.push(path.clone());
        self.watched.push(path);
    }
}

/// The protections for `workspace`'s own `.git` (a directory, or a file naming one) and the
/// git directories `git_dirs` (found by rein-core: those of the repository the workspace
/// lies in).
pub(crate) fn guards(workspace: &Path, git_dirs: &[PathBuf]) -> Guards {
    let mut guards = Guards::default();
    let dot_git = workspace.join(".git");
    match dot_git.symlink_metadata() {
        Ok(meta) if meta.is_dir() => git_dir(&dot_git, &mut guards, 0),
        // A `.git` file (a linked worktree, a submodule) names the git directory: rewritten,
        // it would send git elsewhere.
        Ok(_) => guards.read_only.push(dot_git),
        // Paths to protect should `git init` make it (they are protected at the next
        // session); nothing is pinned or watched.
        Err(_) => {
            guards.read_only.push(dot_git.join("hooks"));
            guards.read_only.push(dot_git.join("config"));
        }
    }
    for dir in git_dirs {
        if dir.is_dir() {
            git_dir(dir, &mut guards, 0);
        }
    }
    guards
}

/// The protections of the git directory `dir`, its submodules' and its linked worktrees'.
fn git_dir(dir: &Path, guards: &mut Guards, depth: usize) {
    guards.pinned.push(dir.to_path_buf());
    for name in ["hooks", "config", "commondir", "config.worktree"] {
        guards.keep(dir.join(name));
    }
    let modules = dir.join("modules");
    if modules.is_dir() {
        modules_under(&modules, guards, depth);
    }
    let worktrees = dir.join("worktrees");
    if let Ok(entries) = std::fs::read_dir(&worktrees) {
        guards.pinned.push(worktrees);
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                guards.pinned.push(path.clone());
                for name in ["commondir", "config.worktree"] {
                    guards.keep(path.join(name));
                }
            }
        }
    }
}

/// The submodules' git directories under `dir` (`modules/` or a level of a name with
/// slashes), each directory on the way pinned.
fn modules_under(dir: &Path, guards: &mut Guards, depth: usize) {
    if depth >= MODULES_MAX_DEPTH {
        return;
    }
    guards.pinned.push(dir.to_path_buf());
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if !path.is_dir() {
            continue;
        }
        if path.join("HEAD").is_file() {
            git_dir(&path, guards, depth + 1);
        } else {
            modules_under(&path, guards, depth + 1);
        }
    }
}

/// Which watched paths were absent before a command ran ([`super::SandboxPolicy::watch`]).
#[derive(Debug, Clone)]
pub struct PlantWatch {
    absent: Vec<PathBuf>,
}

impl PlantWatch {
    pub(crate) fn before(watched: &[PathBuf]) -> PlantWatch {
        PlantWatch {
            absent: watched
                .iter()
                .filter(|p| p.symlink_metadata().is_err())
                .cloned()
                .collect(),
        }
    }

    /// After the command: removes what it created of the watched paths, and says so (one
    /// line each, for the command's result).
    pub fn sweep(&self) -> Vec<String> {
        let mut notices = Vec::new();
        for path in &self.absent {
            let Ok(meta) = path.symlink_metadata() else {
                continue;
            };
            let removed = if meta.is_dir() {
                std::fs::remove_dir_all(path)
            } else {
                std::fs::remove_file(path)
            };
            let why = why_watched(path);
            notices.push(match removed {
                Ok(()) => format!(
                    "rein removed {} that the command created: {why}",
                    path.display()
                ),
                Err(err) => format!(
                    "the command created {}, and rein could not remove it ({err}): {why}; \
                     remove it before running git here",
                    path.display()
                ),
            });
        }
        notices
    }
}

/// Why a watched path must not be created, in words.
fn why_watched(path: &Path) -> &'static str {
    match path.file_name().and_then(|n| n.to_str()) {
        Some(".rein") => {
            "a project's configuration there would apply to the next session (hooks, MCP servers)"
        }
        Some("hooks") => "git would run the hooks in it outside the sandbox",
        _ => "it would make git run code from elsewhere",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_pins_its_git_dirs_protects_hooks_and_config_and_watches_redirects() {
        let dir = tempfile::tempdir().unwrap();
        let ws = dir.path().canonicalize().unwrap();
        let git = ws.join(".git");
        for sub in ["hooks", "modules/lib/a/hooks", "worktrees/wt"] {
            std::fs::create_dir_all(git.join(sub)).unwrap();
        }
        std::fs::write(git.join("config"), "").unwrap();
        std::fs::write(git.join("modules/lib/a/HEAD"), "ref: x\n").unwrap();
        std::fs::write(git.join("worktrees/wt/commondir"), "../..\n").unwrap();
        let guards = guards(&ws, &[]);
        for pinned in [
            "",
            "modules",
            "modules/lib",
            "modules/lib/a",
            "worktrees",
            "worktrees/wt",
        ] {
            let path = if pinned.is_empty() {
                git.clone()
            } else {
                git.join(pinned)
            };
            assert!(guards.pinned.contains(&path), "{pinned}: {guards:?}");
        }
        for read_only in [
            "hooks",
            "config",
            "commondir",
            "modules/lib/a/hooks",
            "modules/lib/a/config",
            "worktrees/wt/commondir",
            "worktrees/wt/config.worktree",
        ] {
            assert!(
                guards.read_only.contains(&git.join(read_only)),
                "{read_only}"
            );
        }
        for watched in [
            "commondir",
            "config.worktree",
            "modules/lib/a/config",
            "worktrees/wt/config.worktree",
        ] {
            assert!(guards.watched.contains(&git.join(watched)), "{watched}");
        }
    }

    #[test]
    fn a_sweep_removes_what_appeared_and_says_why() {
        let dir = tempfile::tempdir().unwrap();
        let existing = dir.path().join("commondir-old");
        std::fs::write(&existing, "x").unwrap();
        let planted = dir.path().join("commondir");
        let hooks = dir.path().join("hooks");
        let watch = PlantWatch::before(&[existing.clone(), planted.clone(), hooks.clone()]);
        std::fs::write(&planted, "/tmp/evil\n").unwrap();
        std::fs::create_dir_all(hooks.join("x")).unwrap();
        let notices = watch.sweep();
        assert!(existing.exists(), "what was there stays");
        assert!(!planted.exists() && !hooks.exists());
        assert_eq!(notices.len(), 2, "{notices:?}");
        assert!(
            notices[0].contains("rein removed") && notices[0].contains("commondir"),
            "{notices:?}"
        );
        assert!(
            notices[0].ends_with("it would make git run code from elsewhere"),
            "{notices:?}"
        );
    }
}
