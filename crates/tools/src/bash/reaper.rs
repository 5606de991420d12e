//! Orphans: processes a command started that outlive their parent (`setsid cmd &`, double
//! forks, daemons).
//!
//! Normally an orphan is handed to init, out of reach. [`adopt_orphans`] makes rein a child
//! subreaper (Linux): orphans of its commands become rein's children instead, so that
//! - they are found (the tracker finds them by their marker, see `procs.rs`, and stops them
//!   on cancel, at a timeout and in `kill_all`);
//! - whatever is still below rein when it exits is stopped then (an `atexit` handler: it runs
//!   on return from `main` and on `std::process::exit`), even an orphan that cleared its
//!   environment;
//! - they are reaped when they end, by a background thread, so they do not pile up as zombies.
//!
//! Reaping must never take the exit status of a child someone in rein waits for (tokio waits
//! for each of its children by pid). Every child rein forks is forked through [`spawn`], which
//! lists it in [`SPAWNED`] under a lock held across the fork, and the reaper skips those. A
//! dead child that is not listed is an adopted orphan: it is reaped, unless it was once seen
//! alive without one of rein's command markers (then something else in rein may have forked
//! it and wait for it). Orphans often end within moments of their adoption, before any look
//! saw them alive, so reaping cannot wait for a sighting.
//!
//! Nothing runs if rein itself is killed with SIGKILL or crashes: its adopted orphans then
//! pass to init, as they would have without a subreaper.
//!
//! Elsewhere (macOS, the BSDs) there is no subreaper here: orphans that left the command's
//! session are neither found nor stopped, as before. (FreeBSD's `procctl(PROC_REAP_ACQUIRE)`
//! would do; it is not wired up.)

use std::collections::HashSet;
use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::procs::{self, ProcStat};
use super::signals::{Signal, signal_process};
use super::tracker::{EXIT_POLL_INTERVAL, KILL_GRACE};

/// How often the reaper looks for ended orphans.
const REAP_INTERVAL: Duration = Duration::from_millis(250);

/// The pids of the bash processes rein-tools started and tokio will reap: never reaped here.
static SPAWNED: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Set once [`adopt_orphans`] has made this process a subreaper.
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// Children seen alive without one of rein's command markers: possibly forked by something
/// else in rein that waits for them, so never reaped here. Keyed by pid and start time.
static FOREIGN: Mutex<Vec<(u32, u64)>> = Mutex::new(Vec::new());

/// What rein can do about its commands' orphans here.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OrphanCare {
    /// rein is a child subreaper: orphans of its commands become its children, are reaped
    /// when they end, and are stopped at the latest when rein exits.
    Subreaper,
    /// The system has no subreaper (or refused): orphans that leave a command's session are
    /// found only by their marker, and those that also clear their environment not at all.
    Unsupported,
}

/// Makes rein the reaper of its commands' orphans (see the module documentation). Call it
/// once, at the start of `main`, before any command runs; later calls do nothing more.
pub fn adopt_orphans() -> OrphanCare {
    #[cfg(target_os = "linux")]
    {
        if ADOPTING.load(Ordering::SeqCst) {
            return OrphanCare::Subreaper;
        }
        let own = rustix::process::getpid();
        if let Err(err) = rustix::process::set_child_subreaper(Some(own)) {
            tracing::warn!("cannot become a child subreaper: {err}");
            return OrphanCare::Unsupported;
        }
        if ADOPTING.swap(true, Ordering::SeqCst) {
            return OrphanCare::Subreaper;
        }
        end_descendants_at_exit();
        OrphanCare::Subreaper
    }
    #[cfg(not(target_os = "linux"))]
    {
        OrphanCare::Unsupported
    }
}

/// Starts the thread that reaps adopted orphans, once: only a run that starts commands can
/// have orphans, so a run that starts none pays nothing for it.
fn start_reaping() {
    static STARTED: std::sync::Once = std::sync::Once::new();
    STARTED.call_once(|| {
        let thread = std::thread::Builder::new()
            .name("rein-reaper".to_owned())
            .spawn(|| {
                loop {
                    std::thread::sleep(REAP_INTERVAL);
                    reap_adopted();
                }
            });
        if let Err(err) = thread {
            tracing::warn!("cannot start the orphan reaper: {err}");
        }
    });
}

/// Whether rein has started any command (if not, nothing can be below it).
static EVER_SPAWNED: AtomicBool = AtomicBool::new(false);

/// Spawns a command's bash, listing its pid before anyone can look at rein's children.
pub(crate) fn spawn(command: &mut tokio::process::Command) -> io::Result<tokio::process::Child> {
    if ADOPTING.load(Ordering::Relaxed) {
        start_reaping();
    }
    EVER_SPAWNED.store(true, Ordering::SeqCst);
    let mut spawned = SPAWNED.lock();
    let child = command.spawn()?;
    if let Some(pid) = child.id() {
        spawned.push(pid);
    }
    Ok(child)
}

