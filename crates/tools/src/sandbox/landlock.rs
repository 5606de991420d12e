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
    RulesetAttr, RulesetCreatedAttr, Scope,
};

use super::SandboxError;
use super::policy::{Network, SandboxPolicy, WRITABLE_DEVICES};
use super::support::SCOPES_ABI;

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

/// The scopes the ruleset sets at ABI `version` (none before ABI 6): signals only to
/// processes inside the sandbox, always; with the network off, no abstract Unix socket made
/// outside it either (with it on, those stay reachable like any local TCP port).
pub(crate) fn scopes(version: u32, network: Network) -> BitFlags<Scope> {
    if version < SCOPES_ABI {
        return BitFlags::EMPTY;
    }
    match network {
        Network::Allowed => Scope::Signal.into(),
        Network::Blocked | Network::Proxy => Scope::Signal | Scope::AbstractUnixSocket,
    }
}

/// Builds the ruleset for `policy` at ABI `version`: read and execute everywhere, every
/// right in the writable trees, writing (not creating) in the device files, and the
/// [`scopes`].
pub(crate) fn ruleset(policy: &SandboxPolicy, version: u32) -> Result<OwnedFd, SandboxError> {
    let abi = abi(version);
    let all = handled(version);
    let read = AccessFs::from_read(abi);
    let fail = |err: &dyn std::fmt::Display| SandboxError::Landlock(err.to_string());
    let mut attr = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(all)
        .map_err(|e| fail(&e))?;
    let scopes = scopes(version, policy.network);
    if !scopes.is_empty() {
        attr = attr.scope(scopes).map_err(|e| fail(&e))?;
    }
    let mut ruleset = attr.create().map_err(|e| fail(&e))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scopes_start_at_abi_6_and_abstract_sockets_only_without_network() {
        for version in 1..SCOPES_ABI {
            assert!(
                scopes(version, Network::Blocked).is_empty(),
                "ABI {version}"
            );
        }
        for version in [SCOPES_ABI, 7, 9] {
            assert_eq!(
                scopes(version, Network::Allowed),
                BitFlags::from(Scope::Signal)
            );
            assert_eq!(
                scopes(version, Network::Blocked),
                Scope::Signal | Scope::AbstractUnixSocket
            );
        }
    }
}
