//! The child's private mount namespace (inside a user namespace of its own when rein is not
//! root), for four jobs:
//! - a read-only view of the machine: every mount is made read-only, recursively (as
//!   bubblewrap's `--ro-bind / /`), and the writable trees are put back over it as they were
//!   (cloned before, with their own mounts and flags). Landlock has no right for chmod, chown,
//!   utimes or extended attributes; a read-only mount refuses them all, with EROFS;
//! - read-only paths inside writable trees (`.git/hooks`, `.git/config`, `.rein/`, rein's
//!   config): Landlock cannot take a subtree back from a tree it granted, so each is
//!   bind-mounted read-only onto itself and writes there fail with "read-only file system";
//! - the sockets of daemons outside the sandbox (`hide.rs`) and the credential stores
//!   (`credentials.rs`): an empty read-only tmpfs over each directory, `/dev/null` over each
//!   single file, and what is exposed inside a hidden directory bound back into it;
//! - the working directory entered again, so that it is the writable tree put back, not the
//!   read-only one beneath.
//!
//! The rest of the machine sees no change. Everything the child needs is prepared here, in
//! rein: the child, between fork and exec, only makes system calls on memory prepared
//! beforehand (and writes descriptors into slots allocated beforehand).

use std::ffi::{CStr, CString};
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use super::policy::MountAccess;
use super::view::{
    Attach, Hide, MOUNT_ATTR_RDONLY, MountAttr, attach, check, check_long, clone_tree,
    enter_cwd_again, hidden, outermost_roots,
};

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

/// What a command's mount namespace is made from.
#[derive(Debug)]
pub(crate) struct Spec<'a> {
    /// Make the whole machine read-only, then put `roots` back writable.
    pub(crate) read_only_view: bool,
    /// The writable trees (absolute, links resolved).
    pub(crate) roots: &'a [&'a Path],
    /// The binds inside them ([`super::SandboxPolicy::mounts`]).
    pub(crate) mounts: &'a [(PathBuf, MountAccess)],
    /// Directories and files to hide (those that exist, never one holding a root).
    pub(crate) hidden: &'a [PathBuf],
    /// Paths inside hidden directories to leave visible.
    pub(crate) exposed: &'a [PathBuf],
}

/// What the child does in its mount namespace.
#[derive(Debug)]
pub(crate) struct Protection {
    /// rein runs as root: a mount namespace needs no user namespace.
    as_root: bool,
    uid_map: Vec<u8>,
    gid_map: Vec<u8>,
    /// Whether every mount is made read-only before `roots` are put back.
    read_only_view: bool,
    roots: Vec<Attach>,
    mounts: Vec<ReadOnlyMount>,
    hidden: Vec<Hide>,
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
    /// The protection `spec` describes, for the paths that exist now (parents first; absent
    /// ones are the policy's watched paths, or were never there; a hidden one never over a
    /// root, wherever a link made since the session started points); `None` when there is
    /// nothing to do.
    pub(crate) fn new(spec: &Spec<'_>) -> io::Result<Option<Protection>> {
        let mut mounts = Vec::new();
        for (path, access) in spec.mounts {
            let Ok(real) = std::fs::canonicalize(path) else {
                continue;
            };
            mounts.push(bind_of(&real, *access)?);
        }
        let roots = if spec.read_only_view {
            outermost_roots(spec.roots)?
        } else {
            Vec::new()
        };
        let hidden = hidden(spec)?;
        if !spec.read_only_view && mounts.is_empty() && hidden.is_empty() {
            return Ok(None);
        }
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        Ok(Some(Protection {
            as_root: rustix::process::geteuid().is_root(),
            uid_map: format!("{uid} {uid} 1\n").into_bytes(),
            gid_map: format!("{gid} {gid} 1\n").into_bytes(),
            read_only_view: spec.read_only_view,
            roots,
            mounts,
            hidden,
        }))
    }

