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
//! for each of its children by pid). So the thread reaps only children that are proven to be
//! adopted, never forked by rein: those it saw alive carrying one of rein's command markers
//! (bash itself carries one too, so every bash rein starts is listed in [`SPAWNED`] under a
//! lock held across the fork, and skipped), and those in a session that is neither rein's nor
//! their own (a child rein forks inherits rein's session or starts its own). An orphan that
//! started its own session, cleared its environment and ended before the thread saw it stays
//! a zombie until rein exits.
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
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::procs::{self, ProcStat};
use super::signals::{Signal, signal_process};
use super::tracker::{EXIT_POLL_INTERVAL, KILL_GRACE};

/// How often the reaper looks for ended orphans.
const REAP_INTERVAL: Duration = Duration::from_millis(250);

/// The pids of the bash processes rein-tools started and tokio will reap: never reaped here.
static SPAWNED: Mutex<Vec<u32>> = Mutex::new(Vec::new());
/// Set once [`adopt_orphans`] has made this process a subreaper.
static ADOPTING: AtomicBool = AtomicBool::new(false);
/// What the reaper has learnt of rein's children.
static SEEN: Mutex<Seen> = Mutex::new(Seen {
    adopted: Vec::new(),
    forked: Vec::new(),
});

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
    let mut spawned = SPAWNED.lock().unwrap_or_else(PoisonError::into_inner);
    let child = command.spawn()?;
    if let Some(pid) = child.id() {
        spawned.push(pid);
    }
    Ok(child)
}

/// Forgets a bash that tokio has reaped.
pub(crate) fn reaped_by_tokio(pid: u32) {
    SPAWNED
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|&p| p != pid);
}

/// Looks at rein's children now (after a command ended, its orphans have just been adopted):
/// notes the adopted ones while they are alive, reaps those that ended.
pub(crate) fn reap_adopted() {
    if !ADOPTING.load(Ordering::Relaxed) {
        return;
    }
    // Held for the whole look, so that no bash is forked and missed from the list meanwhile.
    let spawned = SPAWNED.lock().unwrap_or_else(PoisonError::into_inner);
    let mut seen = SEEN.lock().unwrap_or_else(PoisonError::into_inner);
    let own_session = rustix::process::getsid(None).map_or(0, |p| p.as_raw_pid());
    let children = own_children();
    for child in &children {
        if spawned.contains(&child.pid) {
            continue;
        }
        let key = (child.pid, child.start_ticks);
        if child.is_live() {
            if !seen.adopted.contains(&key) && !seen.forked.contains(&key) {
                if procs::marker_serial(child.pid).is_some() {
                    seen.adopted.push(key);
                } else {
                    seen.forked.push(key);
                }
            }
            continue;
        }
        let session = i32::try_from(child.session).unwrap_or(0);
        let own_or_inherited = session == own_session || child.session == child.pid;
        if seen.adopted.contains(&key) || !own_or_inherited {
            reap(child.pid);
        }
    }
    // Forget what is no longer there, so the lists stay as short as rein's child list.
    let present: HashSet<(u32, u64)> = children.iter().map(|c| (c.pid, c.start_ticks)).collect();
    seen.adopted.retain(|key| present.contains(key));
    seen.forked.retain(|key| present.contains(key));
}

#[derive(Debug)]
struct Seen {
    /// Children seen alive with one of rein's command markers: adopted orphans.
    adopted: Vec<(u32, u64)>,
    /// Children seen alive without one: possibly rein's own, never reaped here.
    forked: Vec<(u32, u64)>,
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
