//! The file-system half of the Linux sandbox: a Landlock ruleset that lets the command read
//! and run everything and write only its writable trees and a few devices.
//!
//! The ruleset is built in rein (opening each path takes allocation and file descriptors,
//! which the child must not do between fork and exec); the child only calls
//! `landlock_restrict_self` on the inherited descriptor.

use std::os::fd::OwnedFd;
use std::path::Path;

use landlock::{
    ABI, Access, AccessFs, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr,
};

use super::SandboxError;
use super::policy::{SandboxPolicy, WRITABLE_DEVICES};

/// `LANDLOCK_CREATE_RULESET_VERSION`: asks for the ABI version instead of a ruleset.
const CREATE_RULESET_VERSION: libc::c_uint = 1;

/// The kernel's Landlock ABI version, or `None` without Landlock.
#[expect(
    unsafe_code,
    reason = "landlock_create_ruleset has no wrapper in libc; the version query passes no pointer"
)]
pub(crate) fn abi_version() -> Option<u32> {
    // SAFETY: a null attribute pointer with size 0 and the version flag is the documented
    // query; nothing is written.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            CREATE_RULESET_VERSION,
        )
    };
    u32::try_from(version).ok().filter(|&v| v >= 1)
}

/// The crate's name for ABI `version` (the newest it knows for later ones).
fn abi(version: u32) -> ABI {
    match version {
        0 => ABI::Unsupported,
        1 => ABI::V1,
        2 => ABI::V2,
        3 => ABI::V3,
        4 => ABI::V4,
        5 => ABI::V5,
        6 => ABI::V6,
        7 => ABI::V7,
        _ => ABI::V8,
    }
}

/// The rights the ruleset handles at ABI `version`: every file-system right except
/// connecting to Unix sockets by path (ABI 9), which would cut off ssh-agent and the like.
fn handled(version: u32) -> BitFlags<AccessFs> {
    AccessFs::from_all(abi(version))
}

/// Builds the ruleset for `policy` at ABI `version`: read and execute everywhere, every
/// right in the writable trees, writing (not creating) in the device files.
pub(crate) fn ruleset(policy: &SandboxPolicy, version: u32) -> Result<OwnedFd, SandboxError> {
    let abi = abi(version);
    let all = handled(version);
    let read = AccessFs::from_read(abi);
    let fail = |err: &dyn std::fmt::Display| SandboxError::Landlock(err.to_string());
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(|e| fail(&e))?
        .create()
        .map_err(|e| fail(&e))?;
    ruleset = ruleset
        .add_rule(PathBeneath::new(
            PathFd::new("/").map_err(|e| fail(&e))?,
            read,
        ))
        .map_err(|e| fail(&e))?;
    let device_rights =
        all & (AccessFs::WriteFile | AccessFs::ReadFile | AccessFs::Truncate | AccessFs::IoctlDev);
    for device in WRITABLE_DEVICES {
        if let Ok(fd) = PathFd::new(device) {
            ruleset = ruleset
                .add_rule(PathBeneath::new(fd, device_rights))
                .map_err(|e| fail(&e))?;
        }
    }
    // A pty the command opens lives under /dev/pts.
    if let Ok(fd) = PathFd::new("/dev/pts") {
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, device_rights))
            .map_err(|e| fail(&e))?;
    }
    for root in policy.writable_now().chain(policy.tmp_dir.iter()) {
        // A root that does not exist (a cache never used) grants nothing; it cannot be
        // created from inside either.
        if !Path::new(root).exists() {
            continue;
        }
        let fd = PathFd::new(root).map_err(|e| fail(&e))?;
        ruleset = ruleset
            .add_rule(PathBeneath::new(fd, all))
            .map_err(|e| fail(&e))?;
    }
    let fd: Option<OwnedFd> = ruleset.into();
    fd.ok_or_else(|| SandboxError::Landlock("the kernel gave no ruleset".to_owned()))
}
