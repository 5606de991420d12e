//! Nothing a command started outlives rein, even when rein is killed with SIGKILL, when no
//! exit handler of rein's runs (Linux).
//!
//! Two guards, each enough for most cases, together for all but one:
//! - bash gets a parent-death signal (`PR_SET_PDEATHSIG`, SIGKILL): it dies the moment rein
//!   does (the signal follows the thread that forked it: rein forks commands from its
//!   runtime's worker threads, which live as long as rein);
//! - one watchdog per rein process, a small `sh` outside every command's session and
//!   sandbox, blocked reading a pipe whose other end only rein holds. When rein ends, however
//!   it ends, the read returns, and the watchdog kills every process that carries one of this
//!   rein's command markers (`procs.rs`: every process a command starts inherits it, even one
//!   that calls `setsid` or double-forks), until none is left.
//!
//! What escapes: a process that cleared its environment (`env -i`) and left the command's
//! session before rein was killed. On a normal exit rein's own handlers (`reaper.rs`) stop
//! even those, being their subreaper.

/// The watchdog's script: wait for the pipe to end, then kill the marked processes, a few
/// rounds (one may fork while the previous round runs).
#[cfg(target_os = "linux")]
const WATCHDOG: &str = r#"cat >/dev/null
trap '' HUP INT TERM QUIT
round=0
while [ "$round" -lt 50 ]; do
  pids=$(grep -lsz -- "^$REIN_WATCHDOG_MARK" /proc/[0-9]*/environ 2>/dev/null | sed 's#^/proc/\([0-9]*\)/environ$#\1#')
  [ -z "$pids" ] && exit 0
  kill -KILL $pids 2>/dev/null
  round=$((round + 1))
done
"#;

/// The write end of the watchdog's pipe: held, never written, until rein ends.
#[cfg(target_os = "linux")]
static WATCHDOG_PIPE: std::sync::OnceLock<Option<std::io::PipeWriter>> = std::sync::OnceLock::new();

/// Makes `command` die with rein: the parent-death signal, and the session's watchdog
/// started if it is not running yet. Best effort: without a watchdog (no `sh`), the signal
/// still holds for bash itself.
#[cfg(target_os = "linux")]
#[expect(
    unsafe_code,
    reason = "pre_exec is unsafe; prctl and getppid are async-signal-safe and allocate nothing"
)]
pub(crate) fn die_with_rein(command: &mut tokio::process::Command) {
    WATCHDOG_PIPE.get_or_init(start_watchdog);
    let rein = rustix::process::getpid().as_raw_nonzero().get();
    // SAFETY: the closure makes two system calls on integers.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // rein died between the fork and the prctl: the signal will never come.
            if libc::getppid() != rein {
                return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
            }
            Ok(())
        });
    }
}

/// Elsewhere: nothing (rein's exit handlers stop its commands when it exits normally).
#[cfg(not(target_os = "linux"))]
pub(crate) fn die_with_rein(_command: &mut tokio::process::Command) {}

/// Starts the watchdog; the pipe's write end, which rein keeps until it ends.
#[cfg(target_os = "linux")]
fn start_watchdog() -> Option<std::io::PipeWriter> {
    use std::os::unix::process::CommandExt;
    // Both ends close on exec: no command ever holds the write end.
    let (reader, writer) = std::io::pipe().ok()?;
    // The marker's value is `PID.SERIAL`: the dot is a regular expression's.
    let mark = format!("{}={}\\.", super::procs::MARKER_VAR, std::process::id());
    let mut watchdog = std::process::Command::new("/bin/sh");
    watchdog
        .arg("-c")
        .arg(WATCHDOG)
        .stdin(reader)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .env("REIN_WATCHDOG_MARK", mark)
        // When rein is itself a command of another rein, the watchdog is not one of its.
        .env_remove(super::procs::MARKER_VAR)
        // Its own group: Ctrl+C at the terminal reaches rein's group, not the watchdog.
        .process_group(0);
    let child = watchdog.spawn().ok()?;
    // It ends only after rein: never waited for (the reaper reaps it if it dies early).
    drop(child);
    Some(writer)
}
