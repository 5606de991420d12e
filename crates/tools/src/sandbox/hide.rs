//! The Unix sockets of daemons that run what they are asked, outside the sandbox: a tmux or
//! screen server (`tmux run-shell`), the D-Bus session bus and the user's systemd
//! (`systemd-run --user`), Docker, Podman and containerd, the system bus and root's systemd,
//! an X server (keystrokes into another terminal). Connecting to a socket is not writing a
//! file, so Landlock (before ABI 9) lets it through; in the command's private mount
//! namespace each of these directories gets an empty read-only tmpfs over it, and each
//! socket `/dev/null` bound over it (`protect.rs`).
//!
//! This is the one list of them.

use std::path::{Path, PathBuf};

/// Directories of sockets, hidden whole; `{uid}` stands for the user id.
const DIRECTORIES: [&str; 5] = [
    "/run/user/{uid}",
    "/tmp/tmux-{uid}",
    "/run/screen",
    "/var/run/screen",
    "/tmp/.X11-unix",
];

/// Single sockets, each hidden behind `/dev/null`.
const SOCKETS: [&str; 7] = [
    "/run/docker.sock",
    "/var/run/docker.sock",
    "/run/podman/podman.sock",
    "/run/containerd/containerd.sock",
    "/run/dbus/system_bus_socket",
    "/var/run/dbus/system_bus_socket",
    "/run/systemd/private",
];

/// The paths to hide for user `uid` whose runtime directory (`XDG_RUNTIME_DIR`) is
/// `runtime_dir`, links resolved where they exist, leaving out any that holds one of `keep`
/// (the workspace, a writable tree: hiding it would hide them too). Absent ones stay in the
/// list: a daemon started after the session (a first `tmux`) makes its directory later, and
/// each command hides what exists when it starts.
pub(crate) fn hidden_paths(uid: u32, runtime_dir: Option<&Path>, keep: &[&Path]) -> Vec<PathBuf> {
    let uid = uid.to_string();
    // Resolved once: this runs as the session starts, for every candidate.
    let real_keep: Vec<PathBuf> = keep
        .iter()
        .filter_map(|kept| std::fs::canonicalize(kept).ok())
        .collect();
    let mut paths: Vec<PathBuf> = runtime_dir
        .filter(|dir| dir.is_absolute())
        .map(Path::to_path_buf)
        .into_iter()
        .chain(
            DIRECTORIES
                .iter()
                .chain(SOCKETS.iter())
                .map(|p| PathBuf::from(p.replace("{uid}", &uid))),
        )
        // Most do not exist: one stat each, not a readlink per component.
        .map(|p| {
            if p.exists() {
                std::fs::canonicalize(&p).unwrap_or(p)
            } else {
                p
            }
        })
        .filter(|p| {
            !keep.iter().any(|kept| kept.starts_with(p))
                && !real_keep.iter().any(|real| real.starts_with(p))
        })
        .collect();
    paths.sort();
    paths.dedup();
    // A path inside another hidden directory is hidden with it.
    let all = paths.clone();
    paths.retain(|p| !all.iter().any(|outer| outer != p && p.starts_with(outer)));
    paths
}

/// This process's runtime directory (`XDG_RUNTIME_DIR`).
///
/// Read here, in the library, because the policy's inputs have no field for it yet; the
/// uid comes from the kernel.
pub(crate) fn runtime_dir() -> Option<PathBuf> {
    std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn existing_directories_and_sockets_are_hidden_but_never_the_workspace() -> std::io::Result<()>
    {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let runtime = base.join("run-user");
        std::fs::create_dir_all(runtime.join("bus-dir"))?;
        let workspace = base.join("ws");
        std::fs::create_dir_all(&workspace)?;

        let hidden = hidden_paths(4_000_000, Some(&runtime), &[&workspace]);
        assert!(hidden.contains(&runtime), "{hidden:?}");
        // Nested paths go with their directory; absent ones stay, for a daemon started
        // later.
        assert!(!hidden.contains(&runtime.join("bus-dir")));
        assert!(
            hidden.contains(&PathBuf::from("/tmp/tmux-4000000")),
            "{hidden:?}"
        );

        // A runtime directory holding the workspace (or the workspace itself) stays.
        let around = hidden_paths(4_000_000, Some(&base), &[&workspace]);
        assert!(!around.contains(&base), "{around:?}");
        let relative = hidden_paths(4_000_000, Some(Path::new("run")), &[]);
        assert!(!relative.iter().any(|p| p.ends_with("run")), "{relative:?}");
        Ok(())
    }
}
