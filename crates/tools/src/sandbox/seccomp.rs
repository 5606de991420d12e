//! The system-call half of the Linux sandbox: a seccomp filter, installed in the child
//! between fork and exec, that refuses (with `EPERM`) what would escape the file-system
//! sandbox or reach another process, and, with the network off, every socket but a Unix one.

use std::collections::BTreeMap;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule, TargetArch,
};

use super::SandboxError;
use super::policy::Network;
use super::support::TRUNCATE_ABI;

/// Calls refused in every sandbox: debugging or reading other processes, changing the mount
/// table or entering namespaces, loading code into the kernel, opening files by handle
/// (which skips path checks), and what changes the machine for everyone (the clock, the
/// host name, swap, accounting, rebooting). Capabilities are dropped too (`caps.rs`); this
/// holds even where they could not be.
const ESCAPES: [i64; 37] = [
    libc::SYS_ptrace,
    libc::SYS_process_vm_readv,
    libc::SYS_process_vm_writev,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_fsopen,
    libc::SYS_fsmount,
    libc::SYS_fsconfig,
    libc::SYS_fspick,
    libc::SYS_mount_setattr,
    libc::SYS_setns,
    libc::SYS_unshare,
    libc::SYS_open_by_handle_at,
    libc::SYS_name_to_handle_at,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_keyctl,
    libc::SYS_reboot,
    libc::SYS_sethostname,
    libc::SYS_setdomainname,
    libc::SYS_settimeofday,
    libc::SYS_clock_settime,
    libc::SYS_clock_adjtime,
    libc::SYS_adjtimex,
    libc::SYS_swapon,
    libc::SYS_swapoff,
    libc::SYS_acct,
    libc::SYS_quotactl,
    libc::SYS_syslog,
];

/// Whether the metadata calls are refused: only where the read-only view cannot be had
/// (no private mount namespace), since seccomp cannot tell the workspace from the rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Metadata {
    /// The read-only view refuses them outside the writable trees.
    Allowed,
    /// Refused everywhere, the workspace included.
    Refused,
}

/// `fchmodat2` (Linux 6.6), `setxattrat` and `removexattrat` (Linux 6.13): the same number
/// on every architecture, and not in every libc yet.
const FCHMODAT2: i64 = 452;
const SETXATTRAT: i64 = 463;
const REMOVEXATTRAT: i64 = 466;

/// Changing a file's mode, owner, times or extended attributes: Landlock has no right for
/// any of them.
const METADATA: [i64; 12] = [
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    FCHMODAT2,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
];

/// The same, in the older calls only some architectures have.
#[cfg(target_arch = "x86_64")]
const METADATA_LEGACY: [i64; 8] = [
    libc::SYS_chmod,
    libc::SYS_chown,
    libc::SYS_lchown,
    libc::SYS_utime,
    libc::SYS_utimes,
    libc::SYS_futimesat,
    SETXATTRAT,
    REMOVEXATTRAT,
];
#[cfg(not(target_arch = "x86_64"))]
const METADATA_LEGACY: [i64; 2] = [SETXATTRAT, REMOVEXATTRAT];

/// Port I/O, on the architectures that have it.
#[cfg(target_arch = "x86_64")]
const PORT_IO: [i64; 2] = [libc::SYS_iopl, libc::SYS_ioperm];
#[cfg(not(target_arch = "x86_64"))]
const PORT_IO: [i64; 0] = [];

/// Terminal `ioctl`s that type into, or drive, a terminal the command shares with others:
/// `TIOCSTI` pushes keystrokes into its input (run after the sandboxed command exits, by the
/// shell that reads them), `TIOCLINUX` does the same through the console's selection.
const TERMINAL_INJECTION: [libc::Ioctl; 2] = [libc::TIOCSTI, libc::TIOCLINUX];

/// `clone` flags that would make a new namespace (the raw `unshare`).
const NAMESPACE_FLAGS: [libc::c_int; 6] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
];

/// The filters for `network` under Landlock ABI `abi`, in the order to install them: the
/// refusals (`EPERM`, [`refusals`]), and `clone3` answered with `ENOSYS` (its flags live in
/// memory a filter cannot read), so that libc falls back to `clone`, whose flags it can.
pub(crate) fn filters(
    network: Network,
    abi: u32,
    metadata: Metadata,
) -> Result<Vec<BpfProgram>, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(format!("{}: {e}", std::env::consts::ARCH)))?;
    let errno = |code: libc::c_int| SeccompAction::Errno(code.unsigned_abs());
    let refused = SeccompFilter::new(
        refusals(network, abi, metadata)?,
        SeccompAction::Allow,
        errno(libc::EPERM),
        arch,
    )
    .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        errno(libc::ENOSYS),
        arch,
    )
    .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    [refused, clone3]
        .into_iter()
        .map(|filter| {
            BpfProgram::try_from(filter).map_err(|e| SandboxError::Seccomp(e.to_string()))
        })
        .collect()
}

