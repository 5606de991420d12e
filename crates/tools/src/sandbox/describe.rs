//! The sandbox in words: what is enforced here, for `rein sandbox --explain` and warnings.

use std::fmt::Write as _;
use std::path::Path;

use super::explain::{abi_limits, credential_lines, hidden_lines, process_lines, view_lines};
use super::{Enforcement, Network, Platform, Sandbox, policy};

impl Sandbox {
    /// What is enforced here, in words, for `rein sandbox --explain` and warnings.
    pub fn describe(&self) -> String {
        let policy = &self.inner().policy;
        let support = self.inner().support;
        let mut out = String::new();
        match &self.inner().enforcement {
            Enforcement::Off => {
                out.push_str("sandbox: off (commands can change anything rein can)\n");
                return out;
            }
            Enforcement::Unavailable(why) => {
                let _ = writeln!(
                    out,
                    "sandbox: {} was asked for, but NOTHING is enforced: {why}.\n  Commands run \
                     with the permission checks alone.",
                    policy.level
                );
                return out;
            }
            Enforcement::Enforced => {}
        }
        let _ = writeln!(out, "sandbox: {}, enforced", policy.level);
        match support.platform {
            Platform::Linux => {
                let abi = support.landlock_abi.unwrap_or_default();
                let _ = writeln!(
                    out,
                    "  file system: Landlock ABI {abi} (reading and running programs everywhere; \
                     writing only below)"
                );
                out.push_str(&abi_limits(abi));
            }
            Platform::MacOs => {
                out.push_str("  file system: Seatbelt (sandbox-exec with a generated profile)\n");
            }
            Platform::Other => {}
        }
        out.push_str("  writable:\n");
        for device in policy::WRITABLE_DEVICES {
            let _ = writeln!(out, "    {device}");
        }
        for root in &policy.writable {
            let missing = if root.exists() {
                ""
            } else {
                " (absent: not granted)"
            };
            let _ = writeln!(out, "    {}{missing}", root.display());
        }
        if let Some(tmp) = &policy.tmp_dir {
            let _ = writeln!(
                out,
                "    {} (private temporary directory, TMPDIR)",
                tmp.display()
            );
        }
        let kept: Vec<&Path> = policy
            .read_only
            .iter()
            .map(AsRef::as_ref)
            .filter(|p: &&Path| p.exists())
            .collect();
        if !kept.is_empty() {
            let how = match support.platform {
                Platform::Linux if support.mount_namespace => {
                    "kept read-only (read-only bind mounts in a private mount namespace)"
                }
                Platform::Linux => {
                    "NOT protected: this system gives no private mount namespace, and Landlock \
                     cannot take back part of a writable tree"
                }
                Platform::MacOs | Platform::Other => "kept read-only",
            };
            let _ = writeln!(out, "  inside the writable trees, {how}:");
            for path in kept {
                let _ = writeln!(out, "    {}", path.display());
            }
        }
        if support.platform == Platform::Linux {
            out.push_str(&view_lines(support));
            out.push_str(&hidden_lines(policy, support));
            out.push_str(&credential_lines(policy, support));
        }
        out.push_str(&self.network_lines());
        if support.platform == Platform::Linux {
            out.push_str(&process_lines(
                support.landlock_abi.unwrap_or_default(),
                policy.network,
            ));
        }
        out.push_str(
            "  still reachable: Unix sockets elsewhere (a `tmux -S PATH` server, a gpg-agent \
             outside ~/.gnupg, any daemon listening on a path or, with the network on, an abstract name or a \
             local port) can run what they are asked outside the sandbox; what a command \
             leaves in a writable tree (tool caches, /tmp, the workspace) can be run later by \
             something outside it\n",
        );
        out
    }

    /// The network policy, in words.
    fn network_lines(&self) -> String {
        let policy = &self.inner().policy;
        let mut out = String::new();
        let what = match (policy.network, self.inner().support.platform) {
            (Network::Allowed, _) => "on (not filtered: any host, this machine's included)",
            (Network::Blocked, Platform::Linux) => "off (seccomp: no socket but a Unix one)",
            (Network::Blocked, _) => "off (Unix sockets only)",
            (Network::Proxy, _) => {
                "through rein's proxy only (each command gets a network namespace of its own \
                 where nothing but the proxy is reachable, loopback included; HTTP_PROXY and \
                 HTTPS_PROXY point at it)"
            }
        };
        let _ = writeln!(out, "  network: {what}");
        if let Some(why) = &self.inner().proxy_fallback {
            let _ = writeln!(out, "    {why}: the network is OFF instead");
        }
        if let Some(proxy) = &self.inner().proxy {
            if proxy.allowed().is_empty() {
                out.push_str("    allowed hosts: none ([sandbox] allow_domains is empty)\n");
            } else {
                let _ = writeln!(out, "    allowed hosts: {}", proxy.allowed().join(", "));
            }
            out.push_str(
                "    other hosts: asked in the REPL, an editor (ACP) or over \
                 --permission-prompt stdin (once per host and port for the session), refused \
                 in other headless runs and `rein sandbox`\n",
            );
        }
        out
    }
}
