//! The system calls std lacks: signalling a whole process group, starting a child in a new
//! session, and telling whether a group still has a live process.

use std::io;

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
}

/// Sends `signal` to every process of the command started as group (and session) `pgid`:
/// its own process group and every other group of its session, since a command that turns
/// on job control (`set -m`) puts its jobs in groups of their own. Only a process that starts
/// a session of its own (`setsid`) leaves rein's reach.
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

/// Whether the command started as group (and session) `pgid` has a process that is not a
/// zombie, in its own group or in another group of its session.
///
/// Zombies do not count: an orphan's zombie stays until its new parent reaps it, which some
/// container init processes never do.
pub(crate) fn group_alive(pgid: u32) -> bool {
    !alive_among(&[pgid]).is_empty()
}

/// Those of `ids` (each a command's group and session) that [`group_alive`] holds alive,
/// found with one look at the process table however many there are.
pub(crate) fn alive_among(ids: &[u32]) -> Vec<u32> {
    if ids.is_empty() {
        return Vec::new();
    }
    let sessions: Vec<bool> = ids.iter().map(|&id| is_foreign_session(id)).collect();
    let mut alive = vec![false; ids.len()];
    for member in live_members(ids) {
        for (i, &id) in ids.iter().enumerate() {
            alive[i] |= member.group == id || (sessions[i] && member.session == id);
        }
    }
    ids.iter()
        .zip(alive)
        .filter_map(|(&id, alive)| alive.then_some(id))
        .collect()
}

/// The process groups other than `sid` itself that have a live member in session `sid`;
/// none for an id that cannot be a command's session (0, 1, rein's own session or group).
fn other_groups_of_session(sid: u32) -> Vec<u32> {
    if !is_foreign_session(sid) {
        return Vec::new();
    }
    let mut groups: Vec<u32> = live_members(&[sid])
        .filter(|member| member.session == sid && member.group != sid && member.group > 1)
        .map(|member| member.group)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    groups
}

/// Whether `id` may name the session of a command rein started: not 0 or 1, and neither
/// rein's own session nor its process group.
#[expect(
    unsafe_code,
    reason = "getsid and getpgrp have no safe wrapper in std; they take and return integers"
)]
fn is_foreign_session(id: u32) -> bool {
    let Ok(id) = libc::pid_t::try_from(id) else {
        return false;
    };
    // SAFETY: getsid(0) and getpgrp() only read the calling process's ids.
    let (own_session, own_group) = unsafe { (libc::getsid(0), libc::getpgrp()) };
    id > 1 && id != own_session && id != own_group
}

/// What `/proc/PID/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// The state letter (`R`, `S`, `Z`...).
    pub(crate) state: char,
    /// The process group.
    pub(crate) group: u32,
    /// The session.
    pub(crate) session: u32,
}

/// The live (not zombie) processes of this machine, as far as `/proc` shows them (all of
/// them: `ids` only matter where there is no `/proc`).
#[cfg(target_os = "linux")]
fn live_members(_ids: &[u32]) -> impl Iterator<Item = ProcStat> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let is_pid = name
                .to_str()
                .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
            if !is_pid {
                return None;
            }
            let stat = std::fs::read_to_string(entry.path().join("stat")).ok()?;
            parse_stat(&stat)
        })
        .filter(|stat| !matches!(stat.state, 'Z' | 'X'))
}

/// Without `/proc`, only the groups themselves can be seen: `kill(-id, 0)` tells whether
/// each has any process (zombies included).
#[cfg(not(target_os = "linux"))]
fn live_members(ids: &[u32]) -> impl Iterator<Item = ProcStat> {
    ids.iter()
        .copied()
        .filter(|&id| {
            !matches!(
                raw_kill_group(id, 0),
                Err(err) if err.raw_os_error() == Some(libc::ESRCH)
            )
        })
        .map(|id| ProcStat {
            state: 'S',
            group: id,
            session: id,
        })
        .collect::<Vec<_>>()
        .into_iter()
}

/// The state, process group and session from the text of `/proc/PID/stat`.
pub(crate) fn parse_stat(stat: &str) -> Option<ProcStat> {
    // The command name is in parentheses and may itself contain spaces and parentheses.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    let session = fields.next()?.parse().ok()?;
    Some(ProcStat {
        state,
        group,
        session,
    })
}

/// Makes the child start a new session: its own process group (id = its pid), and no
/// controlling terminal, so a program that opens `/dev/tty` to ask for a password (`sudo`,
/// `ssh`, git credentials) fails at once instead of being stopped by SIGTTIN until the timeout.
#[expect(
    unsafe_code,
    reason = "pre_exec is unsafe; setsid is async-signal-safe, as required after fork"
)]
pub(crate) fn start_new_session(command: &mut tokio::process::Command) {
    // SAFETY: the closure only calls setsid(2), which is async-signal-safe and allocates nothing.
    unsafe {
        command.pre_exec(|| {
            if libc::setsid() == -1 {
                Err(io::Error::last_os_error())
            } else {
                Ok(())
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names() {
        let stat = |state, group, session| {
            Some(ProcStat {
                state,
                group,
                session,
            })
        };
        assert_eq!(parse_stat("42 (a b) c)) S 1 43 44 0 -1"), stat('S', 43, 44));
        assert_eq!(parse_stat("7 (sleep) Z 1 5 6"), stat('Z', 5, 6));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_group_and_init_are_never_signalled() {
        assert!(signal_group(0, Signal::Term).is_err());
        assert!(signal_group(1, Signal::Term).is_err());
        // Processes that never called setsid share session 0 (this test's own, under some
        // supervisors): it must never be taken for a command's session.
        assert!(other_groups_of_session(0).is_empty());
        assert!(other_groups_of_session(1).is_empty());
    }
}
