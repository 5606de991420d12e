//! Properties of the ladder: edit then inverse edit gives the original text on each exact rung;
//! a block quoted with the mistakes models make lands, changes nothing outside the reported
//! span and keeps the file's bytes on every line new_string repeats; and whatever any rung
//! does with arbitrary input, bytes outside the reported spans never change.

use proptest::prelude::*;
use proptest::sample::Index;

use super::*;
use crate::edit::substring::occurrences;

/// Every byte outside the reported changes is the same, in order, and the changes are sorted
/// and disjoint.
fn outside_kept(text: &str, edited: &Edited) -> Result<(), TestCaseError> {
    let out = &edited.text;
    let (mut old_pos, mut new_pos) = (0, 0);
    for change in &edited.changes {
        prop_assert!(change.old.start >= old_pos, "changes out of order");
        prop_assert!(change.new.start >= new_pos, "changes out of order");
        prop_assert_eq!(
            &text[old_pos..change.old.start],
            &out[new_pos..change.new.start]
        );
        old_pos = change.old.end;
        new_pos = change.new.end;
    }
    prop_assert_eq!(&text[old_pos..], &out[new_pos..]);
    Ok(())
}

/// A unique substring of `text` starting at a character picked by `at`, never splitting a
/// `\r\n` (one line break in the text the model sees).
fn unique_substring(text: &str, at: Index, len: Index) -> Option<String> {
    let bounds: Vec<usize> = text
        .char_indices()
        .map(|(i, _)| i)
        .chain([text.len()])
        .filter(|&i| !(text[..i].ends_with('\r') && text[i..].starts_with('\n')))
        .collect();
    if bounds.len() < 2 {
        return None;
    }
    let start = at.index(bounds.len() - 1);
    let min_end = start + 1 + len.index(bounds.len() - 1 - start);
    (min_end..bounds.len())
        .map(|end| &text[bounds[start]..bounds[end]])
        .find(|s| occurrences(text, s, Replace::One).len() == 1)
        .map(str::to_owned)
}

fn lines_text(crlf: bool, lines: &[String], final_newline: bool) -> String {
    let eol = if crlf { "\r\n" } else { "\n" };
    let mut text = lines.join(eol);
    if final_newline {
        text.push_str(eol);
    }
    text
}

/// A file in one line-ending style, and a unique substring of it.
fn file_and_substring(crlf: Option<bool>) -> impl Strategy<Value = (String, String)> {
    (
        crlf.map_or_else(|| any::<bool>().boxed(), |c| Just(c).boxed()),
        prop::collection::vec("[ab \té{}]{0,6}", 1..10),
        any::<bool>(),
        any::<Index>(),
        any::<Index>(),
    )
        .prop_filter_map(
            "no unique substring",
            |(crlf, lines, final_newline, at, len)| {
                let text = lines_text(crlf, &lines, final_newline);
                let old = unique_substring(&text, at, len)?;
                Some((text, old))
            },
        )
}

/// What a quoted block gets wrong.
#[derive(Debug, Clone, Copy)]
struct Mistakes {
    reindent: bool,
    strip_trailing: bool,
    fold_look_alikes: bool,
    blank_runs: bool,
    cut_last_line: bool,
    insert_line: bool,
    /// 0: none, 1: read_file line numbers, 2: JSON escaping, 3: diff markers.
    encoding: u8,
}

fn mistakes() -> impl Strategy<Value = Mistakes> {
    (any::<[bool; 6]>(), 0u8..4).prop_map(|(b, encoding)| Mistakes {
        reindent: b[0],
        strip_trailing: b[1],
        fold_look_alikes: b[2],
        blank_runs: b[3],
        cut_last_line: b[4],
        insert_line: b[5],
        encoding,
    })
}

/// Line contents after the key; look-alikes and inner spacing only inside the line.
const PAYLOADS: [&str; 7] = [
    "= “v”;",
    "= \"v\";",
    "= ‘x’ – y;",
    "= it’s;",
    "= a\u{a0}z;",
    "= f(a, b);",
    "= \"a  b\";",
];

/// One line of a generated file.
#[derive(Debug, Clone)]
struct Line {
    depth: usize,
    blank_before: usize,
    payload: usize,
    trailing: bool,
}

/// A file of uniquely keyed lines with consistent nesting.
#[derive(Debug, Clone)]
struct Doc {
    unit: &'static str,
    crlf: bool,
    lines: Vec<Line>,
}

