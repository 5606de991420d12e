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
    fn fitting_cuts_with_an_ellipsis_and_resets_colours() {
        assert_eq!(fit("abcdef", 4), "abc…");
        assert_eq!(fit("abc", 4), "abc");
        assert_eq!(fit("\x1b[32m+abcdef\x1b[0m", 4), "\x1b[32m+ab…\x1b[0m");
    }
}
