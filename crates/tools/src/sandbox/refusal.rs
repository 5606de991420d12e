//! Telling a failure the sandbox caused from any other, so the model can ask the person
//! instead of retrying: "the sandbox refused a write to /home/u/.bashrc".
//!
//! The kernel does not tell rein which access it refused; the command's own error lines
//! do (`Permission denied`, `Read-only file system`, `Operation not permitted`), with the
//! path, in the forms the usual tools print. A path is blamed on the sandbox only when the
//! policy does not let the command write it: a permission problem inside the workspace is
//! the command's own.

use std::path::{Path, PathBuf};

use super::policy::{Network, SandboxPolicy};
use super::proxy::HostRefusal;

/// What rein's proxy refused a command, in words.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct HostRefusals {
    /// Hosts refused because they are not listed and no one could be asked: a sandbox
    /// refusal (a headless run lists it in `permission_denials`).
    pub unlisted: Option<String>,
    /// Hosts the person refused when asked: a note for the model, nothing more to ask.
    pub person_refused: Option<String>,
}

/// Sorts the proxy's refusals into [`HostRefusals`].
pub fn host_refusals(refused: &[HostRefusal]) -> HostRefusals {
    let mut unlisted = Vec::new();
    let mut person = Vec::new();
    for refusal in refused {
        match refusal {
            HostRefusal::Unlisted(host) => unlisted.push(host.as_str()),
            HostRefusal::Refused { to, reason: None } => {
                person.push(format!("{}:{}", to.host, to.port));
            }
            HostRefusal::Refused {
                to,
                reason: Some(reason),
            } => person.push(format!("{}:{} (saying: {reason})", to.host, to.port)),
        }
    }
    HostRefusals {
        unlisted: (!unlisted.is_empty()).then(|| {
            format!(
                "the sandbox's network proxy refused a connection to {} (not in [sandbox] \
                 allow_domains)",
                unlisted.join(", ")
            )
        }),
        person_refused: (!person.is_empty()).then(|| {
            format!(
                "the person refused this command's connection to {}, asked by rein's sandbox \
                 proxy: do not retry it or reach the host another way",
                person.join(", ")
            )
        }),
    }
}

/// Error texts that mean the kernel refused a file access.
const FILE_REFUSALS: [&str; 3] = [
    "Permission denied",
    "Read-only file system",
    "Operation not permitted",
];

/// Error texts a refused socket gives.
const SOCKET_REFUSALS: [&str; 2] = ["Operation not permitted", "Errno 1]"];

/// What the sandbox refused, from a failed command's output; `None` when nothing in it
/// points at the sandbox.
pub fn refusal(output: &str, policy: &SandboxPolicy, cwd: &Path) -> Option<String> {
    if !policy.is_on() {
        return None;
    }
    let mut refused: Vec<PathBuf> = Vec::new();
    let mut socket = false;
    for line in output.lines() {
        if let Some(path) = refused_path(line, cwd)
            && !policy.may_write(&path)
            && !refused.contains(&path)
            && !refused_without_sandbox(&path)
        {
            refused.push(path);
        } else if SOCKET_REFUSALS.iter().any(|t| line.contains(t)) {
            socket = true;
        }
    }
    // A refused socket names no path: blame the network only when it is off and the
    // output is about connections.
    socket &= policy.network == Network::Blocked && mentions_network(output);
    const SHOWN: usize = 3;
    let mut parts = Vec::new();
    if !refused.is_empty() {
        let more = refused.len().saturating_sub(SHOWN);
        let listed: Vec<String> = refused
            .iter()
            .take(SHOWN)
            .map(|p| p.display().to_string())
            .collect();
        let mut text = format!("the sandbox refused a write to {}", listed.join(", "));
        if more > 0 {
            text.push_str(&format!(" and {more} more"));
        }
        parts.push(text);
    }
    if socket {
        parts.push("the sandbox has the network off, and the command tried to use it".to_owned());
    }
    (!parts.is_empty()).then(|| parts.join("; "))
}

/// Whether rein itself, outside the sandbox, may not write `path` either (`/etc/shadow` for a
/// person who is not root): then the sandbox did not cause the refusal, and leaving it would
/// not help. Known only for a path or a directory that exists.
fn refused_without_sandbox(path: &Path) -> bool {
    let probe = if path.exists() {
        path
    } else {
        match path.parent() {
            Some(parent) if parent.is_dir() => parent,
            _ => return false,
        }
    };
    rustix::fs::access(probe, rustix::fs::Access::WRITE_OK).is_err()
}

