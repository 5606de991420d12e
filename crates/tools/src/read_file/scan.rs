//! Streaming a window of lines out of a file of any size: lines before the window are skipped
//! by counting newlines in large buffers, lines in the window are decoded one by one with a cap
//! on their length, and the rest is only counted (never decoded) when that is cheap enough.

use std::io::{self, BufRead, Read};

use tokio_util::sync::CancellationToken;

use crate::stamp::ContentHasher;

/// Room for the marker after a cut line.
const CUT_MARKER_CHARS: usize = 40;

/// How many bytes of one line are kept: enough for the longest line shown (in characters).
const fn line_keep_bytes(max_chars: usize) -> usize {
    max_chars * 4
}

/// The window to show.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Window {
    /// First line to show, from 1.
    pub first_line: u64,
    /// Most lines to show.
    pub limit: u64,
    /// Stop adding lines once the formatted output would pass this many characters.
    pub budget_chars: usize,
    /// Lines longer than this many characters are cut.
    pub max_line_chars: usize,
    /// Whether to read on to the end after the window (to count lines and finish the hash).
    pub read_to_end: bool,
}

/// One line to show.
#[derive(Debug)]
pub(crate) struct ShownLine {
    /// Its number, from 1.
    pub number: u64,
    /// Its text, without the line ending, cut to the maximum length.
    pub text: String,
    /// Whether the text was cut.
    pub cut: bool,
}

/// Why the window ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stop {
    /// The file ended: nothing more to show.
    EndOfFile,
    /// `limit` lines were shown and more follow.
    Limit,
    /// The output budget was reached and more follow.
    Budget,
}

/// What a scan found.
#[derive(Debug)]
pub(crate) struct Scan {
    /// The lines to show.
    pub lines: Vec<ShownLine>,
    /// Why the window ended.
    pub stop: Stop,
    /// The number of lines in the file, when the scan reached the end.
    pub total_lines: Option<u64>,
    /// Whether a shown line had bytes that are not UTF-8.
    pub lossy: bool,
    /// The hash of every byte read; covers the whole file when the scan reached the end.
    pub hasher: ContentHasher,
}

/// Feeds every byte read into the hasher on its way to the buffer, and stops reading once the
/// call is cancelled (a cold gigabyte takes seconds).
struct Hashing<'a, R> {
    inner: R,
    hasher: ContentHasher,
    cancel: &'a CancellationToken,
}

impl<R: Read> Read for Hashing<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_cancelled() {
            // Not `Interrupted`: readers retry that.
            return Err(io::Error::other("cancelled"));
        }
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        Ok(n)
    }
}

/// Counting state shared by the phases: newlines seen and the last byte consumed.
#[derive(Default)]
struct Progress {
    newlines: u64,
    last_byte: Option<u8>,
}

impl Progress {
    fn total_lines(&self) -> u64 {
        self.newlines + u64::from(self.last_byte.is_some_and(|b| b != b'\n'))
    }
}

/// The read buffer's size for a file of unknown or large size.
const SCAN_BUFFER_BYTES: usize = 256 * 1024;
/// The smallest read buffer.
const SCAN_BUFFER_MIN_BYTES: usize = 8 * 1024;

