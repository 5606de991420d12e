//! The rungs that find old_string as whole lines of the file. Each compares more loosely than
//! the one before: whitespace at line ends; then indentation, as a whole only (rule 4: the
//! quoted lines must nest as the file's do); then typographic look-alikes; then the length of
//! blank-line runs; then a last line cut short. Whitespace inside a line is never ignored.

use std::ops::Range;

use super::engine::{AMBIGUOUS_COUNT_MAX, Replace};
use super::indent::{indentation, same_nesting};
use super::lines::{FileText, ModelText, Token, is_blank};
use super::lookalike::{differences, folded_eq, folded_prefix_len};
use super::place::{Ignored, Place, PlaceKind, Segment};

/// What a line rung ignores beyond whitespace at line ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Tolerance {
    pub indentation: bool,
    pub look_alikes: bool,
    /// Blank-line runs may be longer or shorter than the file's (or missing).
    pub blank_runs: bool,
    /// The last line may be the start of its file line.
    pub cut_last_line: bool,
}

/// Places found, and the first run of lines that matched but nested differently.
#[derive(Debug, Default)]
pub(crate) struct LineFind {
    pub places: Vec<Place>,
    /// 1-based first and last line of a run refused by rule 4.
    pub nested_differently: Option<(usize, usize)>,
}

/// Every place where old_string's lines match whole file lines under `tolerance`.
pub(crate) fn find_lines(
    file: &FileText,
    old: &ModelText,
    tolerance: Tolerance,
    replace: Replace,
) -> LineFind {
    let mut found = LineFind::default();
    let Some(first) = old.tokens.iter().position(|t| matches!(t, Token::Line(_))) else {
        return found;
    };
    let Some(Token::Line(first_line)) = old.tokens.get(first).copied() else {
        return found;
    };
    let matcher = Matcher {
        file,
        old,
        tolerance,
        cut: tolerance.cut_last_line
            && !old.newline
            && matches!(old.tokens.last(), Some(Token::Line(_))),
    };
    let mut free_from = 0;
    for i in 0..file.spans().len() {
        if !matcher.line_matches(first_line, file.line(i)) {
            continue;
        }
        let Some((place, pairs)) = matcher.at(i, first) else {
            continue;
        };
        if tolerance.indentation && !same_nesting(&pairs) {
            if found.nested_differently.is_none() {
                let last = file.spans().partition_point(|s| s.start < place.range.end);
                found.nested_differently = Some((i + 1, last.max(i + 1)));
            }
            continue;
        }
        match replace {
            Replace::All if place.range.start < free_from => continue,
            Replace::All => free_from = place.range.end.max(place.range.start + 1),
            Replace::One => {}
        }
        found.places.push(place);
        if replace == Replace::One && found.places.len() >= AMBIGUOUS_COUNT_MAX {
            break;
        }
    }
    found
}

struct Matcher<'f, 'o> {
    file: &'f FileText<'f>,
    old: &'o ModelText<'o>,
    tolerance: Tolerance,
    /// Whether old_string's last line may match the start of a file line.
    cut: bool,
}

impl<'f, 'o> Matcher<'f, 'o> {
    fn is_cut_line(&self, j: usize) -> bool {
        self.cut && j + 1 == self.old.lines.len()
    }

    fn line_matches(&self, j: usize, file_line: &str) -> bool {
        let model = self.old.lines[j];
        if self.is_cut_line(j) {
            self.cut_end(model, file_line).is_some()
        } else {
            self.same(model, file_line)
        }
    }

    /// The parts of a model line and a file line that must agree.
    fn cores<'a, 'b>(&self, model: &'a str, file_line: &'b str) -> (&'a str, &'b str) {
        let (model, file_line) = (model.trim_end(), file_line.trim_end());
        if self.tolerance.indentation {
            (trim_indent(model), trim_indent(file_line))
        } else {
            (model, file_line)
        }
    }

    fn same(&self, model: &str, file_line: &str) -> bool {
        let (model, file_line) = self.cores(model, file_line);
        if self.tolerance.look_alikes {
            folded_eq(model, file_line)
        } else {
            model == file_line
        }
    }

