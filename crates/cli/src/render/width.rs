//! Widths of text as a terminal shows it: escape sequences take no room, wide characters
//! take two columns.

use unicode_width::UnicodeWidthChar;

/// The columns `text` takes on a terminal, not counting rein's own colour codes.
pub(crate) fn visible_width(text: &str) -> usize {
    let mut width = 0;
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_sequence(&mut chars);
        } else {
            width += c.width().unwrap_or(0);
        }
    }
    width
}

/// `text` cut to at most `width` columns, `…` marking a cut; colour codes are kept and
/// reset after a cut so nothing bleeds into the next line.
pub(crate) fn fit(text: &str, width: usize) -> String {
    if width == 0 || visible_width(text) <= width {
        return text.to_owned();
    }
    let mut out = String::with_capacity(text.len());
    let mut used = 0;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            out.push(c);
            // Copy the whole sequence: it takes no room.
            for next in chars.by_ref() {
                out.push(next);
                if next.is_ascii_alphabetic() {
                    break;
                }
            }
            continue;
        }
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        used += w;
        out.push(c);
    }
    out.push('…');
    if text.contains('\x1b') {
        out.push_str("\x1b[0m");
    }
    out
}

/// `text` laid out in lines of at most `width` columns, broken between words; a word longer
/// than a line is broken where the line ends (a path or an error is wrapped, never cut).
/// Colour codes take no room. Existing newlines are kept.
pub(crate) fn wrap_words(text: &str, width: usize) -> String {
    let width = width.max(10);
    let mut out = String::with_capacity(text.len() + 16);
    for (n, line) in text.split('\n').enumerate() {
        if n > 0 {
            out.push('\n');
        }
        wrap_line(line, width, width, &mut out);
    }
    out
}

/// `text`, parts separated by `separator`, in lines of at most `width` columns broken
/// between parts (the separator goes at a line's end); a part too wide for a line is
/// broken between its words.
pub(crate) fn wrap_parts(text: &str, separator: &str, width: usize) -> String {
    let width = width.max(10);
    let joint = separator.trim_end();
    let parts: Vec<&str> = text.split(separator).collect();
    let mut out = String::with_capacity(text.len() + 8);
    let mut used = 0;
    for (n, part) in parts.iter().enumerate() {
        let last = n + 1 == parts.len();
        // A part's room includes the separator's mark that follows it.
        let w = visible_width(part) + if last { 0 } else { visible_width(joint) };
        if n > 0 {
            if used + 1 + w <= width {
                out.push(' ');
                used += 1;
            } else {
                out.push('\n');
                used = 0;
            }
        }
        let piece = if last {
            (*part).to_owned()
        } else {
            format!("{part}{joint}")
        };
        if w > width {
            let wrapped = wrap_words(&piece, width);
            used = wrapped.rsplit('\n').next().map_or(0, visible_width);
            out.push_str(&wrapped);
        } else {
            out.push_str(&piece);
            used += w;
        }
    }
    out
}

/// A tool line at most `width` columns wide: a line of a command's output or a diff (after
/// `│` or a line number) is cut, as a glimpse; any other (a path, an error, a summary) is
/// wrapped between words, its continuation indented under its text, so nothing is lost.
pub(crate) fn fit_or_wrap(line: &str, width: usize) -> String {
    if visible_width(line) <= width {
        return line.to_owned();
    }
    let plain = strip(line);
    let body = plain.trim_start();
    if body.starts_with('│') || body.starts_with(|c: char| c.is_ascii_digit()) {
        return fit(line, width);
    }
    let indent = plain.len() - body.len() + 2;
    let mut wrapped = String::with_capacity(line.len() + 16);
    wrap_line(
        line,
        width,
        width.saturating_sub(indent).max(10),
        &mut wrapped,
    );
    wrapped.replace('\n', &format!("\n{}", " ".repeat(indent)))
}

/// `text` without its colour codes.
fn strip(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\x1b' {
            skip_sequence(&mut chars);
        } else {
            out.push(c);
        }
    }
    out
}

/// One line of [`wrap_words`]: its first row at most `first` columns, the others `rest`.
fn wrap_line(line: &str, first: usize, rest: usize, out: &mut String) {
    let mut width = first;
    let mut used = 0;
    for (n, word) in line.split(' ').enumerate() {
        let w = visible_width(word);
        if n > 0 {
            if used > 0 && used + 1 + w <= width {
                out.push(' ');
                used += 1;
            } else if used > 0 {
                out.push('\n');
                used = 0;
                width = rest;
            } else {
                // Leading spaces (indentation) are kept.
                out.push(' ');
                used += 1;
            }
        }
        if used + w <= width {
            out.push_str(word);
            used += w;
            continue;
        }
        // A word longer than the room left: broken at the line's end.
        let mut chars = word.chars();
        while let Some(c) = chars.next() {
            if c == '\x1b' {
                out.push(c);
                for next in chars.by_ref() {
                    out.push(next);
                    if next.is_ascii_alphabetic() {
                        break;
                    }
                }
                continue;
            }
            let cw = c.width().unwrap_or(0);
            if used + cw > width && used > 0 {
                out.push('\n');
                used = 0;
                width = rest;
            }
            out.push(c);
            used += cw;
        }
    }
}

/// Skips a CSI sequence (`ESC [ … letter`) after its ESC.
fn skip_sequence(chars: &mut std::str::Chars<'_>) {
    for c in chars.by_ref() {
        if c.is_ascii_alphabetic() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colour_codes_take_no_room_and_wide_characters_two_columns() {
        assert_eq!(visible_width("\x1b[1mab\x1b[0m"), 2);
        assert_eq!(visible_width("日本"), 4);
    }

    #[test]
    fn wrapping_breaks_between_words_and_long_words_at_the_edge() {
        assert_eq!(
            wrap_words("make auto the default mode", 12),
            "make auto\nthe default\nmode"
        );
        assert_eq!(
            wrap_words("saved to /tmp/abcdefghijklmnop", 10),
            "saved to\n/tmp/abcde\nfghijklmno\np"
        );
        assert_eq!(wrap_words("\x1b[2mab cd\x1b[0m", 10), "\x1b[2mab cd\x1b[0m");
        assert_eq!(wrap_words("one\n  two", 10), "one\n  two");
    }

    #[test]
    fn parts_wrap_between_parts() {
        let line = "↑ 12k in (10k cached) · ↓ 234 out · context 23% of 128k · 4.2 s";
        assert_eq!(wrap_parts(line, " · ", 80), line);
        assert_eq!(
            wrap_parts(line, " · ", 40),
            "↑ 12k in (10k cached) · ↓ 234 out ·\ncontext 23% of 128k · 4.2 s"
        );
    }

    #[test]
    fn paths_and_errors_wrap_and_output_lines_are_cut() {
        let saved = "    whole output saved to /tmp/rein/bash-1795-abcdef.log";
        assert_eq!(
            fit_or_wrap(saved, 30),
            "    whole output saved to\n      /tmp/rein/bash-1795-abcd\n      ef.log"
        );
        assert_eq!(fit_or_wrap("    │ abcdefghijklmnop", 12), "    │ abcde…");
    }

    #[test]
    fn fitting_cuts_with_an_ellipsis_and_resets_colours() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(fit("\x1b[32m+abcdef\x1b[0m", 4), "\x1b[32m+ab…\x1b[0m");
    }
}
