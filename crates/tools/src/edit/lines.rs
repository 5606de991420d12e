//! Line bookkeeping for the edit ladder: where each line of the file starts and ends (worked
//! out once, and only when a rung needs it), and the model's strings as lines and blank runs.

use std::cell::OnceCell;

use super::indent::file_indent_unit;
use super::lookalike::{Folded, contains_look_alike};
use crate::text_style::Eol;

/// Lines looked at to find a file's indentation unit.
const UNIT_SAMPLE_LINES: usize = 2000;

/// The file being edited, with what the rungs need of it computed on first use. Lines are
/// found around the places a search hit, never indexed for the whole file.
#[derive(Debug)]
pub(crate) struct FileText<'a> {
    /// The text (without byte-order mark).
    pub text: &'a str,
    /// Its line-ending style.
    pub eol: Eol,
    unit: OnceCell<String>,
    has_look_alikes: OnceCell<bool>,
    folded: OnceCell<Folded>,
}

impl<'a> FileText<'a> {
    pub(crate) fn new(text: &'a str) -> FileText<'a> {
        FileText {
            text,
            eol: Eol::detect(text.as_bytes()),
            unit: OnceCell::new(),
            has_look_alikes: OnceCell::new(),
            folded: OnceCell::new(),
        }
    }

    /// The line holding byte `offset` (which must be inside the text).
    pub(crate) fn line_at(&self, offset: usize) -> LineSpan {
        let start = memchr::memrchr(b'\n', &self.text.as_bytes()[..offset]).map_or(0, |nl| nl + 1);
        self.line_from(start)
    }

    /// The line after `line`, if any (a final line ending does not start one).
    pub(crate) fn next(&self, line: LineSpan) -> Option<LineSpan> {
        (line.end < self.text.len()).then(|| self.line_from(line.end))
    }

    /// The line before `line`, if any.
    pub(crate) fn previous(&self, line: LineSpan) -> Option<LineSpan> {
        (line.start > 0).then(|| self.line_at(line.start - 1))
    }

    /// The text of a line, without its ending.
    pub(crate) fn text_of(&self, line: LineSpan) -> &'a str {
        line_text(self.text, line)
    }

    fn line_from(&self, start: usize) -> LineSpan {
        let bytes = self.text.as_bytes();
        match memchr::memchr(b'\n', &bytes[start..]) {
            Some(at) => {
                let nl = start + at;
                let content_end = if nl > start && bytes[nl - 1] == b'\r' {
                    nl - 1
                } else {
                    nl
                };
                LineSpan {
                    start,
                    content_end,
                    end: nl + 1,
                }
            }
            None => LineSpan {
                start,
                content_end: bytes.len(),
                end: bytes.len(),
            },
        }
    }

    /// One indentation level of the file.
    pub(crate) fn unit(&self) -> &str {
        self.unit
            .get_or_init(|| file_indent_unit(self.text.lines().take(UNIT_SAMPLE_LINES)))
    }

    /// Whether it holds any typographic look-alike.
    pub(crate) fn has_look_alikes(&self) -> bool {
        *self
            .has_look_alikes
            .get_or_init(|| contains_look_alike(self.text))
    }

    /// The text with look-alikes folded and `\r\n` made `\n`.
    pub(crate) fn folded(&self) -> &Folded {
        self.folded.get_or_init(|| Folded::new(self.text))
    }
}

/// A run of a model string's lines: one non-blank line, or consecutive blank ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Token {
    /// The line at this index.
    Line(usize),
    /// `count` blank lines from index `first` (none: the gap between two adjacent lines).
    Blank { first: usize, count: usize },
}

/// old_string or new_string as lines.
#[derive(Debug)]
pub(crate) struct ModelText<'a> {
    /// Its lines, without line endings.
    pub lines: Vec<&'a str>,
    /// Whether it ends with a line ending (which does not start another line).
    pub newline: bool,
    /// Its lines grouped into non-blank lines and blank runs.
    pub tokens: Vec<Token>,
}

