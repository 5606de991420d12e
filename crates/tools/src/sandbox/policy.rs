//! What a sandboxed command may touch: the level, the network, and the writable roots worked
//! out from the workspace, the home directory and the configuration.
//!
//! Landlock grants whole trees, never "this tree but not that part of it", so two rules
//! follow: `/tmp` is writable only when neither the workspace nor the home directory lies
//! under it (granting it would grant them, and rein's home), and the paths inside a writable
//! root that must stay read-only (`.git/hooks`, `.git/config`, rein's home) are protected
//! separately, by read-only bind mounts in a private mount namespace (`protect.rs`).
//!
//! A read-only path is only as safe as the directories above it: a command that may rename
//! `.git` can copy it back with a writable `hooks/`. So the git directories are "pinned"
//! (bound onto themselves: a mount point cannot be renamed), and the files that would
//! redirect git elsewhere but do not exist yet (`.git/commondir`) cannot be bind-mounted:
//! they are "watched" and removed when a command creates them (`git.rs`).

use std::path::{Path, PathBuf};

use strum::{Display, EnumString, IntoStaticStr};

use super::credentials::{self, SshAgent};
use super::git::{self, PlantWatch};

/// How much a sandboxed command may change; its name (`read-only`, `workspace-write`, `off`)
/// is the one on the command line and in config.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, IntoStaticStr, Display, EnumString)]
#[strum(serialize_all = "kebab-case")]
pub enum SandboxLevel {
    /// Nothing writable but `/dev/null` and a private temporary directory.
    ReadOnly,
    /// The workspace, a private temporary directory, the tool caches, and `/tmp` (see the
    /// module documentation) are writable; the rest of the machine is not.
    #[default]
    WorkspaceWrite,
    /// No sandbox: the command can do what rein can.
    Off,
}

impl SandboxLevel {
    /// The level a name means (`read-only`, `workspace-write`, `off`).
    pub fn parse(name: &str) -> Option<SandboxLevel> {
        name.parse().ok()
    }

    /// How strict it is, for "a project may only tighten" (higher is stricter).
    pub fn strictness(self) -> u8 {
        match self {
            SandboxLevel::Off => 0,
            SandboxLevel::WorkspaceWrite => 1,
            SandboxLevel::ReadOnly => 2,
        }
    }

    /// Whether commands get the network by default at this level.
    pub fn default_network(self) -> Network {
        match self {
            SandboxLevel::ReadOnly => Network::Blocked,
            SandboxLevel::WorkspaceWrite | SandboxLevel::Off => Network::Allowed,
        }
    }
}

/// Whether a sandboxed command may open network sockets; its name is the `[sandbox] network`
/// setting's: `on`, `off` or `proxy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, IntoStaticStr, Display, EnumString)]
#[strum(serialize_all = "lowercase")]
pub enum Network {
    /// It may.
    #[strum(serialize = "on")]
    Allowed,
    /// Only Unix sockets: creating any other socket fails with "operation not permitted".
    #[strum(serialize = "off")]
    Blocked,
    /// Only through rein's proxy (`proxy.rs`), which lets through the allowed domains: the
    /// command has a network of its own with nothing in it but the proxy's port.
    Proxy,
}

impl Network {
    /// Parses a `[sandbox] network` value: `off`, `on` or `proxy`.
    pub fn parse(text: &str) -> Option<Network> {
        text.parse().ok()
    }

    /// How much it keeps away (a project's config may only raise it).
    pub fn strictness(self) -> u8 {
        match self {
            Network::Allowed => 0,
            Network::Proxy => 1,
            Network::Blocked => 2,
        }
    }
}

/// Whether rein looks for Landlock in the kernel, or behaves as if it had none (config
/// `landlock = false`, to see the fallback on a machine that has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KernelProbe {
    /// Ask the kernel.
    #[default]
    Detect,
    /// Behave as if the kernel had no Landlock.
    AssumeNoLandlock,
}

/// The tool caches under the home directory that builds expect to write: cargo's, npm's,
/// pip's and go's (relative to the home directory).
pub const DEFAULT_CACHES: [&str; 7] = [
    ".cargo/registry",
    ".cargo/git",
    ".npm",
    ".cache/pip",
    ".cache/go-build",
    "go/pkg/mod",
    ".cache/yarn",
];

