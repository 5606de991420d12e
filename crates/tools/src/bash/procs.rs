//! Which processes belong to a command, as `/proc` shows them.
//!
//! A command's processes are found three ways, because each alone can be escaped:
//! - its process group and session (bash starts one; jobs under `set -m` get groups in it);
//! - the marker in their environment, `REIN_COMMAND_ID=<rein's pid>.<serial>`, which every
//!   process the command starts inherits, even one that calls `setsid` or double-forks;
//! - descent: any process whose parent belongs to the command (this catches a process that
//!   left the session *and* cleared its environment, while its parent is known).
//!
//! Only processes started after rein are looked at for the marker, so the scan reads few
//! environments. Without `/proc` (other systems than Linux) only the process group is seen.

use std::collections::HashMap;

/// The environment variable that marks a command's processes.
pub(crate) const MARKER_VAR: &str = "REIN_COMMAND_ID";

/// One command rein started: its process group (bash's pid, also its session) and the serial
/// in its marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct CommandId {
    /// The process group, session and pid of the command's bash.
    pub(crate) pgid: u32,
    /// The serial in the command's marker.
    pub(crate) serial: u64,
    /// When its bash started (clock ticks since boot; 0 if unknown): once bash has gone and
    /// its group emptied, the same number may name another program's group, whose leader
    /// started later.
    pub(crate) started: u64,
}

impl CommandId {
    /// Whether the pid of this command's bash now names another process: then its group id
    /// is that process's, and this command's group has no process left.
    pub(crate) fn group_reused(&self, table: &[ProcStat]) -> bool {
        self.started != 0
            && table
                .iter()
                .any(|p| p.pid == self.pgid && p.start_ticks != self.started)
    }

    /// [`group_reused`](Self::group_reused), looking at the one process it concerns.
    pub(crate) fn group_reused_now(&self) -> bool {
        read(self.pgid).is_some_and(|p| self.group_reused(&[p]))
    }
}

/// The serial of the next command's marker.
static NEXT_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A serial no other command of this rein has: bash commands and other children alike.
pub(crate) fn next_serial() -> u64 {
    NEXT_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// The value of [`MARKER_VAR`] for the command with `serial`.
pub(crate) fn marker_value(serial: u64) -> String {
    format!("{}.{serial}", std::process::id())
}

/// What `/proc/PID/stat` says of a process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcStat {
    /// Its pid.
    pub(crate) pid: u32,
    /// Its parent.
    pub(crate) parent: u32,
    /// The state letter (`R`, `S`, `Z`...).
    pub(crate) state: char,
    /// The process group.
    pub(crate) group: u32,
    /// The session.
    pub(crate) session: u32,
    /// When it started, in clock ticks since boot: with the pid, names one process for good.
    pub(crate) start_ticks: u64,
}

impl ProcStat {
    /// Whether the process runs (a zombie has ended and only waits to be reaped).
    pub(crate) fn is_live(&self) -> bool {
        !matches!(self.state, 'Z' | 'X')
    }
}

/// The fields of the text of `/proc/PID/stat`.
pub(crate) fn parse_stat(stat: &str) -> Option<ProcStat> {
    let pid = stat.split_whitespace().next()?.parse().ok()?;
    // The command name is in parentheses and may itself contain spaces and parentheses.
    let after_name = &stat[stat.rfind(')')? + 1..];
    // After the name: state (3), ppid (4), pgrp (5), session (6), ..., starttime (22).
    let mut fields = after_name.split_whitespace();
    Some(ProcStat {
        pid,
        state: fields.next()?.chars().next()?,
        parent: fields.next()?.parse().ok()?,
        group: fields.next()?.parse().ok()?,
        session: fields.next()?.parse().ok()?,
        start_ticks: fields.nth(15)?.parse().ok()?,
    })
}

/// The process `pid`, if it exists.
pub(crate) fn read(pid: u32) -> Option<ProcStat> {
    StatReader::default().read(pid)
}

/// Reads `/proc/PID/stat` files into one buffer: a look at the whole table reads hundreds.
#[derive(Default)]
struct StatReader {
    path: String,
    text: String,
}

impl StatReader {
    fn read(&mut self, pid: u32) -> Option<ProcStat> {
        use std::fmt::Write as _;
        use std::io::Read as _;
        self.path.clear();
        write!(self.path, "/proc/{pid}/stat").ok()?;
        self.text.clear();
        let mut file = std::fs::File::open(&self.path).ok()?;
        file.read_to_string(&mut self.text).ok()?;
        parse_stat(&self.text)
    }
}

/// Every process of this machine `/proc` shows.
pub(crate) fn table() -> Vec<ProcStat> {
    let mut reader = StatReader::default();
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| {
            let name = entry.file_name();
            let pid: u32 = name.to_str()?.parse().ok()?;
            reader.read(pid)
        })
        .collect()
}

/// When this process started (0 if unknown: then every process is looked at).
fn own_start_ticks() -> u64 {
    static START: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    *START.get_or_init(|| read(std::process::id()).map_or(0, |s| s.start_ticks))
}

/// The serial of the marker `pid` carries, if it is one of this process's markers.
pub(crate) fn marker_serial(pid: u32) -> Option<u64> {
    read_marker(pid).flatten()
}

