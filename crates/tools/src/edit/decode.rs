//! Rule 3, both strings decode the same way: when old_string is found only once read_file's
//! line numbers, unified-diff markers or one level of JSON escaping are taken off, new_string
//! is decoded the same way, and only when that decoding fits the whole of it.

use super::lines::{model_lines, split_trailing_newline};

/// A way the model's strings can arrive wrapped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Decoding {
    /// read_file's `  12<TAB>` prefixes on every line.
    LineNumbers,
    /// Unified-diff markers (`+`, `-`, space, `@@` headers), as in edit_file's own diffs.
    DiffMarkers,
    /// One level of JSON escaping too many (`\n`, `\t`, `\"` as two characters).
    JsonEscapes,
}

impl Decoding {
    /// Every decoding, in the order they are tried.
    pub(crate) const ALL: [Decoding; 3] = [
        Decoding::LineNumbers,
        Decoding::DiffMarkers,
        Decoding::JsonEscapes,
    ];
}

/// Why new_string cannot be decoded the way old_string was.
pub(crate) type Inconsistency = &'static str;

/// old_string decoded, when it has this decoding's shape (`new` may supply the evidence, as
/// when both strings are one diff split in two).
pub(crate) fn decode_old(decoding: Decoding, old: &str, new: &str) -> Option<String> {
    let decoded = match decoding {
        Decoding::LineNumbers => strip_line_numbers(old)?,
        Decoding::DiffMarkers => {
            let marked = Diff::parse(old)?;
            let new = Diff::parse(new);
            let new_marked = new.as_ref().is_some_and(Diff::marked);
            if !(marked.adds() || marked.headers || new_marked) {
                return None;
            }
            // old_string holding only `-` lines while new_string holds the `+` lines is one
            // diff split in two: old_string is the text before it.
            let before =
                marked.removes() && !marked.adds() && new.as_ref().is_some_and(|new| new.adds());
            marked.side(if before { Side::Before } else { Side::After })
        }
        Decoding::JsonEscapes => {
            if !old.contains('\\') {
                return None;
            }
            Unescaped::of(old)?.consistent()?
        }
    };
    (!decoded.trim().is_empty()).then_some(decoded)
}

/// new_string decoded the way old_string was (`decoded_old` is old_string's result).
pub(crate) fn decode_new(
    decoding: Decoding,
    new: &str,
    decoded_old: &str,
) -> Result<String, Inconsistency> {
    match decoding {
        Decoding::LineNumbers => {
            let (body, _) = split_trailing_newline(new);
            let lines = model_lines(body);
            let numbered = lines.iter().filter(|l| numbered_line(l).is_some()).count();
            if new.is_empty() || numbered == 0 {
                Ok(new.to_owned())
            } else if numbered == lines.len() {
                strip_line_numbers(new).ok_or("")
            } else {
                Err("new_string has read_file line numbers on some lines but not on others")
            }
        }
        Decoding::DiffMarkers => match Diff::parse(new) {
            Some(diff) if diff.marked() => Ok(diff.side(Side::After)),
            // Only lines starting with a space: diff context, or plainly indented code. Take
            // the reading under which new_string repeats more of old_string.
            Some(diff) => {
                let decoded = diff.side(Side::After);
                if shared_lines(&decoded, decoded_old) > shared_lines(new, decoded_old) {
                    Ok(decoded)
                } else {
                    Ok(new.to_owned())
                }
            }
            None if new.lines().any(is_marker_line) => {
                Err("new_string has diff markers (+, -) on some lines but not on others")
            }
            None => Ok(new.to_owned()),
        },
        Decoding::JsonEscapes => {
            if !new.contains('\\') {
                return Ok(new.to_owned());
            }
            let unescaped = Unescaped::of(new).ok_or(
                "new_string has backslashes that are not JSON escapes, so it cannot be unescaped \
                 the way old_string was",
            )?;
            unescaped.consistent().ok_or(
                "new_string mixes real line breaks with \\n escapes (or real tabs with \\t), so \
                 rein cannot tell which are meant",
            )
        }
    }
}

/// Whether both strings are written as a diff, new_string with its own markers: a forgiving
/// rung must never write such a new_string as given, so this decoding is tried before them.
pub(crate) fn diff_pair(old: &str, new: &str) -> bool {
    Diff::parse(old).is_some() && Diff::parse(new).is_some_and(|new| new.marked())
}

