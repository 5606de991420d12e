//! The system calls std lacks: signalling a whole process group or one exact process,
//! starting a child in a new session, and telling whether an id may be a command's session.
//!
//! Safety properties, each tested below or in `tests/orphans.rs`:
//! - Process group 0 and 1, rein's own group and its own session are never signalled (they
//!   would mean "my group" or "everyone", or hit rein and the shell that started it).
//! - A single process is signalled only if it is still the very process that was looked at
//!   (same pid and start time, held through a pidfd where the kernel has them), never pid 0,
//!   1 or rein itself: a pid reused in between is never hit.

use std::io;

use super::procs::{self, ProcStat};

/// A signal rein sends to a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Signal {
    /// Asks the processes to exit.
    Term,
    /// Ends them.
    Kill,
    /// Resumes stopped processes, so that a pending SIGTERM takes effect.
    Cont,
}

impl Signal {
    fn number(self) -> libc::c_int {
        match self {
            Signal::Term => libc::SIGTERM,
            Signal::Kill => libc::SIGKILL,
            Signal::Cont => libc::SIGCONT,
        }
    }

    fn rustix(self) -> rustix::process::Signal {
        match self {
            Signal::Term => rustix::process::Signal::TERM,
            Signal::Kill => rustix::process::Signal::KILL,
            Signal::Cont => rustix::process::Signal::CONT,
        }
    }
}

/// Sends `signal` to every process of the command started as group (and session) `pgid`:
/// its own process group and every other group of its session, since a command that turns
/// on job control (`set -m`) puts its jobs in groups of their own. (Processes that left the
/// session are signalled one by one: [`signal_process`].)
pub(crate) fn signal_group(pgid: u32, signal: Signal) -> io::Result<()> {
    // Checked before the session is looked at: processes that never called setsid report
    // session 0, and rein's own session must never be touched.
    let leader = raw_kill_group(pgid, signal.number());
    if matches!(&leader, Err(err) if err.raw_os_error().is_none()) {
        return leader;
    }
    for group in other_groups_of_session(pgid) {
        // A group that ended in between is what we want anyway.
        let _ = raw_kill_group(group, signal.number());
    }
    match leader {
        Err(err) if err.raw_os_error() == Some(libc::ESRCH) => Ok(()),
        other => other,
    }
}

/// `kill(-pgid, sig)`, refusing the group ids that would mean "my own group" or "everyone".
#[expect(
    unsafe_code,
    reason = "libc::kill has no safe wrapper in std; the arguments are plain integers"
)]
fn raw_kill_group(pgid: u32, signal: libc::c_int) -> io::Result<()> {
    let pgid = libc::pid_t::try_from(pgid)
        .map_err(|_| io::Error::other("process group id out of range"))?;
    if pgid <= 1 {
        return Err(io::Error::other(format!(
            "refusing to signal process group {pgid}"
        )));
    }
    // SAFETY: kill has no memory-safety preconditions; a negative pid names a process group.
    let result = unsafe { libc::kill(-pgid, signal) };
    if result == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sends `signal` to the process `proc` describes, if it is still that process. A process
/// that has gone is not an error: that is what was wanted.
pub(crate) fn signal_process(proc: &ProcStat, signal: Signal) -> io::Result<()> {
    if proc.pid <= 1 || proc.pid == std::process::id() {
        return Err(io::Error::other(format!(
            "refusing to signal process {}",
            proc.pid
        )));
    }
    let raw = i32::try_from(proc.pid).map_err(|_| io::Error::other("pid out of range"))?;
    let pid = rustix::process::Pid::from_raw(raw).ok_or_else(|| io::Error::other("pid 0"))?;
    let same = || procs::read(proc.pid).is_some_and(|now| now.start_ticks == proc.start_ticks);
    #[cfg(target_os = "linux")]
    {
        use rustix::io::Errno;
        use rustix::process::{PidfdFlags, pidfd_open, pidfd_send_signal};
        match pidfd_open(pid, PidfdFlags::empty()) {
            // The pidfd holds this process: once it is checked, the pid cannot be reused
            // under it.
            Ok(pidfd) if same() => {
                return match pidfd_send_signal(&pidfd, signal.rustix()) {
                    Ok(()) | Err(Errno::SRCH) => Ok(()),
                    Err(err) => Err(err.into()),
                };
            }
            Ok(_) | Err(Errno::SRCH) => return Ok(()),
            // No pidfds here (before Linux 5.3): check, then signal by pid.
            Err(Errno::NOSYS) => {}
            Err(err) => return Err(err.into()),
        }
    }
    if !same() {
        return Ok(());
    }
    match rustix::process::kill_process(pid, signal.rustix()) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// The process groups other than `sid` itself that have a live member in session `sid`;
/// none for an id that cannot be a command's session (0, 1, rein's own session or group).
fn other_groups_of_session(sid: u32) -> Vec<u32> {
    if !is_foreign_session(sid) {
        return Vec::new();
    }
    let mut groups: Vec<u32> = procs::table()
        .into_iter()
        .filter(|p| p.is_live() && p.session == sid && p.group != sid && p.group > 1)
        .map(|p| p.group)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    groups
}

/// Whether `id` may name the session of a command rein started: not 0 or 1, and neither
/// rein's own session nor its process group.
pub(crate) fn is_foreign_session(id: u32) -> bool {
    let Ok(raw) = i32::try_from(id) else {
        return false;
    };
    let (own_group, own_session) = own_group_and_session();
    raw > 1 && raw != own_session && raw != own_group
}

/// rein's own process group and session ids, 0 where their leader lives outside rein's PID
/// namespace (containers, CI runners): the kernel reports 0 then, which rustix's typed `Pid`
/// cannot hold, so the raw calls are used.
#[expect(
    unsafe_code,
    reason = "getpgrp and getsid(0) take no pointers and cannot fail for the calling process"
)]
fn own_group_and_session() -> (i32, i32) {
    let group = unsafe { libc::getpgrp() };
    let session = unsafe { libc::getsid(0) };
    (group, session.max(0))
}