impl Doc {
    fn content(&self, i: usize) -> String {
        let line = &self.lines[i];
        format!(
            "{}k[{i}] {}{}",
            self.unit.repeat(line.depth),
            PAYLOADS[line.payload],
            if line.trailing { "  " } else { "" }
        )
    }

    fn text(&self) -> String {
        let mut lines = Vec::new();
        for (i, line) in self.lines.iter().enumerate() {
            lines.extend(std::iter::repeat_n(String::new(), line.blank_before));
            lines.push(self.content(i));
        }
        lines_text(self.crlf, &lines, true)
    }
}

fn doc() -> impl Strategy<Value = Doc> {
    (
        prop::sample::select(vec!["\t", "  ", "    "]),
        any::<bool>(),
        prop::collection::vec(
            (any::<Index>(), 0usize..3, 0..PAYLOADS.len(), any::<bool>()),
            2..12,
        ),
    )
        .prop_map(|(unit, crlf, raw)| {
            let mut depth = 0;
            let lines = raw
                .into_iter()
                .enumerate()
                .map(|(i, (d, blank_before, payload, trailing))| {
                    depth = if i == 0 {
                        d.index(2)
                    } else {
                        d.index(depth + 2)
                    };
                    Line {
                        depth,
                        blank_before: if i == 0 { 0 } else { blank_before },
                        payload,
                        trailing,
                    }
                })
                .collect();
            Doc { unit, crlf, lines }
        })
}

