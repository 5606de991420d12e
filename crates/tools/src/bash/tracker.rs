//! Every process group rein's commands started, so that they can all be ended together: when
//! a turn is cancelled, when rein exits, and when the last handle is dropped.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use super::signals::{Signal, alive_among, signal_group};

/// How long processes get to exit after SIGTERM before they are sent SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How often rein looks whether signalled processes have gone.
pub(crate) const EXIT_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The process groups started by bash calls (one per call). Cheap to clone: clones share the
/// set. When the last clone is dropped, every group still alive is ended.
#[derive(Debug, Clone, Default)]
pub struct ProcessTracker {
    groups: Arc<Groups>,
}

#[derive(Debug, Default)]
struct Groups {
    ids: Mutex<BTreeSet<u32>>,
}

impl Drop for Groups {
    fn drop(&mut self) {
        let ids = std::mem::take(self.ids.get_mut().unwrap_or_else(PoisonError::into_inner));
        let mut ending = Termination::start(ids);
        while !ending.is_done() && !ending.grace_over() {
            std::thread::sleep(EXIT_POLL_INTERVAL);
        }
        ending.finish();
    }
}

impl ProcessTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        ProcessTracker::default()
    }

    /// Remembers a group to end later; forgets groups that have no live process left.
    pub(crate) fn register(&self, pgid: u32) {
        let mut ids = self.lock();
        let listed: Vec<u32> = ids.iter().copied().collect();
        *ids = alive_among(&listed).into_iter().collect();
        ids.insert(pgid);
    }

    /// Forgets a group that has ended.
    pub(crate) fn forget(&self, pgid: u32) {
        self.lock().remove(&pgid);
    }

    /// The tracked groups that still have a live process.
    pub fn live_groups(&self) -> Vec<u32> {
        let mut ids = self.lock();
        let listed: Vec<u32> = ids.iter().copied().collect();
        let alive = alive_among(&listed);
        *ids = alive.iter().copied().collect();
        alive
    }

    /// Ends every tracked group: SIGTERM, then SIGKILL for what is still alive after
    /// [`KILL_GRACE`]. Returns how many groups were alive.
    pub async fn kill_all(&self) -> usize {
        let ids = std::mem::take(&mut *self.lock());
        let mut ending = Termination::start(ids);
        let count = ending.count();
        while !ending.is_done() && !ending.grace_over() {
            tokio::time::sleep(EXIT_POLL_INTERVAL).await;
        }
        ending.finish();
        count
    }

    /// [`kill_all`](Self::kill_all) for code that cannot await (exit paths); blocks the
    /// thread for up to [`KILL_GRACE`].
    pub fn kill_all_blocking(&self) -> usize {
        let ids = std::mem::take(&mut *self.lock());
        let mut ending = Termination::start(ids);
        let count = ending.count();
        while !ending.is_done() && !ending.grace_over() {
            std::thread::sleep(EXIT_POLL_INTERVAL);
        }
        ending.finish();
        count
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeSet<u32>> {
        self.groups
            .ids
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }
}

/// Ending some process groups: SIGTERM now, SIGKILL at the end of the grace period.
#[derive(Debug)]
pub(crate) struct Termination {
    alive: Vec<u32>,
    count: usize,
    kill_at: Instant,
}

impl Termination {
    /// Sends SIGTERM (and SIGCONT, so stopped processes see it) to the groups still alive.
    pub(crate) fn start(ids: impl IntoIterator<Item = u32>) -> Termination {
        let listed: Vec<u32> = ids.into_iter().collect();
        let alive = alive_among(&listed);
        for &id in &alive {
            // A group that vanished in between is what we want anyway.
            let _ = signal_group(id, Signal::Term);
            let _ = signal_group(id, Signal::Cont);
        }
        Termination {
            count: alive.len(),
            alive,
            kill_at: Instant::now() + KILL_GRACE,
        }
    }

    /// How many groups were alive at the start.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Whether every group has gone.
    pub(crate) fn is_done(&mut self) -> bool {
        self.alive = alive_among(&self.alive);
        self.alive.is_empty()
    }

    /// Whether the grace period is over.
    pub(crate) fn grace_over(&self) -> bool {
        Instant::now() >= self.kill_at
    }

    /// Sends SIGKILL to what is left, then waits briefly for it to go.
    pub(crate) fn finish(&mut self) {
        const KILL_SETTLE: Duration = Duration::from_millis(500);
        if self.is_done() {
            return;
        }
        for &id in &self.alive {
            let _ = signal_group(id, Signal::Kill);
        }
        let give_up = Instant::now() + KILL_SETTLE;
        while !self.is_done() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}
