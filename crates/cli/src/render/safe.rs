//! Text from a model, a file or a command, made safe to write for a person to read: control
//! characters and escape sequences could retitle the terminal, clear the screen, hide a line
//! behind another or reorder what is shown. Each becomes a visible stand-in, whether the
//! output goes to a terminal or a file (a file is `cat` later). JSON output needs none of
//! this: JSON's own escaping covers it.

use std::borrow::Cow;

/// `text` with every control character but newline and tab replaced by a visible stand-in:
/// C0 controls by their Unicode control pictures (ESC becomes `␛`), DEL by `␡`, a carriage
/// return not ending a line by `␍`, C1 controls and bidirectional overrides by `<U+XXXX>`.
pub(crate) fn neutralize(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_stand_in) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\r' if chars.peek() == Some(&'\n') => {}
            '\n' | '\t' => out.push(c),
            '\u{0}'..='\u{1f}' => {
                out.push(char::from_u32(0x2400 + u32::from(c)).unwrap_or('\u{FFFD}'));
            }
            '\u{7f}' => out.push('\u{2421}'),
            c if needs_stand_in(c) => out.push_str(&format!("<U+{:04X}>", u32::from(c))),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// The first line of `text`, at most `max_chars` characters (`…` marks what was left out,
/// further lines included), made safe: for a piece of foreign text shown on one line.
pub(crate) fn one_line(text: &str, max_chars: usize) -> String {
    let mut lines = text.lines();
    let first = lines.next().unwrap_or_default();
    let mut shown: String = first.chars().take(max_chars).collect();
    if shown.len() < first.len() || lines.next().is_some() {
        shown.push('…');
    }
    neutralize(&shown).into_owned()
}

fn needs_stand_in(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}'
        | '\u{b}'..='\u{1f}'
        | '\u{7f}'..='\u{9f}'
        // Bidirectional embeddings, overrides and isolates ("Trojan Source").
        | '\u{202a}'..='\u{202e}'
        | '\u{2066}'..='\u{2069}')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_untouched() {
        let text = "fn main() {\n\tprintln!(\"héllo 世界\");\n}\n";
        assert!(matches!(neutralize(text), Cow::Borrowed(t) if t == text));
    }

    #[test]
    fn escape_sequences_become_visible_and_inert() {
        let shown = neutralize("a\u{1b}]0;pwned\u{7}b\u{1b}[2Jc");
        assert_eq!(shown, "a␛]0;pwned␇b␛[2Jc");
        assert!(!shown.contains('\u{1b}') && !shown.contains('\u{7}'));
    }

    #[test]
    fn carriage_returns_cannot_hide_a_line() {
        assert_eq!(neutralize("line\r\nnext\r\n"), "line\nnext\n");
        assert_eq!(neutralize("rm -rf /\rls  "), "rm -rf /␍ls  ");
    }

    #[test]
    fn one_line_keeps_the_first_line_and_marks_the_rest() {
        assert_eq!(one_line("cargo test", 20), "cargo test");
        assert_eq!(one_line("cd x\nmake", 20), "cd x…");
        assert_eq!(one_line("abcdef", 3), "abc…");
        assert_eq!(one_line("a\u{1b}[2Jb", 20), "a␛[2Jb");
        assert_eq!(one_line("", 20), "");
    }

    #[test]
    fn c1_controls_del_and_bidi_overrides_are_named() {
        assert_eq!(neutralize("x\u{9b}31m"), "x<U+009B>31m");
        assert_eq!(neutralize("x\u{7f}"), "x␡");
        assert_eq!(neutralize("admin\u{202e}txt.exe"), "admin<U+202E>txt.exe");
        assert_eq!(neutralize("\u{0}"), "␀");
    }
}
