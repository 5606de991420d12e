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

/// Calls refused in every sandbox: debugging or reading other processes, changing the mount
/// table or entering namespaces, loading code into the kernel, and opening files by handle
/// (which skips path checks).
const ESCAPES: [i64; 24] = [
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
    libc::SYS_bpf,
    libc::SYS_keyctl,
];

/// `clone` flags that would make a new namespace (the raw `unshare`).
const NAMESPACE_FLAGS: [libc::c_int; 6] = [
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWNS,
    libc::CLONE_NEWNET,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUTS,
];

/// The filters for `network`, in the order to install them: the refusals (`EPERM`), and
/// `clone3` answered with `ENOSYS` (its flags live in memory a filter cannot read), so that
/// libc falls back to `clone`, whose flags it can.
pub(crate) fn filters(network: Network) -> Result<Vec<BpfProgram>, SandboxError> {
    let arch = TargetArch::try_from(std::env::consts::ARCH)
        .map_err(|e| SandboxError::Seccomp(format!("{}: {e}", std::env::consts::ARCH)))?;
    let fail = |e: seccompiler::BackendError| SandboxError::Seccomp(e.to_string());
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> =
        ESCAPES.iter().map(|&call| (call, Vec::new())).collect();
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
    match network {
        Network::Allowed => {}
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
    let errno = |code: libc::c_int| SeccompAction::Errno(code.unsigned_abs());
    let refusals = SeccompFilter::new(rules, SeccompAction::Allow, errno(libc::EPERM), arch)
        .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    let clone3 = SeccompFilter::new(
        BTreeMap::from([(libc::SYS_clone3, Vec::new())]),
        SeccompAction::Allow,
        errno(libc::ENOSYS),
        arch,
    )
    .map_err(|e| SandboxError::Seccomp(e.to_string()))?;
    [refusals, clone3]
        .into_iter()
        .map(|filter| {
            BpfProgram::try_from(filter).map_err(|e| SandboxError::Seccomp(e.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_network_settings_compile() {
        for network in [Network::Allowed, Network::Blocked] {
            let programs = filters(network).unwrap_or_default();
            assert_eq!(programs.len(), 2, "{network:?}");
            assert!(programs.iter().all(|p| !p.is_empty()));
        }
    }
}
