//! macOS: the same levels as a Seatbelt profile for `sandbox-exec`. The profile is generated
//! on every platform (and tested on Linux); only macOS runs it.
//!
//! Seatbelt, unlike Landlock, can deny a path inside an allowed tree: the read-only paths
//! are denied after the writable trees are allowed (later rules win).

use std::fmt::Write as _;
use std::path::Path;

use super::policy::{Network, SandboxLevel, SandboxPolicy, WRITABLE_DEVICES};

/// The program that applies a profile.
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// The profile for `policy`: reading, running programs and signalling its own processes are
/// allowed; writing only where the policy grants; the network as it says.
pub fn profile(policy: &SandboxPolicy) -> String {
    let mut out = String::from(
        "(version 1)\n\
         (deny default)\n\
         (allow process-exec process-fork)\n\
         (allow signal (target same-sandbox))\n\
         (allow process-info* (target same-sandbox))\n\
         (allow file-read*)\n\
         (allow sysctl-read)\n\
         (allow mach-lookup)\n\
         (allow ipc-posix-shm)\n\
         (allow pseudo-tty)\n\
         (allow file-ioctl (literal \"/dev/tty\"))\n",
    );
    let mut write = String::new();
    for device in WRITABLE_DEVICES {
        let _ = write!(write, " (literal {})", quoted(Path::new(device)));
    }
    if policy.level != SandboxLevel::Off {
        for root in policy.writable.iter().chain(policy.tmp_dir.iter()) {
            let _ = write!(write, " (subpath {})", quoted(root));
        }
    }
    let _ = writeln!(out, "(allow file-write*{write})");
    if !policy.read_only.is_empty() {
        let mut deny = String::new();
        for path in &policy.read_only {
            let _ = write!(deny, " (subpath {})", quoted(path));
        }
        let _ = writeln!(out, "(deny file-write*{deny})");
        // A writable root inside a read-only path (rein's output directory inside its home).
        let mut again = String::new();
        for root in policy.writable.iter().chain(policy.tmp_dir.iter()) {
            if policy
                .read_only
                .iter()
                .any(|p| root.starts_with(p) && root != p)
            {
                let _ = write!(again, " (subpath {})", quoted(root));
            }
        }
        if !again.is_empty() {
            let _ = writeln!(out, "(allow file-write*{again})");
        }
    }
    // The credential stores read as missing (Seatbelt cannot show them empty); what is
    // exposed inside one is allowed again after.
    if !policy.credentials.is_empty() {
        let mut deny = String::new();
        for path in &policy.credentials {
            let _ = write!(deny, " (subpath {})", quoted(path));
        }
        let _ = writeln!(out, "(deny file-read* file-write*{deny})");
        let mut again = String::new();
        for path in &policy.exposed {
            let _ = write!(again, " (subpath {})", quoted(path));
        }
        if !again.is_empty() {
            let _ = writeln!(out, "(allow file-read*{again})");
        }
    }
    match policy.network {
        Network::Allowed => out.push_str("(allow network*)\n"),
        // The proxy needs Linux namespaces: `Sandbox::new` turns it into `Blocked` elsewhere.
        Network::Blocked | Network::Proxy => {
            out.push_str("(allow network* (remote unix-socket))\n");
        }
    }
    out
}

/// A path as a Seatbelt string literal.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

/// Runs `command` under the profile: `sandbox-exec -p PROFILE PROGRAM ARGS...`, keeping its
/// directory and environment. Its pipes are not carried over: set them afterwards.
#[cfg(target_os = "macos")]
pub(crate) fn wrap(command: &mut tokio::process::Command, policy: &SandboxPolicy) {
    let std = command.as_std();
    let mut wrapped = tokio::process::Command::new(SANDBOX_EXEC);
    wrapped
        .arg("-p")
        .arg(profile(policy))
        .arg(std.get_program())
        .args(std.get_args());
    if let Some(dir) = std.get_current_dir() {
        wrapped.current_dir(dir);
    }
    for (key, value) in std.get_envs() {
        match value {
            Some(value) => wrapped.env(key, value),
            None => wrapped.env_remove(key),
        };
    }
    *command = wrapped;
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::sandbox::policy::KernelProbe;

    fn policy(level: SandboxLevel, network: Network) -> SandboxPolicy {
        SandboxPolicy {
            level,
            network,
            allow_domains: Vec::new(),
            writable: vec![PathBuf::from("/src/app"), PathBuf::from("/tmp")],
            read_only: vec![PathBuf::from("/src/app/.git/hooks")],
            pinned: Vec::new(),
            watched: Vec::new(),
            tmp_dir: Some(PathBuf::from("/var/folders/x/rein-1")),
            probe: KernelProbe::Detect,
            hidden: Vec::new(),
            credentials: Vec::new(),
            exposed: Vec::new(),
            ssh_agent: crate::sandbox::SshAgent::Hidden,
        }
    }

    #[test]
    fn workspace_write_allows_its_trees_and_denies_the_protected_paths_after() {
        let text = profile(&policy(SandboxLevel::WorkspaceWrite, Network::Allowed));
        let allow = text.find("(allow file-write*").unwrap_or(usize::MAX);
        let deny = text.find("(deny file-write* (subpath \"/src/app/.git/hooks\"))");
        assert!(text.starts_with("(version 1)\n(deny default)\n"), "{text}");
        assert!(text.contains("(subpath \"/src/app\")"), "{text}");
        assert!(
            text.contains("(subpath \"/var/folders/x/rein-1\")"),
            "{text}"
        );
        assert!(text.contains("(literal \"/dev/null\")"), "{text}");
        assert!(deny.is_some_and(|d| d > allow), "{text}");
        assert!(text.contains("(allow network*)\n"), "{text}");
    }

    #[test]
    fn a_writable_root_inside_a_read_only_path_is_allowed_again_after_it() {
        let mut inside = policy(SandboxLevel::WorkspaceWrite, Network::Allowed);
        inside.read_only.push(PathBuf::from("/home/u/.rein"));
        inside
            .writable
            .push(PathBuf::from("/home/u/.rein/tool-output/s1"));
        let text = profile(&inside);
        let deny = text
            .find("(subpath \"/home/u/.rein\")")
            .unwrap_or(usize::MAX);
        let again = text.rfind("(allow file-write* (subpath \"/home/u/.rein/tool-output/s1\"))");
        assert!(again.is_some_and(|a| a > deny), "{text}");
    }

    #[test]
    fn credential_stores_are_denied_and_what_is_exposed_allowed_again_after() {
        let mut hiding = policy(SandboxLevel::WorkspaceWrite, Network::Allowed);
        hiding.credentials.push(PathBuf::from("/Users/u/.ssh"));
        hiding
            .exposed
            .push(PathBuf::from("/Users/u/.ssh/known_hosts"));
        let text = profile(&hiding);
        let deny = text.find("(deny file-read* file-write* (subpath \"/Users/u/.ssh\"))");
        let again = text.find("(allow file-read* (subpath \"/Users/u/.ssh/known_hosts\"))");
        assert!(deny.is_some_and(|d| again.is_some_and(|a| a > d)), "{text}");
    }

    #[test]
    fn network_off_leaves_unix_sockets_only() {
        let text = profile(&policy(SandboxLevel::ReadOnly, Network::Blocked));
        assert!(
            text.contains("(allow network* (remote unix-socket))"),
            "{text}"
        );
        assert!(!text.contains("(allow network*)\n"), "{text}");
    }

    #[test]
    fn quotes_in_paths_are_escaped() {
        assert_eq!(quoted(Path::new("/a\"b\\c")), "\"/a\\\"b\\\\c\"");
    }
}
