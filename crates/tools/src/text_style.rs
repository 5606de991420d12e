//! The conventions of a text file that writes and edits keep: line endings, byte-order mark and
//! final newline.

use std::borrow::Cow;

/// The UTF-8 byte-order mark.
pub(crate) const BOM: &str = "\u{feff}";

/// How a file ends its lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Eol {
    /// Every line ends with `\n` alone.
    Lf,
    /// Every line ends with `\r\n`.
    Crlf,
    /// Both kinds occur: text is left as written.
    Mixed,
    /// No line ending at all (one line).
    None,
}

impl Eol {
    /// The line-ending style of `text`.
    pub(crate) fn detect(text: &[u8]) -> Eol {
        let crlf = memchr::memmem::find_iter(text, b"\r\n").count() as u64;
        if crlf == 0 {
            return if memchr::memchr(b'\n', text).is_some() {
                Eol::Lf
            } else {
                Eol::None
            };
        }
        if crate::read_file::count_newlines(text) == crlf {
            Eol::Crlf
        } else {
            Eol::Mixed
        }
    }

    /// The line ending to add, for a uniform style.
    pub(crate) fn ending(self) -> &'static str {
        match self {
            Eol::Crlf => "\r\n",
            Eol::Lf | Eol::Mixed | Eol::None => "\n",
        }
    }

    /// Rewrites the line endings of `text` (to be inserted after a `\r` when `after_cr`) into
    /// this style. Mixed and unknown styles leave the text as written.
    pub(crate) fn apply<'a>(self, text: &'a str, after_cr: bool) -> Cow<'a, str> {
        match self {
            Eol::Crlf => to_crlf(text, after_cr),
            Eol::Lf if text.contains("\r\n") => Cow::Owned(text.replace("\r\n", "\n")),
            Eol::Lf | Eol::Mixed | Eol::None => Cow::Borrowed(text),
        }
    }
}

/// Turns every `\n` that does not already follow a `\r` into `\r\n`.
fn to_crlf(text: &str, after_cr: bool) -> Cow<'_, str> {
    let bytes = text.as_bytes();
    let lone = memchr::memchr_iter(b'\n', bytes).any(|i| !preceded_by_cr(bytes, i, after_cr));
    if !lone {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    let mut start = 0;
    for i in memchr::memchr_iter(b'\n', bytes) {
        out.push_str(&text[start..i]);
        if !preceded_by_cr(bytes, i, after_cr) {
            out.push('\r');
        }
        out.push('\n');
        start = i + 1;
    }
    out.push_str(&text[start..]);
    Cow::Owned(out)
}

fn preceded_by_cr(bytes: &[u8], i: usize, after_cr: bool) -> bool {
    if i == 0 {
        after_cr
    } else {
        bytes[i - 1] == b'\r'
    }
}

/// What a file looked like, to be kept when it is rewritten.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TextStyle {
    /// Starts with a UTF-8 byte-order mark.
    pub bom: bool,
    /// Its line endings.
    pub eol: Eol,
    /// Ends with a line ending (`None` for an empty file, which has no such habit).
    pub final_newline: Option<bool>,
}

impl TextStyle {
    /// The style of a file's bytes.
    pub(crate) fn detect(bytes: &[u8]) -> TextStyle {
        let body = bytes.strip_prefix(BOM.as_bytes());
        let bom = body.is_some();
        let body = body.unwrap_or(bytes);
        TextStyle {
            bom,
            eol: Eol::detect(body),
            final_newline: (!body.is_empty()).then(|| body.ends_with(b"\n")),
        }
    }

    /// `content` (a whole new file body) in this style. Returns the text and what was changed,
    /// for the model.
    pub(crate) fn apply_to_whole(self, content: &str) -> (String, Vec<&'static str>) {
        let mut notes = Vec::new();
        let mut text = self.eol.apply(content, false);
        if let Cow::Owned(_) = text {
            notes.push(if self.eol == Eol::Crlf {
                "CRLF line endings"
            } else {
                "LF line endings"
            });
        }
        if !text.is_empty() && self.final_newline == Some(true) && !text.ends_with('\n') {
            text.to_mut().push_str(self.eol.ending());
            notes.push("final newline");
        } else if self.final_newline == Some(false) && text.ends_with('\n') {
            let trimmed = text
                .strip_suffix("\r\n")
                .or_else(|| text.strip_suffix('\n'))
                .unwrap_or(&text)
                .len();
            text.to_mut().truncate(trimmed);
            notes.push("no final newline");
        }
        let mut out = text.into_owned();
        if self.bom && !out.starts_with(BOM) {
            out.insert_str(0, BOM);
            notes.push("byte-order mark");
        }
        (out, notes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_styles() {
        assert_eq!(Eol::detect(b"a\nb\n"), Eol::Lf);
        assert_eq!(Eol::detect(b"a\r\nb\r\n"), Eol::Crlf);
        assert_eq!(Eol::detect(b"a\r\nb\n"), Eol::Mixed);
        assert_eq!(Eol::detect(b"abc"), Eol::None);
    }

    #[test]
    fn crlf_conversion_does_not_double_existing_pairs() {
        assert_eq!(Eol::Crlf.apply("a\nb\r\nc", false), "a\r\nb\r\nc");
        assert_eq!(Eol::Crlf.apply("\nx", true), "\nx");
        assert_eq!(Eol::Crlf.apply("\nx", false), "\r\nx");
        assert_eq!(Eol::Lf.apply("a\r\nb", false), "a\nb");
        assert_eq!(Eol::Mixed.apply("a\r\nb\n", false), "a\r\nb\n");
    }

    #[test]
    fn whole_content_takes_the_old_style() {
        let style = TextStyle::detect(b"\xef\xbb\xbfold\r\ntext\r\n");
        let (out, notes) = style.apply_to_whole("new\ntext");
        assert_eq!(out, "\u{feff}new\r\ntext\r\n");
        assert_eq!(
            notes,
            ["CRLF line endings", "final newline", "byte-order mark"]
        );
        let style = TextStyle::detect(b"no newline at end\nx");
        assert_eq!(style.apply_to_whole("a\nb\n").0, "a\nb");
        let style = TextStyle::detect(b"");
        assert_eq!(style.apply_to_whole("a\nb\n").0, "a\nb\n");
    }
}
