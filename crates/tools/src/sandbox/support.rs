//! What this machine's kernel can enforce, asked once: Landlock (and its ABI version),
//! seccomp, and private mount namespaces (for the read-only paths inside the workspace).

use std::sync::OnceLock;

use super::policy::KernelProbe;

/// The Landlock ABI that guards truncation (`LANDLOCK_ACCESS_FS_TRUNCATE`, Linux 6.2);
/// below it seccomp refuses `truncate(2)` instead.
pub(crate) const TRUNCATE_ABI: u32 = 3;

/// The Landlock ABI that lets a file be renamed or linked into another directory
/// (`LANDLOCK_ACCESS_FS_REFER`, Linux 5.19); at ABI 1 every such move fails with `EXDEV`.
pub(crate) const REFER_ABI: u32 = 2;

/// The Landlock ABI with scopes (signals, abstract Unix sockets; Linux 6.12).
pub(crate) const SCOPES_ABI: u32 = 6;

/// What the kernel offers the sandbox.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Support {
    /// The Landlock ABI version, when Landlock is there and enabled.
    pub landlock_abi: Option<u32>,
    /// Whether seccomp filters can be installed.
    pub seccomp: bool,
    /// Whether a command can get a private mount namespace (to keep `.git/hooks` and rein's
    /// config read-only inside writable trees).
    pub mount_namespace: bool,
    /// Whether that namespace can hold a read-only view of the whole machine (the mount
    /// calls of Linux 5.12); without it seccomp refuses the metadata calls instead.
    pub read_only_view: bool,
    /// Which sandbox this platform uses.
    pub platform: Platform,
    /// Landlock is left out because the configuration says `landlock = false`, not because
    /// the kernel lacks it.
    pub landlock_off_by_config: bool,
}

/// The sandbox technique of this platform.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Platform {
    /// Landlock, seccomp and a mount namespace.
    Linux,
    /// Seatbelt (`sandbox-exec` with a generated profile).
    MacOs,
    /// None.
    Other,
}

impl Support {
    /// Why the sandbox cannot be enforced, in words; `None` when it can.
    pub fn missing(&self) -> Option<String> {
        match self.platform {
            Platform::Linux => match (self.landlock_abi, self.seccomp) {
                (Some(_), true) => None,
                (None, _) if self.landlock_off_by_config => Some(
                    "Landlock is turned off by the setting `[sandbox] landlock = false` (rein \
                     behaves as if the kernel had no Landlock); remove it to use the sandbox"
                        .to_owned(),
                ),
                (None, _) => Some(
                    "the kernel has no Landlock (Linux 5.13 or later, with landlock in the lsm= \
                     boot list)"
                        .to_owned(),
                ),
                (Some(_), false) => Some("the kernel refuses seccomp filters".to_owned()),
            },
            Platform::MacOs => {
                (!self.seccomp).then(|| "/usr/bin/sandbox-exec is missing".to_owned())
            }
            Platform::Other => Some(format!(
                "rein has no sandbox for {} yet",
                std::env::consts::OS
            )),
        }
    }
}

/// What the kernel offers (asked once per process), or a kernel without Landlock when
/// `probe` says to behave as if.
pub fn support(probe: KernelProbe) -> Support {
    static ASKED: OnceLock<Support> = OnceLock::new();
    let real = *ASKED.get_or_init(ask_kernel);
    match probe {
        KernelProbe::Detect => real,
        KernelProbe::AssumeNoLandlock => Support {
            landlock_abi: None,
            landlock_off_by_config: true,
            ..real
        },
    }
}

#[cfg(target_os = "linux")]
fn ask_kernel() -> Support {
    let mount_namespace = super::protect::available();
    Support {
        landlock_abi: super::landlock::abi_version(),
        seccomp: seccomp_available(),
        mount_namespace,
        read_only_view: mount_namespace && super::view::read_only_view_available(),
        platform: Platform::Linux,
        landlock_off_by_config: false,
    }
}

#[cfg(target_os = "macos")]
fn ask_kernel() -> Support {
    Support {
        landlock_abi: None,
        // Seatbelt stands in for both: sandbox-exec is what applies the profile.
        seccomp: std::path::Path::new(super::seatbelt::SANDBOX_EXEC).exists(),
        mount_namespace: false,
        read_only_view: false,
        platform: Platform::MacOs,
        landlock_off_by_config: false,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn ask_kernel() -> Support {
    Support {
        landlock_abi: None,
        seccomp: false,
        mount_namespace: false,
        read_only_view: false,
        platform: Platform::Other,
        landlock_off_by_config: false,
    }
}

/// Whether this process could install a seccomp filter: `PR_GET_SECCOMP` answers on kernels
/// built with seccomp.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "prctl(PR_GET_SECCOMP) takes no pointers and changes nothing"
)]
fn seccomp_available() -> bool {
    // SAFETY: a query with integer arguments only.
    let mode = unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) };
    mode >= 0
}