/// `Some(marker)` when the environment of `pid` could be read (`Some(None)`: it carries no
/// marker of this rein); `None` when it could not, or read empty, as it briefly does while
/// the process execs: then nothing is known yet.
pub(crate) fn read_marker(pid: u32) -> Option<Option<u64>> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    if environ.is_empty() {
        return None;
    }
    let prefix = format!("{MARKER_VAR}={}.", std::process::id());
    Some(environ.split(|&b| b == 0).find_map(|entry| {
        let serial = entry.strip_prefix(prefix.as_bytes())?;
        std::str::from_utf8(serial).ok()?.parse().ok()
    }))
}

/// A live process of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Member {
    /// The process.
    pub(crate) proc: ProcStat,
    /// The index of its command in the list asked about.
    pub(crate) command: usize,
    /// Whether it is outside the command's process group and session, so that signalling the
    /// group misses it.
    pub(crate) outside_groups: bool,
}

/// The live processes of `commands`, with one look at the process table.
#[cfg(target_os = "linux")]
pub(crate) fn members(commands: &[CommandId]) -> Vec<Member> {
    if commands.is_empty() {
        return Vec::new();
    }
    let own = std::process::id();
    let own_start = own_start_ticks();
    let sessions: Vec<bool> = commands
        .iter()
        .map(|c| super::signals::is_foreign_session(c.pgid))
        .collect();
    let all = table();
    // A group id now owned by another program says nothing of the command's processes.
    let reused: Vec<bool> = commands.iter().map(|c| c.group_reused(&all)).collect();
    let live: Vec<ProcStat> = all
        .into_iter()
        .filter(|p| p.is_live() && p.pid > 1 && p.pid != own)
        .collect();
    let mut found: HashMap<u32, Member> = HashMap::new();
    for p in &live {
        let in_groups = commands.iter().enumerate().find(|(i, c)| {
            !reused[*i] && (p.group == c.pgid || (sessions[*i] && p.session == c.pgid))
        });
        if let Some((command, _)) = in_groups {
            found.insert(
                p.pid,
                Member {
                    proc: *p,
                    command,
                    outside_groups: false,
                },
            );
            continue;
        }
        if p.start_ticks < own_start {
            continue;
        }
        let marked = marker_serial(p.pid)
            .and_then(|serial| commands.iter().position(|c| c.serial == serial));
        if let Some(command) = marked {
            found.insert(
                p.pid,
                Member {
                    proc: *p,
                    command,
                    outside_groups: true,
                },
            );
        }
    }
    // Descent: children of members are members, to any depth.
    let mut children: HashMap<u32, Vec<&ProcStat>> = HashMap::new();
    for p in &live {
        children.entry(p.parent).or_default().push(p);
    }
    let mut pending: Vec<(u32, usize)> = found.values().map(|m| (m.proc.pid, m.command)).collect();
    while let Some((pid, command)) = pending.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if let std::collections::hash_map::Entry::Vacant(slot) = found.entry(child.pid) {
                slot.insert(Member {
                    proc: **child,
                    command,
                    outside_groups: true,
                });
                pending.push((child.pid, command));
            }
        }
    }
    found.into_values().collect()
}

/// Without `/proc`, only the groups themselves can be seen: `kill(-id, 0)` tells whether each
/// has any process (zombies included).
#[cfg(not(target_os = "linux"))]
pub(crate) fn members(commands: &[CommandId]) -> Vec<Member> {
    commands
        .iter()
        .enumerate()
        .filter(|(_, c)| super::signals::group_has_process(c.pgid))
        .map(|(command, c)| Member {
            proc: ProcStat {
                pid: c.pgid,
                parent: 0,
                state: 'S',
                group: c.pgid,
                session: c.pgid,
                start_ticks: 0,
            },
            command,
            outside_groups: false,
        })
        .collect()
}

/// Those of `commands` that have a live process.
pub(crate) fn alive_among(commands: &[CommandId]) -> Vec<CommandId> {
    let mut alive = vec![false; commands.len()];
    for member in members(commands) {
        alive[member.command] = true;
    }
    commands
        .iter()
        .zip(alive)
        .filter_map(|(&c, alive)| alive.then_some(c))
        .collect()
}

/// Every live descendant of this process, however deep.
pub(crate) fn own_descendants() -> Vec<ProcStat> {
    let own = std::process::id();
    let procs = table();
    let mut children: HashMap<u32, Vec<&ProcStat>> = HashMap::new();
    for p in &procs {
        children.entry(p.parent).or_default().push(p);
    }
    let mut found = Vec::new();
    let mut pending = vec![own];
    while let Some(pid) = pending.pop() {
        for child in children.get(&pid).into_iter().flatten() {
            if child.pid > 1 && child.pid != own {
                pending.push(child.pid);
                if child.is_live() {
                    found.push(**child);
                }
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names() {
        let line = "42 (a b) c)) S 1 43 44 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 777 0 0";
        let stat = parse_stat(line);
        assert_eq!(
            stat,
            Some(ProcStat {
                pid: 42,
                parent: 1,
                state: 'S',
                group: 43,
                session: 44,
                start_ticks: 777,
            })
        );
        assert_eq!(parse_stat("garbage"), None);
        assert_eq!(
            parse_stat("7 (sleep) Z 1 5 6"),
            None,
            "too short: no start time"
        );
    }

    #[test]
    fn this_process_reads_as_itself() {
        let own = read(std::process::id());
        assert!(own.is_some_and(|p| p.is_live() && p.start_ticks > 0));
    }
}