/// Forgets a bash that tokio has reaped.
pub(crate) fn reaped_by_tokio(pid: u32) {
    SPAWNED.lock().retain(|&p| p != pid);
}

/// Looks at rein's children now (after a command ended, its orphans have just been adopted):
/// reaps the adopted ones that ended.
pub(crate) fn reap_adopted() {
    if !ADOPTING.load(Ordering::Relaxed) {
        return;
    }
    // Held for the whole look, so that no bash is forked and missed from the list meanwhile.
    let spawned = SPAWNED.lock();
    let mut foreign = FOREIGN.lock();
    let children = own_children();
    for child in &children {
        if spawned.contains(&child.pid) {
            continue;
        }
        let key = (child.pid, child.start_ticks);
        if child.is_live() {
            // Mid-exec or gone (unreadable): nothing is known, look again next time.
            if procs::read_marker(child.pid) == Some(None) && !foreign.contains(&key) {
                foreign.push(key);
            }
            continue;
        }
        // Not listed in SPAWNED, so not a bash rein forked: an orphan it adopted.
        if !foreign.contains(&key) {
            reap(child.pid);
        }
    }
    // Forget what no longer exists, so the list stays as short as rein's child list.
    let present: HashSet<(u32, u64)> = children.iter().map(|c| (c.pid, c.start_ticks)).collect();
    foreign.retain(|&(pid, start)| {
        present.contains(&(pid, start)) || procs::read(pid).is_some_and(|p| p.start_ticks == start)
    });
}

/// Reaps the zombie `pid`, a child of rein that nobody waits for.
fn reap(pid: u32) {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return;
    };
    // NOHANG: it is a zombie already; if not (a reused pid), there is nothing to wait for.
    let _ = rustix::process::waitpid(Some(pid), rustix::process::WaitOptions::NOHANG);
}

/// rein's children, from `/proc/self/task/*/children` (a child belongs to the thread that
/// forked it, or adopted it), or from the whole process table where that file is missing.
fn own_children() -> Vec<ProcStat> {
    let own = std::process::id();
    let mut pids = Vec::new();
    let mut listed = false;
    for task in std::fs::read_dir("/proc/self/task")
        .into_iter()
        .flatten()
        .flatten()
    {
        if let Ok(text) = std::fs::read_to_string(task.path().join("children")) {
            listed = true;
            pids.extend(
                text.split_whitespace()
                    .filter_map(|p| p.parse::<u32>().ok()),
            );
        }
    }
    if !listed {
        return procs::table()
            .into_iter()
            .filter(|p| p.parent == own)
            .collect();
    }
    pids.into_iter()
        .filter_map(procs::read)
        .filter(|p| p.parent == own)
        .collect()
}

/// Registers [`end_descendants`] to run when rein exits.
#[expect(
    unsafe_code,
    reason = "atexit has no safe wrapper; the handler is a plain extern \"C\" fn that never unwinds"
)]
fn end_descendants_at_exit() {
    extern "C" fn handler() {
        // Never unwind into C.
        let _ = std::panic::catch_unwind(end_descendants);
    }
    // SAFETY: `handler` is a valid `extern "C" fn()` for the life of the process and catches
    // every panic.
    let registered = unsafe { libc::atexit(handler) };
    if registered != 0 {
        tracing::warn!("cannot register the exit handler that stops orphaned processes");
    }
}

/// Stops every process still below rein: SIGTERM, SIGKILL after [`KILL_GRACE`].
fn end_descendants() {
    // A run that started no command has no descendants: spare it a scan of the process table.
    if !EVER_SPAWNED.load(Ordering::SeqCst) {
        return;
    }
    let first = procs::own_descendants();
    if first.is_empty() {
        return;
    }
    for proc in &first {
        let _ = signal_process(proc, Signal::Term);
        let _ = signal_process(proc, Signal::Cont);
    }
    let give_up = Instant::now() + KILL_GRACE;
    let mut left = first;
    while !left.is_empty() && Instant::now() < give_up {
        std::thread::sleep(EXIT_POLL_INTERVAL);
        // No reaping here: another thread may hold the locks it takes, and a zombie counts as
        // gone anyway.
        left.retain(|p| {
            procs::read(p.pid).is_some_and(|now| now.is_live() && now.start_ticks == p.start_ticks)
        });
    }
    // Looked up afresh: what the first ones started meanwhile goes too.
    for proc in procs::own_descendants() {
        let _ = signal_process(&proc, Signal::Kill);
    }
}