/// Scans `reader` (positioned at the start of a file of `len` bytes, when known) for
/// `window`. Fails once `cancel` is cancelled.
pub(crate) fn scan<R: Read>(
    reader: R,
    len: Option<u64>,
    window: Window,
    cancel: &CancellationToken,
) -> io::Result<Scan> {
    // The buffer is zeroed before its first fill: sized to the file, a small file's read
    // does not clear a quarter of a megabyte (most of a read's time, for a short file).
    let capacity = len.map_or(SCAN_BUFFER_BYTES, |len| {
        usize::try_from(len)
            .unwrap_or(usize::MAX)
            .saturating_add(1)
            .clamp(SCAN_BUFFER_MIN_BYTES, SCAN_BUFFER_BYTES)
    });
    let mut reader = io::BufReader::with_capacity(
        capacity,
        Hashing {
            inner: reader,
            hasher: ContentHasher::default(),
            cancel,
        },
    );
    let mut progress = Progress::default();
    skip_lines(
        &mut reader,
        window.first_line.saturating_sub(1),
        &mut progress,
    )?;

    let mut lines = Vec::new();
    let mut lossy = false;
    let mut used_chars = 0usize;
    let mut raw = Vec::new();
    let mut stop = Stop::EndOfFile;
    let keep = line_keep_bytes(window.max_line_chars);
    let number_width = window
        .first_line
        .saturating_add(window.limit.saturating_sub(1))
        .to_string()
        .len();
    while !at_end(&mut reader)? {
        if lines.len() as u64 >= window.limit {
            stop = Stop::Limit;
            break;
        }
        let line = read_line_capped(&mut reader, keep, &mut raw, &mut progress)?;
        let number = progress.newlines + u64::from(!line.had_newline);
        let (mut text, line_lossy) = decode(&raw, line.total_bytes > raw.len());
        if number == 1 && text.starts_with('\u{feff}') {
            text.drain(..'\u{feff}'.len_utf8());
        }
        let mut cut = line.total_bytes > raw.len();
        if let Some((at, _)) = text.char_indices().nth(window.max_line_chars) {
            text.truncate(at);
            cut = true;
        }
        // Number (padded to the widest), tab, text, cut marker, newline; bytes bound characters.
        let cost = number_width + 1 + text.len() + if cut { CUT_MARKER_CHARS } else { 0 } + 1;
        if !lines.is_empty() && used_chars + cost > window.budget_chars {
            stop = Stop::Budget;
            // This line was consumed but not shown; the caller resumes from its number.
            break;
        }
        used_chars += cost;
        lossy |= line_lossy;
        lines.push(ShownLine { number, text, cut });
    }

    let reached_end =
        stop == Stop::EndOfFile || (window.read_to_end && count_rest(&mut reader, &mut progress)?);
    let total_lines = reached_end.then(|| progress.total_lines());
    let hasher = reader.into_inner().hasher;
    Ok(Scan {
        lines,
        stop,
        total_lines,
        lossy,
        hasher,
    })
}

fn at_end<R: BufRead>(reader: &mut R) -> io::Result<bool> {
    Ok(reader.fill_buf()?.is_empty())
}

fn skip_lines<R: BufRead>(
    reader: &mut R,
    mut count: u64,
    progress: &mut Progress,
) -> io::Result<()> {
    while count > 0 {
        let buf = reader.fill_buf()?;
        let Some(&last) = buf.last() else {
            return Ok(());
        };
        // Whole buffers are counted with the vectorised count; only the last one is searched
        // newline by newline.
        let newlines = count_newlines(buf);
        let mut consumed = buf.len();
        if newlines >= count {
            let mut seen = 0;
            for at in memchr::memchr_iter(b'\n', buf) {
                seen += 1;
                if seen == count {
                    consumed = at + 1;
                    break;
                }
            }
            progress.newlines += count;
            count = 0;
        } else {
            progress.newlines += newlines;
            count -= newlines;
        }
        progress.last_byte = Some(if consumed == buf.len() {
            last
        } else {
            buf[consumed - 1]
        });
        reader.consume(consumed);
    }
    Ok(())
}

struct LineRead {
    total_bytes: usize,
    had_newline: bool,
}

/// Reads one line, keeping at most `keep` bytes of it in `out` (without the line ending).
fn read_line_capped<R: BufRead>(
    reader: &mut R,
    keep: usize,
    out: &mut Vec<u8>,
    progress: &mut Progress,
) -> io::Result<LineRead> {
    out.clear();
    let mut total_bytes = 0;
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        let (content, consumed, had_newline) = match memchr::memchr(b'\n', buf) {
            Some(at) => (&buf[..at], at + 1, true),
            None => (buf, buf.len(), false),
        };
        let room = keep.saturating_sub(out.len());
        out.extend_from_slice(&content[..content.len().min(room)]);
        total_bytes += content.len();
        progress.last_byte = Some(buf[consumed - 1]);
        reader.consume(consumed);
        if had_newline {
            progress.newlines += 1;
            strip_cr(out, &mut total_bytes);
            return Ok(LineRead {
                total_bytes,
                had_newline: true,
            });
        }
    }
    Ok(LineRead {
        total_bytes,
        had_newline: false,
    })
}

fn strip_cr(out: &mut Vec<u8>, total_bytes: &mut usize) {
    if out.len() == *total_bytes && out.last() == Some(&b'\r') {
        out.pop();
        *total_bytes -= 1;
    }
}

/// Counts the newlines of the rest of the file; true once the end is reached.
fn count_rest<R: BufRead>(reader: &mut R, progress: &mut Progress) -> io::Result<bool> {
    loop {
        let buf = reader.fill_buf()?;
        let Some(&last) = buf.last() else {
            return Ok(true);
        };
        progress.newlines += count_newlines(buf);
        progress.last_byte = Some(last);
        let len = buf.len();
        reader.consume(len);
    }
}

