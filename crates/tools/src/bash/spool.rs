//! A command's output saved to a file in the offload directory as it arrives, so that nothing
//! is lost however much is printed, while memory holds only the start and the end.
//!
//! - Small outputs make no file: the spool opens only once the output passes the threshold
//!   (the output budget), writing first what came before, which memory still holds whole.
//! - The file stops growing at the cap; [`Spool::finish`] then ends it with a line saying how
//!   much more was printed and not saved.
//! - Writes go straight to the file as each chunk is read, with no await in between, so the
//!   reader stays cancel-safe; they land in the page cache, so they do not hold up the read
//!   loop in practice.
//! - A file that could not be opened or written is reported, never silently short.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::offload;

/// Where and how to save one command's output.
#[derive(Debug, Clone)]
pub(crate) struct SpoolSpec {
    /// The offload directory (absolute).
    pub(crate) dir: PathBuf,
    /// Outputs of up to this many bytes are not saved.
    pub(crate) threshold_bytes: u64,
    /// The most bytes saved.
    pub(crate) cap_bytes: u64,
}

/// A command's output being saved.
#[derive(Debug)]
pub(crate) struct Spool {
    spec: SpoolSpec,
    /// The file, once made (kept after a write error: it holds what was saved).
    path: Option<PathBuf>,
    /// Open while saving goes on.
    file: Option<File>,
    /// Why saving stopped (or never started).
    error: Option<String>,
    stats: OutputStats,
    saved_bytes: u64,
    saved_newlines: u64,
}

/// Counts over the whole output, saved or not.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OutputStats {
    /// Bytes printed.
    pub(crate) total_bytes: u64,
    /// Characters printed (bytes that start a UTF-8 character).
    pub(crate) chars: u64,
    /// Line breaks printed.
    pub(crate) newlines: u64,
    /// Whether the last byte printed was a line break.
    pub(crate) ends_with_newline: bool,
    /// The longest line, in bytes.
    pub(crate) longest_line_bytes: u64,
    current_line_bytes: u64,
}

impl OutputStats {
    fn add(&mut self, chunk: &[u8]) {
        let mut start = 0;
        for at in memchr::memchr_iter(b'\n', chunk) {
            let line = self.current_line_bytes + (at - start) as u64;
            self.longest_line_bytes = self.longest_line_bytes.max(line);
            self.current_line_bytes = 0;
            self.newlines += 1;
            start = at + 1;
        }
        self.current_line_bytes += (chunk.len() - start) as u64;
        self.longest_line_bytes = self.longest_line_bytes.max(self.current_line_bytes);
        self.total_bytes += chunk.len() as u64;
        self.chars += count_chars(chunk);
        if let Some(&last) = chunk.last() {
            self.ends_with_newline = last == b'\n';
        }
    }
}

/// Counts the bytes that start a UTF-8 character (all but continuation bytes): the characters
/// of valid UTF-8. Byte-sized counters over blocks of 255 let the compiler vectorise it, as
/// for line counts.
fn count_chars(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|block| {
            let starts = block
                .iter()
                .fold(0u8, |n, &b| n + u8::from((b & 0b1100_0000) != 0b1000_0000));
            u64::from(starts)
        })
        .sum()
}

/// What was saved of a command's output, once it ended.
#[derive(Debug)]
pub(crate) struct Spooled {
    /// The file, if one was made.
    pub(crate) path: Option<PathBuf>,
    /// Counts over the whole output.
    pub(crate) stats: OutputStats,
    /// Bytes in the file (not counting the closing note).
    pub(crate) saved_bytes: u64,
    /// Line breaks in the file's saved part.
    pub(crate) saved_newlines: u64,
    /// Set when the output passed the cap: the cap.
    pub(crate) capped_at: Option<u64>,
    /// Why saving stopped early or never started.
    pub(crate) error: Option<String>,
}

impl Spool {
    /// A spool that has saved nothing yet.
    pub(crate) fn new(spec: SpoolSpec) -> Spool {
        Spool {
            spec,
            path: None,
            file: None,
            error: None,
            stats: OutputStats::default(),
            saved_bytes: 0,
            saved_newlines: 0,
        }
    }

    /// Takes the next chunk of output. `earlier` is what memory holds of the output before
    /// it: the whole of it while the output is below the threshold.
    pub(crate) fn push(&mut self, chunk: &[u8], earlier: &[u8]) {
        let over = self.stats.total_bytes + chunk.len() as u64 > self.spec.threshold_bytes;
        if self.path.is_none() && self.error.is_none() && over {
            self.open(earlier);
        }
        self.save(chunk);
        self.stats.add(chunk);
    }

