//! The OS sandbox of an agent's commands, worked out from the `[sandbox]` settings, the
//! `--sandbox` level and the places the agent works in (the policy itself, and what the
//! kernel enforces of it, are rein-tools').

use std::path::{Path, PathBuf};
use std::sync::Arc;

use rein_tools::sandbox::{
    DEFAULT_CACHES, KernelProbe, Network, PolicyInputs, Sandbox, SandboxLevel, SandboxPolicy,
    SshAgent, support,
};

use crate::config::{Config, SandboxSettings, USER_CONFIG_FILE};
use crate::trust::TRUST_FILE;

/// What the sandbox of the agent's commands is made from.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct SandboxPlan {
    /// The `[sandbox]` settings of every config file.
    pub(crate) settings: SandboxSettings,
    /// `--sandbox`, over the configured level.
    pub(crate) level: Option<SandboxLevel>,
    /// Where the private temporary directory is made (`TMPDIR`, else `/tmp`).
    temp_root: Option<PathBuf>,
    /// The permission mode is auto: the network is off unless configured.
    pub(crate) auto: bool,
    /// The ssh-agent's socket (`SSH_AUTH_SOCK`).
    ssh_auth_sock: Option<PathBuf>,
}

/// Where the agent works.
#[derive(Debug)]
pub(crate) struct Places<'a> {
    pub(crate) workspace: &'a Path,
    pub(crate) home_dir: Option<&'a Path>,
    pub(crate) rein_home: Option<&'a Path>,
    /// rein's output directory for the session (bash writes its final directory there).
    pub(crate) offload_dir: &'a Path,
}

