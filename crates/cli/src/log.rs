//! `REIN_LOG=debug` (or `error`, `warn`, `info`, `trace`): rein's own diagnostics, for when
//! something is slow or fails without saying why: each model request's timeline (sent,
//! response headers, first byte, complete), each retry and its wait, each tool call's start
//! and end with its duration, and the warnings that have no one to show them to. They go to
//! `$REIN_HOME/logs/rein.log`, never to the terminal; a file past [`LOG_MAX_BYTES`] is
//! rotated, [`LOG_FILES`] kept. Unset, nothing is written.
//!
//! No event carries a secret: API keys and headers are never logged (a test runs with a key
//! and searches the log for it).

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tracing_subscriber::filter::{LevelFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// The variable that turns the log on, with the most detailed level to keep.
pub(crate) const LOG_VAR: &str = "REIN_LOG";
/// The log's directory under rein's home.
pub(crate) const LOG_DIR: &str = "logs";
/// The largest a log file grows before it is rotated.
pub(crate) const LOG_MAX_BYTES: u64 = 4 * 1024 * 1024;
/// How many files are kept: `rein.log` and `rein.log.1` … up to this many in all.
pub(crate) const LOG_FILES: usize = 3;
const LOG_FILE: &str = "rein.log";

/// Installs the log when `REIN_LOG` asks for it; a warning for the person when it cannot be.
pub(crate) fn install(rein_home: Option<&Path>) -> Option<String> {
    let level = std::env::var(LOG_VAR)
        .ok()
        .filter(|v| !v.trim().is_empty())?;
    let level: LevelFilter = match level.trim().parse() {
        Ok(level) => level,
        Err(_) => {
            return Some(format!(
                "{LOG_VAR}=\"{level}\" is not a level (error, warn, info, debug, trace, off): \
                 nothing is logged"
            ));
        }
    };
    let Some(home) = rein_home else {
        return Some(format!(
            "{LOG_VAR}: rein's home is unknown, nothing is logged"
        ));
    };
    let writer = match Rotating::open(home.join(LOG_DIR)) {
        Ok(writer) => writer,
        Err(err) => {
            return Some(format!(
                "{LOG_VAR}: cannot open {}: {err}",
                home.join(LOG_DIR).join(LOG_FILE).display()
            ));
        }
    };
    // rmcp's OAuth module logs the authorization code and the token response (its tokens
    // redacted, not its other fields) at debug level: it gets no more than info.
    let filter = Targets::new()
        .with_default(level)
        .with_target("rmcp::transport::auth", level.min(LevelFilter::INFO));
    let installed = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_ansi(false)
        .with_writer(Mutex::new(writer))
        .finish()
        .with(filter)
        .try_init();
    if installed.is_ok() {
        tracing::info!(
            version = env!("CARGO_PKG_VERSION"),
            pid = std::process::id(),
            "rein started"
        );
    }
    None
}

/// `rein.log`, moved to `rein.log.1` (and so on) when it reaches [`LOG_MAX_BYTES`].
struct Rotating {
    dir: PathBuf,
    file: File,
    written: u64,
}

impl Rotating {
    fn open(dir: PathBuf) -> io::Result<Self> {
        fs::create_dir_all(&dir)?;
        let file = OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join(LOG_FILE))?;
        let written = file.metadata()?.len();
        let mut log = Rotating { dir, file, written };
        if log.written >= LOG_MAX_BYTES {
            log.rotate()?;
        }
        Ok(log)
    }

    /// Shifts `rein.log.N` to `N+1` (the oldest is dropped) and starts an empty `rein.log`.
    fn rotate(&mut self) -> io::Result<()> {
        let path = |n: usize| match n {
            0 => self.dir.join(LOG_FILE),
            n => self.dir.join(format!("{LOG_FILE}.{n}")),
        };
        for n in (0..LOG_FILES - 1).rev() {
            // A missing one is fine: there were fewer rotations yet.
            let _ = fs::rename(path(n), path(n + 1));
        }
        self.file = OpenOptions::new().create(true).append(true).open(path(0))?;
        self.written = 0;
        Ok(())
    }
}

impl Write for Rotating {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if self.written >= LOG_MAX_BYTES {
            self.rotate()?;
        }
        let n = self.file.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.file.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_log_is_rotated_and_only_a_few_are_kept() {
        let dir = tempfile::tempdir().unwrap();
        let mut log = Rotating::open(dir.path().to_path_buf()).unwrap();
        let line = vec![b'x'; 1024 * 1024];
        for _ in 0..(LOG_FILES as u64 + 2) * (LOG_MAX_BYTES / line.len() as u64) {
            log.write_all(&line).unwrap();
        }
        let mut names: Vec<String> = fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, ["rein.log", "rein.log.1", "rein.log.2"]);
        for name in names {
            let len = fs::metadata(dir.path().join(name)).unwrap().len();
            assert!(len <= LOG_MAX_BYTES, "{len}");
        }
    }
}