/// `s` with read_file's `  12<TAB>` prefixes removed, when every line has one (a trailing
/// line ending excepted); `None` otherwise.
pub(crate) fn strip_line_numbers(s: &str) -> Option<String> {
    let (body, trailing_newline) = split_trailing_newline(s);
    let mut out = String::with_capacity(s.len());
    for (i, line) in body.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
        }
        out.push_str(numbered_line(line)?);
    }
    if trailing_newline {
        out.push('\n');
    }
    Some(out)
}

/// The text of a line after its read_file number and tab.
fn numbered_line(line: &str) -> Option<&str> {
    let rest = line.trim_start_matches(' ');
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    rest[digits..].strip_prefix('\t')
}

fn is_marker_line(line: &str) -> bool {
    line.starts_with('+') || line.starts_with('-') || line.starts_with("@@ -")
}

/// How many lines of `a` appear among the lines of `b`.
fn shared_lines(a: &str, b: &str) -> usize {
    let b: std::collections::HashSet<&str> = b.lines().collect();
    a.lines().filter(|l| b.contains(l)).count()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mark {
    Context,
    Add,
    Remove,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Before,
    After,
}

/// A string every line of which is a unified-diff line.
#[derive(Debug)]
struct Diff<'a> {
    lines: Vec<(Mark, &'a str)>,
    /// Whether it had `---`/`+++` file headers or `@@` hunk headers.
    headers: bool,
    newline: bool,
}

impl<'a> Diff<'a> {
    fn parse(s: &'a str) -> Option<Diff<'a>> {
        let (body, newline) = split_trailing_newline(s);
        let mut rest = model_lines(body);
        let mut headers = false;
        if rest.len() >= 2 && rest[0].starts_with("--- ") && rest[1].starts_with("+++ ") {
            rest.drain(..2);
            headers = true;
        }
        let mut lines = Vec::with_capacity(rest.len());
        for line in rest {
            if line.starts_with("@@ -") && line[4..].contains(" @@") {
                headers = true;
                continue;
            }
            if line.starts_with("\\ ") {
                // "\ No newline at end of file"
                continue;
            }
            let mark = match line.as_bytes().first() {
                None => (Mark::Context, line),
                Some(b' ') => (Mark::Context, &line[1..]),
                Some(b'+') => (Mark::Add, &line[1..]),
                Some(b'-') => (Mark::Remove, &line[1..]),
                Some(_) => return None,
            };
            lines.push(mark);
        }
        Some(Diff {
            lines,
            headers,
            newline,
        })
    }

    fn adds(&self) -> bool {
        self.lines.iter().any(|(m, _)| *m == Mark::Add)
    }

    fn removes(&self) -> bool {
        self.lines.iter().any(|(m, _)| *m == Mark::Remove)
    }

    /// Whether anything in it is a diff marker rather than a space that could be indentation.
    fn marked(&self) -> bool {
        self.headers || self.adds() || self.removes()
    }

    /// The text on one side of the diff.
    fn side(&self, side: Side) -> String {
        let skip = match side {
            Side::Before => Mark::Add,
            Side::After => Mark::Remove,
        };
        let kept: Vec<&str> = self
            .lines
            .iter()
            .filter(|(m, _)| *m != skip)
            .map(|(_, l)| *l)
            .collect();
        let mut out = kept.join("\n");
        if self.newline && !kept.is_empty() {
            out.push('\n');
        }
        out
    }
}

/// A string with one level of JSON string escaping undone.
#[derive(Debug)]
struct Unescaped {
    text: String,
    /// Whether the original held a real line break (or tab) and a `\n` (or `\t`) escape both.
    mixed: bool,
}

impl Unescaped {
    /// `None` when a backslash does not start a JSON escape.
    fn of(s: &str) -> Option<Unescaped> {
        let mut text = String::with_capacity(s.len());
        let (mut escaped_newline, mut escaped_tab) = (false, false);
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            if c != '\\' {
                text.push(c);
                continue;
            }
            let decoded = match chars.next()? {
                '"' => '"',
                '\\' => '\\',
                '/' => '/',
                'b' => '\u{8}',
                'f' => '\u{c}',
                'n' => {
                    escaped_newline = true;
                    '\n'
                }
                'r' => '\r',
                't' => {
                    escaped_tab = true;
                    '\t'
                }
                'u' => {
                    let high = hex4(&mut chars)?;
                    if (0xD800..0xDC00).contains(&high) {
                        if chars.next()? != '\\' || chars.next()? != 'u' {
                            return None;
                        }
                        let low = hex4(&mut chars)?;
                        if !(0xDC00..0xE000).contains(&low) {
                            return None;
                        }
                        char::from_u32(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))?
                    } else {
                        char::from_u32(high)?
                    }
                }
                _ => return None,
            };
            text.push(decoded);
        }
        let mixed = (escaped_newline && s.contains('\n')) || (escaped_tab && s.contains('\t'));
        Some(Unescaped { text, mixed })
    }

    fn consistent(self) -> Option<String> {
        (!self.mixed).then_some(self.text)
    }
}

