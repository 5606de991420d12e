//! Capabilities: a sandboxed command keeps none.
//!
//! Run as root (containers, CI), a command would otherwise keep every capability: change
//! the host name, add network addresses, signal any process, inject keystrokes. In a user
//! namespace of its own (rein not root) it holds all of them there until exec. Between fork
//! and exec, after every step that needs capabilities (the mounts, the user-namespace maps),
//! the child locks the securebits so that running a root-owned or setuid program gives
//! nothing back, empties the bounding and ambient sets, and clears its effective, permitted
//! and inheritable sets. Only system calls on the stack; nothing allocates.

use std::io;

/// `SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
/// SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED | SECBIT_NO_CAP_AMBIENT_RAISE |
/// SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED` (`linux/securebits.h`): uid 0 gains no capability at
/// exec, and none of this can be undone.
const LOCKED_SECUREBITS: libc::c_ulong = 0b1110_1111;

/// An unused `prctl` argument, at the width the kernel reads.
const NONE: libc::c_ulong = 0;

/// `_LINUX_CAPABILITY_VERSION_3`: two 32-bit words per set.
const CAPABILITY_VERSION_3: u32 = 0x2008_0522;

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

/// In the child, between fork and exec: drops every capability for good. Where the process
/// holds no `CAP_SETPCAP` (an unprivileged user outside any namespace of its own) the
/// securebits and the bounding set cannot change, and need not: it has nothing to lose and,
/// under `no_new_privs`, nothing to gain at exec.
#[expect(
    unsafe_code,
    reason = "prctl and capset have no safe wrappers usable after fork; they get integers and \
              pointers to stack values"
)]
pub(crate) fn drop_all() -> io::Result<()> {
    let errno = || io::Error::last_os_error().raw_os_error().unwrap_or(0);
    // SAFETY: prctl with integer arguments; capset with pointers to live stack values of
    // the layout the kernel expects for version 3.
    unsafe {
        if libc::prctl(libc::PR_SET_SECUREBITS, LOCKED_SECUREBITS, NONE, NONE, NONE) != 0
            && errno() != libc::EPERM
        {
            return Err(io::Error::last_os_error());
        }
        // Until the kernel says there is no such capability (cap_last_cap + 1).
        for cap in 0..=libc::c_ulong::from(u8::MAX) {
            if libc::prctl(libc::PR_CAPBSET_DROP, cap, NONE, NONE, NONE) != 0 {
                match errno() {
                    libc::EINVAL => break,
                    // No CAP_SETPCAP: see above.
                    libc::EPERM if cap == 0 => break,
                    _ => return Err(io::Error::last_os_error()),
                }
            }
        }
        // Kernels before 4.3 have no ambient set (EINVAL): nothing to clear.
        if libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::c_ulong::from(libc::PR_CAP_AMBIENT_CLEAR_ALL.unsigned_abs()),
            NONE,
            NONE,
            NONE,
        ) != 0
            && errno() != libc::EINVAL
        {
            return Err(io::Error::last_os_error());
        }
        let mut header = CapHeader {
            version: CAPABILITY_VERSION_3,
            pid: 0,
        };
        let none = [CapData {
            effective: 0,
            permitted: 0,
            inheritable: 0,
        }; 2];
        if libc::syscall(
            libc::SYS_capset,
            std::ptr::from_mut(&mut header),
            none.as_ptr(),
        ) != 0
        {
            return Err(io::Error::last_os_error());
        }
    }
    Ok(())
}
