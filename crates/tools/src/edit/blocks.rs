//! The rungs that find old_string as whole lines of the file. Each compares more loosely than
//! the one before: whitespace at line ends; then indentation, as a whole only (rule 4: the
//! quoted lines must nest as the file's do); then typographic look-alikes; then the length of
//! blank-line runs; then a last line cut short. Whitespace inside a line is never ignored.

use memchr::memmem;

use super::engine::{AMBIGUOUS_COUNT_MAX, Replace};
use super::indent::{indentation, same_nesting};
use super::lines::{FileText, LineSpan, ModelText, Token, is_blank, line_numbers};
use super::lookalike::{differences, fold_str, folded_eq, folded_prefix_len};
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

/// The file lines where old_string's first non-blank line could match at any line rung, in
/// order: every line holding its text with indentation, trailing whitespace and look-alikes
/// set aside. Found once with memmem (over the folded text when the file has look-alikes)
/// and shared by the rungs, so forgiving rungs on a large file cost about one search.
pub(crate) fn candidate_lines(file: &FileText, old: &ModelText) -> Vec<LineSpan> {
    let Some(&Token::Line(first)) = old.tokens.iter().find(|t| matches!(t, Token::Line(_))) else {
        return Vec::new();
    };
    let needle = fold_str(trim_indent(old.lines[first].trim_end()));
    let mut lines: Vec<LineSpan> = Vec::new();
    let mut push = |offset: usize| {
        if lines.last().is_none_or(|line| line.end <= offset) {
            lines.push(file.line_at(offset));
        }
    };
    // A file without look-alikes is its own folded text, as far as one line goes.
    if file.has_look_alikes() {
        let folded = file.folded();
        for at in memmem::find_iter(folded.text.as_bytes(), needle.as_bytes()) {
            push(folded.original(at));
        }
    } else {
        for at in memmem::find_iter(file.text.as_bytes(), needle.as_bytes()) {
            push(at);
        }
    }
    lines
}

/// Every place where old_string's lines match whole file lines under `tolerance`, starting
/// at one of `candidates` (from [`candidate_lines`]).
pub(crate) fn find_lines(
    file: &FileText,
    old: &ModelText,
    candidates: &[LineSpan],
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
    for &line in candidates {
        if !matcher.line_matches(first_line, file.text_of(line)) {
            continue;
        }
        let Some((place, pairs)) = matcher.at(line, first) else {
            continue;
        };
        if tolerance.indentation && !same_nesting(&pairs) {
            if found.nested_differently.is_none() {
                let last = place.range.end.max(line.content_end + 1) - 1;
                let numbers = line_numbers(file.text, &[line.start, last]);
                found.nested_differently = Some((numbers[0], numbers[1]));
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

    fn is_blank(&self, line: LineSpan) -> bool {
        is_blank(self.file.text_of(line))
    }

    /// Up to `limit` blank lines from `from` on (or back, `backwards`), nearest first.
    fn blank_run(&self, from: Option<LineSpan>, limit: usize, backwards: bool) -> Vec<LineSpan> {
        let mut run = Vec::new();
        let mut cursor = from;
        while let Some(line) = cursor.filter(|&l| run.len() < limit && self.is_blank(l)) {
            run.push(line);
            cursor = if backwards {
                self.file.previous(line)
            } else {
                self.file.next(line)
            };
        }
        run
    }

    /// The match whose first non-blank line is `start`, with the indentation pairs of its
    /// non-blank lines.
    fn at(&self, start: LineSpan, first: usize) -> Option<(Place, Vec<(&'o str, &'f str)>)> {
        let tokens = &self.old.tokens;
        let mut segments = Vec::with_capacity(tokens.len());
        let mut pairs = Vec::with_capacity(self.old.lines.len());
        let mut ignored = Ignored::default();
        if let Some(&Token::Blank { count, .. }) = tokens.first().filter(|_| first == 1) {
            let before = self.blank_run(self.file.previous(start), count, true);
            let take = self.run_length(count, before.len(), false)?;
            ignored.blank_lines |= take != count;
            let range = match take {
                0 => start.start..start.start,
                n => before[n - 1].start..before[0].content_end,
            };
            segments.push(Segment { range, lines: take });
        }
        let mut next = Some(start);
        let mut last = start;
        let mut cut_at = None;
        for (t, token) in tokens.iter().enumerate().skip(first) {
            match *token {
                Token::Line(j) => {
                    let span = next?;
                    let model = self.old.lines[j];
                    let file_line = self.file.text_of(span);
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
                    last = span;
                    next = self.file.next(span);
                }
                Token::Blank { count, .. } => {
                    let inner = t + 1 < tokens.len();
                    let limit = if self.tolerance.blank_runs && inner {
                        usize::MAX
                    } else {
                        count
                    };
                    let run = self.blank_run(next, limit, false);
                    let take = self.run_length(count, run.len(), inner)?;
                    ignored.blank_lines |= take != count;
                    let at = next.map_or(self.file.text.len(), |l| l.start);
                    let range = match take {
                        0 => at..at,
                        n => run[0].start..run[n - 1].content_end,
                    };
                    segments.push(Segment { range, lines: take });
                    if take > 0 {
                        last = run[take - 1];
                        next = self.file.next(last);
                    }
                }
            }
        }
        let end = match (cut_at, segments.last()) {
            (Some(end), _) => end,
            // A trailing blank run the file lacks: old_string's text ended with the line
            // ending of its last line.
            (None, Some(Segment { lines: 0, .. })) => last.end,
            _ if self.old.newline => last.end,
            _ => last.content_end,
        };
        let place = Place {
            range: segments.first().map_or(start.start, |s| s.range.start)..end,
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
}

fn trim_indent(line: &str) -> &str {
    line.trim_start_matches([' ', '\t'])
}
