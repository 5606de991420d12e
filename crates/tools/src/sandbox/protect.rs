//! The child's private mount namespace (inside a user namespace of its own when rein is not
//! root), for two jobs:
//! - read-only paths inside writable trees (`.git/hooks`, `.git/config`, `.rein/`, rein's
//!   config): Landlock cannot take a subtree back from a tree it granted, so each is
//!   bind-mounted read-only onto itself and writes there fail with "read-only file system";
//! - the sockets of daemons outside the sandbox (`hide.rs`): an empty read-only tmpfs over
//!   each directory of them, `/dev/null` over each single one.
//!
//! The rest of the machine sees no change. Everything the child needs is prepared here, in
//! rein: the child, between fork and exec, only makes system calls on memory prepared
//! beforehand.

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;

use super::policy::MountAccess;

/// One bind mount of a path onto itself.
#[derive(Debug)]
struct ReadOnlyMount {
    path: CString,
    /// The read-only flag of the remount: read-only, or writable (only pinned in place, or
    /// writable again inside a read-only one); `None`: no remount (a writable path on a
    /// read-only file system, which a user namespace could not make writable anyway).
    read_only: Option<libc::c_ulong>,
    /// The flags of the mount it lies on that a user namespace may not clear (`nosuid`,
    /// `nodev`, `noexec`, ...): they must be repeated in the read-only remount.
    locked: libc::c_ulong,
}

/// What the child does in its mount namespace.
#[derive(Debug)]
pub(crate) struct Protection {
    /// rein runs as root: a mount namespace needs no user namespace.
    as_root: bool,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    mounts: Vec<ReadOnlyMount>,
    /// Directories an empty read-only tmpfs hides.
    hidden_dirs: Vec<CString>,
    /// Sockets (or other files) `/dev/null` hides.
    hidden_files: Vec<CString>,
}

/// Whether a command can get a private mount namespace here: as root with
/// `CAP_SYS_ADMIN`, or through an unprivileged user namespace the system allows.
pub(crate) fn available() -> bool {
    if rustix::process::geteuid().is_root() {
        return has_cap_sys_admin();
    }
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|s| s.trim().to_owned())
    };
    let max = read("/proc/sys/user/max_user_namespaces");
    let debian = read("/proc/sys/kernel/unprivileged_userns_clone");
    let apparmor = read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns");
    max.is_some_and(|m| m != "0")
        && debian.is_none_or(|d| d != "0")
        && apparmor.is_none_or(|a| a != "1")
}

/// Whether this process holds `CAP_SYS_ADMIN` (bit 21 of its effective set).
fn has_cap_sys_admin() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|status| {
            let line = status.lines().find(|l| l.starts_with("CapEff:"))?;
            u64::from_str_radix(line.trim_start_matches("CapEff:").trim(), 16).ok()
        })
        .is_some_and(|caps| caps & (1 << CAP_SYS_ADMIN) != 0)
}

impl Protection {
    /// The protection of those of `paths` (parents first; absent ones are the policy's
    /// watched paths, or were never there) and `hidden` that exist (a hidden one never
    /// over one of `keep`, wherever a link made since the session started points); `None`
    /// when none does.
    pub(crate) fn new(
        paths: &[(std::path::PathBuf, MountAccess)],
        hidden: &[std::path::PathBuf],
        keep: &[&std::path::Path],
    ) -> io::Result<Option<Protection>> {
        let mut mounts = Vec::new();
        for (path, access) in paths {
            let Ok(real) = std::fs::canonicalize(path) else {
                continue;
            };
            let stat = rustix::fs::statvfs(&real)?;
            let flags = stat.f_flag;
            let mut locked = 0;
            for (st, ms) in [
                (rustix::fs::StatVfsMountFlags::NOSUID, libc::MS_NOSUID),
                (rustix::fs::StatVfsMountFlags::NODEV, libc::MS_NODEV),
                (rustix::fs::StatVfsMountFlags::NOEXEC, libc::MS_NOEXEC),
                (rustix::fs::StatVfsMountFlags::NOATIME, libc::MS_NOATIME),
                (
                    rustix::fs::StatVfsMountFlags::NODIRATIME,
                    libc::MS_NODIRATIME,
                ),
                (rustix::fs::StatVfsMountFlags::RELATIME, libc::MS_RELATIME),
            ] {
                if flags.contains(st) {
                    locked |= ms;
                }
            }
            mounts.push(ReadOnlyMount {
                path: c_string(&real)?,
                read_only: match access {
                    MountAccess::ReadOnly => Some(libc::MS_RDONLY),
                    MountAccess::Writable
                        if flags.contains(rustix::fs::StatVfsMountFlags::RDONLY) =>
                    {
                        None
                    }
                    MountAccess::Writable => Some(0),
                },
                locked,
            });
        }
        let mut hidden_dirs = Vec::new();
        let mut hidden_files = Vec::new();
        for path in hidden {
            let Ok(real) = std::fs::canonicalize(path) else {
                continue;
            };
            if keep.iter().any(|kept| kept.starts_with(&real)) {
                continue;
            }
            let c_path = c_string(&real)?;
            if real.is_dir() {
                hidden_dirs.push(c_path);
            } else {
                hidden_files.push(c_path);
            }
        }
        if mounts.is_empty() && hidden_dirs.is_empty() && hidden_files.is_empty() {
            return Ok(None);
        }
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        Ok(Some(Protection {
            as_root: rustix::process::geteuid().is_root(),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            mounts,
            hidden_dirs,
            hidden_files,
        }))
    }