impl<'a> ModelText<'a> {
    pub(crate) fn new(s: &'a str) -> ModelText<'a> {
        if s.is_empty() {
            return ModelText {
                lines: Vec::new(),
                newline: false,
                tokens: Vec::new(),
            };
        }
        let (body, newline) = split_trailing_newline(s);
        let lines = model_lines(body);
        let mut tokens: Vec<Token> = Vec::with_capacity(lines.len());
        for (i, line) in lines.iter().enumerate() {
            if !is_blank(line) {
                // Between two lines, an empty run: where the file has blank lines the model
                // left out, a forgiving match keeps them when new_string repeats the gap.
                if let Some(Token::Line(_)) = tokens.last() {
                    tokens.push(Token::Blank { first: i, count: 0 });
                }
                tokens.push(Token::Line(i));
            } else if let Some(Token::Blank { count, .. }) = tokens.last_mut() {
                *count += 1;
            } else {
                tokens.push(Token::Blank { first: i, count: 1 });
            }
        }
        ModelText {
            lines,
            newline,
            tokens,
        }
    }

    /// Whether line `i` is followed by a line ending in the string.
    pub(crate) fn terminated(&self, i: usize) -> bool {
        i + 1 < self.lines.len() || self.newline
    }
}

/// Whether a line holds nothing but whitespace.
pub(crate) fn is_blank(line: &str) -> bool {
    line.trim().is_empty()
}

/// One line of a text: `start..content_end` is its text, `content_end..end` its line ending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct LineSpan {
    /// Byte offset of its first character.
    pub start: usize,
    /// Byte offset just past its text (before `\r\n` or `\n`).
    pub content_end: usize,
    /// Byte offset just past its line ending.
    pub end: usize,
}

/// The lines of `text`; a final line ending does not start an empty line.
pub(crate) fn line_spans(text: &str) -> Vec<LineSpan> {
    let bytes = text.as_bytes();
    let mut spans = Vec::with_capacity(bytes.len() / 32 + 1);
    let mut start = 0;
    for nl in memchr::memchr_iter(b'\n', bytes) {
        let content_end = if nl > start && bytes[nl - 1] == b'\r' {
            nl - 1
        } else {
            nl
        };
        spans.push(LineSpan {
            start,
            content_end,
            end: nl + 1,
        });
        start = nl + 1;
    }
    if start < bytes.len() {
        spans.push(LineSpan {
            start,
            content_end: bytes.len(),
            end: bytes.len(),
        });
    }
    spans
}

/// The text of a line, without its ending.
pub(crate) fn line_text(text: &str, span: LineSpan) -> &str {
    &text[span.start..span.content_end]
}

/// Splits off one trailing line ending; true when there was one.
pub(crate) fn split_trailing_newline(s: &str) -> (&str, bool) {
    match s.strip_suffix('\n') {
        Some(body) => (body.strip_suffix('\r').unwrap_or(body), true),
        None => (s, false),
    }
}

/// The lines of a model-written string, without `\r`.
pub(crate) fn model_lines(s: &str) -> Vec<&str> {
    s.split('\n')
        .map(|l| l.strip_suffix('\r').unwrap_or(l))
        .collect()
}

/// 1-based line numbers of byte offsets given in increasing order.
pub(crate) fn line_numbers(text: &str, offsets: &[usize]) -> Vec<usize> {
    let bytes = text.as_bytes();
    let mut line = 1;
    let mut pos = 0;
    offsets
        .iter()
        .map(|&offset| {
            line += memchr::memchr_iter(b'\n', &bytes[pos..offset.max(pos)]).count();
            pos = offset.max(pos);
            line
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_cover_crlf_and_last_line() {
        let text = "a\r\nbb\nc";
        let spans = line_spans(text);
        let texts: Vec<&str> = spans.iter().map(|&s| line_text(text, s)).collect();
        assert_eq!(texts, ["a", "bb", "c"]);
        assert_eq!(spans[0].end, 3);
        assert_eq!(line_spans("x\n").len(), 1);
        assert!(line_spans("").is_empty());
    }

    #[test]
    fn lines_are_found_around_an_offset() {
        let file = FileText::new("a\r\n\nbb\nc");
        let line = file.line_at(5);
        assert_eq!(file.text_of(line), "bb");
        let before = file.previous(line).unwrap();
        assert_eq!(file.text_of(before), "");
        assert_eq!(file.text_of(file.previous(before).unwrap()), "a");
        let last = file.next(line).unwrap();
        assert_eq!(file.text_of(last), "c");
        assert_eq!(file.next(last), None);
        let one = FileText::new("x\n");
        assert_eq!(one.next(one.line_at(0)), None);
    }

    #[test]
    fn line_numbers_of_offsets() {
        assert_eq!(line_numbers("a\nb\nc\n", &[0, 2, 4, 4]), [1, 2, 3, 3]);
    }

    #[test]
    fn model_text_groups_blank_runs() {
        let text = ModelText::new("a\n\n  \nb\nc\n");
        assert_eq!(text.lines, ["a", "", "  ", "b", "c"]);
        assert!(text.newline);
        assert_eq!(
            text.tokens,
            [
                Token::Line(0),
                Token::Blank { first: 1, count: 2 },
                Token::Line(3),
                Token::Blank { first: 4, count: 0 },
                Token::Line(4)
            ]
        );
        assert!(ModelText::new("").tokens.is_empty());
        assert!(!ModelText::new("a\nb").terminated(1));
    }
}
