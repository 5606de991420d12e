//! Where the one-shot prompt comes from: the flag, or stdin for `-p -` or a pipe; and piped
//! input attached to a prompt given with `-p TEXT` (`git diff | rein -p "review this"`).

use std::io::{IsTerminal, Read};
use std::os::unix::fs::FileTypeExt;
use std::sync::mpsc;
use std::time::Duration;

/// The most of stdin attached to a request; the rest is not read, and the request says so.
pub(crate) const STDIN_LIMIT_BYTES: usize = 256 * 1024;
/// How often rein says it is still reading a pipe that keeps sending.
const STILL_READING_EVERY: Duration = Duration::from_secs(10);
/// How long a pipe on stdin may stay silent before rein goes on without it: an orchestrator
/// that spawns rein often leaves an inherited pipe open that never sends anything.
const PIPE_SILENCE_LIMIT: Duration = Duration::from_secs(3);

/// The request to run once, or `None` for an interactive session. `notice` receives what
/// the person should know (stdin not attached, or cut).
pub(crate) fn one_shot_prompt(
    flag: Option<&str>,
    notice: &dyn Fn(&str),
) -> Result<Option<String>, String> {
    let stdin_is_terminal = std::io::stdin().is_terminal();
    match flag {
        Some("-") => read_prompt_from_stdin().map(Some),
        Some(text) if text.trim().is_empty() => Err("the prompt given with -p is empty".to_owned()),
        Some(text) if stdin_is_terminal => Ok(Some(text.to_owned())),
        Some(text) => Ok(Some(match piped_input(notice) {
            Some(piped) => attach(text, &piped),
            None => text.to_owned(),
        })),
        None if !stdin_is_terminal => read_prompt_from_stdin().map(Some),
        None => Ok(None),
    }
}

/// What was read from stdin to go with a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Piped {
    /// The bytes read, at most [`STDIN_LIMIT_BYTES`].
    bytes: Vec<u8>,
    /// More followed that was not read.
    cut: bool,
}

/// `text`, then the piped input in a fence that nothing inside it can close.
pub(crate) fn attach(text: &str, piped: &Piped) -> String {
    if piped.bytes.contains(&0) {
        return format!(
            "{text}\n\n(rein: the input piped to it is binary data, {} bytes{}; it is not shown.)",
            piped.bytes.len(),
            if piped.cut { " or more" } else { "" }
        );
    }
    let content = String::from_utf8_lossy(&piped.bytes);
    let longest_run = content.split(|c| c != '`').map(str::len).max().unwrap_or(0);
    let fence = "`".repeat(longest_run.max(2) + 1);
    let newline = if content.ends_with('\n') { "" } else { "\n" };
    let cut = if piped.cut {
        format!(
            "\n(rein: the piped input was cut after its first {} KiB; the rest was not read.)",
            STDIN_LIMIT_BYTES / 1024
        )
    } else {
        String::new()
    };
    format!("{text}\n\nInput piped to rein:\n{fence}\n{content}{newline}{fence}{cut}")
}

