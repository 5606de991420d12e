//! The read-only view and the hidden paths of a command's mount namespace (`protect.rs`
//! enters it): what is prepared for them in rein, and the mount calls the child makes on it
//! (`open_tree`, `mount_setattr`, `move_mount`: Linux 5.12).

use std::ffi::CString;
use std::io;
use std::path::{Path, PathBuf};

use super::protect::{Spec, c_string};

/// A writable tree put back over the read-only view.
#[derive(Debug)]
pub(super) struct Attach {
    pub(super) path: CString,
    /// The clone of the tree made before the view turned read-only (set in the child).
    pub(super) fd: libc::c_int,
}

/// A path inside a hidden directory that commands still see.
#[derive(Debug)]
pub(super) struct Expose {
    /// The real file or directory (links resolved), cloned before the hiding.
    pub(super) source: CString,
    /// The directories to make in the hidden directory's tmpfs, parents first.
    pub(super) dirs: Vec<CString>,
    /// Where it appears: the placeholder made in the tmpfs.
    pub(super) target: CString,
    /// The placeholder is a directory (else an empty file).
    pub(super) is_dir: bool,
    /// The clone of `source` (set in the child).
    pub(super) fd: libc::c_int,
}

/// A directory or file hidden from commands.
#[derive(Debug)]
pub(super) struct Hide {
    pub(super) path: CString,
    /// A directory (an empty tmpfs over it), else a file (`/dev/null` over it).
    pub(super) is_dir: bool,
    /// What stays visible inside it.
    pub(super) exposed: Vec<Expose>,
}

/// Whether the kernel has the mount calls of the read-only view (`open_tree`, `move_mount`,
/// `mount_setattr`: Linux 5.12): asked with a descriptor that cannot be valid, which a
/// kernel without the call answers "not implemented".
#[expect(
    unsafe_code,
    reason = "mount_setattr with an invalid descriptor and no pointers changes nothing"
)]
pub(crate) fn read_only_view_available() -> bool {
    // SAFETY: a null path and attribute pointer with size 0: the call fails before reading.
    let result = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            -1,
            std::ptr::null::<libc::c_char>(),
            0,
            std::ptr::null::<MountAttr>(),
            0usize,
        )
    };
    result == -1 && io::Error::last_os_error().raw_os_error() != Some(libc::ENOSYS)
}

/// `mount_setattr`'s argument (`struct mount_attr`).
#[repr(C)]
pub(super) struct MountAttr {
    pub(super) attr_set: u64,
    pub(super) attr_clr: u64,
    pub(super) propagation: u64,
    pub(super) userns_fd: u64,
}

/// `MOUNT_ATTR_RDONLY`.
pub(super) const MOUNT_ATTR_RDONLY: u64 = 0x1;
/// `OPEN_TREE_CLONE`.
const OPEN_TREE_CLONE: libc::c_uint = 0x1;
/// `MOVE_MOUNT_F_EMPTY_PATH`.
const MOVE_MOUNT_F_EMPTY_PATH: libc::c_uint = 0x4;

pub(super) fn check(result: libc::c_int) -> io::Result<()> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(super) fn check_long(result: libc::c_long) -> io::Result<libc::c_long> {
    if result == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

/// A detached copy of the tree at `path`, its mounts and their flags included.
#[expect(unsafe_code, reason = "open_tree on a prepared path, after fork")]
pub(super) fn clone_tree(path: &CString) -> io::Result<libc::c_int> {
    // SAFETY: a NUL-terminated path prepared before the fork.
    let fd = check_long(unsafe {
        libc::syscall(
            libc::SYS_open_tree,
            libc::AT_FDCWD,
            path.as_ptr(),
            OPEN_TREE_CLONE
                | libc::O_CLOEXEC.unsigned_abs()
                | libc::AT_RECURSIVE.unsigned_abs()
                // A tree a command replaced by a link since rein looked is not followed.
                | libc::AT_SYMLINK_NOFOLLOW.unsigned_abs(),
        )
    })?;
    libc::c_int::try_from(fd).map_err(|_| io::Error::from_raw_os_error(libc::EBADF))
}

/// Attaches the detached tree `fd` at `path`, and closes `fd`.
#[expect(
    unsafe_code,
    reason = "move_mount and close on prepared arguments, after fork"
)]
pub(super) fn attach(fd: libc::c_int, path: &CString) -> io::Result<()> {
    // SAFETY: an open descriptor, an empty NUL-terminated string and a prepared path.
    let moved = unsafe {
        libc::syscall(
            libc::SYS_move_mount,
            fd,
            c"".as_ptr(),
            libc::AT_FDCWD,
            path.as_ptr(),
            MOVE_MOUNT_F_EMPTY_PATH,
        )
    };
    let error = io::Error::last_os_error();
    // SAFETY: closes the descriptor this function was given.
    unsafe {
        libc::close(fd);
    }
    if moved == -1 { Err(error) } else { Ok(()) }
}

