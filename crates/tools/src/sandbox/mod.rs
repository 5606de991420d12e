//! The OS sandbox commands run in: the workspace is writable, the rest of the machine is not.
//!
//! Text checks cannot make a shell safe (`d=$(echo ~); rm -rf "$d"` names no home); the
//! kernel can. On Linux each sandboxed command gets, between fork and exec and never in
//! rein itself:
//! - a private mount namespace where the read-only paths inside writable trees
//!   (`.git/hooks`, `.git/config`, `.rein/`, rein's config) are bind-mounted read-only and
//!   the sockets of daemons that would run commands outside the sandbox are hidden
//!   (`protect.rs`, `hide.rs`), when there are such paths;
//! - no capabilities, even as root (`caps.rs`);
//! - `PR_SET_NO_NEW_PRIVS` (no setuid way out);
//! - a Landlock ruleset: read and run everything, write only the policy's trees, and from
//!   ABI 6 signal only processes inside the sandbox (`landlock.rs`);
//! - seccomp filters: no ptrace, mounts, namespaces, kernel modules, bpf, clock or host
//!   name changes, terminal injection, and with the network off no socket but a Unix one
//!   (`seccomp.rs`).
//!
//! On macOS the same policy becomes a Seatbelt profile for `sandbox-exec` (`seatbelt.rs`).
//! Where the kernel cannot enforce it, [`Sandbox::enforcement`] says so and nothing is
//! claimed: commands then run with the permission checks alone.
//!
//! [`Sandbox::apply`] puts the sandbox on any `tokio::process::Command` (the bash tool's
//! commands and background commands; hooks and MCP servers when their configuration asks).

#[cfg(target_os = "linux")]
mod caps;
mod credentials;
mod describe;
mod explain;
mod git;
mod hide;
#[cfg(target_os = "linux")]
mod landlock;
#[cfg(target_os = "linux")]
mod netns;
mod policy;
#[cfg(target_os = "linux")]
mod protect;
mod proxy;
mod refusal;
pub mod seatbelt;
#[cfg(target_os = "linux")]
mod seccomp;
mod support;
#[cfg(target_os = "linux")]
mod view;

use std::fmt;
use std::path::Path;
use std::sync::{Arc, OnceLock};

use parking_lot::Mutex;

pub use credentials::{DEFAULT_CREDENTIALS, SshAgent};
pub use git::PlantWatch;
pub use policy::{
    DEFAULT_CACHES, KernelProbe, MountAccess, Network, PolicyInputs, SandboxLevel, SandboxPolicy,
};
pub use proxy::{HostAnswer, HostGate, HostRefusal, NetUse};
pub use refusal::{HostRefusals, host_refusals, refusal};
pub use support::{Platform, Support, support};

/// Why the sandbox could not be put on a command.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The Landlock ruleset could not be built.
    #[error("the Landlock ruleset could not be built: {0}")]
    Landlock(String),
    /// The seccomp filter could not be built.
    #[error("the seccomp filter could not be built: {0}")]
    Seccomp(String),
    /// The read-only paths could not be prepared.
    #[error("the read-only paths could not be prepared: {0}")]
    Protect(String),
    /// The proxied network could not be prepared.
    #[error("the sandbox's network could not be prepared: {0}")]
    Network(String),
}

/// What the sandbox enforces on this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Enforcement {
    /// The level is `off`: nothing.
    Off,
    /// The whole policy.
    Enforced,
    /// The kernel cannot give it: nothing is enforced, and this says why.
    Unavailable(String),
}

/// A policy with what this machine can enforce of it; cheap to clone.
#[derive(Debug, Clone)]
pub struct Sandbox {
    shared: Arc<Shared>,
}

/// The sandbox, made now or by a thread of its own ([`Sandbox::resolving`]).
struct Shared {
    ready: OnceLock<Inner>,
    making: Mutex<Option<std::thread::JoinHandle<Option<Inner>>>>,
    /// The host gate and the proxy it is for.
    handover: Mutex<Handover>,
}

