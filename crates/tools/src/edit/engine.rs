//! The edit ladder: ways of finding old_string, from strict to forgiving, each accepted only
//! when it finds exactly one place. Several places at any rung is a refusal, not a guess; no
//! rung measures edit distance, so a near miss is refused with the closest region shown.

use std::borrow::Cow;
use std::ops::Range;

use memchr::memmem;

use super::closest::{Region, closest_region};
use super::indent::{file_indent_unit, reindent};
use super::lines::{
    find_blocks, line_numbers, line_spans, line_text, model_lines, split_trailing_newline,
    strip_line_numbers,
};
use crate::text_style::Eol;

/// Match positions listed in a refusal at most.
const AMBIGUOUS_LINES_SHOWN: usize = 10;
/// Occurrences counted at most for an ambiguity report.
const AMBIGUOUS_COUNT_MAX: usize = 10_000;

/// Whether to replace one occurrence or all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Replace {
    /// Exactly one place must match, at the first rung that finds any.
    One,
    /// Every exact occurrence (line endings normalised) is replaced.
    All,
}

/// The rung of the ladder that found the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rung {
    /// Byte for byte.
    Exact,
    /// With `\r\n` and `\n` treated alike.
    LineEndings,
    /// Line by line, ignoring trailing whitespace.
    TrailingWhitespace,
    /// Line by line, ignoring leading and trailing whitespace; new_string re-indented.
    Indentation,
}

impl Rung {
    /// How the text was found, for messages.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Rung::Exact => "exactly",
            Rung::LineEndings => "with line endings normalised",
            Rung::TrailingWhitespace => "ignoring trailing whitespace",
            Rung::Indentation => "ignoring indentation",
        }
    }
}

/// One replaced span: where it was in the old text and where its replacement is in the new.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Change {
    /// Byte range in the old text.
    pub old: Range<usize>,
    /// Byte range in the new text.
    pub new: Range<usize>,
}

/// A successful edit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Edited {
    /// The whole new text.
    pub text: String,
    /// What changed, in order.
    pub changes: Vec<Change>,
    /// The rung that matched.
    pub rung: Rung,
    /// Whether read_file line-number prefixes were stripped first.
    pub stripped_line_numbers: bool,
}

/// Why an edit was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// old_string equals new_string.
    Identical,
    /// Several places match at a rung.
    Ambiguous {
        /// The rung that found them.
        rung: Rung,
        /// Whether line-number prefixes had been stripped.
        stripped_line_numbers: bool,
        /// How many places (capped at [`AMBIGUOUS_COUNT_MAX`]).
        count: usize,
        /// The first lines where they start.
        lines: Vec<usize>,
    },
    /// No rung found it.
    NotFound {
        /// The region most like old_string.
        closest: Option<Region>,
    },
}

/// Applies the edit to `text` (the file without its byte-order mark). `old` must not be empty.
pub(crate) fn apply_edit(
    text: &str,
    old: &str,
    new: &str,
    replace: Replace,
) -> Result<Edited, Refusal> {
    if old == new {
        return Err(Refusal::Identical);
    }
    let eol = Eol::detect(text.as_bytes());
    if let Some(edited) = ladder(text, old, new, replace, eol)? {
        return Ok(edited);
    }
    let stripped_old = strip_line_numbers(old);
    if replace == Replace::One
        && let Some(stripped_old) = &stripped_old
        && !stripped_old.trim().is_empty()
    {
        let stripped_new = strip_line_numbers(new).unwrap_or(Cow::Borrowed(new));
        if stripped_old != &stripped_new {
            match ladder(text, stripped_old, &stripped_new, replace, eol) {
                Ok(Some(edited)) => {
                    return Ok(Edited {
                        stripped_line_numbers: true,
                        ..edited
                    });
                }
                Ok(None) => {}
                Err(Refusal::Ambiguous {
                    rung, count, lines, ..
                }) => {
                    return Err(Refusal::Ambiguous {
                        rung,
                        stripped_line_numbers: true,
                        count,
                        lines,
                    });
                }
                Err(refusal @ (Refusal::Identical | Refusal::NotFound { .. })) => {
                    return Err(refusal);
                }
            }
        }
    }
    Err(Refusal::NotFound {
        closest: closest_region(text, stripped_old.as_deref().unwrap_or(old)),
    })
}

fn ladder(
    text: &str,
    old: &str,
    new: &str,
    replace: Replace,
    eol: Eol,
) -> Result<Option<Edited>, Refusal> {
    let mut exact = occurrences(text, old, replace);
    if eol == Eol::Crlf && old.starts_with('\n') {
        // In a CRLF file the model's `\n` stands for `\r\n`: take the `\r` along rather than
        // leave it behind alone.
        let mut previous_end = 0;
        for range in &mut exact {
            if range.start > previous_end && text.as_bytes()[range.start - 1] == b'\r' {
                range.start -= 1;
            }
            previous_end = range.end;
        }
    }
    if let Some(ranges) = decide(text, exact, Rung::Exact, replace)? {
        return Ok(Some(splice(text, &ranges, Rung::Exact, |range| {
            eol.apply(new, after_cr(text, range)).into_owned()
        })));
    }
    let old_lf = old.replace("\r\n", "\n");
    if old_lf.contains('\n') && (old_lf.len() != old.len() || eol != Eol::Lf) {
        let (text_lf, dropped) = without_cr_before_lf(text);
        let ranges = occurrences(&text_lf, &old_lf, replace)
            .into_iter()
            .map(|r| original_offset(&dropped, r.start)..original_offset(&dropped, r.end))
            .collect();
        if let Some(ranges) = decide(text, ranges, Rung::LineEndings, replace)? {
            return Ok(Some(splice(text, &ranges, Rung::LineEndings, |range| {
                eol.apply(new, after_cr(text, range)).into_owned()
            })));
        }
    }
    if replace == Replace::All {
        return Ok(None);
    }
    line_rungs(text, old, new, eol)
}

