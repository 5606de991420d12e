use super::*;

/// An answer with every element the renderer knows.
const SAMPLE: &str = "# Fixing the import\n\
\n\
The module `utils` was renamed; **two** files still use the *old* name, and ~~one~~ test.\n\
See [the docs](https://example.com/docs) or <https://example.com>.\n\
\n\
## Steps\n\
\n\
1. Rename the import in `main.py`, which is the entry point of the whole application and is imported by every test in the suite.\n\
2) Run the tests\n\
- a bullet with `code`\n\
\x20 - a nested bullet\n\
- [ ] a task left\n\
- [x] a task done\n\
\n\
> A quote that says something wise about imports.\n\
\n\
---\n\
\n\
| File | Lines | Status |\n\
|:-----|------:|:------:|\n\
| main.py | 12 | fixed |\n\
| tests/test_main.py | 120 | **todo** |\n\
\n\
```python\n\
import helpers  # the new name\n\
def main():\n\
\treturn helpers.run(\"x\", 42)\n\
```\n\
\n\
Done.";

fn render(style: Style, width: usize, pieces: &[&str]) -> String {
    let mut md = MarkdownStream::new(style, width);
    let mut out = String::new();
    for piece in pieces {
        md.push(piece, &mut out);
    }
    md.finish(&mut out);
    out
}

/// Colour codes made visible for a snapshot.
fn visible(text: &str) -> String {
    text.replace('\x1b', "␛")
}

#[test]
fn every_element_at_80_columns() {
    insta::assert_snapshot!(render(Style::plain(), 80, &[SAMPLE]));
}

#[test]
fn every_element_at_120_columns() {
    insta::assert_snapshot!(render(Style::plain(), 120, &[SAMPLE]));
}

#[test]
fn every_element_in_colour() {
    insta::assert_snapshot!(visible(&render(Style::colored(), 80, &[SAMPLE])));
}

#[test]
fn streaming_in_any_pieces_gives_the_same_lines() {
    let whole = render(Style::colored(), 80, &[SAMPLE]);
    let chars: Vec<String> = SAMPLE.chars().map(String::from).collect();
    let pieces: Vec<&str> = chars.iter().map(String::as_str).collect();
    assert_eq!(render(Style::colored(), 80, &pieces), whole);
    let (a, b) = SAMPLE.split_at(SAMPLE.len() / 3);
    assert_eq!(render(Style::colored(), 80, &[a, b]), whole);
}

#[test]
fn a_line_is_written_once_it_is_complete_and_never_again() {
    let mut md = MarkdownStream::new(Style::plain(), 80);
    let mut out = String::new();
    md.push("Hello **wor", &mut out);
    assert_eq!(out, "");
    md.push("ld**\nnext", &mut out);
    assert_eq!(out, "Hello world\n");
    md.finish(&mut out);
    assert_eq!(out, "Hello world\nnext\n");
}

#[test]
fn escape_sequences_from_the_model_are_shown_harmlessly() {
    let out = render(
        Style::colored(),
        80,
        &["a \x1b]0;pwned\x07 b\n```\n\x1b[2J\n```\n"],
    );
    assert!(
        !out.contains("\x1b]") && !out.contains("\x1b[2J"),
        "{out:?}"
    );
    assert!(out.contains("␛]0;pwned␇"));
}

#[test]
fn a_table_wider_than_the_terminal_wraps_its_cells_and_cuts_nothing() {
    let table = "| a | b |\n|---|---|\n| one two three four five six seven | eight nine ten eleven twelve |\n| `/home/me/a/very/long/path/to/a/file.rs` | x |\n";
    let out = render(Style::plain(), 30, &[table]);
    for line in out.lines() {
        assert!(visible_width(line) <= 30, "{line:?}");
    }
    assert!(!out.contains('…'), "a cell was cut:\n{out}");
    let words: String = out
        .lines()
        .map(|l| l.replace('│', " ").replace(['─', '┼'], ""))
        .collect::<Vec<_>>()
        .join(" ");
    let words: Vec<&str> = words.split_whitespace().collect();
    for word in ["one", "seven", "eight", "twelve"] {
        assert!(words.contains(&word), "{word} lost:\n{out}");
    }
    insta::assert_snapshot!("table_wrapped_30", out);
}

#[test]
fn long_words_are_broken_and_lines_wrap_at_the_width() {
    let out = render(Style::plain(), 20, &[&"x".repeat(45), "\n"]);
    assert_eq!(out.lines().map(str::len).collect::<Vec<_>>(), [20, 20, 5]);
}

#[test]
fn under_no_color_headings_stay_bold_and_underlined_and_nothing_is_coloured() {
    let out = render(
        Style::emphasis_only(),
        80,
        &["# Title\n\nSome `code` and text.\n"],
    );
    assert_eq!(out, "\x1b[1;4mTitle\x1b[0m\n\nSome `code` and text.\n");
}