/// The host gate and the sandbox's proxy meet under one lock: whichever comes second (the
/// gate, or the sandbox once made) hands the gate to the proxy.
#[derive(Default)]
struct Handover {
    gate: Option<Arc<dyn HostGate>>,
    /// The sandbox's proxy, once the sandbox is made (`Some(None)`: made, without one).
    proxy: Option<Option<Arc<proxy::Proxy>>>,
}

impl Handover {
    fn give(&self) {
        if let (Some(gate), Some(Some(proxy))) = (&self.gate, &self.proxy) {
            proxy.set_gate(Arc::clone(gate));
        }
    }
}

impl fmt::Debug for Shared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.ready.get() {
            Some(inner) => inner.fmt(f),
            None => f.write_str("Sandbox (being made)"),
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        // A sandbox never used is made all the same: its private temporary directory goes.
        let making = self.making.get_mut();
        if let Some(thread) = making.take() {
            drop(thread.join());
        }
    }
}

#[derive(Debug)]
struct Inner {
    policy: SandboxPolicy,
    support: Support,
    enforcement: Enforcement,
    #[cfg(target_os = "linux")]
    filters: Vec<seccompiler::BpfProgram>,
    /// The private temporary directory was made here: it goes with the last clone.
    made_tmp: bool,
    /// The missing writable roots were made, at the first command (never for `--explain`).
    roots_made: std::sync::Once,
    /// With `network = "proxy"` where it can be enforced: the session's proxy.
    proxy: Option<Arc<proxy::Proxy>>,
    /// Why `network = "proxy"` fell back to the network off, when it did.
    proxy_fallback: Option<String>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        if self.made_tmp
            && let Some(dir) = &self.policy.tmp_dir
        {
            MADE_DIRS.lock().retain(|made| made != dir);
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The private temporary directories this process made and has not removed yet.
static MADE_DIRS: Mutex<Vec<std::path::PathBuf>> = Mutex::new(Vec::new());

/// Removes the sandboxes' private temporary directories, for an exit that runs no
/// destructors (`std::process::exit` on a signal at the REPL's prompt).
pub fn remove_private_dirs() {
    for dir in std::mem::take(&mut *MADE_DIRS.lock()) {
        let _ = std::fs::remove_dir_all(dir);
    }
}

impl Sandbox {
    /// No sandbox.
    pub fn off() -> Sandbox {
        Sandbox::new(SandboxPolicy::off())
    }

    /// `policy`, with what the kernel can enforce of it (asked once per process). The
    /// private temporary directory is created here.
    pub fn new(policy: SandboxPolicy) -> Sandbox {
        Sandbox::ready(Inner::new(policy))
    }

    /// The sandbox of the policy `resolve` gives, made on a thread of its own: resolving
    /// the policy reads the disk (links, credential stores, git directories) and took half
    /// a millisecond of rein's start, for the first command to use. Whatever asks for the
    /// sandbox first waits for it.
    pub fn resolving<F>(resolve: F) -> Sandbox
    where
        F: FnOnce() -> SandboxPolicy + Send + 'static,
    {
        // Whoever runs first makes it: the thread, or this one when no thread can start.
        let resolve = Arc::new(Mutex::new(Some(resolve)));
        let make = |resolve: &Mutex<Option<F>>| {
            let resolve = resolve.lock().take();
            resolve.map(|resolve| Inner::new(resolve()))
        };
        let theirs = Arc::clone(&resolve);
        let thread = std::thread::Builder::new()
            .name("rein-sandbox".to_owned())
            .spawn(move || make(&theirs));
        match thread {
            Ok(thread) => Sandbox {
                shared: Arc::new(Shared {
                    ready: OnceLock::new(),
                    making: Mutex::new(Some(thread)),
                    handover: Mutex::default(),
                }),
            },
            Err(_) => {
                Sandbox::ready(make(&resolve).unwrap_or_else(|| Inner::new(SandboxPolicy::off())))
            }
        }
    }

    fn ready(inner: Inner) -> Sandbox {
        let shared = Shared {
            ready: OnceLock::new(),
            making: Mutex::new(None),
            handover: Mutex::new(Handover {
                gate: None,
                proxy: Some(inner.proxy.clone()),
            }),
        };
        let _ = shared.ready.set(inner);
        Sandbox {
            shared: Arc::new(shared),
        }
    }

    /// The sandbox, waiting for the thread making it.
    fn inner(&self) -> &Inner {
        self.shared.ready.get_or_init(|| {
            let thread = (self.shared.making.lock()).take();
            let inner = match thread.map(std::thread::JoinHandle::join) {
                Some(Ok(Some(inner))) => inner,
                Some(Err(panic)) => std::panic::resume_unwind(panic),
                Some(Ok(None)) | None => unreachable!("a sandbox is made once, by one thread"),
            };
            let mut handover = self.shared.handover.lock();
            handover.proxy = Some(inner.proxy.clone());
            handover.give();
            inner
        })
    }
}

impl Inner {
    fn new(mut policy: SandboxPolicy) -> Inner {
        let support = support(policy.probe);
        // The proxy needs a network namespace per command; without one, the network is off.
        let mut proxy = None;
        let mut proxy_fallback = None;
        if policy.network == Network::Proxy {
            if support.platform == Platform::Linux && support.mount_namespace {
                proxy = Some(Arc::new(proxy::Proxy::new(&policy.allow_domains)));
            } else {
                policy.network = Network::Blocked;
                proxy_fallback = Some(
                    "network = \"proxy\" needs a private network namespace per command, which \
                     this system does not give (no user namespaces, or not Linux)"
                        .to_owned(),
                );
            }
        }
        let mut enforcement = match (policy.level, support.missing()) {
            (SandboxLevel::Off, _) => Enforcement::Off,
            (_, Some(why)) => Enforcement::Unavailable(why),
            (_, None) => Enforcement::Enforced,
        };
        let mut made_tmp = false;
        if enforcement == Enforcement::Enforced
            && let Some(dir) = &policy.tmp_dir
        {
            match create_private_dir(dir) {
                Ok(made) => {
                    made_tmp = made;
                    if made {
                        MADE_DIRS.lock().push(dir.clone());
                    }
                }
                Err(err) => {
                    enforcement = Enforcement::Unavailable(format!(
                        "the private temporary directory {} could not be made: {err}",
                        dir.display()
                    ));
                }
            }
        }
        #[cfg(target_os = "linux")]
        let filters = match &enforcement {
            Enforcement::Enforced => {
                let metadata = if support.read_only_view {
                    seccomp::Metadata::Allowed
                } else {
                    seccomp::Metadata::Refused
                };
                match seccomp::filters(
                    policy.network,
                    support.landlock_abi.unwrap_or_default(),
                    metadata,
                ) {
                    Ok(filters) => filters,
                    Err(err) => {
                        enforcement = Enforcement::Unavailable(err.to_string());
                        Vec::new()
                    }
                }
            }
            Enforcement::Off | Enforcement::Unavailable(_) => Vec::new(),
        };
        Inner {
            policy,
            support,
            enforcement,
            #[cfg(target_os = "linux")]
            filters,
            made_tmp,
            roots_made: std::sync::Once::new(),
            proxy,
            proxy_fallback,
        }
    }
}

impl Sandbox {
    /// Who decides about hosts not in `allow_domains` (with `network = "proxy"`; without
    /// one, they are refused). The latest gate decides from then on (an agent rebuilt on
    /// this sandbox asks through its own); the answers given so far stay.
    pub fn set_host_gate(&self, gate: Arc<dyn HostGate>) {
        let mut handover = self.shared.handover.lock();
        handover.gate = Some(gate);
        handover.give();
    }

    /// Forgets what the host gate answered (a new session asks again); the hosts in
    /// `allow_domains` still go through.
    pub async fn forget_hosts(&self) {
        let proxy = self.shared.handover.lock().proxy.clone().flatten();
        if let Some(proxy) = proxy {
            proxy.forget().await;
        }
    }

    /// The policy.
    pub fn policy(&self) -> &SandboxPolicy {
        &self.inner().policy
    }

    /// What is enforced.
    pub fn enforcement(&self) -> &Enforcement {
        &self.inner().enforcement
    }

    /// Whether commands really run sandboxed.
    pub fn is_enforced(&self) -> bool {
        self.inner().enforcement == Enforcement::Enforced
    }

    /// What the kernel offers.
    pub fn support(&self) -> Support {
        self.inner().support
    }

    /// Puts the sandbox on `command` (does nothing when it is off or cannot be enforced).
    /// Call it before setting the command's pipes: on macOS the command is rebuilt around
    /// `sandbox-exec`.
    pub fn apply(&self, command: &mut tokio::process::Command) -> Result<(), SandboxError> {
        self.apply_watched(command).map(drop)
    }

    /// [`Sandbox::apply`], with what rein's proxy refuses the command (when the network goes
    /// through it) gathered in the returned [`NetUse`]. Call it in a Tokio runtime: the
    /// proxy serves the command from it.
    pub fn apply_watched(
        &self,
        command: &mut tokio::process::Command,
    ) -> Result<NetUse, SandboxError> {
        let used = NetUse::default();
        if !self.is_enforced() {
            return Ok(used);
        }
        // Landlock grants only existing trees: a cache a build would make on first use
        // (`~/.cargo/registry` when `~/.cargo` exists) is made before the first command, one
        // level deep.
        self.inner().roots_made.call_once(|| {
            for root in &self.inner().policy.writable {
                if !root.exists() && root.parent().is_some_and(Path::is_dir) {
                    let _ = std::fs::create_dir(root);
                }
            }
        });
        if let Some(dir) = &self.inner().policy.tmp_dir {
            command.env("TMPDIR", dir);
        }
        if self.inner().policy.ssh_agent == SshAgent::Hidden {
            command.env_remove("SSH_AUTH_SOCK");
        }
        self.apply_platform(command, &used)?;
        Ok(used)
    }

    #[cfg(target_os = "linux")]
    fn apply_platform(
        &self,
        command: &mut tokio::process::Command,
        used: &NetUse,
    ) -> Result<(), SandboxError> {
        let policy = &self.inner().policy;
        let abi = self
            .inner()
            .support
            .landlock_abi
            .ok_or_else(|| SandboxError::Landlock("no Landlock".to_owned()))?;
        let ruleset = landlock::ruleset(policy, abi)?;
        let keep: Vec<&Path> = policy
            .writable_now()
            .chain(policy.tmp_dir.iter())
            .map(std::path::PathBuf::as_path)
            .collect();
        let protection = if self.inner().support.mount_namespace {
            let hidden: Vec<std::path::PathBuf> = policy
                .hidden
                .iter()
                .chain(policy.credentials.iter())
                .cloned()
                .collect();
            protect::Protection::new(&protect::Spec {
                read_only_view: self.inner().support.read_only_view,
                roots: &keep,
                mounts: &policy.mounts(),
                hidden: &hidden,
                exposed: &policy.exposed,
            })
            .map_err(|e| SandboxError::Protect(e.to_string()))?
        } else {
            None
        };
        let net = match &self.inner().proxy {
            Some(proxy) => Some(self.prepare_proxy(command, proxy, used, protection.is_none())?),
            None => None,
        };
        let filters = self.inner().filters.clone();
        install(command, ruleset, protection, net, filters);
        Ok(())
    }

    /// The proxy's part of a command: its environment, the socket pair its listener comes
    /// back on, and a task that serves the listener once it arrives.
    #[cfg(target_os = "linux")]
    fn prepare_proxy(
        &self,
        command: &mut tokio::process::Command,
        proxy: &Arc<proxy::Proxy>,
        used: &NetUse,
        no_user_namespace_yet: bool,
    ) -> Result<netns::ChildNet, SandboxError> {
        let fail = |err: std::io::Error| SandboxError::Network(err.to_string());
        let url = format!("http://127.0.0.1:{}", netns::PROXY_PORT);
        for name in [
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "http_proxy",
            "https_proxy",
            "npm_config_proxy",
            "npm_config_https_proxy",
        ] {
            command.env(name, &url);
        }
        // Every destination goes through the proxy, this machine's included.
        for name in ["NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy"] {
            command.env_remove(name);
        }
        let runtime = tokio::runtime::Handle::try_current()
            .map_err(|err| SandboxError::Network(err.to_string()))?;
        let (ours, theirs) = netns::pair().map_err(fail)?;
        let watch = proxy::watch(ours).map_err(fail)?;
        let proxy = Arc::clone(proxy);
        let used = used.clone();
        runtime.spawn(async move {
            loop {
                let Ok(mut ready) = watch.readable().await else {
                    return;
                };
                match netns::receive(watch.get_ref()) {
                    Ok(Some((listener, pid))) => {
                        proxy.serve(listener, pid, used);
                        return;
                    }
                    Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {
                        ready.clear_ready();
                    }
                    Ok(None) | Err(_) => return,
                }
            }
        });
        let as_root = rustix::process::geteuid().is_root();
        let user_maps = (!as_root && no_user_namespace_yet).then(|| {
            let uid = rustix::process::getuid().as_raw();
            let gid = rustix::process::getgid().as_raw();
            (
                format!("{uid} {uid} 1\n").into_bytes(),
                format!("{gid} {gid} 1\n").into_bytes(),
            )
        });
        Ok(netns::ChildNet {
            pair: theirs,
            user_maps,
        })
    }

    #[cfg(target_os = "macos")]
    fn apply_platform(
        &self,
        command: &mut tokio::process::Command,
        _used: &NetUse,
    ) -> Result<(), SandboxError> {
        seatbelt::wrap(command, &self.inner().policy);
        Ok(())
    }

    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    fn apply_platform(
        &self,
        _command: &mut tokio::process::Command,
        _used: &NetUse,
    ) -> Result<(), SandboxError> {
        Ok(())
    }
}

/// Makes `dir` (mode 0700) unless it exists; whether it was made here.
fn create_private_dir(dir: &Path) -> std::io::Result<bool> {
    use std::os::unix::fs::DirBuilderExt;
    if dir.is_dir() {
        return Ok(false);
    }
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    Ok(true)
}

/// Registers the child's half: the mount namespace, the network namespace (proxy), dropping
/// capabilities, no_new_privs,
/// Landlock, seccomp, in that order (each later step forbids what an earlier one needs:
/// the mounts and map writes need capabilities, seccomp refuses mounts).
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "pre_exec is unsafe; the closure makes only system calls on memory prepared before \
              the fork (the ruleset descriptor, the filters, the mount paths)"
)]
fn install(
    command: &mut tokio::process::Command,
    ruleset: std::os::fd::OwnedFd,
    mut protection: Option<protect::Protection>,
    net: Option<netns::ChildNet>,
    filters: Vec<seccompiler::BpfProgram>,
) {
    use std::os::fd::AsRawFd;
    let child_half = move || -> std::io::Result<()> {
        if let Some(protection) = &mut protection {
            protection.enter()?;
        }
        // Inside the user namespace the mount namespace made, if any.
        if let Some(net) = &net {
            net.enter()?;
        }
        caps::drop_all()?;
        // SAFETY: prctl and the Landlock call take integers only; the descriptor is open.
        unsafe {
            if libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::syscall(libc::SYS_landlock_restrict_self, ruleset.as_raw_fd(), 0u32) != 0 {
                return Err(std::io::Error::last_os_error());
            }
        }
        for filter in &filters {
            seccompiler::apply_filter(filter).map_err(|err| match err {
                seccompiler::Error::Prctl(io) | seccompiler::Error::Seccomp(io) => io,
                _ => std::io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    };
    // SAFETY: see the reason above; nothing in the closure allocates or takes a lock.
    unsafe {
        command.pre_exec(child_half);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The explanation at Landlock ABI `abi`, with the network as given.
    fn explain(abi: u32, network: Network) -> String {
        let mut policy = SandboxPolicy::off();
        policy.level = SandboxLevel::WorkspaceWrite;
        policy.network = network;
        let sandbox = Sandbox::ready(Inner {
            policy,
            support: Support {
                landlock_abi: Some(abi),
                seccomp: true,
                mount_namespace: true,
                read_only_view: true,
                platform: Platform::Linux,
                landlock_off_by_config: false,
            },
            enforcement: Enforcement::Enforced,
            #[cfg(target_os = "linux")]
            filters: Vec::new(),
            made_tmp: false,
            roots_made: std::sync::Once::new(),
            proxy: None,
            proxy_fallback: None,
        });
        sandbox.describe()
    }

    #[test]
    fn the_explanation_says_what_each_landlock_abi_leaves_out() {
        let v1 = explain(1, Network::Allowed);
        assert!(
            v1.contains("truncate(2) is refused everywhere by seccomp"),
            "{v1}"
        );
        assert!(v1.contains("fails with EXDEV"), "{v1}");
        assert!(v1.contains("signals: NOT restricted"), "{v1}");

        let v2 = explain(2, Network::Blocked);
        assert!(v2.contains("truncate(2) is refused"), "{v2}");
        assert!(!v2.contains("EXDEV"), "{v2}");
        assert!(v2.contains(
            "abstract Unix sockets made outside the sandbox: reachable (Landlock scopes need ABI 6)"
        ));

        let v3 = explain(3, Network::Allowed);
        assert!(!v3.contains("truncate(2)") && !v3.contains("EXDEV"), "{v3}");

        let v6 = explain(6, Network::Blocked);
        assert!(
            v6.contains("signals: only to processes started inside"),
            "{v6}"
        );
        assert!(v6.contains("abstract Unix sockets made outside the sandbox: refused"));
        for text in [&v1, &v2, &v3, &v6] {
            assert!(text.contains("capabilities: none"), "{text}");
            assert!(text.contains("still reachable"), "{text}");
        }
    }

    /// A workspace-write policy whose private temporary directory is `tmp`.
    fn with_tmp(tmp: &Path) -> SandboxPolicy {
        let mut policy = SandboxPolicy::off();
        policy.level = SandboxLevel::WorkspaceWrite;
        policy.writable = vec![tmp.parent().unwrap().to_path_buf()];
        policy.tmp_dir = Some(tmp.to_path_buf());
        policy
    }

    #[test]
    fn a_sandbox_made_on_its_own_thread_is_the_one_made_here() {
        let dir = tempfile::tempdir().unwrap();
        let (aside_tmp, here_tmp) = (dir.path().join("aside"), dir.path().join("here"));
        let aside = {
            let tmp = aside_tmp.clone();
            Sandbox::resolving(move || with_tmp(&tmp))
        };
        let here = Sandbox::new(with_tmp(&here_tmp));
        assert_eq!(aside.enforcement(), here.enforcement());
        assert_eq!(aside.policy().writable, here.policy().writable);
        assert_eq!(aside.policy().tmp_dir.as_deref(), Some(aside_tmp.as_path()));
        // Made only where the sandbox is enforced; gone with the last clone either way.
        assert_eq!(aside_tmp.is_dir(), here_tmp.is_dir());
        let clone = aside.clone();
        drop(aside);
        assert_eq!(clone.policy().tmp_dir.as_deref(), Some(aside_tmp.as_path()));
        drop((clone, here));
        assert!(!aside_tmp.exists() && !here_tmp.exists());
    }

    #[test]
    fn a_sandbox_never_asked_for_still_removes_its_temporary_directory() {
        let dir = tempfile::tempdir().unwrap();
        let tmp = dir.path().join("private");
        let made = Sandbox::new(with_tmp(&tmp)).is_enforced();
        let unused = {
            let tmp = tmp.clone();
            Sandbox::resolving(move || with_tmp(&tmp))
        };
        drop(unused);
        assert!(
            !tmp.exists(),
            "the private directory outlived its sandbox (made: {made})"
        );
    }
}