fn hex4(chars: &mut std::str::Chars<'_>) -> Option<u32> {
    let mut value = 0;
    for _ in 0..4 {
        value = value * 16 + chars.next()?.to_digit(16)?;
    }
    Some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_numbers_come_off_only_when_every_line_has_one() {
        assert_eq!(
            strip_line_numbers("  12\tfoo\n  13\t  bar\n").as_deref(),
            Some("foo\n  bar\n")
        );
        assert_eq!(strip_line_numbers("12\tfoo\nbar"), None);
        assert_eq!(strip_line_numbers("foo"), None);
        let new = decode_new(Decoding::LineNumbers, "3\tx\ny", "");
        assert!(new.is_err(), "{new:?}");
        assert_eq!(
            decode_new(Decoding::LineNumbers, "x\ny", "").unwrap(),
            "x\ny"
        );
    }

    #[test]
    fn a_diff_stands_for_the_text_after_it() {
        let old = "@@ -1,3 +1,3 @@\n fn b() {\n-    old();\n+    new();\n }";
        assert_eq!(
            decode_old(Decoding::DiffMarkers, old, "x").unwrap(),
            "fn b() {\n    new();\n}"
        );
        // Split in two: old_string is the side before, new_string the side after.
        let (old, new) = (" a\n-b\n c", " a\n+B\n c");
        assert_eq!(
            decode_old(Decoding::DiffMarkers, old, new).unwrap(),
            "a\nb\nc"
        );
        assert_eq!(
            decode_new(Decoding::DiffMarkers, new, "a\nb\nc").unwrap(),
            "a\nB\nc"
        );
        // Only `-` and context lines with a plain new_string: a Markdown list, not a diff.
        assert_eq!(decode_old(Decoding::DiffMarkers, "- a\n- b", "x"), None);
    }

    #[test]
    fn a_new_string_of_spaced_lines_is_read_the_way_that_repeats_old_string() {
        // Context lines copied from the diff, the added line left out.
        let decoded = decode_new(Decoding::DiffMarkers, " a\n c", "a\nb\nc").unwrap();
        assert_eq!(decoded, "a\nc");
        // Indented code, its indentation kept.
        let decoded = decode_new(Decoding::DiffMarkers, "    x();\n    y();", "    x();").unwrap();
        assert_eq!(decoded, "    x();\n    y();");
        let mixed = decode_new(Decoding::DiffMarkers, "fn a() {\n+    x();\n}", "");
        assert!(mixed.is_err());
    }

    #[test]
    fn json_escapes_decode_only_when_consistent() {
        assert_eq!(
            decode_old(
                Decoding::JsonEscapes,
                "if x:\\n\\treturn \\\"a\\\\n\\\"",
                ""
            )
            .unwrap(),
            "if x:\n\treturn \"a\\n\""
        );
        // A real line break beside a `\n` escape: the escape may be a string literal's.
        assert_eq!(
            decode_old(Decoding::JsonEscapes, "print(\"a\\nb\")\nx = 1", ""),
            None
        );
        assert_eq!(decode_old(Decoding::JsonEscapes, "re = \\d+", ""), None);
        assert!(decode_new(Decoding::JsonEscapes, "a\\nb\nc", "").is_err());
        assert!(decode_new(Decoding::JsonEscapes, "re = \\d", "").is_err());
        assert_eq!(
            decode_new(Decoding::JsonEscapes, "plain\ntext", "").unwrap(),
            "plain\ntext"
        );
        assert_eq!(
            decode_old(Decoding::JsonEscapes, "\\u00e9\\ud83d\\ude00", "").unwrap(),
            "é😀"
        );
    }
}
