//! Opening files beneath an allowed directory in one step, so that what was checked is what
//! is opened.
//!
//! [`crate::paths::resolve`] follows every symbolic link and checks where the path really
//! leads. Opening that path again by name would follow links anew: a link swapped in between
//! (by any process, at any moment) would send the read or the write outside the workspace. So
//! the checked, link-free path is opened relative to a descriptor of the allowed directory
//! that contains it, refusing any link on the way and any escape above that directory:
//!
//! - On Linux 5.6 and later, one `openat2` call with `RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS`
//!   does it, in the kernel.
//! - Where `openat2` is missing (older kernels, seccomp filters that answer ENOSYS or EPERM)
//!   and on other systems, the same walk is done one component at a time with `openat` and
//!   `O_NOFOLLOW`: equally safe for a path with no `..` and no links, one call per component.
//!
//! A link that appears after the check makes the open fail ([`changed_error`]); nothing is
//! read or written through it. Links inside the workspace still work: the path was resolved
//! through them before it got here. Writes use the parent directory's descriptor for the
//! temporary file, the rename and the clean-up, so all three happen in the directory that was
//! checked.

use std::ffi::{OsStr, OsString};
use std::fs::{File, Metadata};
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
#[cfg(target_os = "linux")]
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use rustix::io::Errno;

use crate::ToolContext;

/// Flags for a directory that is only walked through or used as a base for `*at` calls.
#[cfg(target_os = "linux")]
const DIR_FLAGS: OFlags = OFlags::PATH.union(OFlags::DIRECTORY).union(OFlags::CLOEXEC);
#[cfg(not(target_os = "linux"))]
const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// Set once `openat2` has failed in a way that means it cannot be used in this process.
#[cfg(target_os = "linux")]
static OPENAT2_UNUSABLE: AtomicBool = AtomicBool::new(false);

/// How to walk from the allowed directory to the target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Walk {
    /// `openat2` where the kernel has it, else [`Walk::PerComponent`].
    Best,
    /// `openat` with `O_NOFOLLOW`, one component at a time.
    #[cfg_attr(
        not(test),
        expect(
            dead_code,
            reason = "chosen at run time only when openat2 fails; tests force it"
        )
    )]
    PerComponent,
}

/// A checked path, split into the allowed directory that holds it and the part below.
#[derive(Debug)]
pub(crate) struct Confined {
    /// The allowed directory, absent when it does not exist (yet).
    root: Option<OwnedFd>,
    root_path: PathBuf,
    /// The components below the root: normal names only, none of them a link at check time.
    below: Vec<OsString>,
    walk: Walk,
}

/// What is at a confined path, found without following a link and without opening anything
/// but a regular file for reading (opening a FIFO blocks; opening a device can do things).
#[derive(Debug)]
pub(crate) enum Target {
    /// A regular file, open for reading.
    File(File, Metadata),
    /// A directory.
    Directory,
    /// Something else: a device, a socket or a FIFO.
    Other(FileType),
    /// Nothing.
    Missing,
}

/// The directory a confined path lies in, and the name within it.
#[derive(Debug)]
pub(crate) struct ParentDir {
    fd: OwnedFd,
    name: OsString,
}

/// What a file that is not regular nor a directory is, for messages.
pub(crate) fn describe(file_type: FileType) -> &'static str {
    match file_type {
        FileType::Fifo => "a named pipe",
        FileType::Socket => "a socket",
        FileType::CharacterDevice => "a character device",
        FileType::BlockDevice => "a block device",
        FileType::Symlink => "a symbolic link",
        FileType::RegularFile => "a file",
        FileType::Directory => "a directory",
        FileType::Unknown => "a special file",
    }
}

/// The error for a path that changed between the check and the open.
pub(crate) fn changed_error() -> io::Error {
    io::Error::other(
        "a symbolic link appeared on the path while rein was opening it, so nothing was read \
         or written; check the path and try again",
    )
}

impl Confined {
    /// Splits `path` (as [`crate::paths::resolve`] returned it: absolute, canonical) at the
    /// allowed directory that contains it and opens that directory.
    pub(crate) fn new(ctx: &ToolContext, path: &Path) -> io::Result<Confined> {
        Confined::with_walk(ctx, path, Walk::Best)
    }