/// Reads stdin to go with a prompt: a file at once; a pipe or socket as long as it sends,
/// unless it stays silent past [`PIPE_SILENCE_LIMIT`]. `None` when there is nothing to attach.
fn piped_input(notice: &dyn Fn(&str)) -> Option<Piped> {
    let is_stream = std::fs::metadata("/dev/stdin")
        .map(|m| m.file_type().is_fifo() || m.file_type().is_socket())
        .unwrap_or(false);
    let (started_tx, started_rx) = mpsc::channel::<()>();
    let read = if is_stream {
        let (done_tx, done_rx) = mpsc::channel::<std::io::Result<Piped>>();
        // A thread of its own: a read that never returns must not hold rein up, and the
        // thread ends with the process.
        let spawned = std::thread::Builder::new()
            .name("stdin".into())
            .spawn(move || {
                let _ = done_tx.send(read_capped(&mut std::io::stdin().lock(), &started_tx));
            });
        if spawned.is_err() {
            notice("rein: warning: cannot read stdin (no thread); going on without it");
            return None;
        }
        if started_rx.recv_timeout(PIPE_SILENCE_LIMIT).is_err() {
            notice(&format!(
                "rein: stdin is a pipe that sent nothing for {} s; going on without it \
                 (run rein with </dev/null to skip this wait; to attach a slow command's \
                 output, save it first: cmd > out.txt; rein -p \"...\" < out.txt)",
                PIPE_SILENCE_LIMIT.as_secs()
            ));
            return None;
        }
        // It sends: wait as long as it keeps the pipe open (a slow build's log is worth it),
        // but say so now and then, with how to go on.
        loop {
            match done_rx.recv_timeout(STILL_READING_EVERY) {
                Ok(read) => break Some(read),
                Err(mpsc::RecvTimeoutError::Timeout) => notice(
                    "rein: still reading the input piped to it; it starts once the pipe is \
                     closed (or once 256 KiB have come). Press Ctrl+C to stop, or run rein \
                     with </dev/null to leave stdin out.",
                ),
                Err(mpsc::RecvTimeoutError::Disconnected) => break None,
            }
        }
    } else {
        // A file or a device (/dev/null) answers at once.
        Some(read_capped(&mut std::io::stdin().lock(), &started_tx))
    };
    match read {
        Some(Ok(piped)) if piped.bytes.is_empty() => None,
        Some(Ok(piped)) => {
            if piped.cut {
                notice(&format!(
                    "rein: the piped input is longer than {} KiB; only its start is attached",
                    STDIN_LIMIT_BYTES / 1024
                ));
            }
            Some(piped)
        }
        Some(Err(e)) => {
            notice(&format!(
                "rein: warning: cannot read stdin ({e}); going on without it"
            ));
            None
        }
        None => None,
    }
}
/// Reads up to the limit, telling `started` when the first read returns (data or end).
fn read_capped(reader: &mut dyn Read, started: &mpsc::Sender<()>) -> std::io::Result<Piped> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let mut told = false;
    loop {
        let n = match reader.read(&mut chunk) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if !told {
            let _ = started.send(());
            told = true;
        }
        if n == 0 {
            return Ok(Piped { bytes, cut: false });
        }
        let room = STDIN_LIMIT_BYTES - bytes.len();
        if n > room {
            bytes.extend_from_slice(&chunk[..room]);
            return Ok(Piped { bytes, cut: true });
        }
        bytes.extend_from_slice(&chunk[..n]);
        if bytes.len() == STDIN_LIMIT_BYTES {
            // Full: one more byte decides whether anything was cut.
            let mut one = [0u8; 1];
            let cut = loop {
                match reader.read(&mut one) {
                    Ok(n) => break n > 0,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break false,
                }
            };
            return Ok(Piped { bytes, cut });
        }
    }
}

/// The whole prompt from stdin (`-p -`, or a pipe without `-p`).
fn read_prompt_from_stdin() -> Result<String, String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the prompt from stdin: {e}"))?;
    let text = String::from_utf8_lossy(&bytes).into_owned();
    if text.trim().is_empty() {
        return Err("the prompt read from stdin is empty".to_owned());
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn piped(text: &str) -> Piped {
        Piped {
            bytes: text.as_bytes().to_vec(),
            cut: false,
        }
    }

    #[test]
    fn piped_text_follows_the_prompt_in_a_fence_it_cannot_close() {
        let with = attach("review this", &piped("```rust\nfn x() {}\n```\n"));
        assert_eq!(
            with,
            "review this\n\nInput piped to rein:\n````\n```rust\nfn x() {}\n```\n````"
        );
        assert_eq!(
            attach("p", &piped("no newline")),
            "p\n\nInput piped to rein:\n```\nno newline\n```"
        );
    }

    #[test]
    fn binary_and_cut_input_say_so() {
        let binary = Piped {
            bytes: vec![0x7f, b'E', b'L', b'F', 0, 1],
            cut: false,
        };
        assert!(attach("p", &binary).contains("binary data, 6 bytes; it is not shown"));
        let cut = Piped {
            bytes: b"a\n".to_vec(),
            cut: true,
        };
        assert!(attach("p", &cut).ends_with("the rest was not read.)"));
    }

    #[test]
    fn reading_stops_at_the_limit_and_knows_whether_more_came() {
        let (tx, _rx) = mpsc::channel();
        let exact = vec![b'x'; STDIN_LIMIT_BYTES];
        let read = read_capped(&mut exact.as_slice(), &tx).unwrap();
        assert_eq!((read.bytes.len(), read.cut), (STDIN_LIMIT_BYTES, false));
        let more = vec![b'x'; STDIN_LIMIT_BYTES + 1];
        let read = read_capped(&mut more.as_slice(), &tx).unwrap();
        assert_eq!((read.bytes.len(), read.cut), (STDIN_LIMIT_BYTES, true));
        let invalid = [b'a', 0xFF, b'\n'];
        let read = read_capped(&mut invalid.as_slice(), &tx).unwrap();
        assert_eq!(
            attach("p", &read),
            "p\n\nInput piped to rein:\n```\na\u{FFFD}\n```"
        );
    }
}