    /// In the child, between fork and exec: a private mount namespace with the read-only
    /// binds and the hidden paths. Only system calls on prepared memory.
    #[expect(
        unsafe_code,
        reason = "unshare, open, write and mount have no safe wrappers usable after fork; every \
                  pointer passed is to a NUL-terminated string or buffer prepared before the fork"
    )]
    pub(crate) fn enter(&self) -> io::Result<()> {
        let check = |result: libc::c_int| {
            if result == -1 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        };
        // SAFETY: plain system calls with valid, NUL-terminated arguments (see above).
        unsafe {
            if self.as_root {
                check(libc::unshare(libc::CLONE_NEWNS))?;
            } else {
                // rein is not dumpable (`hide_from_commands`) and the fork inherits that,
                // which makes the child's /proc/self files root's: it could not write its
                // own maps. Dumpable just long enough to write them; exec sets it anew.
                set_dumpable(true)?;
                check(libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS))?;
                write_proc(c"/proc/self/setgroups", b"deny")?;
                write_proc(c"/proc/self/uid_map", &self.uid_map)?;
                write_proc(c"/proc/self/gid_map", &self.gid_map)?;
                set_dumpable(false)?;
            }
            // Nothing done here may reach the mounts of the rest of the machine.
            check(libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            ))?;
            for mount in &self.mounts {
                check(libc::mount(
                    mount.path.as_ptr(),
                    mount.path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                ))?;
                // A bind copies the flags of the mount it comes from: a writable path inside
                // a read-only one is remounted writable.
                let Some(read_only) = mount.read_only else {
                    continue;
                };
                check(libc::mount(
                    std::ptr::null(),
                    mount.path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REMOUNT | read_only | mount.locked,
                    std::ptr::null(),
                ))?;
            }
            for dir in &self.hidden_dirs {
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    dir.as_ptr(),
                    c"tmpfs".as_ptr(),
                    libc::MS_RDONLY | libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC,
                    c"mode=0555,size=4k".as_ptr().cast(),
                ))?;
            }
            for file in &self.hidden_files {
                check(libc::mount(
                    c"/dev/null".as_ptr(),
                    file.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND,
                    std::ptr::null(),
                ))?;
            }
        }
        Ok(())
    }
}

/// `path` for a system call.
fn c_string(path: &std::path::Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::other("a path with a NUL byte"))
}

/// Sets whether this process is dumpable (`PR_SET_DUMPABLE`).
#[expect(
    unsafe_code,
    reason = "prctl with integer arguments, allowed after fork"
)]
pub(crate) fn set_dumpable(dumpable: bool) -> io::Result<()> {
    // SAFETY: integers only.
    let result = unsafe {
        libc::prctl(
            libc::PR_SET_DUMPABLE,
            libc::c_ulong::from(dumpable),
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        )
    };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Writes `bytes` to a file of `/proc/self` (the maps of a new user namespace).
#[expect(
    unsafe_code,
    reason = "open, write and close on a prepared path and buffer, allowed after fork"
)]
pub(crate) fn write_proc(path: &std::ffi::CStr, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: `path` is NUL-terminated; `bytes` is valid for its length.
    unsafe {
        let fd = libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
        if fd == -1 {
            return Err(io::Error::last_os_error());
        }
        let written = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        let error = io::Error::last_os_error();
        libc::close(fd);
        if written < 0 || written.unsigned_abs() != bytes.len() {
            return Err(error);
        }
    }
    Ok(())
}