    /// [`Confined::new`] with a chosen way to walk (tests use both).
    pub(crate) fn with_walk(ctx: &ToolContext, path: &Path, walk: Walk) -> io::Result<Confined> {
        let roots = crate::paths::open_roots(ctx);
        let (root, rest) = roots
            .iter()
            .find_map(|root| Some((root, path.strip_prefix(root).ok()?)))
            .ok_or_else(|| io::Error::other("the path is outside every allowed directory"))?;
        let mut below = Vec::new();
        for component in rest.components() {
            match component {
                Component::Normal(name) => below.push(name.to_owned()),
                Component::CurDir => {}
                // A resolved path has none of these; refuse rather than guess.
                Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                    return Err(io::Error::other("the path is not in canonical form"));
                }
            }
        }
        let root_path = root.clone();
        let root = match rustix::fs::open(root, DIR_FLAGS, Mode::empty()) {
            Ok(fd) => Some(fd),
            Err(Errno::NOENT) => None,
            Err(err) => return Err(err.into()),
        };
        Ok(Confined {
            root,
            root_path,
            below,
            walk,
        })
    }

    /// What is at the path now.
    pub(crate) fn target(&self) -> io::Result<Target> {
        self.locate().map(|(_, target)| target)
    }

    /// What is at the path now, and the directory it lies in when that exists (none for an
    /// allowed directory itself, or when a directory on the way is missing).
    pub(crate) fn locate(&self) -> io::Result<(Option<ParentDir>, Target)> {
        if self.below.is_empty() {
            let target = if self.root.is_some() {
                Target::Directory
            } else {
                Target::Missing
            };
            return Ok((None, target));
        }
        match self.parent() {
            Ok(parent) => {
                let target = parent.target()?;
                Ok((Some(parent), target))
            }
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok((None, Target::Missing)),
            Err(err) => Err(err),
        }
    }

    /// The directory the path lies in; fails with `NotFound` when it does not exist.
    pub(crate) fn parent(&self) -> io::Result<ParentDir> {
        let (name, dirs) = self.split_name()?;
        let root = self.root.as_ref().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::NotFound,
                "the allowed directory does not exist",
            )
        })?;
        let fd = open_dir(root, dirs, self.walk)?;
        Ok(ParentDir {
            fd,
            name: name.to_owned(),
        })
    }

    /// The directory the path lies in, creating the missing ones (mode 0777 minus the umask,
    /// as `mkdir -p` does) without following a link.
    pub(crate) fn create_parent(&self) -> io::Result<ParentDir> {
        let (name, dirs) = self.split_name()?;
        let mut fd = match &self.root {
            Some(root) => root.try_clone()?,
            None => {
                // An allowed directory is configured, not chosen by the model: make it as
                // named (the offload directory, say, before anything was saved in it).
                std::fs::create_dir_all(&self.root_path)?;
                rustix::fs::open(&self.root_path, DIR_FLAGS, Mode::empty())?
            }
        };
        for dir in dirs {
            fd = match rustix::fs::openat(&fd, dir, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty()) {
                Ok(next) => next,
                Err(Errno::NOENT) => {
                    match rustix::fs::mkdirat(&fd, dir, Mode::from_bits_truncate(0o777)) {
                        Ok(()) | Err(Errno::EXIST) => {}
                        Err(err) => return Err(err.into()),
                    }
                    rustix::fs::openat(&fd, dir, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())
                        .map_err(|err| walk_error(&fd, dir, err))?
                }
                Err(err) => return Err(walk_error(&fd, dir, err)),
            };
        }
        Ok(ParentDir {
            fd,
            name: name.to_owned(),
        })
    }

    fn split_name(&self) -> io::Result<(&OsStr, &[OsString])> {
        match self.below.split_last() {
            Some((name, dirs)) => Ok((name, dirs)),
            None => Err(io::Error::new(
                io::ErrorKind::IsADirectory,
                "the path is an allowed directory itself",
            )),
        }
    }
}

impl ParentDir {
    /// The directory's descriptor, for `*at` calls.
    pub(crate) fn fd(&self) -> &OwnedFd {
        &self.fd
    }

    /// The file name within the directory.
    pub(crate) fn name(&self) -> &OsStr {
        &self.name
    }