    /// Where in `file_line` a cut-off model line ends, when it is the start of it.
    fn cut_end(&self, model: &str, file_line: &str) -> Option<usize> {
        let (model, rest) = if self.tolerance.indentation {
            (trim_indent(model), trim_indent(file_line))
        } else {
            (model, file_line)
        };
        if model.trim().is_empty() {
            return None;
        }
        let len = if self.tolerance.look_alikes {
            folded_prefix_len(model, rest)?
        } else {
            rest.starts_with(model).then_some(model.len())?
        };
        Some(file_line.len() - rest.len() + len)
    }

    /// The match whose first non-blank line is file line `start`, with the indentation pairs
    /// of its non-blank lines.
    fn at(&self, start: usize, first: usize) -> Option<(Place, Vec<(&'o str, &'f str)>)> {
        let spans = self.file.spans();
        let tokens = &self.old.tokens;
        let mut segments = Vec::with_capacity(tokens.len());
        let mut pairs = Vec::with_capacity(self.old.lines.len());
        let mut ignored = Ignored::default();
        let mut line = start;
        if let Some(&Token::Blank { count, .. }) = tokens.first().filter(|_| first == 1) {
            let available = (0..start)
                .rev()
                .take_while(|&k| is_blank(self.file.line(k)))
                .take(count)
                .count();
            let take = self.run_length(count, available, false)?;
            ignored.blank_lines |= take != count;
            segments.push(self.blank_segment(start - take, take));
        }
        let mut cut_at = None;
        for (t, token) in tokens.iter().enumerate().skip(first) {
            match *token {
                Token::Line(j) => {
                    let span = *spans.get(line)?;
                    let model = self.old.lines[j];
                    let file_line = self.file.line(line);
                    let (end, core, file_core) = if self.is_cut_line(j) {
                        let end = self.cut_end(model, file_line)?;
                        ignored.cut_last_line |= end < file_line.trim_end().len();
                        cut_at = Some(span.start + end);
                        let start = file_line.len() - trim_indent(file_line).len();
                        (span.start + end, trim_indent(model), &file_line[start..end])
                    } else {
                        if !self.same(model, file_line) {
                            return None;
                        }
                        ignored.trailing_whitespace |= model[model.trim_end().len()..]
                            != file_line[file_line.trim_end().len()..];
                        let (core, file_core) = self.cores(model, file_line);
                        (span.content_end, core, file_core)
                    };
                    if self.tolerance.look_alikes {
                        ignored.look_alikes =
                            ignored.look_alikes.union(differences(core, file_core));
                    }
                    let pair = (indentation(model), indentation(file_line));
                    ignored.indentation |= pair.0 != pair.1;
                    pairs.push(pair);
                    segments.push(Segment {
                        range: span.start..end,
                        lines: 1,
                    });
                    line += 1;
                }
                Token::Blank { count, .. } => {
                    let available = (line..spans.len())
                        .take_while(|&k| is_blank(self.file.line(k)))
                        .count();
                    let take = self.run_length(count, available, t + 1 < tokens.len())?;
                    ignored.blank_lines |= take != count;
                    segments.push(self.blank_segment(line, take));
                    line += take;
                }
            }
        }
        let last = spans[line - 1];
        let end = match (cut_at, segments.last()) {
            (Some(end), _) => end,
            // A trailing blank run the file lacks: old_string's text ended with the line
            // ending of its last line.
            (None, Some(Segment { lines: 0, .. })) => last.end,
            _ if self.old.newline => last.end,
            _ => last.content_end,
        };
        let place = Place {
            range: segments
                .first()
                .map_or(spans[start].start, |s| s.range.start)..end,
            kind: PlaceKind::Lines,
            segments,
            ignored,
        };
        Some((place, pairs))
    }

    /// How many of the `available` blank file lines a run of `count` model blank lines
    /// takes; an inner run takes them all when run lengths are forgiven.
    fn run_length(&self, count: usize, available: usize, inner: bool) -> Option<usize> {
        match (self.tolerance.blank_runs, inner) {
            (true, true) => Some(available),
            (true, false) => Some(count.min(available)),
            (false, _) if available >= count => Some(count),
            (false, _) => None,
        }
    }

    fn blank_segment(&self, first: usize, lines: usize) -> Segment {
        let spans = self.file.spans();
        let range: Range<usize> = match lines {
            0 => {
                let at = spans.get(first).map_or(self.file.text.len(), |s| s.start);
                at..at
            }
            n => spans[first].start..spans[first + n - 1].content_end,
        };
        Segment { range, lines }
    }
}

fn trim_indent(line: &str) -> &str {
    line.trim_start_matches([' ', '\t'])
}