impl SandboxPlan {
    /// The plan of `config`, with the temporary directory's root from `env`.
    pub(crate) fn from_config(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> Self {
        SandboxPlan {
            settings: config.sandbox.clone(),
            level: None,
            temp_root: env("TMPDIR").filter(|t| !t.is_empty()).map(PathBuf::from),
            auto: false,
            ssh_auth_sock: env("SSH_AUTH_SOCK")
                .filter(|s| !s.is_empty())
                .map(PathBuf::from),
        }
    }

    /// The level asked for: `--sandbox`, else the configuration, else workspace-write.
    pub(crate) fn level_wanted(&self) -> SandboxLevel {
        self.level.or(self.settings.level).unwrap_or_default()
    }

    fn probe(&self) -> KernelProbe {
        if self.settings.assume_no_landlock {
            KernelProbe::AssumeNoLandlock
        } else {
            KernelProbe::Detect
        }
    }

    /// Why a wanted sandbox cannot be enforced here, as the warning rein gives once.
    pub(crate) fn warning(&self) -> Option<String> {
        let level = self.level_wanted();
        if level == SandboxLevel::Off {
            return None;
        }
        support(self.probe()).missing().map(|why| {
            format!(
                "the {level} sandbox cannot be enforced here: {why}. Commands run with the \
                 permission checks alone; see `rein sandbox --explain`"
            )
        })
    }

    /// The network commands get: the person's setting, else none in auto, else the level's
    /// default; a project's setting only where it keeps more away.
    fn network(&self) -> Option<Network> {
        // auto runs commands without asking: without a network unless the person says so
        // (as Codex's workspace-write). Other modes keep the level's default.
        let network = self
            .settings
            .network
            .or(self.auto.then_some(Network::Blocked));
        match self.settings.project_network {
            Some(project) => {
                let base = network.unwrap_or(self.level_wanted().default_network());
                crate::config::sandbox_stricter(Some(base), project)
            }
            None => network,
        }
    }

    /// Says that a project's `network` is left out where it would open more than the network
    /// in force (its `"proxy"` under auto's `"off"`), as other loosening keys are at reading.
    pub(crate) fn project_network_left_out(&self) -> Option<String> {
        let project = self.settings.project_network?;
        let in_force = self
            .network()
            .unwrap_or(self.level_wanted().default_network());
        (in_force != project).then(|| {
            format!(
                "the project's [sandbox] network = \"{project}\" is left out: commands get \
                 network = \"{in_force}\"{}, and a project may only keep more of the network \
                 away; set it in your own config to use it",
                if self.auto && self.settings.network.is_none() {
                    " (the auto mode's default)"
                } else {
                    ""
                }
            )
        })
    }

    /// Why the auto permission mode, which relies on the sandbox, cannot start.
    pub(crate) fn auto_refusal(&self) -> Option<String> {
        if self.level_wanted() == SandboxLevel::Off {
            return Some(
                "the sandbox is off (`--sandbox off` or `[sandbox] mode = \"off\"`)".to_owned(),
            );
        }
        support(self.probe()).missing()
    }

    /// The policy for an agent working in `places`, with a fresh private temporary
    /// directory name.
    pub(crate) fn policy(&self, places: &Places<'_>) -> SandboxPolicy {
        let settings = &self.settings;
        let home = places.home_dir;
        let expand = |raw: &String| -> PathBuf {
            match (raw.strip_prefix("~/"), home) {
                (Some(rest), Some(home)) => home.join(rest),
                _ if raw == "~" => home.map_or_else(|| PathBuf::from(raw), Path::to_path_buf),
                _ => places.workspace.join(raw),
            }
        };
        let caches: Vec<PathBuf> = match &settings.caches {
            Some(list) => list.iter().map(PathBuf::from).collect(),
            None => DEFAULT_CACHES.iter().map(PathBuf::from).collect(),
        };
        let writable: Vec<PathBuf> = settings.writable.iter().map(expand).collect();
        let not_writable: Vec<PathBuf> = settings.read_only.iter().map(expand).collect();
        let hide: Vec<PathBuf> = settings.hide.iter().map(expand).collect();
        let expose: Vec<PathBuf> = settings.expose.iter().map(expand).collect();
        let temp_root = self
            .temp_root
            .clone()
            .unwrap_or_else(|| PathBuf::from("/tmp"));
        let tmp_dir = temp_root.join(format!(
            "rein-{}-{:08x}",
            std::process::id(),
            fastrand::u32(..)
        ));
        let rein_files: Vec<PathBuf> = places
            .rein_home
            .map(|home| vec![home.join(USER_CONFIG_FILE), home.join(TRUST_FILE)])
            .unwrap_or_default();
        let git_dirs = repository_git_dirs(places.workspace);
        let network = self.network();
        let mut policy = SandboxPolicy::resolve(&PolicyInputs {
            level: self.level_wanted(),
            network,
            workspace: places.workspace,
            home_dir: home,
            rein_home: places.rein_home,
            rein_files: &rein_files,
            git_dirs: &git_dirs,
            caches: &caches,
            extra_writable: &writable,
            not_writable: &not_writable,
            tmp_dir: Some(&tmp_dir),
            rein_dirs: &[places.offload_dir.to_path_buf()],
            probe: self.probe(),
            hide: &hide,
            expose: &expose,
            ssh_agent: if settings.ssh_agent == Some(true) {
                SshAgent::Reachable
            } else {
                SshAgent::Hidden
            },
            ssh_auth_sock: self.ssh_auth_sock.as_deref(),
        });
        policy.allow_domains.clone_from(&settings.allow_domains);
        policy
    }
}

/// The git directories a sandboxed `git commit` in `workspace` writes, when `workspace` is
/// not the top of a repository with a `.git` directory (that one is inside the workspace and
/// protected by rein-tools): the nearest enclosing repository's `.git` directory, or for a
/// `.git` file (a linked worktree, a submodule) the directory its `gitdir:` line names and
/// that one's `commondir`. Read from the files, as git does; git itself is not run.
pub(crate) fn repository_git_dirs(workspace: &Path) -> Vec<PathBuf> {
    for dir in workspace.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return if dir == workspace {
                Vec::new()
            } else {
                canonical_dir(&dot_git).into_iter().collect()
            };
        }
        let Some(git_dir) = read_link_file(&dot_git, "gitdir:", dir) else {
            return Vec::new();
        };
        let common = read_link_file(&git_dir.join("commondir"), "", &git_dir);
        return std::iter::once(git_dir).chain(common).collect();
    }
    Vec::new()
}

/// The directory a one-line file names (after `prefix`), relative to `base`; `None` unless
/// it is an existing directory.
fn read_link_file(file: &Path, prefix: &str, base: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(file).ok()?;
    let target = text.lines().next()?.strip_prefix(prefix)?.trim();
    if target.is_empty() {
        return None;
    }
    canonical_dir(&base.join(target))
}

fn canonical_dir(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok().filter(|p| p.is_dir())
}