/// Counts newlines. Byte-sized counters over blocks of 255 bytes let the compiler compare 16
/// or 32 bytes per instruction; several times faster than finding each newline.
pub(crate) fn count_newlines(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|block| u64::from(block.iter().fold(0u8, |n, &b| n + u8::from(b == b'\n'))))
        .sum()
}

/// Decodes a line, replacing bytes that are not UTF-8. A character split by the length cap is
/// dropped rather than reported as invalid.
fn decode(bytes: &[u8], was_cut: bool) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_owned(), false),
        Err(err) if was_cut && err.error_len().is_none() => (
            String::from_utf8_lossy(&bytes[..err.valid_up_to()]).into_owned(),
            false,
        ),
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn window(first_line: u64, limit: u64) -> Window {
        Window {
            first_line,
            limit,
            budget_chars: usize::MAX,
            max_line_chars: 10,
            read_to_end: true,
        }
    }

    fn texts(scan: &Scan) -> Vec<(u64, &str)> {
        scan.lines
            .iter()
            .map(|l| (l.number, l.text.as_str()))
            .collect()
    }

    #[test]
    fn window_in_the_middle_counts_the_rest() {
        let scan = scan(
            &b"a\nb\r\nc\nd\n"[..],
            None,
            window(2, 2),
            &CancellationToken::new(),
        )
        .unwrap();
        assert_eq!(texts(&scan), [(2, "b"), (3, "c")]);
        assert_eq!(scan.stop, Stop::Limit);
        assert_eq!(scan.total_lines, Some(4));
    }

    #[test]
    fn last_line_without_newline_counts() {
        let scan = scan(&b"a\nb"[..], None, window(1, 10), &CancellationToken::new()).unwrap();
        assert_eq!(texts(&scan), [(1, "a"), (2, "b")]);
        assert_eq!(scan.stop, Stop::EndOfFile);
        assert_eq!(scan.total_lines, Some(2));
    }

    #[test]
    fn exactly_limit_lines_is_the_end() {
        let scan = scan(
            &b"a\nb\n"[..],
            None,
            window(1, 2),
            &CancellationToken::new(),
        )
        .unwrap();
        assert_eq!(scan.stop, Stop::EndOfFile);
    }

    #[test]
    fn long_lines_are_cut_and_utf8_split_is_not_lossy() {
        let line = "é".repeat(30);
        let scan = scan(
            format!("{line}\nx\n").as_bytes(),
            None,
            window(1, 10),
            &CancellationToken::new(),
        )
        .unwrap();
        assert_eq!(scan.lines[0].text, "é".repeat(10));
        assert!(scan.lines[0].cut);
        assert!(!scan.lossy);
        assert_eq!(texts(&scan)[1], (2, "x"));
    }

    #[test]
    fn invalid_utf8_is_lossy() {
        let scan = scan(
            &b"ok\n\xff\xfe bad\n"[..],
            None,
            window(1, 10),
            &CancellationToken::new(),
        )
        .unwrap();
        assert!(scan.lossy);
        assert_eq!(scan.lines[1].text, "\u{fffd}\u{fffd} bad");
    }

    #[test]
    fn bom_is_hidden_on_line_one() {
        let scan = scan(
            "\u{feff}first\nsecond\n".as_bytes(),
            None,
            window(1, 10),
            &CancellationToken::new(),
        )
        .unwrap();
        assert_eq!(texts(&scan), [(1, "first"), (2, "second")]);
    }

    #[test]
    fn offset_past_the_end_shows_nothing_and_knows_the_total() {
        let scan = scan(
            &b"a\nb\n"[..],
            None,
            window(5, 10),
            &CancellationToken::new(),
        )
        .unwrap();
        assert!(scan.lines.is_empty());
        assert_eq!(scan.total_lines, Some(2));
    }

    #[test]
    fn budget_stops_early_but_shows_one_line() {
        let w = Window {
            budget_chars: 12,
            ..window(1, 100)
        };
        let scan = scan(
            &b"aaaa\nbbbb\ncccc\n"[..],
            None,
            w,
            &CancellationToken::new(),
        )
        .unwrap();
        assert_eq!(scan.lines.len(), 1);
        assert_eq!(scan.stop, Stop::Budget);
    }

    #[test]
    fn a_cancelled_scan_stops() {
        let cancel = CancellationToken::new();
        cancel.cancel();
        assert!(scan(&b"a\n"[..], None, window(1, 1), &cancel).is_err());
    }

    #[test]
    fn without_read_to_end_the_total_stays_unknown() {
        let w = Window {
            read_to_end: false,
            ..window(1, 1)
        };
        let scan = scan(&b"a\nb\nc\n"[..], None, w, &CancellationToken::new()).unwrap();
        assert_eq!(scan.total_lines, None);
    }
}
