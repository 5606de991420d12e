//! The rungs that find old_string as a piece of text, anywhere in a line: byte for byte, with
//! line endings normalised, and with typographic look-alikes folded on both sides.

use std::ops::Range;

use memchr::memmem;

use super::engine::{AMBIGUOUS_COUNT_MAX, Replace};
use super::lines::{FileText, ModelText, Token};
use super::lookalike::{contains_look_alike, differences, fold_str};
use super::place::{Ignored, Place, PlaceKind, Segment};
use crate::text_style::Eol;

/// Byte for byte.
pub(crate) fn exact(file: &FileText, old: &str, replace: Replace) -> Vec<Place> {
    let text = file.text;
    let mut ranges = occurrences(text, old, replace);
    if file.eol == Eol::Crlf && old.starts_with('\n') {
        // In a CRLF file the model's `\n` stands for `\r\n`: take the `\r` along rather than
        // leave it behind alone.
        let mut previous_end = 0;
        for range in &mut ranges {
            if range.start > previous_end && text.as_bytes()[range.start - 1] == b'\r' {
                range.start -= 1;
            }
            previous_end = range.end;
        }
    }
    exact_places(ranges, Ignored::default())
}

/// With `\r\n` and `\n` treated alike.
pub(crate) fn line_endings(file: &FileText, old: &str, replace: Replace) -> Vec<Place> {
    let old_lf = old.replace("\r\n", "\n");
    if !old_lf.contains('\n') || (old_lf.len() == old.len() && file.eol == Eol::Lf) {
        return Vec::new();
    }
    let (text_lf, dropped) = without_cr_before_lf(file.text);
    let ranges = occurrences(&text_lf, &old_lf, replace)
        .into_iter()
        .map(|r| original_offset(&dropped, r.start)..original_offset(&dropped, r.end))
        .collect();
    let ignored = Ignored {
        line_endings: true,
        ..Ignored::default()
    };
    exact_places(ranges, ignored)
}

/// With curly quotes, dashes and no-break spaces folded to ASCII in the file and in old_string
/// (and line endings normalised).
pub(crate) fn look_alikes(
    file: &FileText,
    old_str: &str,
    old: &ModelText,
    replace: Replace,
) -> Vec<Place> {
    if !contains_look_alike(old_str) && !file.has_look_alikes() {
        return Vec::new();
    }
    let needle = fold_str(old_str).replace("\r\n", "\n");
    let text = file.text;
    // An LF file without look-alikes is its own folded text: no copy of it is needed.
    let folded = (file.has_look_alikes() || matches!(file.eol, Eol::Crlf | Eol::Mixed))
        .then(|| file.folded());
    let haystack = folded.map_or(text, |f| f.text.as_str());
    occurrences(haystack, &needle, replace)
        .into_iter()
        .map(|r| {
            let range = folded.map_or(r.clone(), |f| f.original_range(&r));
            let found = &text[range.clone()];
            Place {
                segments: text_segments(text, &range, old),
                kind: PlaceKind::Text,
                ignored: Ignored {
                    line_endings: found.contains("\r\n") != old_str.contains("\r\n"),
                    look_alikes: differences(old_str, found),
                    ..Ignored::default()
                },
                range,
            }
        })
        .collect()
}

fn exact_places(ranges: Vec<Range<usize>>, ignored: Ignored) -> Vec<Place> {
    ranges
        .into_iter()
        .map(|range| Place {
            range,
            kind: PlaceKind::Exact,
            segments: Vec::new(),
            ignored,
        })
        .collect()
}

/// What each token of old_string stands for in a piece of text found for it.
fn text_segments(text: &str, range: &Range<usize>, old: &ModelText) -> Vec<Segment> {
    let found = &text[range.clone()];
    let mut pieces = Vec::with_capacity(old.lines.len());
    let mut start = range.start;
    for line in found.split('\n') {
        let end = start + line.len();
        let content_end = if end < range.end && line.ends_with('\r') {
            end - 1
        } else {
            end
        };
        pieces.push(start..content_end);
        start = end + 1;
    }
    old.tokens
        .iter()
        .map(|token| match *token {
            Token::Line(i) => Segment {
                range: pieces[i].clone(),
                lines: 1,
            },
            Token::Blank { first, count: 0 } => Segment {
                range: pieces[first].start..pieces[first].start,
                lines: 0,
            },
            Token::Blank { first, count } => Segment {
                range: pieces[first].start..pieces[first + count - 1].end,
                lines: count,
            },
        })
        .collect()
}

/// Occurrences of `needle`: overlapping ones too when exactly one is wanted (so "aa" in "aaa"
/// counts as ambiguous), non-overlapping ones for replace_all.
pub(crate) fn occurrences(haystack: &str, needle: &str, replace: Replace) -> Vec<Range<usize>> {
    if needle.is_empty() {
        return Vec::new();
    }
    let finder = memmem::Finder::new(needle.as_bytes());
    let bytes = haystack.as_bytes();
    let mut found = Vec::new();
    let mut pos = 0;
    while let Some(at) = finder.find(&bytes[pos..]) {
        let start = pos + at;
        found.push(start..start + needle.len());
        if replace == Replace::One && found.len() >= AMBIGUOUS_COUNT_MAX {
            break;
        }
        pos = match replace {
            Replace::One => start + 1,
            Replace::All => start + needle.len(),
        };
    }
    found
}

/// `text` with every `\r` of a `\r\n` removed, and the positions (in the result) of the `\n`s
/// that lost their `\r`, in order.
fn without_cr_before_lf(text: &str) -> (String, Vec<usize>) {
    let mut out = String::with_capacity(text.len());
    let mut dropped = Vec::new();
    let mut start = 0;
    for at in memmem::find_iter(text.as_bytes(), b"\r\n") {
        out.push_str(&text[start..at]);
        dropped.push(out.len());
        start = at + 1;
    }
    out.push_str(&text[start..]);
    (out, dropped)
}

/// Maps an offset in the CR-less text back to the original; an offset at a `\n` that lost its
/// `\r` maps to the `\r`, so a range never splits a `\r\n`.
fn original_offset(dropped: &[usize], offset: usize) -> usize {
    offset + dropped.partition_point(|&p| p < offset)
}