/// The sandbox for the commands of one session, resolved to paths.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SandboxPolicy {
    /// How much commands may change.
    pub level: SandboxLevel,
    /// Whether they may use the network.
    pub network: Network,
    /// With [`Network::Proxy`], the hosts the proxy lets through (`*.` names subdomains).
    pub allow_domains: Vec<String>,
    /// The trees they may write (absolute), besides [`SandboxPolicy::tmp_dir`].
    pub writable: Vec<PathBuf>,
    /// Paths inside writable trees that stay read-only (when they exist).
    pub read_only: Vec<PathBuf>,
    /// Writable directories that must stay where they are (the git directories above
    /// protected paths): bound onto themselves, so they cannot be renamed or replaced.
    pub pinned: Vec<PathBuf>,
    /// Read-only paths that must not be created either (they would point git elsewhere, or
    /// configure the next session): absent when a command starts, they cannot be
    /// bind-mounted, so they are removed after a command that creates them
    /// ([`SandboxPolicy::watch`]).
    pub watched: Vec<PathBuf>,
    /// The private temporary directory, exported as `TMPDIR`.
    pub tmp_dir: Option<PathBuf>,
    /// Whether to look for Landlock or behave as if it were missing.
    pub probe: KernelProbe,
    /// Directories and sockets of daemons outside the sandbox, hidden from commands
    /// (`hide.rs`) when they exist as a command starts; none holds a writable tree.
    pub hidden: Vec<PathBuf>,
    /// Credential stores commands see as empty (`credentials.rs`), when they exist as a
    /// command starts; none holds a writable tree.
    pub credentials: Vec<PathBuf>,
    /// Paths inside hidden ones that commands still see.
    pub exposed: Vec<PathBuf>,
    /// Whether commands may reach the ssh-agent.
    pub ssh_agent: SshAgent,
}

impl SandboxPolicy {
    /// No sandbox.
    pub fn off() -> Self {
        SandboxPolicy {
            level: SandboxLevel::Off,
            network: Network::Allowed,
            allow_domains: Vec::new(),
            writable: Vec::new(),
            read_only: Vec::new(),
            pinned: Vec::new(),
            watched: Vec::new(),
            tmp_dir: None,
            probe: KernelProbe::Detect,
            hidden: Vec::new(),
            credentials: Vec::new(),
            exposed: Vec::new(),
            ssh_agent: SshAgent::Reachable,
        }
    }

    /// Whether a sandbox is wanted at all.
    pub fn is_on(&self) -> bool {
        self.level != SandboxLevel::Off
    }

    /// Whether a command may write `path` (absolute, links resolved) under this policy, as
    /// far as the file system rules go. The deepest rule that holds `path` decides, as the
    /// deepest mount does: a writable root inside a read-only one (rein's output directory
    /// inside its home) is writable.
    pub fn may_write(&self, path: &Path) -> bool {
        match self.level {
            SandboxLevel::Off => true,
            SandboxLevel::ReadOnly | SandboxLevel::WorkspaceWrite => {
                if WRITABLE_DEVICES.iter().any(|d| path == Path::new(d)) {
                    return true;
                }
                let depth = |roots: &mut dyn Iterator<Item = &PathBuf>| {
                    roots
                        .filter(|root| path.starts_with(root))
                        .map(|root| root.components().count())
                        .max()
                };
                let granted = depth(&mut self.writable.iter().chain(self.tmp_dir.iter()));
                let protected = depth(&mut self.read_only.iter());
                match (granted, protected) {
                    (Some(granted), Some(protected)) => granted > protected,
                    (Some(_), None) => true,
                    (None, _) => false,
                }
            }
        }
    }