/// How a rung compares a line.
type LineNorm = fn(&str) -> &str;

/// Rungs 3 and 4: whole lines compared after trimming.
fn line_rungs(text: &str, old: &str, new: &str, eol: Eol) -> Result<Option<Edited>, Refusal> {
    let (old_body, old_newline) = split_trailing_newline(old);
    let old_lines = model_lines(old_body);
    if old_lines.iter().all(|l| l.trim().is_empty()) {
        return Ok(None);
    }
    let spans = line_spans(text);
    let rungs: [(Rung, LineNorm); 2] = [
        (Rung::TrailingWhitespace, str::trim_end),
        (Rung::Indentation, str::trim),
    ];
    for (rung, norm) in rungs {
        let starts = find_blocks(text, &spans, &old_lines, norm);
        match starts.as_slice() {
            [] => continue,
            [start] => {
                let first = spans[*start];
                let last = spans[start + old_lines.len() - 1];
                let range = first.start..if old_newline {
                    last.end
                } else {
                    last.content_end
                };
                let mut replacement = match rung {
                    Rung::Indentation => {
                        let file_lines: Vec<&str> = spans[*start..start + old_lines.len()]
                            .iter()
                            .map(|&s| line_text(text, s))
                            .collect();
                        let unit =
                            file_indent_unit(spans.iter().take(2000).map(|&s| line_text(text, s)));
                        reindent(new, &old_lines, &file_lines, &unit)
                    }
                    Rung::Exact | Rung::LineEndings | Rung::TrailingWhitespace => new.to_owned(),
                };
                keep_final_newline(text, &range, old_newline, &mut replacement);
                let replacement = eol.apply(&replacement, after_cr(text, &range)).into_owned();
                return Ok(Some(splice(text, &[range], rung, |_| replacement.clone())));
            }
            many => {
                return Err(Refusal::Ambiguous {
                    rung,
                    stripped_line_numbers: false,
                    count: many.len(),
                    lines: many
                        .iter()
                        .take(AMBIGUOUS_LINES_SHOWN)
                        .map(|s| s + 1)
                        .collect(),
                });
            }
        }
    }
    Ok(None)
}

/// A forgiving match must not add or drop the file's final newline by accident.
fn keep_final_newline(
    text: &str,
    range: &Range<usize>,
    old_newline: bool,
    replacement: &mut String,
) {
    if range.end != text.len() || !old_newline {
        return;
    }
    if text.ends_with('\n') {
        if !replacement.is_empty() && !replacement.ends_with('\n') {
            replacement.push('\n');
        }
    } else if let (body, true) = split_trailing_newline(replacement) {
        let len = body.len();
        replacement.truncate(len);
    }
}

/// Occurrences of `needle`: overlapping ones too when exactly one is wanted (so "aa" in "aaa"
/// counts as ambiguous), non-overlapping ones for replace_all.
fn occurrences(haystack: &str, needle: &str, replace: Replace) -> Vec<Range<usize>> {
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

fn decide(
    text: &str,
    ranges: Vec<Range<usize>>,
    rung: Rung,
    replace: Replace,
) -> Result<Option<Vec<Range<usize>>>, Refusal> {
    match (replace, ranges.len()) {
        (_, 0) => Ok(None),
        (Replace::All, _) | (Replace::One, 1) => Ok(Some(ranges)),
        (Replace::One, count) => {
            let starts: Vec<usize> = ranges
                .iter()
                .take(AMBIGUOUS_LINES_SHOWN)
                .map(|r| r.start)
                .collect();
            Err(Refusal::Ambiguous {
                rung,
                stripped_line_numbers: false,
                count,
                lines: line_numbers(text, &starts),
            })
        }
    }
}

fn after_cr(text: &str, range: &Range<usize>) -> bool {
    range.start > 0 && text.as_bytes()[range.start - 1] == b'\r'
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

/// Builds the new text from sorted, disjoint ranges and their replacements.
fn splice(
    text: &str,
    ranges: &[Range<usize>],
    rung: Rung,
    replacement: impl Fn(&Range<usize>) -> String,
) -> Edited {
    let mut out = String::with_capacity(text.len() + 64);
    let mut changes = Vec::with_capacity(ranges.len());
    let mut pos = 0;
    for range in ranges {
        out.push_str(&text[pos..range.start]);
        let new_start = out.len();
        out.push_str(&replacement(range));
        changes.push(Change {
            old: range.clone(),
            new: new_start..out.len(),
        });
        pos = range.end;
    }
    out.push_str(&text[pos..]);
    Edited {
        text: out,
        changes,
        rung,
        stripped_line_numbers: false,
    }
}

#[cfg(test)]
#[path = "engine_tests.rs"]
mod tests;