/// The system calls refused with `EPERM` for `network` under Landlock ABI `abi`, with
/// `metadata`: an empty rule list refuses the call always, others when one rule matches
/// its arguments.
fn refusals(
    network: Network,
    abi: u32,
    metadata: Metadata,
) -> Result<BTreeMap<i64, Vec<SeccompRule>>, SandboxError> {
    let fail = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = ESCAPES
        .iter()
        .chain(PORT_IO.iter())
        .map(|&call| (call, Vec::new()))
        .collect();
    let clone_rules = NAMESPACE_FLAGS
        .iter()
        .map(|&flag| {
            let flag = u64::from(flag.unsigned_abs());
            SeccompCondition::new(
                0,
                SeccompCmpArgLen::Qword,
                SeccompCmpOp::MaskedEq(flag),
                flag,
            )
            .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    rules.insert(libc::SYS_clone, clone_rules);
    let ioctl_rules = TERMINAL_INJECTION
        .iter()
        .map(|&request| {
            // The kernel reads the request as 32 bits: compare those, whatever lies above.
            SeccompCondition::new(
                1,
                SeccompCmpArgLen::Dword,
                SeccompCmpOp::Eq,
                // Its type differs between libcs; its value fits 32 bits.
                u64::from(request as u32),
            )
            .and_then(|c| SeccompRule::new(vec![c]))
        })
        .collect::<Result<Vec<_>, _>>()
        .map_err(fail)?;
    rules.insert(libc::SYS_ioctl, ioctl_rules);
    // Landlock before ABI 3 does not see truncate(2), which needs no open descriptor
    // (ftruncate needs one opened for writing, which Landlock does see).
    if abi < TRUNCATE_ABI {
        rules.insert(libc::SYS_truncate, Vec::new());
    }
    if metadata == Metadata::Refused {
        rules.extend(
            METADATA
                .iter()
                .chain(METADATA_LEGACY.iter())
                .map(|&call| (call, Vec::new())),
        );
    }
    match network {
        // With the proxy, the command's own network namespace holds nothing but the proxy's
        // port: sockets may be made.
        Network::Allowed | Network::Proxy => {}
        Network::Blocked => {
            let unix = u64::from(libc::AF_UNIX.unsigned_abs());
            let not_unix = |call| -> Result<(i64, Vec<SeccompRule>), SandboxError> {
                let condition =
                    SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, unix)
                        .map_err(fail)?;
                Ok((call, vec![SeccompRule::new(vec![condition]).map_err(fail)?]))
            };
            for call in [libc::SYS_socket, libc::SYS_socketpair] {
                let (call, rule) = not_unix(call)?;
                rules.insert(call, rule);
            }
            // io_uring can open sockets of its own.
            rules.insert(libc::SYS_io_uring_setup, Vec::new());
        }
    }
    Ok(rules)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_network_settings_compile_at_every_abi() {
        for network in [Network::Allowed, Network::Blocked] {
            for abi in 1..=7 {
                let programs = filters(network, abi, Metadata::Allowed).unwrap_or_default();
                assert_eq!(programs.len(), 2, "{network:?} ABI {abi}");
                assert!(programs.iter().all(|p| !p.is_empty()));
            }
        }
    }

    /// Landlock guards truncate(2) from ABI 3 on; below it seccomp must.
    #[test]
    fn truncate_is_refused_below_landlock_abi_3_only() -> Result<(), SandboxError> {
        for abi in [1, 2] {
            let rules = refusals(Network::Allowed, abi, Metadata::Allowed)?;
            assert_eq!(
                rules.get(&libc::SYS_truncate).map(Vec::len),
                Some(0),
                "ABI {abi}: truncate(2) refused always"
            );
            assert!(!rules.contains_key(&libc::SYS_ftruncate), "ABI {abi}");
        }
        for abi in [3, 6, 7] {
            assert!(
                !refusals(Network::Allowed, abi, Metadata::Allowed)?
                    .contains_key(&libc::SYS_truncate)
            );
        }
        Ok(())
    }

    #[test]
    fn machine_wide_calls_and_terminal_injection_are_refused() -> Result<(), SandboxError> {
        let rules = refusals(Network::Allowed, 7, Metadata::Allowed)?;
        for call in [
            libc::SYS_reboot,
            libc::SYS_sethostname,
            libc::SYS_setdomainname,
            libc::SYS_settimeofday,
            libc::SYS_clock_settime,
            libc::SYS_adjtimex,
            libc::SYS_init_module,
            libc::SYS_swapon,
            libc::SYS_acct,
            libc::SYS_pivot_root,
            libc::SYS_chroot,
        ] {
            assert_eq!(rules.get(&call).map(Vec::len), Some(0), "call {call}");
        }
        #[cfg(target_arch = "x86_64")]
        assert!(rules.contains_key(&libc::SYS_iopl) && rules.contains_key(&libc::SYS_ioperm));
        // ioctl is refused only for TIOCSTI and TIOCLINUX, not everywhere.
        assert_eq!(
            rules.get(&libc::SYS_ioctl).map(Vec::len),
            Some(TERMINAL_INJECTION.len())
        );
        Ok(())
    }

    /// Without the read-only view, seccomp refuses every way to change a file's metadata;
    /// with it, none (the view refuses them outside the writable trees).
    #[test]
    fn metadata_calls_are_refused_only_without_the_read_only_view() -> Result<(), SandboxError> {
        let refused = refusals(Network::Allowed, 7, Metadata::Refused)?;
        let allowed = refusals(Network::Allowed, 7, Metadata::Allowed)?;
        for call in METADATA.iter().chain(METADATA_LEGACY.iter()) {
            assert_eq!(refused.get(call).map(Vec::len), Some(0), "call {call}");
            assert!(!allowed.contains_key(call), "call {call}");
        }
        assert_eq!(filters(Network::Blocked, 7, Metadata::Refused)?.len(), 2);
        Ok(())
    }
}