    fn open(&mut self, earlier: &[u8]) {
        if earlier.len() as u64 != self.stats.total_bytes {
            // Memory no longer holds the start: the threshold is above what it keeps.
            self.error = Some("the start of the output was no longer at hand".to_owned());
            return;
        }
        match offload::create(&self.spec.dir, "bash") {
            Ok((path, file)) => {
                self.path = Some(path);
                self.file = Some(file);
                self.save(earlier);
            }
            Err(err) => {
                self.error = Some(format!(
                    "could not create a file in {}: {err}",
                    self.spec.dir.display()
                ));
            }
        }
    }

    /// Appends to the file what fits under the cap.
    fn save(&mut self, bytes: &[u8]) {
        let Some(file) = self.file.as_mut() else {
            return;
        };
        let room = self.spec.cap_bytes.saturating_sub(self.saved_bytes);
        let take = usize::try_from(room).map_or(bytes.len(), |room| room.min(bytes.len()));
        if take == 0 {
            return;
        }
        let part = &bytes[..take];
        match file.write_all(part) {
            Ok(()) => {
                self.saved_bytes += take as u64;
                self.saved_newlines += crate::read_file::count_newlines(part);
            }
            Err(err) => {
                // Keep what was written (the report says how much); stop writing.
                self.error = Some(format!("writing the file failed: {err}"));
                self.file = None;
            }
        }
    }

    /// Ends the file (with a note if it was capped) and says what it holds.
    pub(crate) fn finish(mut self) -> Spooled {
        let capped = self.path.is_some()
            && self.error.is_none()
            && self.stats.total_bytes > self.saved_bytes;
        if let Some(mut file) = self.file.take()
            && capped
        {
            let more = self.stats.total_bytes - self.saved_bytes;
            let note = offload::cap_note(self.spec.cap_bytes, more);
            if let Err(err) = file.write_all(note.as_bytes()) {
                self.error = Some(format!("writing the file failed: {err}"));
            }
        }
        Spooled {
            path: self.path,
            stats: self.stats,
            saved_bytes: self.saved_bytes,
            saved_newlines: self.saved_newlines,
            capped_at: capped.then_some(self.spec.cap_bytes),
            error: self.error,
        }
    }
}

impl Spooled {
    /// Removes the file: the output fitted the budget after all.
    pub(crate) fn discard(&mut self) {
        if let Some(path) = self.path.take() {
            // Best effort: a leftover file wastes space but misleads no one.
            let _ = std::fs::remove_file(path);
        }
    }

    /// The file, if one was made.
    pub(crate) fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(dir: &Path, threshold_bytes: u64, cap_bytes: u64) -> SpoolSpec {
        SpoolSpec {
            dir: dir.to_path_buf(),
            threshold_bytes,
            cap_bytes,
        }
    }

    #[test]
    fn counts_lines_characters_and_the_longest_line_across_chunks() {
        let mut stats = OutputStats::default();
        for chunk in ["ab", "c\né", "é\n", "\nxyz"] {
            stats.add(chunk.as_bytes());
        }
        assert_eq!(stats.newlines, 3);
        assert_eq!(stats.chars, 11);
        assert_eq!(stats.longest_line_bytes, 4);
        assert!(!stats.ends_with_newline);
        assert_eq!(count_chars("aé€😀".as_bytes()), 4);
    }

    #[test]
    fn nothing_is_written_below_the_threshold() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut spool = Spool::new(spec(dir.path(), 10, 100));
        spool.push(b"0123456789", b"");
        let spooled = spool.finish();
        assert_eq!(spooled.path, None);
        assert_eq!(std::fs::read_dir(dir.path())?.count(), 0);
        Ok(())
    }

    #[test]
    fn past_the_threshold_the_file_holds_everything_up_to_the_cap() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let mut spool = Spool::new(spec(dir.path(), 4, 8));
        spool.push(b"abc", b"");
        spool.push(b"def\n", b"abc");
        spool.push(b"ghij", b"abcdef\n");
        let spooled = spool.finish();
        let text = std::fs::read_to_string(spooled.path.as_deref().unwrap_or(Path::new("")))?;
        assert_eq!(text, format!("abcdef\ng{}", offload::cap_note(8, 3)));
        assert_eq!((spooled.saved_bytes, spooled.saved_newlines), (8, 1));
        assert_eq!(spooled.capped_at, Some(8));
        Ok(())
    }

    #[test]
    fn a_directory_that_cannot_be_made_is_reported() -> std::io::Result<()> {
        let dir = tempfile::tempdir()?;
        let blocker = dir.path().join("offload");
        std::fs::write(&blocker, "a file")?;
        let mut spool = Spool::new(spec(&blocker, 1, 100));
        spool.push(b"abc", b"");
        let spooled = spool.finish();
        assert_eq!(spooled.path, None);
        assert!(
            spooled
                .error
                .is_some_and(|e| e.contains("could not create"))
        );
        Ok(())
    }
}
