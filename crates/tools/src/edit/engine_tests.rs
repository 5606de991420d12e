//! The ladder on strings: each rung and each refusal.

use super::*;

fn one(text: &str, old: &str, new: &str) -> Result<Edited, Refusal> {
    apply_edit(text, old, new, Replace::One)
}

#[test]
fn exact_rung_replaces_bytes_as_given() {
    let edited = one("a b c", "b", "B").unwrap();
    assert_eq!(edited.text, "a B c");
    assert_eq!(edited.how.rung, Rung::Exact);
    assert_eq!(
        edited.changes,
        [Change {
            old: 2..3,
            new: 2..3
        }]
    );
}

#[test]
fn crlf_file_gets_crlf_new_text_and_keeps_pairs_whole() {
    let edited = one("a\r\nb\r\n", "b", "b\nc").unwrap();
    assert_eq!(edited.text, "a\r\nb\r\nc\r\n");
    // A leading `\n` stands for the whole line break.
    let edited = one("a\r\nb\r\n", "\nb", "").unwrap();
    assert_eq!(edited.text, "a\r\n");
}

#[test]
fn lf_rung_maps_positions_back_through_removed_carriage_returns() {
    let text = "x\r\none\r\ntwo\r\ny";
    let edited = one(text, "one\ntwo\n", "1\n2\n").unwrap();
    assert_eq!(edited.how.rung, Rung::LineEndings);
    assert_eq!(edited.text, "x\r\n1\r\n2\r\ny");
}

#[test]
fn mixed_files_are_left_as_written() {
    let edited = one("a\r\nb\nc", "c", "c\nd").unwrap();
    assert_eq!(edited.text, "a\r\nb\nc\nd");
}

#[test]
fn trailing_whitespace_rung_keeps_the_final_newline_state() {
    let edited = one("keep\nlast  \n", "last\n", "new last").unwrap();
    assert_eq!(edited.how.rung, Rung::TrailingWhitespace);
    assert_eq!(edited.text, "keep\nnew last\n");
    let edited = one("keep\nlast  ", "last\n", "new last\n").unwrap();
    assert_eq!(edited.text, "keep\nnew last");
}

#[test]
fn indentation_rung_reindents_in_a_crlf_file() {
    let text = "fn f() {\r\n\tif x {\r\n\t\ty();\r\n\t}\r\n}\r\n";
    let edited = one(text, "if x {\n    y();\n}", "if x {\n    y();\n    z();\n}").unwrap();
    assert_eq!(edited.how.rung, Rung::Indentation);
    assert_eq!(
        edited.text,
        "fn f() {\r\n\tif x {\r\n\t\ty();\r\n\t\tz();\r\n\t}\r\n}\r\n"
    );
}

#[test]
fn line_numbers_are_stripped_then_the_ladder_runs_again() {
    let edited = one("a:\n    b\nc\n", "1\ta:\n2\t  b", "1\tA:\n2\t  B").unwrap();
    assert_eq!(edited.how.decoding, Some(Decoding::LineNumbers));
    assert_eq!(edited.how.rung, Rung::Indentation);
    assert_eq!(edited.text, "A:\n    B\nc\n");
}

#[test]
fn near_misses_are_never_accepted() {
    let refusal = one("let total = 1;\n", "let totl = 1;", "x").unwrap_err();
    assert!(
        matches!(
            refusal,
            Refusal::NotFound {
                closest: Some(_),
                ..
            }
        ),
        "{refusal:?}"
    );
}

#[test]
fn ambiguity_is_reported_at_the_rung_that_found_it() {
    let refusal = one("  a\nb\n\ta\n", "a", "c").unwrap_err();
    assert_eq!(
        refusal,
        Refusal::Ambiguous {
            rung: Rung::Exact,
            decoding: None,
            count: 2,
            lines: vec![1, 3]
        }
    );
    let refusal = one("  x\n\tx\n", " x ", "y").unwrap_err();
    assert!(
        matches!(
            refusal,
            Refusal::Ambiguous {
                rung: Rung::Indentation,
                count: 2,
                ..
            }
        ),
        "{refusal:?}"
    );
}

#[test]
fn replace_all_is_non_overlapping_and_takes_the_first_rung_that_finds_any() {
    let edited = apply_edit("aaaa", "aa", "b", Replace::All).unwrap();
    assert_eq!(edited.text, "bb");
    let edited = apply_edit("  x  \n\tx\n", "x \n", "y\n", Replace::All).unwrap();
    assert_eq!(edited.how.rung, Rung::Indentation);
    assert_eq!(edited.text, "  y\n\ty\n");
    // An exact occurrence keeps its looser twins out.
    let edited = apply_edit("x\n  x\n", "x\n", "y\n", Replace::All).unwrap();
    assert_eq!(edited.text, "y\n  y\n");
    let edited = apply_edit("a = 1\n  a = 1 \n", "a = 1\n", "b\n", Replace::All).unwrap();
    assert_eq!(edited.how.rung, Rung::Exact);
}

#[test]
fn identical_strings_are_refused() {
    assert_eq!(one("a", "a", "a").unwrap_err(), Refusal::Identical);
}

#[test]
fn a_misremembered_block_structure_is_refused_not_moved() {
    // `cleanup()` follows the `if` block in the file; the model quotes it as inside the block.
    // Matching with indentation trimmed used to land here and move `cleanup()` into the block.
    let text = "def f(x):\n    if x:\n        run()\n    cleanup()\n    return x\n";
    let old = "if x:\n    run()\n    cleanup()";
    let new = "if x:\n    run()\n    cleanup()\n    log()";
    let refusal = one(text, old, new).unwrap_err();
    assert!(
        matches!(
            refusal,
            Refusal::NotFound {
                nested_differently: Some((2, 4)),
                ..
            }
        ),
        "{refusal:?}"
    );
}
