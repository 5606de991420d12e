//! Unified diffs of an edit, built with `similar` on small windows around each change (the
//! edit knows where it changed the text), so a one-line edit of a 10 MB file costs microseconds.

use std::fmt::Write as _;
use std::ops::Range;
use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use crate::edit::Change;

/// Lines of context around each change.
pub(crate) const DIFF_CONTEXT_LINES: usize = 3;
/// Diff lines shown at most; the rest is cut with a marker.
pub(crate) const DIFF_MAX_LINES: usize = 200;
/// How long `similar` may work on one window before settling for a coarser diff.
const DIFF_TIMEOUT: Duration = Duration::from_millis(200);

/// A unified diff of `old` → `new`, given the changed ranges (sorted, disjoint).
pub(crate) fn unified_diff(display: &str, old: &str, new: &str, changes: &[Change]) -> String {
    let windows = windows(old, new, changes);
    let mut out = format!("--- {display}\n+++ {display}\n");
    let mut shown = 0usize;
    let mut lines_before = 0usize;
    let mut scanned = 0usize;
    for (i, window) in windows.iter().enumerate() {
        if shown >= DIFF_MAX_LINES {
            let rest = windows.len() - i;
            let _ = writeln!(
                out,
                "[... diff cut at {DIFF_MAX_LINES} lines: {rest} more changed regions not shown]"
            );
            return out;
        }
        lines_before += count_newlines(&old.as_bytes()[scanned..window.old.start]);
        scanned = window.old.start;
        let new_start = window.old.start.saturating_add_signed(window.shift);
        let new_end = window
            .old
            .end
            .saturating_add_signed(window.shift + window.growth);
        let first_lines = (
            lines_before,
            lines_before.saturating_add_signed(window.line_shift),
        );
        if !render_window(
            &mut out,
            &old[window.old.clone()],
            &new[new_start..new_end],
            first_lines,
            &mut shown,
        ) {
            return out;
        }
    }
    out
}

/// A unified diff of a whole replacement of `old` by `new` (a write, or a file created).
pub(crate) fn whole_diff(display: &str, old: &str, new: &str) -> String {
    unified_diff(
        display,
        old,
        new,
        &[Change {
            old: 0..old.len(),
            new: 0..new.len(),
        }],
    )
}

/// A region of the old text covering one or more changes with their context.
struct Window {
    /// The region in the old text (whole lines).
    old: Range<usize>,
    /// How far the new text has moved at the window's start (changes before it).
    shift: isize,
    /// How much the changes inside the window grow the text.
    growth: isize,
    /// Lines added minus removed by the changes before the window.
    line_shift: isize,
}

fn windows(old: &str, new: &str, changes: &[Change]) -> Vec<Window> {
    let mut windows: Vec<Window> = Vec::new();
    let mut shift = 0isize;
    let mut line_shift = 0isize;
    for change in changes {
        let start = back_lines(old, line_start(old, change.old.start), DIFF_CONTEXT_LINES);
        let end = forward_lines(old, change_end(old, &change.old), DIFF_CONTEXT_LINES);
        let growth = change.new.len() as isize - change.old.len() as isize;
        match windows.last_mut() {
            Some(last) if start <= last.old.end => {
                last.old.end = last.old.end.max(end);
                last.growth += growth;
            }
            _ => windows.push(Window {
                old: start..end,
                shift,
                growth,
                line_shift,
            }),
        }
        shift += growth;
        line_shift += count_newlines(&new.as_bytes()[change.new.clone()]) as isize
            - count_newlines(&old.as_bytes()[change.old.clone()]) as isize;
    }
    windows
}

fn count_newlines(bytes: &[u8]) -> usize {
    memchr::memchr_iter(b'\n', bytes).count()
}

fn line_start(text: &str, at: usize) -> usize {
    memchr::memrchr(b'\n', &text.as_bytes()[..at]).map_or(0, |nl| nl + 1)
}

/// The end of the last line a change touches (just past its newline).
fn change_end(text: &str, range: &Range<usize>) -> usize {
    if range.end > range.start && text.as_bytes()[range.end - 1] == b'\n' {
        return range.end;
    }
    memchr::memchr(b'\n', &text.as_bytes()[range.end..]).map_or(text.len(), |nl| range.end + nl + 1)
}

fn back_lines(text: &str, mut at: usize, lines: usize) -> usize {
    for _ in 0..lines {
        if at == 0 {
            break;
        }
        at = line_start(text, at - 1);
    }
    at
}

fn forward_lines(text: &str, mut at: usize, lines: usize) -> usize {
    for _ in 0..lines {
        match memchr::memchr(b'\n', &text.as_bytes()[at..]) {
            Some(nl) => at += nl + 1,
            None => return text.len(),
        }
    }
    at
}

/// Appends the hunks of one window; false once the line cap is reached.
fn render_window(
    out: &mut String,
    old_text: &str,
    new_text: &str,
    (old_first, new_first): (usize, usize),
    shown: &mut usize,
) -> bool {
    let diff = TextDiff::configure()
        .timeout(DIFF_TIMEOUT)
        .diff_lines(old_text, new_text);
    for group in diff.grouped_ops(DIFF_CONTEXT_LINES) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let old_range = first.old_range().start..last.old_range().end;
        let new_range = first.new_range().start..last.new_range().end;
        let _ = writeln!(
            out,
            "@@ -{} +{} @@",
            hunk_range(old_first, &old_range),
            hunk_range(new_first, &new_range)
        );
        for op in &group {
            for change in diff.iter_changes(op) {
                if *shown >= DIFF_MAX_LINES {
                    let _ = writeln!(out, "[... diff cut at {DIFF_MAX_LINES} lines]");
                    return false;
                }
                let sign = match change.tag() {
                    ChangeTag::Equal => ' ',
                    ChangeTag::Delete => '-',
                    ChangeTag::Insert => '+',
                };
                let value = change.value();
                let line = value
                    .strip_suffix('\n')
                    .map(|l| l.strip_suffix('\r').unwrap_or(l));
                out.push(sign);
                out.push_str(line.unwrap_or(value));
                out.push('\n');
                // Windows end on line ends, so only the file's last line can lack one.
                if line.is_none() {
                    out.push_str("\\ No newline at end of file\n");
                }
                *shown += 1;
            }
        }
    }
    true
}

fn hunk_range(first_line: usize, range: &Range<usize>) -> String {
    let len = range.len();
    let start = first_line + range.start + usize::from(len > 0);
    if len == 1 {
        format!("{start}")
    } else {
        format!("{start},{len}")
    }
}
