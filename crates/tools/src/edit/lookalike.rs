//! Typographic look-alikes: curly quotes, dashes and no-break spaces that a model writes as
//! their ASCII twins (or the reverse). Each folds to exactly one ASCII character, so a folded
//! text has as many characters as the original and positions can be mapped back.

use std::ops::Range;

/// Which kind of look-alike a character is, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Quote,
    Dash,
    Space,
}

/// The ASCII character `c` stands for, and its kind; `None` for every other character.
fn look_alike(c: char) -> Option<(char, Kind)> {
    match c {
        '\u{2018}' | '\u{2019}' | '\u{201A}' | '\u{201B}' | '\u{2032}' => Some(('\'', Kind::Quote)),
        '\u{201C}' | '\u{201D}' | '\u{201E}' | '\u{201F}' | '\u{2033}' => Some(('"', Kind::Quote)),
        '\u{2010}'..='\u{2015}' | '\u{2212}' => Some(('-', Kind::Dash)),
        '\u{00A0}' | '\u{2007}' | '\u{202F}' => Some((' ', Kind::Space)),
        _ => None,
    }
}

/// `c` folded to its ASCII twin.
pub(crate) fn fold(c: char) -> char {
    look_alike(c).map_or(c, |(ascii, _)| ascii)
}

/// Whether `s` holds any look-alike character.
pub(crate) fn contains_look_alike(s: &str) -> bool {
    // Every look-alike is encoded starting with 0xC2 or 0xE2: skip pure ASCII at memchr speed.
    let bytes = s.as_bytes();
    let mut pos = 0;
    while let Some(at) = memchr::memchr2(0xC2, 0xE2, &bytes[pos..]) {
        let start = pos + at;
        if let Some(c) = s.get(start..).and_then(|rest| rest.chars().next())
            && look_alike(c).is_some()
        {
            return true;
        }
        pos = start + 1;
    }
    false
}

/// Whether `a` and `b` are equal once look-alikes are folded.
pub(crate) fn folded_eq(a: &str, b: &str) -> bool {
    a.chars().map(fold).eq(b.chars().map(fold))
}

/// When `prefix` folded is a prefix of `line` folded, the byte length of that prefix in `line`.
pub(crate) fn folded_prefix_len(prefix: &str, line: &str) -> Option<usize> {
    let mut rest = line.char_indices();
    for p in prefix.chars() {
        let (_, c) = rest.next()?;
        if fold(c) != fold(p) {
            return None;
        }
    }
    Some(rest.next().map_or(line.len(), |(i, _)| i))
}

/// The kinds of look-alike by which `a` and `b` (equal once folded, `\r` aside) differ.
pub(crate) fn differences(a: &str, b: &str) -> Kinds {
    let mut kinds = Kinds::default();
    let a = a.chars().filter(|&c| c != '\r');
    let b = b.chars().filter(|&c| c != '\r');
    for (x, y) in a.zip(b) {
        if x != y {
            match look_alike(x)
                .or_else(|| look_alike(y))
                .map(|(_, kind)| kind)
            {
                Some(Kind::Quote) => kinds.quotes = true,
                Some(Kind::Dash) => kinds.dashes = true,
                Some(Kind::Space) => kinds.spaces = true,
                None => {}
            }
        }
    }
    kinds
}

/// Which kinds of look-alike a match had to ignore.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Kinds {
    pub quotes: bool,
    pub dashes: bool,
    pub spaces: bool,
}

impl Kinds {
    /// Both sets together.
    pub(crate) fn union(self, other: Kinds) -> Kinds {
        Kinds {
            quotes: self.quotes || other.quotes,
            dashes: self.dashes || other.dashes,
            spaces: self.spaces || other.spaces,
        }
    }
}

/// A text with look-alikes folded and `\r\n` turned into `\n`, and the way back to the
/// original's byte offsets.
#[derive(Debug)]
pub(crate) struct Folded {
    /// The folded text.
    pub text: String,
    /// Offsets (in `text`) of characters that were shorter there, with the bytes lost up to and
    /// including each, in increasing order.
    shrunk: Vec<(usize, usize)>,
}

impl Folded {
    /// `text` folded.
    pub(crate) fn new(text: &str) -> Folded {
        let mut out = String::with_capacity(text.len());
        let mut shrunk = Vec::new();
        let mut lost = 0;
        let bytes = text.as_bytes();
        let mut copied = 0;
        let mut pos = 0;
        while let Some(at) = memchr::memchr3(b'\r', 0xC2, 0xE2, &bytes[pos..]) {
            let start = pos + at;
            pos = start + 1;
            let (ascii, len) = if bytes[start] == b'\r' {
                if bytes.get(start + 1) != Some(&b'\n') {
                    continue;
                }
                ('\n', 2)
            } else {
                match text.get(start..).and_then(|rest| rest.chars().next()) {
                    Some(c) => match look_alike(c) {
                        Some((ascii, _)) => (ascii, c.len_utf8()),
                        None => continue,
                    },
                    None => continue,
                }
            };
            out.push_str(&text[copied..start]);
            lost += len - 1;
            shrunk.push((out.len(), lost));
            out.push(ascii);
            copied = start + len;
            pos = copied;
        }
        out.push_str(&text[copied..]);
        Folded { text: out, shrunk }
    }

    /// The original offset of a folded offset. An offset at a folded character maps to its
    /// start (so a range never splits a `\r\n` or a multi-byte character).
    pub(crate) fn original(&self, offset: usize) -> usize {
        let before = self.shrunk.partition_point(|&(at, _)| at < offset);
        match before {
            0 => offset,
            n => offset + self.shrunk[n - 1].1,
        }
    }

    /// A folded range mapped back to the original.
    pub(crate) fn original_range(&self, range: &Range<usize>) -> Range<usize> {
        self.original(range.start)..self.original(range.end)
    }
}

/// `s` folded (look-alikes only; line endings kept).
pub(crate) fn fold_str(s: &str) -> String {
    s.chars().map(fold).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn folding_maps_offsets_back_through_multibyte_characters_and_crlf() {
        let text = "a “b”\r\nc\u{a0}–d";
        let folded = Folded::new(text);
        assert_eq!(folded.text, "a \"b\"\nc -d");
        let at = folded.text.find("\"b\"").unwrap();
        let range = folded.original_range(&(at..at + 3));
        assert_eq!(&text[range], "“b”");
        let nl = folded.text.find('\n').unwrap();
        assert_eq!(&text[folded.original(nl)..], "\r\nc\u{a0}–d");
        let d = folded.text.find('d').unwrap();
        assert_eq!(&text[folded.original(d)..], "d");
    }

    #[test]
    fn equality_and_prefixes_fold_both_ways() {
        assert!(folded_eq("say “hi” — now", "say \"hi\" - now"));
        assert!(folded_eq("say \"hi\"", "say “hi”"));
        assert!(!folded_eq("say hi", "say  hi"));
        assert_eq!(folded_prefix_len("a \"b", "a “b” c"), Some(6));
        assert_eq!(folded_prefix_len("a x", "a “b” c"), None);
        assert_eq!(folded_prefix_len("abcd", "abc"), None);
    }

    #[test]
    fn differences_name_the_kinds() {
        let kinds = differences("it’s – x", "it's - x");
        assert_eq!(
            kinds,
            Kinds {
                quotes: true,
                dashes: true,
                spaces: false
            }
        );
        assert!(contains_look_alike("x\u{a0}y"));
        assert!(!contains_look_alike("plain ascii é"));
    }
}
