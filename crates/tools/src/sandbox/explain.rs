//! `rein sandbox --explain` in words: what this machine enforces of a policy, beyond the
//! writable trees (which `Sandbox::describe` lists itself).

use std::fmt::Write as _;
use std::path::Path;

use super::SshAgent;
use super::policy::{Network, SandboxPolicy};
use super::support::{self, Support};

/// Whether the machine outside the writable trees is a read-only view, or seccomp refuses
/// the metadata calls everywhere instead, in words.
pub(super) fn view_lines(support: Support) -> String {
    if support.read_only_view {
        "  outside the writable trees: a read-only view (every mount read-only in a private \
         mount namespace, the writable trees put back over it): chmod, chown, utimes and \
         extended attributes fail there with \"Read-only file system\"\n"
            .to_owned()
    } else {
        "  outside the writable trees: NO read-only view (this system gives no private mount \
         namespace, or no mount_setattr): seccomp refuses chmod, chown, utimes and extended \
         attributes EVERYWHERE, the workspace included (chmod +x, touch of an existing file, \
         cp -p, tar restoring modes fail with \"Operation not permitted\")\n"
            .to_owned()
    }
}

/// The credential stores hidden, what stays visible in them, and the ssh-agent, in words.
pub(super) fn credential_lines(policy: &SandboxPolicy, support: Support) -> String {
    let mut out = String::new();
    let hidden: Vec<&Path> = policy
        .credentials
        .iter()
        .map(AsRef::as_ref)
        .filter(|p: &&Path| p.symlink_metadata().is_ok())
        .collect();
    if !hidden.is_empty() {
        let how = if support.mount_namespace {
            "credentials hidden (read as empty: an empty read-only directory, /dev/null for a \
             file)"
        } else {
            "credentials NOT hidden (this system gives no private mount namespace): commands \
             can read"
        };
        let _ = writeln!(out, "  {how}:");
        for path in hidden {
            let _ = writeln!(out, "    {}", path.display());
        }
    }
    let exposed: Vec<&Path> = policy
        .exposed
        .iter()
        .map(AsRef::as_ref)
        .filter(|p: &&Path| {
            p.exists()
                && policy
                    .credentials
                    .iter()
                    .chain(&policy.hidden)
                    .any(|h| p.starts_with(h))
        })
        .collect();
    if !exposed.is_empty() && support.mount_namespace {
        out.push_str("  visible inside them (`expose`, the ssh-agent):\n");
        for path in exposed {
            let _ = writeln!(out, "    {}", path.display());
        }
    }
    out.push_str(match policy.ssh_agent {
        SshAgent::Hidden => {
            "  ssh-agent: hidden (SSH_AUTH_SOCK unset, its socket covered); `[sandbox] \
             ssh_agent = true` lets `git push` over ssh sign through it\n"
        }
        SshAgent::Reachable => {
            "  ssh-agent: reachable (`ssh_agent = true`): a command can sign with your keys \
             through it, never read them\n"
        }
    });
    out
}

/// What Landlock ABI `abi` leaves to seccomp or cannot allow, in words (nothing from ABI 3).
pub(super) fn abi_limits(abi: u32) -> String {
    let mut out = String::new();
    if abi < support::TRUNCATE_ABI {
        let _ = writeln!(
            out,
            "    truncate(2) is refused everywhere by seccomp, even in the writable trees: \
             Landlock guards truncation only from ABI {} (Linux 6.2); opening with O_TRUNC \
             and ftruncate(2) work where writing does",
            support::TRUNCATE_ABI
        );
    }
    if abi < support::REFER_ABI {
        let _ = writeln!(
            out,
            "    renaming or linking a file into another directory fails with EXDEV (\"Invalid \
             cross-device link\"), even inside the writable trees: Landlock allows it only \
             from ABI {} (Linux 5.19); mv copies instead",
            support::REFER_ABI
        );
    }
    out
}

/// The hidden sockets and directories, in words.
pub(super) fn hidden_lines(policy: &SandboxPolicy, support: Support) -> String {
    let mut out = String::new();
    let hidden: Vec<&Path> = policy
        .hidden
        .iter()
        .map(AsRef::as_ref)
        .filter(|p: &&Path| p.exists())
        .collect();
    if hidden.is_empty() {
        return out;
    }
    let how = if support.mount_namespace {
        "hidden (sockets of daemons that would run commands outside the sandbox)"
    } else {
        "NOT hidden (this system gives no private mount namespace), though their daemons \
         run commands outside the sandbox"
    };
    let _ = writeln!(out, "  {how}:");
    for path in hidden {
        let what = if !support.mount_namespace {
            ""
        } else if path.is_dir() {
            " (an empty read-only directory in its place)"
        } else {
            " (/dev/null in its place)"
        };
        let _ = writeln!(out, "    {}{what}", path.display());
    }
    out
}

/// Capabilities, signals, abstract sockets and the refused system calls on Linux at
/// Landlock ABI `abi`, in words.
pub(super) fn process_lines(abi: u32, network: Network) -> String {
    let mut out = String::from(
        "  capabilities: none (all dropped, even as root; securebits locked, so running a \
         root-owned or setuid program gives none back)\n",
    );
    let scoped = abi >= support::SCOPES_ABI;
    out.push_str(if scoped {
        "  signals: only to processes started inside the same command (Landlock scope)\n"
    } else {
        "  signals: NOT restricted (Landlock scopes need ABI 6, Linux 6.12): a command can \
         signal any process of the same user\n"
    });
    out.push_str(match (network, scoped) {
        (Network::Blocked, true) => {
            "  abstract Unix sockets made outside the sandbox: refused (Landlock scope)\n"
        }
        (Network::Blocked, false) => {
            "  abstract Unix sockets made outside the sandbox: reachable (Landlock scopes \
             need ABI 6)\n"
        }
        (Network::Proxy, _) => {
            "  abstract Unix sockets made outside the sandbox: refused (a network namespace of \
             its own)\n"
        }
        (Network::Allowed, _) => "  abstract Unix sockets made outside the sandbox: reachable\n",
    });
    out.push_str(
        "  refused system calls (seccomp): ptrace and process_vm_*, mount and the new mount \
         API, pivot_root, chroot, unshare, setns and namespace clones, open_by_handle_at, \
         kernel modules, kexec, bpf, keyctl, reboot, swap, acct, quotactl, syslog, setting the \
         clock, the host or domain name, port I/O, and the TIOCSTI and TIOCLINUX ioctls \
         (typing into a terminal)\n  no_new_privs: set (setuid programs gain nothing)\n",
    );
    out
}
