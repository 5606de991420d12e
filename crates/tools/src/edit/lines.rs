//! Line bookkeeping for the edit ladder: where each line of the file starts and ends, block
//! matching under a per-line normalisation, and read_file's line-number prefixes.

use std::borrow::Cow;

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

/// Start indices of every run of file lines equal to `wanted` line by line after `norm`
/// (overlapping runs included, so an ambiguous block is never mistaken for a unique one).
pub(crate) fn find_blocks(
    text: &str,
    spans: &[LineSpan],
    wanted: &[&str],
    norm: fn(&str) -> &str,
) -> Vec<usize> {
    let Some(first) = wanted.first().map(|l| norm(l)) else {
        return Vec::new();
    };
    let wanted: Vec<&str> = wanted.iter().map(|l| norm(l)).collect();
    let k = wanted.len();
    if k > spans.len() {
        return Vec::new();
    }
    (0..=spans.len() - k)
        .filter(|&i| norm(line_text(text, spans[i])) == first)
        .filter(|&i| (1..k).all(|j| norm(line_text(text, spans[i + j])) == wanted[j]))
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

/// `s` with read_file's `  12<TAB>` prefixes removed, when every line has one (a trailing
/// line ending excepted); `None` otherwise.
pub(crate) fn strip_line_numbers(s: &str) -> Option<Cow<'_, str>> {
    let (body, trailing_newline) = split_trailing_newline(s);
    let mut out = String::with_capacity(s.len());
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let digits_start = line.len() - line.trim_start_matches(' ').len();
        let rest = &line[digits_start..];
        let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        if digits == 0 || !rest[digits..].starts_with('\t') {
            return None;
        }
        out.push_str(&rest[digits + 1..]);
    }
    if trailing_newline {
        out.push('\n');
    }
    Some(Cow::Owned(out))
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
    fn blocks_match_under_normalisation() {
        let text = "fn a() {\n    x();  \n}\nfn b() {\n    x();\n}\n";
        let spans = line_spans(text);
        assert_eq!(
            find_blocks(text, &spans, &["    x();"], str::trim_end),
            [1, 4]
        );
        assert_eq!(
            find_blocks(text, &spans, &["fn b() {", "x();"], str::trim),
            [3]
        );
    }

    #[test]
    fn line_numbers_of_offsets() {
        assert_eq!(line_numbers("a\nb\nc\n", &[0, 2, 4, 4]), [1, 2, 3, 3]);
    }

    #[test]
    fn strips_prefixes_only_when_every_line_has_one() {
        assert_eq!(
            strip_line_numbers("  12\tfoo\n  13\t  bar\n").as_deref(),
            Some("foo\n  bar\n")
        );
        assert_eq!(strip_line_numbers("12\tfoo\nbar"), None);
        assert_eq!(strip_line_numbers("foo"), None);
    }
}
