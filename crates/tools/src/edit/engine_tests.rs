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

#[test]
fn restated_lines_keep_their_own_line_endings_in_a_mixed_file() {
    let text = "a = “1”\r\nb = 2\nc = 3\r\n";
    let edited = one(text, "a = \"1\"\nb = 2\nc = 3", "a = \"1\"\nb = 2\nc = 4").unwrap();
    assert_eq!(edited.how.rung, Rung::LookAlikes);
    assert_eq!(edited.text, "a = “1”\r\nb = 2\nc = 4\r\n");
}

#[test]
fn look_alikes_across_crlf_lines_map_back_to_whole_characters() {
    let text = "x\r\nsay “a”\r\nand “b”\r\ny\r\n";
    let edited = one(text, "“a”\nand \"b", "“a”\nand \"c").unwrap();
    assert_eq!(edited.how.rung, Rung::LookAlikes);
    // The piece starts inside line 2 and ends inside line 3: only its changed line is new.
    assert_eq!(edited.text, "x\r\nsay “a”\r\nand \"c”\r\ny\r\n");
    assert_eq!(edited.changes[0].old, 7..24);
}

#[test]
fn a_cut_last_line_ends_the_change_mid_line() {
    let text = "fn f() {\n    let total = compute(a, b);\n}\n";
    let edited = one(
        text,
        "fn f() {\n  let total = comp",
        "fn f() {\n  let sum = comp",
    )
    .unwrap();
    assert_eq!(edited.how.rung, Rung::CutLastLine);
    assert_eq!(edited.how.cut_line, Some(2));
    assert_eq!(edited.text, "fn f() {\n    let sum = compute(a, b);\n}\n");
    assert_eq!(edited.changes[0].old, 0..29);
}

#[test]
fn leading_blank_lines_the_file_lacks_change_nothing() {
    let edited = one("x()\nfoo()\n", "\n\n  foo()", "\n\n  bar()").unwrap();
    assert_eq!(edited.how.rung, Rung::BlankLines);
    assert_eq!(edited.text, "x()\nbar()\n");
}

#[test]
fn nesting_may_change_unit_and_depth_but_not_order() {
    let text = "fn f() {\n\tif a {\n\t\tb();\n\t}\n\tc();\n}\n";
    // Two-space model, shifted left by a level: lands, re-indented with tabs.
    let edited = one(
        text,
        "if a {\n  b();\n}\nc();",
        "if a {\n  b();\n  d();\n}\nc();",
    )
    .unwrap();
    assert_eq!(
        edited.text,
        "fn f() {\n\tif a {\n\t\tb();\n\t\td();\n\t}\n\tc();\n}\n"
    );
    // `c();` quoted inside the block it follows.
    let refusal = one(text, "if a {\n  b();\n}\n  c();", "x").unwrap_err();
    assert!(
        matches!(
            refusal,
            Refusal::NotFound {
                nested_differently: Some((2, 5)),
                ..
            }
        ),
        "{refusal:?}"
    );
}

#[test]
fn refusals_say_what_stopped_the_edit() {
    // Only a blank line the file does not have.
    let refusal = one("a\nb\n", "a\n\nb", "a\nb").unwrap_err();
    assert!(matches!(refusal, Refusal::Unchanged { .. }), "{refusal:?}");
    // Decoded old_string found at line 2; new_string half numbered.
    let refusal = one("x\ny\nz\n", "2\ty\n3\tz", "2\ty\nZ").unwrap_err();
    assert_eq!(
        refusal,
        Refusal::Inconsistent {
            decoding: Decoding::LineNumbers,
            problem: "new_string has read_file line numbers on some lines but not on others",
            line: 2
        }
    );
    // Ambiguity after decoding names the decoding.
    let refusal = one("a\nb\na\nb\n", "+a\n+b", "+c").unwrap_err();
    assert!(
        matches!(
            refusal,
            Refusal::Ambiguous {
                decoding: Some(Decoding::DiffMarkers),
                count: 2,
                ..
            }
        ),
        "{refusal:?}"
    );
}

#[test]
fn strings_as_given_are_tried_before_any_decoding() {
    // The file holds the escapes: the raw strings land (here ignoring indentation), and the
    // escapes are written as sent.
    let text = "  {\"a\": \"x\\ny\"}\n";
    let edited = one(text, "{\"a\": \"x\\ny\"}", "{\"a\": \"x\\nz\"}").unwrap();
    assert_eq!(edited.how.decoding, None);
    assert_eq!(edited.text, "  {\"a\": \"x\\nz\"}\n");
}