/// A sandbox with what it was made from, so that an agent rebuilt with the same settings
/// (the REPL's `/model`, a mode that keeps them) runs in it again ([`crate::build::AgentBuilder::keep_sandbox`]).
#[derive(Debug, Clone)]
pub struct KeptSandbox {
    pub(crate) sandbox: Sandbox,
    pub(crate) recipe: Arc<SandboxRecipe>,
}

impl KeptSandbox {
    /// A new session in the same sandbox: the hosts answered about are asked about again,
    /// as the rules allowed for the old session no longer hold.
    pub async fn forget_hosts(&self) {
        self.sandbox.forget_hosts().await;
    }
}

/// What a sandbox's policy is made from: the same recipe, the same policy.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct SandboxRecipe {
    pub(crate) plan: SandboxPlan,
    pub(crate) workspace: PathBuf,
    pub(crate) home_dir: Option<PathBuf>,
    pub(crate) rein_home: Option<PathBuf>,
    /// The directory rein writes for commands (absolute).
    pub(crate) offload_dir: PathBuf,
}

impl SandboxRecipe {
    /// Makes the sandbox (on a thread of its own; its private temporary directory is removed
    /// when the last clone goes).
    pub(crate) fn make(&self) -> Sandbox {
        let recipe = self.clone();
        Sandbox::resolving(move || {
            recipe.plan.policy(&Places {
                workspace: &recipe.workspace,
                home_dir: recipe.home_dir.as_deref(),
                rein_home: recipe.rein_home.as_deref(),
                offload_dir: &recipe.offload_dir,
            })
        })
    }

