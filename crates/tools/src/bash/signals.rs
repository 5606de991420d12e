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

/// Sends `signal` to every process in group `pgid`.
pub(crate) fn signal_group(pgid: u32, signal: Signal) -> io::Result<()> {
    raw_kill_group(pgid, signal.number())
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

/// Whether group `pgid` has a process that is not a zombie.
///
/// Zombies do not count: an orphan's zombie stays until its new parent reaps it, which some
/// container init processes never do.
pub(crate) fn group_alive(pgid: u32) -> bool {
    match raw_kill_group(pgid, 0) {
        Err(err) if err.raw_os_error() == Some(libc::ESRCH) => false,
        Ok(()) | Err(_) => has_live_member(pgid),
    }
}

#[cfg(target_os = "linux")]
fn has_live_member(pgid: u32) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return true;
    };
    entries.flatten().any(|entry| {
        let is_pid = entry
            .file_name()
            .to_str()
            .is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit()));
        if !is_pid {
            return false;
        }
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            return false;
        };
        parse_stat(&stat).is_some_and(|(state, group)| group == pgid && !matches!(state, 'Z' | 'X'))
    })
}

#[cfg(not(target_os = "linux"))]
fn has_live_member(_pgid: u32) -> bool {
    true
}

/// The state letter and process group from the text of `/proc/PID/stat`.
pub(crate) fn parse_stat(stat: &str) -> Option<(char, u32)> {
    // The command name is in parentheses and may itself contain spaces and parentheses.
    let after_name = &stat[stat.rfind(')')? + 1..];
    let mut fields = after_name.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _parent = fields.next()?;
    let group = fields.next()?.parse().ok()?;
    Some((state, group))
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
        assert_eq!(parse_stat("42 (a b) c)) S 1 42 42 0 -1"), Some(('S', 42)));
        assert_eq!(parse_stat("7 (sleep) Z 1 5 5"), Some(('Z', 5)));
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn own_group_and_init_are_never_signalled() {
        assert!(signal_group(0, Signal::Term).is_err());
        assert!(signal_group(1, Signal::Term).is_err());
    }
}
