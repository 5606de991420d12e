//! Every command rein started, with its processes (its process group and session, and those
//! that left them: see `procs.rs`), so that they can all be ended together: when a turn is
//! cancelled, when rein exits, and when the last handle is dropped.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::procs::{self, CommandId};
use super::signals::{Signal, signal_group, signal_process};

/// How long processes get to exit after SIGTERM before they are sent SIGKILL.
pub const KILL_GRACE: Duration = Duration::from_secs(2);
/// How often rein looks whether signalled processes have gone.
pub(crate) const EXIT_POLL_INTERVAL: Duration = Duration::from_millis(20);

/// The commands bash calls started (one process group each, with every process that left it:
/// see `procs.rs`). Cheap to clone: clones share the set. When the last clone is dropped,
/// every command still alive is ended.
#[derive(Debug, Clone, Default)]
pub struct ProcessTracker {
    groups: Arc<Groups>,
}

#[derive(Debug, Default)]
struct Groups {
    ids: Mutex<BTreeSet<CommandId>>,
}

impl Drop for Groups {
    fn drop(&mut self) {
        let ids = std::mem::take(self.ids.get_mut());
        Termination::start(ids).end_blocking();
    }
}

impl ProcessTracker {
    /// An empty tracker.
    pub fn new() -> Self {
        ProcessTracker::default()
    }

    /// Remembers a command to end later; forgets commands that have no live process left.
    pub(crate) fn register(&self, id: CommandId) {
        let mut ids = self.groups.ids.lock();
        let listed: Vec<CommandId> = ids.iter().copied().collect();
        *ids = procs::alive_among(&listed).into_iter().collect();
        ids.insert(id);
    }

    /// Forgets a command that has ended.
    pub(crate) fn forget(&self, id: CommandId) {
        self.groups.ids.lock().remove(&id);
    }

    /// The process groups of the tracked commands that still have a live process.
    pub fn live_groups(&self) -> Vec<u32> {
        let mut ids = self.groups.ids.lock();
        let listed: Vec<CommandId> = ids.iter().copied().collect();
        let alive = procs::alive_among(&listed);
        *ids = alive.iter().copied().collect();
        alive.iter().map(|id| id.pgid).collect()
    }

    /// Ends every tracked command: SIGTERM, then SIGKILL for what is still alive after
    /// [`KILL_GRACE`]. Returns how many commands were alive.
    pub async fn kill_all(&self) -> usize {
        let ids = std::mem::take(&mut *self.groups.ids.lock());
        let ending = Termination::start(ids);
        let count = ending.count();
        ending.end().await;
        count
    }

    /// [`kill_all`](Self::kill_all) for code that cannot await (exit paths); blocks the
    /// thread for up to [`KILL_GRACE`].
    pub fn kill_all_blocking(&self) -> usize {
        let ids = std::mem::take(&mut *self.groups.ids.lock());
        let ending = Termination::start(ids);
        let count = ending.count();
        ending.end_blocking();
        count
    }
}

/// Ending some commands: SIGTERM now, SIGKILL at the end of the grace period, to their
/// process groups and to each of their processes outside those groups.
#[derive(Debug)]
pub(crate) struct Termination {
    alive: Vec<CommandId>,
    count: usize,
    kill_at: Instant,
}

impl Termination {
    /// Sends SIGTERM (and SIGCONT, so stopped processes see it) to the commands still alive.
    pub(crate) fn start(ids: impl IntoIterator<Item = CommandId>) -> Termination {
        let listed: Vec<CommandId> = ids.into_iter().collect();
        let alive = signal_all(&listed, &[Signal::Term, Signal::Cont]);
        Termination {
            count: alive.len(),
            alive,
            kill_at: Instant::now() + KILL_GRACE,
        }
    }

    /// How many commands were alive at the start.
    pub(crate) fn count(&self) -> usize {
        self.count
    }

    /// Whether every command has gone.
    pub(crate) fn is_done(&mut self) -> bool {
        self.alive = procs::alive_among(&self.alive);
        self.alive.is_empty()
    }

    /// Whether the grace period is over.
    pub(crate) fn grace_over(&self) -> bool {
        Instant::now() >= self.kill_at
    }

    /// Waits until every command has gone or the grace period is over, then
    /// [`finish`](Self::finish)es.
    pub(crate) async fn end(mut self) {
        while !self.is_done() && !self.grace_over() {
            tokio::time::sleep(EXIT_POLL_INTERVAL).await;
        }
        self.finish();
    }

    /// [`end`](Self::end), blocking the thread.
    pub(crate) fn end_blocking(mut self) {
        while !self.is_done() && !self.grace_over() {
            std::thread::sleep(EXIT_POLL_INTERVAL);
        }
        self.finish();
    }

    /// Sends SIGKILL to what is left (looked up afresh, so what was started during the grace
    /// period goes too), then waits briefly for it to go.
    pub(crate) fn finish(&mut self) {
        const KILL_SETTLE: Duration = Duration::from_millis(500);
        if self.is_done() {
            return;
        }
        signal_all(&self.alive, &[Signal::Kill]);
        let give_up = Instant::now() + KILL_SETTLE;
        while !self.is_done() && Instant::now() < give_up {
            std::thread::sleep(Duration::from_millis(5));
        }
    }
}

/// Sends `signals` to every live process of `ids`: to their groups, and one by one to those
/// outside them. Returns the commands that had a live process.
fn signal_all(ids: &[CommandId], signals: &[Signal]) -> Vec<CommandId> {
    let members = procs::members(ids);
    let mut alive = vec![false; ids.len()];
    for member in &members {
        alive[member.command] = true;
    }
    let alive: Vec<CommandId> = ids
        .iter()
        .zip(alive)
        .filter_map(|(&id, alive)| alive.then_some(id))
        .collect();
    for &signal in signals {
        for id in alive.iter().filter(|id| !id.group_reused_now()) {
            // A group that vanished in between is what we want anyway.
            let _ = signal_group(id.pgid, signal);
        }
        for member in members.iter().filter(|m| m.outside_groups) {
            let _ = signal_process(&member.proc, signal);
        }
    }
    alive
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;

    /// A command whose bash has gone leaves its number behind; once another program leads a
    /// group of that number, ending rein's commands must not end that program.
    #[test]
    fn a_group_id_taken_by_another_program_is_left_alone() {
        let mut other = std::process::Command::new("sleep")
            .arg("30")
            .process_group(0)
            .spawn()
            .unwrap();
        let pid = other.id();
        let started = procs::read(pid).unwrap().start_ticks;
        let stale = CommandId {
            pgid: pid,
            serial: u64::MAX,
            started: started.saturating_sub(1).max(1),
        };
        let tracker = ProcessTracker::new();
        tracker.register(stale);
        assert!(tracker.live_groups().is_empty());
        tracker.register(stale);
        tracker.kill_all_blocking();
        let alive = procs::read(pid).is_some_and(|p| p.is_live());
        let _ = other.kill();
        let _ = other.wait();
        assert!(alive, "the other program was signalled");
    }
}