    /// Whether a sandbox made from this recipe serves an agent that wants `wanted`'s: the
    /// same policy, rein's directory for commands the same or one holding it (the sandbox
    /// made before a session is named, for MCP servers started early, lets commands write
    /// all of `tool-output`; the session's directory is in it).
    pub(crate) fn serves(&self, wanted: &SandboxRecipe) -> bool {
        wanted.offload_dir.starts_with(&self.offload_dir)
            && SandboxRecipe {
                offload_dir: wanted.offload_dir.clone(),
                ..self.clone()
            } == *wanted
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_flag_wins_over_the_config_and_paths_expand() {
        let mut plan = SandboxPlan::default();
        assert_eq!(plan.level_wanted(), SandboxLevel::WorkspaceWrite);
        plan.settings.level = Some(SandboxLevel::ReadOnly);
        assert_eq!(plan.level_wanted(), SandboxLevel::ReadOnly);
        plan.level = Some(SandboxLevel::WorkspaceWrite);
        plan.settings.writable = vec!["~/.m2".into(), "build".into()];
        plan.settings.read_only = vec!["secrets".into()];
        plan.settings.network = Some(Network::Blocked);
        let policy = plan.policy(&Places {
            workspace: Path::new("/src/app"),
            home_dir: Some(Path::new("/home/u")),
            rein_home: None,
            offload_dir: Path::new("/home/u/.rein/tool-output/s1"),
        });
        assert_eq!(policy.network, Network::Blocked);
        assert!(policy.may_write(Path::new("/home/u/.m2/repo")));
        assert!(policy.may_write(Path::new("/src/app/build/x")));
        assert!(!policy.may_write(Path::new("/src/app/secrets/key")));
        assert!(policy.may_write(Path::new("/home/u/.rein/tool-output/s1/x")));
        assert!(!policy.may_write(Path::new("/home/u/.bashrc")));
    }

    #[test]
    fn auto_has_no_network_unless_configured_and_other_modes_keep_it() {
        let places = Places {
            workspace: Path::new("/src/app"),
            home_dir: None,
            rein_home: None,
            offload_dir: Path::new("/src/app/.out"),
        };
        let mut plan = SandboxPlan::default();
        assert_eq!(plan.policy(&places).network, Network::Allowed);
        plan.auto = true;
        assert_eq!(plan.policy(&places).network, Network::Blocked);
        plan.settings.network = Some(Network::Proxy);
        plan.settings.allow_domains = vec!["pypi.org".into()];
        let policy = plan.policy(&places);
        assert_eq!(policy.network, Network::Proxy);
        assert_eq!(policy.allow_domains, ["pypi.org"]);
        plan.settings.network = Some(Network::Allowed);
        assert_eq!(plan.policy(&places).network, Network::Allowed);
        plan.auto = false;
        plan.settings.network = Some(Network::Blocked);
        assert_eq!(plan.policy(&places).network, Network::Blocked);
        // A project's "proxy" keeps more away than "on", never more than "off".
        plan.settings.project_network = Some(Network::Proxy);
        assert_eq!(plan.policy(&places).network, Network::Blocked);
        plan.settings.network = None;
        assert_eq!(plan.policy(&places).network, Network::Proxy);
        plan.auto = true;
        assert_eq!(plan.policy(&places).network, Network::Blocked);
    }

    #[test]
    fn rein_s_own_files_are_named_here_and_its_home_is_read_only() {
        let plan = SandboxPlan::default();
        let policy = plan.policy(&Places {
            workspace: Path::new("/src/app"),
            home_dir: Some(Path::new("/home/u")),
            rein_home: Some(Path::new("/home/u/.rein")),
            offload_dir: Path::new("/home/u/.rein/tool-output/s1"),
        });
        for name in [
            USER_CONFIG_FILE,
            TRUST_FILE,
            "skills/x/SKILL.md",
            "anything-new",
        ] {
            let path = Path::new("/home/u/.rein").join(name);
            assert!(!policy.may_write(&path), "{name}");
        }
        assert!(policy.may_write(Path::new("/home/u/.rein/tool-output/s1/cwd")));
    }

    #[test]
    fn the_git_dirs_of_the_enclosing_repository_are_found_from_the_files() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let repo = base.join("repo");
        let git = repo.join(".git");
        std::fs::create_dir_all(repo.join("a/b")).unwrap();
        std::fs::create_dir_all(git.join("worktrees/wt")).unwrap();
        // The top of a repository: its .git is inside the workspace already.
        assert_eq!(repository_git_dirs(&repo), Vec::<PathBuf>::new());
        assert_eq!(
            repository_git_dirs(&repo.join("a/b")),
            std::slice::from_ref(&git)
        );
        // A linked worktree: its .git file, then the common directory.
        let wt = base.join("wt");
        std::fs::create_dir_all(wt.join("src")).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", git.join("worktrees/wt").display()),
        )
        .unwrap();
        std::fs::write(git.join("worktrees/wt/commondir"), "../..\n").unwrap();
        let expected = [git.join("worktrees/wt"), git.clone()];
        assert_eq!(repository_git_dirs(&wt), expected);
        assert_eq!(repository_git_dirs(&wt.join("src")), expected);
        // A relative gitdir (submodules write them so).
        std::fs::write(wt.join(".git"), "gitdir: ../repo/.git/worktrees/wt\n").unwrap();
        assert_eq!(repository_git_dirs(&wt), expected);
        // Not in a repository, or a .git file naming nothing: nothing.
        std::fs::write(wt.join(".git"), "gitdir: /nonexistent\n").unwrap();
        assert_eq!(repository_git_dirs(&wt), Vec::<PathBuf>::new());
        assert_eq!(repository_git_dirs(&base), Vec::<PathBuf>::new());
    }

    #[test]
    fn a_workspace_in_a_repository_subdirectory_may_write_its_git_dir_but_not_hooks() {
        let dir = tempfile::tempdir().unwrap();
        let repo = dir.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(repo.join(".git/hooks")).unwrap();
        std::fs::write(repo.join(".git/config"), "").unwrap();
        std::fs::create_dir_all(repo.join("sub")).unwrap();
        let policy = SandboxPlan::default().policy(&Places {
            workspace: &repo.join("sub"),
            home_dir: None,
            rein_home: None,
            offload_dir: &repo.join("sub/.out"),
        });
        assert!(policy.may_write(&repo.join(".git/index.lock")));
        assert!(!policy.may_write(&repo.join(".git/hooks/pre-commit")));
        assert!(!policy.may_write(&repo.join(".git/config")));
        assert!(policy.pinned.contains(&repo.join(".git")));
        assert!(policy.watched.contains(&repo.join(".git/commondir")));
        assert!(!policy.may_write(&repo.join("other.txt")));
    }

    #[test]
    fn auto_is_refused_with_the_sandbox_off_or_missing() {
        let mut plan = SandboxPlan {
            level: Some(SandboxLevel::Off),
            ..SandboxPlan::default()
        };
        assert!(plan.auto_refusal().is_some_and(|w| w.contains("off")));
        plan.level = None;
        plan.settings.assume_no_landlock = true;
        assert!(plan.auto_refusal().is_some_and(|w| w.contains("Landlock")));
        assert!(
            plan.warning()
                .is_some_and(|w| w.contains("permission checks alone"))
        );
    }
}
