//! What a sandboxed command may touch: the level, the network, and the writable roots worked
//! out from the workspace, the home directory and the configuration.
//!
//! Landlock grants whole trees, never "this tree but not that part of it", so two rules
//! follow: `/tmp` is writable only when neither the workspace nor the home directory lies
//! under it (granting it would grant them), and the paths inside a writable root that must
//! stay read-only (`.git/hooks`, rein's own config) are protected separately, by read-only
//! bind mounts in a private mount namespace (`protect.rs`).

use std::fmt;
use std::path::{Path, PathBuf};

/// How much a sandboxed command may change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
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
    /// The name on the command line and in config.
    pub fn as_str(self) -> &'static str {
        match self {
            SandboxLevel::ReadOnly => "read-only",
            SandboxLevel::WorkspaceWrite => "workspace-write",
            SandboxLevel::Off => "off",
        }
    }

    /// The level a name means (`read-only`, `workspace-write`, `off`).
    pub fn parse(name: &str) -> Option<SandboxLevel> {
        match name {
            "read-only" => Some(SandboxLevel::ReadOnly),
            "workspace-write" => Some(SandboxLevel::WorkspaceWrite),
            "off" => Some(SandboxLevel::Off),
            _ => None,
        }
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

impl fmt::Display for SandboxLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a sandboxed command may open network sockets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Network {
    /// It may.
    Allowed,
    /// Only Unix sockets: creating any other socket fails with "operation not permitted".
    Blocked,
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
    /// The trees they may write (absolute), besides [`SandboxPolicy::tmp_dir`].
    pub writable: Vec<PathBuf>,
    /// Paths inside writable trees that stay read-only (when they exist).
    pub read_only: Vec<PathBuf>,
    /// The private temporary directory, exported as `TMPDIR`.
    pub tmp_dir: Option<PathBuf>,
    /// Whether to look for Landlock or behave as if it were missing.
    pub probe: KernelProbe,
    /// Directories and sockets of daemons outside the sandbox, hidden from commands
    /// (`hide.rs`) when they exist as a command starts; none holds a writable tree.
    pub hidden: Vec<PathBuf>,
}

impl SandboxPolicy {
    /// No sandbox.
    pub fn off() -> Self {
        SandboxPolicy {
            level: SandboxLevel::Off,
            network: Network::Allowed,
            writable: Vec::new(),
            read_only: Vec::new(),
            tmp_dir: None,
            probe: KernelProbe::Detect,
            hidden: Vec::new(),
        }
    }

    /// Whether a sandbox is wanted at all.
    pub fn is_on(&self) -> bool {
        self.level != SandboxLevel::Off
    }

    /// Whether a command may write `path` (absolute, links resolved) under this policy, as
    /// far as the file system rules go.
    pub fn may_write(&self, path: &Path) -> bool {
        match self.level {
            SandboxLevel::Off => true,
            SandboxLevel::ReadOnly | SandboxLevel::WorkspaceWrite => {
                let protected = self.read_only.iter().any(|p| path.starts_with(p));
                let granted = self
                    .writable
                    .iter()
                    .chain(self.tmp_dir.iter())
                    .any(|root| path.starts_with(root))
                    || WRITABLE_DEVICES.iter().any(|d| path == Path::new(d));
                granted && !protected
            }
        }
    }
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
    /// rein's home (its config must stay read-only).
    pub rein_home: Option<&'a Path>,
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
}

impl SandboxPolicy {
    /// The policy `inputs` describe.
    pub fn resolve(inputs: &PolicyInputs<'_>) -> SandboxPolicy {
        let level = inputs.level;
        let network = inputs.network.unwrap_or(level.default_network());
        let mut writable = Vec::new();
        let mut read_only = Vec::new();
        if level == SandboxLevel::WorkspaceWrite {
            writable.push(inputs.workspace.to_path_buf());
            if let Some(home) = inputs.home_dir {
                writable.extend(inputs.caches.iter().map(|c| home.join(c)));
            }
            let tmp = Path::new("/tmp");
            let under_tmp = |p: &Path| p.starts_with(tmp) || canonical(p).starts_with(tmp);
            if !under_tmp(inputs.workspace) && !inputs.home_dir.is_some_and(under_tmp) {
                writable.push(tmp.to_path_buf());
            }
            writable.push(PathBuf::from("/dev/shm"));
            writable.extend(inputs.extra_writable.iter().cloned());
            let git = inputs.workspace.join(".git");
            read_only.push(git.join("hooks"));
            read_only.push(git.join("config"));
            read_only.push(inputs.workspace.join(".rein"));
        }
        if level != SandboxLevel::Off {
            writable.extend(inputs.rein_dirs.iter().cloned());
            if let Some(home) = inputs.rein_home {
                read_only.push(home.join("config.toml"));
                read_only.push(home.join("trusted.json"));
            }
        }
        writable.retain(|root| {
            !inputs
                .not_writable
                .iter()
                .any(|gone| root.starts_with(gone))
        });
        read_only.extend(inputs.not_writable.iter().cloned());
        writable.sort();
        writable.dedup();
        read_only.sort();
        read_only.dedup();
        let hidden = if level == SandboxLevel::Off {
            Vec::new()
        } else {
            let keep: Vec<&Path> = std::iter::once(inputs.workspace)
                .chain(writable.iter().map(PathBuf::as_path))
                .chain(inputs.tmp_dir)
                .collect();
            super::hide::hidden_paths(
                rustix::process::getuid().as_raw(),
                super::hide::runtime_dir().as_deref(),
                &keep,
            )
        };
        SandboxPolicy {
            level,
            network,
            writable,
            read_only,
            tmp_dir: (level != SandboxLevel::Off)
                .then(|| inputs.tmp_dir.map(Path::to_path_buf))
                .flatten(),
            probe: inputs.probe,
            hidden,
        }
    }
}

/// `path` with links resolved when it exists, else as given.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
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
            caches,
            extra_writable: &[],
            not_writable: &[],
            tmp_dir: Some(Path::new("/var/tmp/rein-1")),
            rein_dirs: &[],
            probe: KernelProbe::Detect,
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
            assert_eq!(SandboxLevel::parse(level.as_str()), Some(level));
        }
        assert_eq!(SandboxLevel::parse("full"), None);
    }
}