    /// What is at the name now, without following a link.
    pub(crate) fn target(&self) -> io::Result<Target> {
        // O_PATH opens nothing (no side effects, no blocking) but pins the inode; the file is
        // then opened for reading only if it is regular, and must still be the same inode.
        let flags = path_only_flags() | OFlags::NOFOLLOW;
        let pinned = match rustix::fs::openat(&self.fd, &self.name, flags, Mode::empty()) {
            Ok(fd) => fd,
            Err(Errno::NOENT) => return Ok(Target::Missing),
            Err(Errno::LOOP) => return Err(changed_error()),
            Err(err) => return Err(err.into()),
        };
        let stat = rustix::fs::fstat(&pinned)?;
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {}
            FileType::Directory => return Ok(Target::Directory),
            // The path was resolved through every link before: this one is new.
            FileType::Symlink => return Err(changed_error()),
            other => return Ok(Target::Other(other)),
        }
        // Non-blocking: a FIFO swapped in since the check must not hang the open (the inode
        // check below then refuses it); reads of a regular file ignore the flag.
        let read_flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NOCTTY | OFlags::CLOEXEC | OFlags::NONBLOCK;
        let fd =
            rustix::fs::openat(&self.fd, &self.name, read_flags, Mode::empty()).map_err(|err| {
                match err {
                    Errno::LOOP => changed_error(),
                    other => other.into(),
                }
            })?;
        let opened = rustix::fs::fstat(&fd)?;
        if (opened.st_dev, opened.st_ino) != (stat.st_dev, stat.st_ino) {
            return Err(changed_error());
        }
        let file = File::from(fd);
        let meta = file.metadata()?;
        Ok(Target::File(file, meta))
    }

    /// Removes `name` from the directory (best effort is the caller's choice).
    pub(crate) fn remove(&self, name: &OsStr) -> io::Result<()> {
        rustix::fs::unlinkat(&self.fd, name, AtFlags::empty()).map_err(Into::into)
    }
}

/// Flags that open a name without reading it: `O_PATH` where the system has it.
fn path_only_flags() -> OFlags {
    #[cfg(target_os = "linux")]
    {
        OFlags::PATH | OFlags::CLOEXEC
    }
    #[cfg(not(target_os = "linux"))]
    {
        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC
    }
}

/// Opens the directory `dirs` below `root`, following no link and never leaving `root`.
fn open_dir(root: &OwnedFd, dirs: &[OsString], walk: Walk) -> io::Result<OwnedFd> {
    #[cfg(target_os = "linux")]
    if walk == Walk::Best && !OPENAT2_UNUSABLE.load(Ordering::Relaxed) {
        use rustix::fs::ResolveFlags;
        let below: PathBuf = dirs.iter().collect();
        let below = if dirs.is_empty() {
            Path::new(".")
        } else {
            below.as_path()
        };
        let resolve =
            ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
        match rustix::fs::openat2(root, below, DIR_FLAGS, Mode::empty(), resolve) {
            Ok(fd) => return Ok(fd),
            // A link on the way (NO_SYMLINKS) or a way out (BENEATH).
            Err(Errno::LOOP | Errno::XDEV) => return Err(changed_error()),
            // No openat2 here (old kernel), or a seccomp filter refuses it: walk instead,
            // from now on.
            Err(Errno::NOSYS | Errno::PERM) => OPENAT2_UNUSABLE.store(true, Ordering::Relaxed),
            Err(err) => return Err(err.into()),
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = walk;
    let mut fd = root.try_clone()?;
    for dir in dirs {
        fd = rustix::fs::openat(&fd, dir, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())
            .map_err(|err| walk_error(&fd, dir, err))?;
    }
    Ok(fd)
}

/// The error for a failed step of the walk: a link where a directory was checked means the
/// path changed.
fn walk_error(dir: &impl AsFd, name: &OsStr, err: Errno) -> io::Error {
    match err {
        Errno::LOOP => changed_error(),
        Errno::NOTDIR => {
            let is_link = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)
                .is_ok_and(|stat| FileType::from_raw_mode(stat.st_mode) == FileType::Symlink);
            if is_link { changed_error() } else { err.into() }
        }
        other => other.into(),
    }
}

#[cfg(test)]
#[path = "beneath_tests.rs"]
mod tests;