    /// The bind mounts of a command's private mount namespace, parents first: the
    /// read-only paths and the pinned directories inside the writable trees (Landlock
    /// grants the rest), and the writable roots inside read-only paths (which would
    /// otherwise be read-only there).
    pub fn mounts(&self) -> Vec<(PathBuf, MountAccess)> {
        let roots: Vec<&PathBuf> = self.writable.iter().chain(self.tmp_dir.iter()).collect();
        let inside = |p: &PathBuf, list: &[&PathBuf]| list.iter().any(|r| p.starts_with(r));
        let mut mounts: Vec<(PathBuf, MountAccess)> = Vec::new();
        let read_only: Vec<&PathBuf> = self
            .read_only
            .iter()
            .filter(|p| inside(p, &roots))
            .collect();
        for path in &self.pinned {
            if inside(path, &roots) && !inside(path, &read_only) {
                mounts.push((path.clone(), MountAccess::Writable));
            }
        }
        mounts.extend(
            read_only
                .iter()
                .map(|p| ((*p).clone(), MountAccess::ReadOnly)),
        );
        for root in &roots {
            if read_only.iter().any(|p| root.starts_with(p) && *root != *p) {
                mounts.push(((*root).clone(), MountAccess::Writable));
            }
        }
        mounts.sort_by_key(|(p, _)| p.components().count());
        mounts.dedup_by(|a, b| a.0 == b.0);
        mounts
    }

    /// The writable trees to grant to a command starting now: those that still resolve to
    /// where they did when the policy was made. A tree a command replaced by a link (a
    /// project's `writable = ["build"]`, then `ln -s ~ build`) is not granted: Landlock
    /// would follow the link.
    pub fn writable_now(&self) -> impl Iterator<Item = &PathBuf> {
        self.writable
            .iter()
            .filter(|root| canonical_root(root) == **root)
    }

    /// Notes which watched paths are absent now, before a command runs; [`PlantWatch::sweep`]
    /// after it removes those it created.
    pub fn watch(&self) -> PlantWatch {
        PlantWatch::before(&self.watched)
    }
}

/// How a path is bound onto itself in a command's private mount namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountAccess {
    /// Nothing under it can be written.
    ReadOnly,
    /// As writable as Landlock lets it be; it cannot be renamed or replaced.
    Writable,
}

/// Device files every level may write (and open for ioctl), so that `> /dev/null` and
/// terminals work.
pub(crate) const WRITABLE_DEVICES: [&str; 5] = [
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/tty",
    "/dev/ptmx",
];

/// What a policy is worked out from.
#[derive(Debug, Clone)]
pub struct PolicyInputs<'a> {
    /// The level wanted.
    pub level: SandboxLevel,
    /// The network, when configured; otherwise the level's default.
    pub network: Option<Network>,
    /// The workspace (canonical).
    pub workspace: &'a Path,
    /// The home directory, for the caches and the `/tmp` rule.
    pub home_dir: Option<&'a Path>,
    /// rein's home (config, trusted projects, sessions, skills): read-only as a whole, but
    /// for [`PolicyInputs::rein_dirs`].
    pub rein_home: Option<&'a Path>,
    /// rein's own files that stay read-only wherever they are (its config file, its list of
    /// trusted projects: rein-core knows their names).
    pub rein_files: &'a [PathBuf],
    /// The git directories of the repository the workspace lies in, when they are outside
    /// it (a workspace in a subdirectory of a repository, or a linked worktree), or a
    /// `.git` file's targets: writable, with their hooks and config protected.
    pub git_dirs: &'a [PathBuf],
    /// The tool caches, relative to the home directory (or absolute).
    pub caches: &'a [PathBuf],
    /// More writable trees (configured).
    pub extra_writable: &'a [PathBuf],
    /// Trees taken out of the writable ones (configured): a root equal to or under one of
    /// these is dropped (`/tmp`, a cache), one above it keeps it read-only inside.
    pub not_writable: &'a [PathBuf],
    /// The private temporary directory.
    pub tmp_dir: Option<&'a Path>,
    /// Directories rein itself writes for the command (the offload directory, where bash
    /// writes its final directory).
    pub rein_dirs: &'a [PathBuf],
    /// How to probe the kernel.
    pub probe: KernelProbe,
    /// More credential stores to hide (`[sandbox] hide`, absolute).
    pub hide: &'a [PathBuf],
    /// Paths to leave visible (`[sandbox] expose`, absolute): a store equal to or under one
    /// is not hidden; one inside a hidden store stays visible in it.
    pub expose: &'a [PathBuf],
    /// Whether commands may reach the ssh-agent.
    pub ssh_agent: SshAgent,
    /// The ssh-agent's socket (`SSH_AUTH_SOCK`).
    pub ssh_auth_sock: Option<&'a Path>,
}