/// Enters the working directory again by its path: it was the directory on the mount now
/// covered (read-only), and must be the one of the writable tree put back over it.
#[expect(
    unsafe_code,
    reason = "getcwd into a stack buffer and chdir, after fork"
)]
pub(super) fn enter_cwd_again() -> io::Result<()> {
    let mut buffer = [0u8; libc::PATH_MAX as usize];
    // SAFETY: the buffer is valid for its length; getcwd NUL-terminates what it writes.
    unsafe {
        if libc::getcwd(buffer.as_mut_ptr().cast(), buffer.len()).is_null() {
            // A working directory gone, or too deep to name: stay where it is.
            return Ok(());
        }
        check(libc::chdir(buffer.as_ptr().cast()))
    }
}

/// The roots that exist and lie in no other one (a clone of the outer one holds them).
pub(super) fn outermost_roots(roots: &[&Path]) -> io::Result<Vec<Attach>> {
    let real: Vec<PathBuf> = roots
        .iter()
        .filter_map(|root| std::fs::canonicalize(root).ok())
        .collect();
    let mut outer: Vec<&PathBuf> = real
        .iter()
        .filter(|root| !real.iter().any(|o| o != *root && root.starts_with(o)))
        .collect();
    outer.sort();
    outer.dedup();
    outer
        .into_iter()
        .map(|root| {
            Ok(Attach {
                path: c_string(root)?,
                fd: -1,
            })
        })
        .collect()
}

/// The hidden paths of `spec` that exist now (never one holding a root), each with what
/// stays visible inside it.
pub(super) fn hidden(spec: &Spec<'_>) -> io::Result<Vec<Hide>> {
    let mut out = Vec::new();
    let mut seen: Vec<PathBuf> = Vec::new();
    for path in spec.hidden {
        let Ok(real) = std::fs::canonicalize(path) else {
            continue;
        };
        if spec.roots.iter().any(|root| root.starts_with(&real))
            || seen.iter().any(|s| real.starts_with(s))
        {
            continue;
        }
        seen.push(real.clone());
        let is_dir = real.is_dir();
        let mut exposed = Vec::new();
        if is_dir {
            for wanted in spec.exposed {
                if let Some(one) = exposure(&real, path, wanted)? {
                    exposed.push(one);
                }
            }
        }
        out.push(Hide {
            path: c_string(&real)?,
            is_dir,
            exposed,
        });
    }
    Ok(out)
}

/// `wanted` as seen inside the hidden directory `real` (named `named` in the policy), when
/// it lies there and exists; its placeholder keeps the name it has there, its source is
/// where its links lead.
fn exposure(real: &Path, named: &Path, wanted: &Path) -> io::Result<Option<Expose>> {
    let rest = wanted
        .strip_prefix(real)
        .or_else(|_| wanted.strip_prefix(named));
    let Ok(rest) = rest else {
        return Ok(None);
    };
    if rest.as_os_str().is_empty()
        || !rest
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)))
    {
        return Ok(None);
    }
    let Ok(source) = std::fs::canonicalize(wanted) else {
        return Ok(None);
    };
    let mut dirs = Vec::new();
    let mut at = real.to_path_buf();
    let mut components: Vec<_> = rest.components().collect();
    let last = components.pop();
    for component in components {
        at.push(component);
        dirs.push(c_string(&at)?);
    }
    if let Some(last) = last {
        at.push(last);
    }
    Ok(Some(Expose {
        is_dir: source.is_dir(),
        source: c_string(&source)?,
        dirs,
        target: c_string(&at)?,
        fd: -1,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn only_the_outermost_existing_roots_are_put_back() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        std::fs::create_dir_all(base.join("ws/inner"))?;
        std::fs::create_dir_all(base.join("tmp"))?;
        let ws = base.join("ws");
        let inner = base.join("ws/inner");
        let tmp = base.join("tmp");
        let missing = base.join("missing");
        let roots = outermost_roots(&[&inner, &ws, &tmp, &missing, &ws])?;
        let paths: Vec<&CStr> = roots.iter().map(|r| r.path.as_c_str()).collect();
        assert_eq!(
            paths,
            [c_string(&tmp)?.as_c_str(), c_string(&ws)?.as_c_str()]
        );
        Ok(())
    }

    #[test]
    fn an_exposed_path_keeps_its_name_inside_the_hidden_directory() -> io::Result<()> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let ssh = base.join(".ssh");
        std::fs::create_dir_all(ssh.join("sub"))?;
        std::fs::write(base.join("real-config"), "Host x\n")?;
        std::os::unix::fs::symlink(base.join("real-config"), ssh.join("sub/config"))?;
        let exposed = exposure(&ssh, &ssh, &ssh.join("sub/config"))?
            .ok_or_else(|| io::Error::other("not exposed"))?;
        assert_eq!(exposed.source, c_string(&base.join("real-config"))?);
        assert_eq!(exposed.target, c_string(&ssh.join("sub/config"))?);
        assert_eq!(exposed.dirs, [c_string(&ssh.join("sub"))?]);
        assert!(!exposed.is_dir);
        // Outside the hidden directory, or absent: nothing to bind back.
        assert!(exposure(&ssh, &ssh, &base.join("real-config"))?.is_none());
        assert!(exposure(&ssh, &ssh, &ssh.join("gone"))?.is_none());
        Ok(())
    }
}