/// The block `from..to` of `doc` as a model would quote it, and a new_string changing line
/// `changed` of it; also the file lines new_string repeats.
fn quote(
    doc: &Doc,
    from: usize,
    to: usize,
    changed: usize,
    m: Mistakes,
) -> (String, String, Vec<String>) {
    let min_depth = (from..to).map(|i| doc.lines[i].depth).min().unwrap_or(0);
    let mut old_lines: Vec<String> = Vec::new();
    let mut new_lines: Vec<String> = Vec::new();
    let mut repeated = Vec::new();
    for i in from..to {
        let line = &doc.lines[i];
        if i > from {
            let blanks = if m.blank_runs {
                (line.blank_before + 1) % 2
            } else {
                line.blank_before
            };
            old_lines.extend(std::iter::repeat_n(String::new(), blanks));
            new_lines.extend(std::iter::repeat_n(String::new(), blanks));
        }
        let file_line = doc.content(i);
        let mut text = if m.reindent {
            format!(
                "{}{}",
                " ".repeat(3 * (line.depth - min_depth)),
                file_line.trim_start()
            )
        } else {
            file_line.clone()
        };
        if m.strip_trailing {
            text = text.trim_end().to_owned();
        }
        if m.fold_look_alikes {
            text = super::super::lookalike::fold_str(&text);
        }
        if m.cut_last_line && i + 1 == to {
            let key_end = text.find("] ").map_or(text.len(), |k| k + 3);
            text.truncate(key_end);
        }
        let changed_text = text.replacen("k[", "m[", 1);
        old_lines.push(text.clone());
        if i == from + changed {
            new_lines.push(if m.encoding == 3 {
                format!("\u{0}{changed_text}")
            } else {
                changed_text
            });
            if m.insert_line {
                new_lines.push(format!("{}inserted();", " ".repeat(3)));
            }
        } else {
            new_lines.push(text);
            repeated.push(file_line);
        }
    }
    let (old, new) = (old_lines.join("\n"), new_lines.join("\n"));
    let encode = |s: &str, numbers: bool| -> String {
        match m.encoding {
            1 if numbers => s
                .split('\n')
                .enumerate()
                .map(|(n, l)| format!("{:>4}\t{l}", n + 1))
                .collect::<Vec<_>>()
                .join("\n"),
            2 => {
                let json = serde_json::to_string(s).unwrap_or_default();
                json[1..json.len() - 1].to_owned()
            }
            3 => s
                .split('\n')
                .map(|l| match l.strip_prefix('\u{0}') {
                    Some(changed) => format!("+{changed}"),
                    None => format!(" {l}"),
                })
                .collect::<Vec<_>>()
                .join("\n"),
            _ => s.to_owned(),
        }
    };
    let old = encode(&old, true);
    let new = encode(&new, changed.is_multiple_of(2));
    (old, new, repeated)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    #[test]
    fn edit_then_inverse_edit_restores_the_text(
        (text, old) in file_and_substring(None),
        new in "[ab \n{}]{0,4}§[ab\n ]{0,4}",
    ) {
        let forward = apply_edit(&text, &old, &new, Replace::One);
        prop_assert!(forward.is_ok(), "forward: {forward:?}");
        let forward = forward.unwrap();
        prop_assert_eq!(forward.how.rung, Rung::Exact);
        let back = apply_edit(&forward.text, &new, &old, Replace::One);
        prop_assert!(back.is_ok(), "inverse: {back:?}");
        prop_assert_eq!(back.unwrap().text, text);
    }

    #[test]
    fn edit_then_inverse_edit_restores_the_text_when_line_endings_differ(
        (text, old) in file_and_substring(Some(true)),
        new in "[ab]{0,3}\n[ab \n]{0,4}§",
    ) {
        // The model sends `\n` where the CRLF file has `\r\n`, both ways.
        let old_lf = old.replace("\r\n", "\n");
        // A leading `\n` alone is found exactly (it takes the `\r` before it along).
        prop_assume!(old_lf.trim_start_matches('\n').contains('\n'));
        let forward = apply_edit(&text, &old_lf, &new, Replace::One);
        prop_assert!(forward.is_ok(), "forward: {forward:?}");
        let forward = forward.unwrap();
        prop_assert_eq!(forward.how.rung, Rung::LineEndings);
        let back = apply_edit(&forward.text, &new, &old_lf, Replace::One);
        prop_assert!(back.is_ok(), "inverse: {back:?}");
        prop_assert_eq!(back.unwrap().text, text);
    }

    #[test]
    fn replace_all_then_inverse_restores_the_text(
        (text, old) in file_and_substring(None),
        new in "§[ab]{0,3}",
    ) {
        let forward = apply_edit(&text, &old, &new, Replace::All).unwrap();
        let back = apply_edit(&forward.text, &new, &old, Replace::All).unwrap();
        prop_assert_eq!(back.text, text);
    }

    #[test]
    fn a_block_quoted_with_mistakes_lands_and_keeps_every_other_byte(
        doc in doc(),
        from in any::<Index>(),
        len in 1usize..4,
        changed in any::<Index>(),
        m in mistakes(),
    ) {
        let from = from.index(doc.lines.len());
        let to = (from + len).min(doc.lines.len());
        let changed = changed.index(to - from);
        let (old, new, repeated) = quote(&doc, from, to, changed, m);
        let text = doc.text();
        let edited = apply_edit(&text, &old, &new, Replace::One);
        prop_assert!(edited.is_ok(), "refused: {edited:?}\nold: {old:?}\nnew: {new:?}\ntext: {text:?}");
        let edited = edited.unwrap();
        outside_kept(&text, &edited)?;
        let out_lines: Vec<&str> = edited.text.lines().map(|l| l.trim_end_matches('\r')).collect();
        for line in &repeated {
            prop_assert!(out_lines.contains(&line.as_str()), "{line:?} lost: {:?}", edited.text);
        }
        prop_assert!(edited.text.contains("m["), "the change is missing: {:?}", edited.text);
    }

    #[test]
    fn no_rung_changes_bytes_outside_the_reported_span(
        lines in prop::collection::vec("[ \t]{0,3}[ab\"“”–\u{a0}\\\\+-]{0,4}[ \t]{0,2}", 1..9),
        crlf in any::<bool>(),
        at in any::<Index>(),
        len in any::<Index>(),
        noise in prop::collection::vec((any::<Index>(), "[ \n\"\\\\+-]"), 0..3),
        new in "[ab\n \"“\\\\+-]{0,8}",
        all in any::<bool>(),
    ) {
        let text = lines_text(crlf, &lines, true);
        let Some(mut old) = unique_substring(&text, at, len) else { return Ok(()) };
        for (pos, piece) in noise {
            let at = pos.index(old.len() + 1);
            if old.is_char_boundary(at) {
                old.insert_str(at, &piece);
            }
        }
        prop_assume!(!old.is_empty());
        let replace = if all { Replace::All } else { Replace::One };
        if let Ok(edited) = apply_edit(&text, &old, &new, replace) {
            outside_kept(&text, &edited)?;
        }
    }
}