impl SandboxPolicy {
    /// The policy `inputs` describe.
    pub fn resolve(inputs: &PolicyInputs<'_>) -> SandboxPolicy {
        let level = inputs.level;
        let network = inputs.network.unwrap_or(level.default_network());
        let mut writable = Vec::new();
        let mut read_only = Vec::new();
        let mut pinned = Vec::new();
        let mut watched = Vec::new();
        if level == SandboxLevel::WorkspaceWrite {
            writable.push(inputs.workspace.to_path_buf());
            if let Some(home) = inputs.home_dir {
                writable.extend(inputs.caches.iter().map(|c| home.join(c)));
            }
            let tmp = Path::new("/tmp");
            let under_tmp = |p: &Path| p.starts_with(tmp) || canonical(p).starts_with(tmp);
            if !under_tmp(inputs.workspace)
                && !inputs.home_dir.is_some_and(under_tmp)
                && !inputs.rein_home.is_some_and(under_tmp)
            {
                writable.push(tmp.to_path_buf());
            }
            writable.push(PathBuf::from("/dev/shm"));
            writable.extend(inputs.extra_writable.iter().cloned());
            writable.extend(inputs.git_dirs.iter().cloned());
            let guards = git::guards(inputs.workspace, inputs.git_dirs);
            read_only.extend(guards.read_only);
            pinned.extend(guards.pinned);
            watched.extend(guards.watched);
            let project = inputs.workspace.join(".rein");
            read_only.push(project.clone());
            watched.push(project);
        }
        if level != SandboxLevel::Off {
            writable.extend(inputs.rein_dirs.iter().cloned());
            read_only.extend(inputs.rein_home.map(Path::to_path_buf));
            read_only.extend(inputs.rein_files.iter().cloned());
        }
        // Resolved now, so that a link put in their place later is seen
        // ([`SandboxPolicy::writable_now`]).
        let mut writable: Vec<PathBuf> = writable.iter().map(|p| canonical_root(p)).collect();
        let mut read_only: Vec<PathBuf> = read_only.iter().map(|p| canonical_root(p)).collect();
        let not_writable: Vec<PathBuf> = inputs
            .not_writable
            .iter()
            .map(|p| canonical_root(p))
            .collect();
        writable.retain(|root| !not_writable.iter().any(|gone| root.starts_with(gone)));
        read_only.extend(not_writable);
        writable.sort();
        writable.dedup();
        read_only.sort();
        read_only.dedup();
        // A read-only path inside another is protected already (sorted: parents first).
        let mut kept: Vec<PathBuf> = Vec::with_capacity(read_only.len());
        for path in read_only {
            if !kept.iter().any(|k| path.starts_with(k)) {
                kept.push(path);
            }
        }
        pinned.sort();
        pinned.dedup();
        watched.sort();
        watched.dedup();
        let (hidden, credentials) = if level == SandboxLevel::Off {
            (Vec::new(), credentials::Credentials::default())
        } else {
            let keep: Vec<&Path> = std::iter::once(inputs.workspace)
                .chain(writable.iter().map(PathBuf::as_path))
                .chain(inputs.tmp_dir)
                .collect();
            let mut hidden = super::hide::hidden_paths(
                rustix::process::getuid().as_raw(),
                super::hide::runtime_dir().as_deref(),
                &keep,
            );
            let credentials = credentials::resolve(
                inputs.home_dir,
                inputs.hide,
                inputs.expose,
                inputs.ssh_agent,
                inputs.ssh_auth_sock,
                &keep,
            );
            hidden.extend(credentials.agent_socket.iter().cloned());
            (hidden, credentials)
        };
        SandboxPolicy {
            level,
            network,
            allow_domains: Vec::new(),
            writable,
            read_only: kept,
            pinned,
            watched,
            tmp_dir: (level != SandboxLevel::Off)
                .then(|| inputs.tmp_dir.map(Path::to_path_buf))
                .flatten(),
            probe: inputs.probe,
            hidden,
            credentials: credentials.hidden,
            exposed: credentials.exposed,
            ssh_agent: inputs.ssh_agent,
        }
    }
}