/// Whether an output is about a connection or a socket.
fn mentions_network(output: &str) -> bool {
    let lower = output.to_ascii_lowercase();
    [
        "socket", "connect", "network", "resolve", "host", "curl", "wget", "http",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// The path a "permission denied"-like error line names, resolved against `cwd`.
fn refused_path(line: &str, cwd: &Path) -> Option<PathBuf> {
    let refusal = FILE_REFUSALS.iter().find_map(|t| line.find(t))?;
    let before = &line[..refusal];
    // `rm: cannot remove '/x': Permission denied`, Python's `...: '/x'` after the text.
    let quoted = quoted_path(before).or_else(|| quoted_path(&line[refusal..]));
    let raw = match quoted {
        Some(path) => path,
        None => {
            // `bash: line 1: /x: Permission denied`: the field before the text.
            let trimmed = before.trim_end().trim_end_matches(':');
            let field = trimmed.rsplit(": ").next()?.trim();
            field.strip_prefix("cannot create ").unwrap_or(field)
        }
    };
    if raw.is_empty()
        || raw.contains('\n')
        || !(raw.starts_with('/') || raw.starts_with('.') || raw.contains('/'))
    {
        return None;
    }
    let path = cwd.join(raw);
    Some(normalize(&path))
}

/// The last quoted text (`'...'`, `"..."`, or ‘...’) in `text` that looks like a path.
fn quoted_path(text: &str) -> Option<&str> {
    for (open, close) in [('\'', '\''), ('"', '"'), ('‘', '’'), ('`', '\'')] {
        if let Some(end) = text.rfind(close) {
            let head = &text[..end];
            if let Some(start) = head.rfind(open) {
                let inner = &head[start + open.len_utf8()..];
                if inner.contains('/') {
                    return Some(inner);
                }
            }
        }
    }
    None
}

/// `path` with `.` and `..` taken out, as text, then the longest existing prefix resolved
/// (a refused write's target often does not exist; its directory does).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    let mut existing = out.clone();
    let mut rest = Vec::new();
    while !existing.exists() {
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return out,
        }
    }
    let mut real = std::fs::canonicalize(&existing).unwrap_or(existing);
    for name in rest.into_iter().rev() {
        real.push(name);
    }
    real
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::policy::{KernelProbe, SandboxLevel};

    fn policy() -> SandboxPolicy {
        SandboxPolicy {
            level: SandboxLevel::WorkspaceWrite,
            network: Network::Blocked,
            allow_domains: Vec::new(),
            writable: vec![PathBuf::from("/nonexistent-ws")],
            read_only: vec![PathBuf::from("/nonexistent-ws/.git/hooks")],
            pinned: Vec::new(),
            watched: Vec::new(),
            tmp_dir: None,
            probe: KernelProbe::Detect,
            hidden: Vec::new(),
            credentials: Vec::new(),
            exposed: Vec::new(),
            ssh_agent: crate::sandbox::SshAgent::Hidden,
        }
    }

    fn judge(output: &str) -> Option<String> {
        refusal(output, &policy(), Path::new("/nonexistent-ws/sub"))
    }

    #[test]
    fn the_usual_error_lines_name_the_path() {
        let cases = [
            (
                "bash: line 1: /nonexistent-home/.bashrc: Permission denied",
                "/nonexistent-home/.bashrc",
            ),
            (
                "rm: cannot remove '/nonexistent-home/a': Permission denied",
                "/nonexistent-home/a",
            ),
            (
                "dd: failed to open '/nonexistent-out/x': Permission denied",
                "/nonexistent-out/x",
            ),
            (
                "bash: ../../outside/secret.txt: Permission denied",
                "/outside/secret.txt",
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/nonexistent-home/x'",
                "/nonexistent-home/x",
            ),
            (
                "touch: cannot touch '/nonexistent-ws/.git/hooks/pre-commit': Read-only file system",
                "/nonexistent-ws/.git/hooks/pre-commit",
            ),
        ];
        for (line, path) in cases {
            let said = judge(line).unwrap_or_default();
            assert_eq!(
                said,
                format!("the sandbox refused a write to {path}"),
                "{line}"
            );
        }
    }

    #[test]
    fn refusals_inside_the_writable_trees_are_the_commands_own() {
        assert_eq!(judge("bash: ./build.sh: Permission denied"), None);
        assert_eq!(judge("error: something else failed"), None);
    }

    #[test]
    fn a_refused_socket_says_the_network_is_off() {
        let said = judge(
            "  File \"<string>\", line 1, in <module>\n    socket.create_connection(x)\n\
             PermissionError: [Errno 1] Operation not permitted",
        );
        assert_eq!(
            said.as_deref(),
            Some("the sandbox has the network off, and the command tried to use it")
        );
        let said = judge("curl: (7) Couldn't connect to server: Operation not permitted");
        assert!(said.is_some());
    }

    #[test]
    fn nothing_is_blamed_without_a_sandbox() {
        let off = SandboxPolicy::off();
        assert_eq!(
            refusal("bash: /etc/x: Permission denied", &off, Path::new("/")),
            None
        );
    }

    #[test]
    fn a_file_rein_could_not_write_either_is_not_blamed_on_the_sandbox() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let locked = dir.path().join("locked");
        std::fs::write(&locked, "x").unwrap_or_else(|e| panic!("{e}"));
        let line = format!("cat: {}: Permission denied", locked.display());
        let said = judge(&line);
        let writable = rustix::fs::access(&locked, rustix::fs::Access::WRITE_OK).is_ok();
        assert_eq!(said.is_some(), writable, "{said:?}");
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o444))
            .unwrap_or_else(|e| panic!("{e}"));
        // Root writes it anyway: only another user sees the refusal as the file's own.
        let root = rustix::process::geteuid().is_root();
        assert_eq!(judge(&line).is_some(), root);
    }
}