/// Whether process group `pgid` has any process (zombies included), for systems without
/// `/proc`.
#[cfg(not(target_os = "linux"))]
pub(crate) fn group_has_process(pgid: u32) -> bool {
    !matches!(
        raw_kill_group(pgid, 0),
        Err(err) if err.raw_os_error() == Some(libc::ESRCH)
    )
}

/// Makes the child start a new session: its own process group (id = its pid), and no
/// controlling terminal, so a program that opens `/dev/tty` to ask for a password (`sudo`,
/// `ssh`, git credentials) fails at once instead of being stopped by SIGTTIN until the timeout.
///
/// On Linux bash also becomes a child subreaper: what its processes orphan while it runs
/// (double forks, `setsid cmd &` whose parent exits) stays in its tree, where rein finds it,
/// and bash reaps it when it ends.
#[expect(
    unsafe_code,
    reason = "pre_exec is unsafe; setsid and prctl are async-signal-safe, as required after fork"
)]
pub(crate) fn start_new_session(command: &mut tokio::process::Command) {
    // SAFETY: the closure only makes system calls (setsid(2), prctl(2)), which are
    // async-signal-safe and allocate nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                return Err(io::Error::last_os_error());
            }
            // Best effort: without it (kernels before 3.4) rein still finds orphans by their
            // marker.
            #[cfg(target_os = "linux")]
            let _ = libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
            Ok(())
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_group_and_init_are_never_signalled() {
        assert!(signal_group(0, Signal::Term).is_err());
        assert!(signal_group(1, Signal::Term).is_err());
        // Processes that never called setsid share session 0 (this test's own, under some
        // supervisors): it must never be taken for a command's session.
        assert!(other_groups_of_session(0).is_empty());
        assert!(other_groups_of_session(1).is_empty());
        let own_group = u32::try_from(own_group_and_session().0).unwrap_or(0);
        assert!(!is_foreign_session(own_group));
    }

    #[test]
    fn init_and_rein_itself_are_never_signalled_one_by_one() {
        let mut init = procs::read(1).unwrap_or(ProcStat {
            pid: 1,
            parent: 0,
            state: 'S',
            group: 1,
            session: 1,
            start_ticks: 0,
        });
        assert!(signal_process(&init, Signal::Cont).is_err());
        init.pid = 0;
        assert!(signal_process(&init, Signal::Cont).is_err());
        let own = procs::read(std::process::id());
        assert!(own.is_some_and(|own| signal_process(&own, Signal::Cont).is_err()));
    }

    #[test]
    fn a_process_that_is_no_longer_the_one_seen_is_not_signalled() -> io::Result<()> {
        let mut child = std::process::Command::new("sleep").arg("30").spawn()?;
        let pid = child.id();
        let seen = procs::read(pid).ok_or_else(|| io::Error::other("child not in /proc"))?;
        // The same pid, another start time: as if the pid had been reused.
        let other = ProcStat {
            start_ticks: seen.start_ticks + 1,
            ..seen
        };
        signal_process(&other, Signal::Term)?;
        let still = procs::read(pid).is_some_and(|p| p.is_live());
        signal_process(&seen, Signal::Kill)?;
        child.wait()?;
        assert!(still, "a process with another start time was signalled");
        Ok(())
    }
}