    /// In the child, between fork and exec: a private mount namespace with the read-only
    /// view, the writable trees put back, the binds, the hidden paths. Only system calls on
    /// prepared memory; the descriptors land in slots made beforehand, and are closed (all
    /// are close-on-exec too: a clone of a hidden directory must never reach the command).
    #[expect(
        unsafe_code,
        reason = "unshare, open, write and mount have no safe wrappers usable after fork; every \
                  pointer passed is to a NUL-terminated string or buffer prepared before the fork"
    )]
    pub(crate) fn enter(&mut self) -> io::Result<()> {
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
        }
        if self.read_only_view {
            self.read_only_view()?;
        }
        self.bind()?;
        self.hide()?;
        if self.read_only_view {
            enter_cwd_again()?;
        }
        Ok(())
    }

    /// Clones each writable tree as it is, makes every mount read-only, and puts the clones
    /// back in place.
    #[expect(
        unsafe_code,
        reason = "open_tree, mount_setattr and move_mount on prepared paths, after fork"
    )]
    fn read_only_view(&mut self) -> io::Result<()> {
        for root in &mut self.roots {
            root.fd = clone_tree(&root.path)?;
        }
        let attr = MountAttr {
            attr_set: MOUNT_ATTR_RDONLY,
            attr_clr: 0,
            propagation: 0,
            userns_fd: 0,
        };
        // SAFETY: a NUL-terminated path and a struct of the size passed.
        unsafe {
            check_long(libc::syscall(
                libc::SYS_mount_setattr,
                libc::AT_FDCWD,
                c"/".as_ptr(),
                libc::AT_RECURSIVE,
                &raw const attr,
                std::mem::size_of::<MountAttr>(),
            ))?;
        }
        for root in &mut self.roots {
            attach(root.fd, &root.path)?;
            root.fd = -1;
        }
        Ok(())
    }

    /// The read-only paths, pinned directories and writable-again trees inside the roots.
    #[expect(unsafe_code, reason = "mount on prepared paths, after fork")]
    fn bind(&self) -> io::Result<()> {
        for mount in &self.mounts {
            // SAFETY: NUL-terminated paths prepared before the fork.
            unsafe {
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
        }
        Ok(())
    }

    /// An empty read-only tmpfs over each hidden directory (with what is exposed in it bound
    /// back), `/dev/null` over each hidden file.
    #[expect(
        unsafe_code,
        reason = "mount, mkdir and open on prepared paths, after fork"
    )]
    fn hide(&mut self) -> io::Result<()> {
        // Cloned before anything is hidden: an exposed path may lie under another hidden one.
        for hide in &mut self.hidden {
            for exposed in &mut hide.exposed {
                exposed.fd = clone_tree(&exposed.source)?;
            }
        }
        const FLAGS: libc::c_ulong = libc::MS_NOSUID | libc::MS_NODEV | libc::MS_NOEXEC;
        for hide in &mut self.hidden {
            // SAFETY: NUL-terminated paths and options prepared before the fork.
            unsafe {
                if !hide.is_dir {
                    check(libc::mount(
                        c"/dev/null".as_ptr(),
                        hide.path.as_ptr(),
                        std::ptr::null(),
                        libc::MS_BIND,
                        std::ptr::null(),
                    ))?;
                    continue;
                }
                // Writable while the placeholders are made, read-only after.
                let first = if hide.exposed.is_empty() {
                    libc::MS_RDONLY
                } else {
                    0
                };
                check(libc::mount(
                    c"tmpfs".as_ptr(),
                    hide.path.as_ptr(),
                    c"tmpfs".as_ptr(),
                    first | FLAGS,
                    c"mode=0555,size=16k".as_ptr().cast(),
                ))?;
                if hide.exposed.is_empty() {
                    continue;
                }
                for exposed in &mut hide.exposed {
                    for dir in &exposed.dirs {
                        let made = libc::mkdir(dir.as_ptr(), 0o755);
                        if made == -1 && *libc::__errno_location() != libc::EEXIST {
                            return Err(io::Error::last_os_error());
                        }
                    }
                    if exposed.is_dir {
                        check(libc::mkdir(exposed.target.as_ptr(), 0o755))?;
                    } else {
                        let fd = libc::open(
                            exposed.target.as_ptr(),
                            libc::O_CREAT | libc::O_WRONLY | libc::O_CLOEXEC,
                            0o644,
                        );
                        check(fd)?;
                        libc::close(fd);
                    }
                    attach(exposed.fd, &exposed.target)?;
                    exposed.fd = -1;
                }
                check(libc::mount(
                    std::ptr::null(),
                    hide.path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REMOUNT | libc::MS_RDONLY | FLAGS,
                    std::ptr::null(),
                ))?;
            }
        }
        Ok(())
    }
}

/// The bind of `real` (a path that exists) with `access`.
fn bind_of(real: &Path, access: MountAccess) -> io::Result<ReadOnlyMount> {
    let stat = rustix::fs::statvfs(real)?;
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
    Ok(ReadOnlyMount {
        path: c_string(real)?,
        read_only: match access {
            MountAccess::ReadOnly => Some(libc::MS_RDONLY),
            MountAccess::Writable if flags.contains(rustix::fs::StatVfsMountFlags::RDONLY) => None,
            MountAccess::Writable => Some(0),
        },
        locked,
    })
}

/// `path` for a system call.
pub(super) fn c_string(path: &std::path::Path) -> io::Result<CString> {
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
pub(crate) fn write_proc(path: &CStr, bytes: &[u8]) -> io::Result<()> {
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
