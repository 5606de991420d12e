//! The credential stores commands see as empty: keys, tokens and passwords under the home
//! directory that a sandboxed command could read and send away (reading is not otherwise
//! restricted). In the command's private mount namespace each directory gets an empty
//! read-only tmpfs over it and each file `/dev/null` (`protect.rs`); the person adds stores
//! with `[sandbox] hide` and takes them back with `expose`.
//!
//! The ssh-agent is a credential too: a command that reaches its socket can sign as the
//! person. It is hidden (the socket covered, `SSH_AUTH_SOCK` unset) unless the person allows
//! it; then its socket, `~/.ssh/known_hosts` and `~/.ssh/config` stay visible, and the key
//! files stay hidden: `git push` over ssh signs through the agent.
//!
//! This is the one list of them.

use std::path::{Path, PathBuf};

/// The credential stores hidden by default, relative to the home directory.
pub const DEFAULT_CREDENTIALS: [&str; 30] = [
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker/config.json",
    ".config/containers/auth.json",
    ".netrc",
    ".git-credentials",
    ".config/git/credentials",
    ".config/gh",
    ".config/hub",
    ".npmrc",
    ".pypirc",
    ".cargo/credentials.toml",
    ".cargo/credentials",
    ".gem/credentials",
    ".composer/auth.json",
    ".config/composer/auth.json",
    ".m2/settings-security.xml",
    ".terraform.d/credentials.tfrc.json",
    ".vault-token",
    ".pgpass",
    ".my.cnf",
    ".s3cfg",
    ".boto",
    ".config/rclone",
    ".password-store",
    ".local/share/keyrings",
];

/// What ssh needs, besides the agent, to push over ssh: no key in either.
const SSH_PUBLIC: [&str; 2] = [".ssh/known_hosts", ".ssh/config"];

/// Whether sandboxed commands may reach the person's ssh-agent (`SSH_AUTH_SOCK`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum SshAgent {
    /// Its socket is covered and `SSH_AUTH_SOCK` unset.
    #[default]
    Hidden,
    /// Its socket stays reachable, with `~/.ssh/known_hosts` and `~/.ssh/config`.
    Reachable,
}

/// The credentials of a policy, resolved.
#[derive(Debug, Default)]
pub(crate) struct Credentials {
    /// The stores hidden (absolute, links of their directories resolved).
    pub(crate) hidden: Vec<PathBuf>,
    /// Paths inside hidden ones that stay visible.
    pub(crate) exposed: Vec<PathBuf>,
    /// The agent's socket, when it is to be covered.
    pub(crate) agent_socket: Option<PathBuf>,
}

/// What to hide from commands: rein's list under `home` and `hide`, less what `expose`
/// names or holds (a store inside an exposed path is not hidden; an exposed path inside a
/// store stays visible in it), never a store that holds one of `keep` (the workspace, a
/// writable tree). All paths absolute.
pub(crate) fn resolve(
    home: Option<&Path>,
    hide: &[PathBuf],
    expose: &[PathBuf],
    agent: SshAgent,
    agent_socket: Option<&Path>,
    keep: &[&Path],
) -> Credentials {
    let mut exposed: Vec<PathBuf> = expose.iter().map(|p| located(p)).collect();
    let mut agent_hidden = None;
    match (agent, agent_socket.filter(|s| s.is_absolute())) {
        (SshAgent::Reachable, socket) => {
            exposed.extend(socket.map(located));
            if let Some(home) = home {
                exposed.extend(
                    SSH_PUBLIC
                        .iter()
                        .map(|p| home.join(p))
                        .filter(|p| !hide.contains(p))
                        .map(|p| located(&p)),
                );
            }
        }
        (SshAgent::Hidden, socket) => agent_hidden = socket.map(located),
    }
    let mut hidden: Vec<PathBuf> = home
        .map(|home| {
            DEFAULT_CREDENTIALS
                .iter()
                .map(|p| home.join(p))
                .collect::<Vec<_>>()
        })
        .unwrap_or_default()
        .into_iter()
        .chain(hide.iter().cloned())
        .map(|p| located(&p))
        .filter(|p| !exposed.iter().any(|e| p.starts_with(e)))
        .filter(|p| !keep.iter().any(|k| k.starts_with(p)))
        .collect();
    // Sorted by component, a directory comes right before everything below it: one pass
    // keeps the outermost (comparing each with every other cost a million instructions).
    hidden.sort();
    hidden.dedup();
    let mut outermost: Vec<PathBuf> = Vec::with_capacity(hidden.len());
    for path in hidden {
        if !outermost
            .last()
            .is_some_and(|outer| path.starts_with(outer))
        {
            outermost.push(path);
        }
    }
    let hidden = outermost;
    exposed.sort();
    exposed.dedup();
    Credentials {
        hidden,
        exposed,
        agent_socket: agent_hidden,
    }
}