/// `path` with links resolved when it exists, else as given.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// `path` with the links of its deepest existing ancestor resolved, the rest appended.
pub(crate) fn canonical_root(path: &Path) -> PathBuf {
    // `exists` (one stat) before `canonicalize` (a readlink per component): most cache
    // directories do not exist, and this runs for each of them as every session starts.
    for ancestor in path.ancestors().filter(|a| a.exists()) {
        if let Ok(real) = std::fs::canonicalize(ancestor) {
            return match path.strip_prefix(ancestor) {
                Ok(rest) if !rest.as_os_str().is_empty() => real.join(rest),
                _ => real,
            };
        }
    }
    path.to_path_buf()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inputs<'a>(workspace: &'a Path, home: &'a Path, caches: &'a [PathBuf]) -> PolicyInputs<'a> {
        PolicyInputs {
            level: SandboxLevel::WorkspaceWrite,
            network: None,
            workspace,
            home_dir: Some(home),
            rein_home: Some(Path::new("/home/u/.rein")),
            rein_files: &[],
            git_dirs: &[],
            caches,
            extra_writable: &[],
            not_writable: &[],
            tmp_dir: Some(Path::new("/var/tmp/rein-1")),
            rein_dirs: &[],
            probe: KernelProbe::Detect,
            hide: &[],
            expose: &[],
            ssh_agent: SshAgent::Hidden,
            ssh_auth_sock: None,
        }
    }

    #[test]
    fn workspace_write_grants_the_workspace_caches_and_tmp() {
        let caches = [PathBuf::from(".cargo/registry")];
        let policy = SandboxPolicy::resolve(&inputs(
            Path::new("/src/app"),
            Path::new("/home/u"),
            &caches,
        ));
        assert_eq!(policy.network, Network::Allowed);
        assert!(policy.may_write(Path::new("/src/app/main.rs")));
        assert!(policy.may_write(Path::new("/home/u/.cargo/registry/x")));
        assert!(policy.may_write(Path::new("/tmp/x")));
        assert!(policy.may_write(Path::new("/var/tmp/rein-1/x")));
        assert!(policy.may_write(Path::new("/dev/null")));
        assert!(!policy.may_write(Path::new("/home/u/.bashrc")));
        assert!(!policy.may_write(Path::new("/src/app/.git/hooks/pre-commit")));
        assert!(!policy.may_write(Path::new("/src/app/.rein/config.toml")));
        assert!(!policy.may_write(Path::new("/home/u/.rein/config.toml")));
        assert!(!policy.may_write(Path::new("/src/other")));
    }

    #[test]
    fn tmp_is_not_granted_when_it_would_grant_the_workspace_or_home() {
        let ws = SandboxPolicy::resolve(&inputs(Path::new("/tmp/ws"), Path::new("/home/u"), &[]));
        assert!(!ws.writable.contains(&PathBuf::from("/tmp")));
        assert!(ws.may_write(Path::new("/tmp/ws/a")));
        assert!(!ws.may_write(Path::new("/tmp/other")));
        let home = SandboxPolicy::resolve(&inputs(Path::new("/src"), Path::new("/tmp/h"), &[]));
        assert!(!home.writable.contains(&PathBuf::from("/tmp")));
    }

    #[test]
    fn rein_s_home_under_tmp_keeps_tmp_and_the_home_read_only() {
        let mut under = inputs(Path::new("/src/app"), Path::new("/home/u"), &[]);
        under.rein_home = Some(Path::new("/tmp/rh"));
        let offload = [PathBuf::from("/tmp/rh/tool-output/s1")];
        under.rein_dirs = &offload;
        let policy = SandboxPolicy::resolve(&under);
        assert!(!policy.writable.contains(&PathBuf::from("/tmp")));
        assert!(!policy.may_write(Path::new("/tmp/rh/config.toml")));
        assert!(!policy.may_write(Path::new("/tmp/rh/trusted-projects")));
        assert!(policy.may_write(Path::new("/tmp/rh/tool-output/s1/x")));
        // Not in a writable tree: Landlock keeps it, no mount needed.
        assert!(
            policy
                .mounts()
                .iter()
                .all(|(p, _)| !p.starts_with("/tmp/rh")),
            "{:?}",
            policy.mounts()
        );
        // Inside the workspace: read-only, and the offload directory writable again inside.
        let mut inside = inputs(Path::new("/src/app"), Path::new("/home/u"), &[]);
        inside.rein_home = Some(Path::new("/src/app/rh"));
        let offload = [PathBuf::from("/src/app/rh/tool-output/s1")];
        inside.rein_dirs = &offload;
        let policy = SandboxPolicy::resolve(&inside);
        assert_eq!(
            policy.mounts(),
            [
                (PathBuf::from("/src/app/.rein"), MountAccess::ReadOnly),
                (PathBuf::from("/src/app/rh"), MountAccess::ReadOnly),
                (PathBuf::from("/src/app/.git/config"), MountAccess::ReadOnly),
                (PathBuf::from("/src/app/.git/hooks"), MountAccess::ReadOnly),
                (
                    PathBuf::from("/src/app/rh/tool-output/s1"),
                    MountAccess::Writable
                ),
            ]
        );
    }

    #[test]
    fn rein_s_files_come_from_the_caller() {
        let files = [PathBuf::from("/etc/rein/trusted-projects")];
        let mut named = inputs(Path::new("/src/app"), Path::new("/home/u"), &[]);
        named.rein_files = &files;
        named.extra_writable = &[];
        let policy = SandboxPolicy::resolve(&named);
        assert!(policy.read_only.contains(&files[0]));
    }

    #[test]
    fn a_writable_root_replaced_by_a_link_is_not_granted() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let ws = base.join("ws");
        let home = base.join("home");
        std::fs::create_dir_all(ws.join("build")).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        let extra = [ws.join("build"), ws.join("later")];
        let mut with = inputs(&ws, &home, &[]);
        with.extra_writable = &extra;
        let policy = SandboxPolicy::resolve(&with);
        let granted =
            |policy: &SandboxPolicy| -> Vec<PathBuf> { policy.writable_now().cloned().collect() };
        assert!(granted(&policy).contains(&ws.join("build")));
        std::fs::remove_dir(ws.join("build")).unwrap();
        std::os::unix::fs::symlink(&home, ws.join("build")).unwrap();
        std::os::unix::fs::symlink(&home, ws.join("later")).unwrap();
        assert!(!granted(&policy).contains(&ws.join("build")));
        assert!(!granted(&policy).contains(&ws.join("later")));
        assert!(granted(&policy).contains(&ws));
    }

    #[test]
    fn read_only_grants_nothing_but_the_private_temp_and_devices() {
        let mut read_only = inputs(Path::new("/src/app"), Path::new("/home/u"), &[]);
        read_only.level = SandboxLevel::ReadOnly;
        let policy = SandboxPolicy::resolve(&read_only);
        assert_eq!(policy.network, Network::Blocked);
        assert!(!policy.may_write(Path::new("/src/app/main.rs")));
        assert!(!policy.may_write(Path::new("/tmp/x")));
        assert!(policy.may_write(Path::new("/dev/null")));
        assert!(policy.may_write(Path::new("/var/tmp/rein-1/x")));
    }

    #[test]
    fn configured_roots_add_and_take_away() {
        let extra = [PathBuf::from("/opt/cache")];
        let gone = [PathBuf::from("/tmp"), PathBuf::from("/src/app/secrets")];
        let mut both = inputs(Path::new("/src/app"), Path::new("/home/u"), &[]);
        both.extra_writable = &extra;
        both.not_writable = &gone;
        let policy = SandboxPolicy::resolve(&both);
        assert!(policy.may_write(Path::new("/opt/cache/a")));
        assert!(!policy.may_write(Path::new("/tmp/a")));
        assert!(!policy.may_write(Path::new("/src/app/secrets/key")));
        assert!(policy.may_write(Path::new("/src/app/src/lib.rs")));
    }

    #[test]
    fn levels_parse_and_print() {
        for level in [
            SandboxLevel::ReadOnly,
            SandboxLevel::WorkspaceWrite,
            SandboxLevel::Off,
        ] {
            assert_eq!(SandboxLevel::parse(level.into()), Some(level));
        }
        assert_eq!(SandboxLevel::parse("full"), None);
    }
}