/// `path` with the links of its directory resolved (where it exists), its own name kept: an
/// exposed `~/.ssh/config` that is a link must appear as `config` in the hidden `~/.ssh`.
fn located(path: &Path) -> PathBuf {
    match (path.parent(), path.file_name()) {
        (Some(parent), Some(name)) => super::policy::canonical_root(parent).join(name),
        _ => path.to_path_buf(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_inside_a_hidden_one_is_not_listed_again() {
        let home = Path::new("/nonexistent-home/u");
        let hide = [
            home.join(".config/gcloud/legacy"),
            home.join(".configx"),
            home.join(".config"),
            home.join(".ssh/keys/old"),
        ];
        let creds = resolve(Some(home), &hide, &[], SshAgent::Hidden, None, &[]);
        assert!(creds.hidden.contains(&home.join(".config")));
        assert!(creds.hidden.contains(&home.join(".configx")), "a sibling");
        assert!(creds.hidden.contains(&home.join(".ssh")));
        for inner in [".config/gcloud", ".config/gcloud/legacy", ".ssh/keys/old"] {
            assert!(!creds.hidden.contains(&home.join(inner)), "{inner}");
        }
        let mut sorted = creds.hidden.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(sorted, creds.hidden);
    }

    #[test]
    fn rein_s_list_plus_hide_less_expose_and_never_the_workspace() {
        let home = Path::new("/nonexistent-home/u");
        let hide = [home.join(".config/secret-tool"), home.join("work")];
        let expose = [home.join(".aws"), home.join(".ssh/id_ed25519.pub")];
        let work = home.join("work/app");
        let creds = resolve(
            Some(home),
            &hide,
            &expose,
            SshAgent::Hidden,
            Some(Path::new("/tmp/ssh-x/agent.1")),
            &[&work],
        );
        assert!(creds.hidden.contains(&home.join(".ssh")));
        assert!(creds.hidden.contains(&home.join(".netrc")));
        assert!(creds.hidden.contains(&home.join(".config/secret-tool")));
        assert!(!creds.hidden.contains(&home.join(".aws")), "exposed");
        assert!(
            !creds.hidden.contains(&home.join("work")),
            "holds the workspace"
        );
        assert!(creds.exposed.contains(&home.join(".ssh/id_ed25519.pub")));
        assert_eq!(
            creds.agent_socket.as_deref(),
            Some(Path::new("/tmp/ssh-x/agent.1"))
        );

        let allowed = resolve(
            Some(home),
            &[],
            &[],
            SshAgent::Reachable,
            Some(Path::new("/run/user/1/ssh-agent.socket")),
            &[],
        );
        assert_eq!(allowed.agent_socket, None);
        for path in [
            PathBuf::from("/run/user/1/ssh-agent.socket"),
            home.join(".ssh/known_hosts"),
            home.join(".ssh/config"),
        ] {
            assert!(allowed.exposed.contains(&path), "{path:?}");
        }
        assert!(
            allowed.hidden.contains(&home.join(".ssh")),
            "keys stay hidden"
        );
    }
}
