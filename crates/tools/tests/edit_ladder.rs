//! The edit ladder as a property, end to end through edit_file: for any file (LF or CRLF line
//! endings, with or without byte-order mark and final newline) and any unique exact substring,
//! an edit followed by the inverse edit gives back the original bytes.
//!
//! Substrings are taken from the text as the model sees it, where `\r\n` is one line break
//! (never split in two).
//!
//! new_string is written the way models write it (`\n` line breaks). Files with mixed line
//! endings are left out on purpose: when an edit removes the last `\n`-only ending of such a
//! file, the file has become CRLF and the inverse edit's `\n` is written as `\r\n`, which keeps
//! the file's line endings rather than the old bytes.

use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::json;

use crate::support::Env;

#[derive(Debug, Clone)]
struct Case {
    file: Vec<u8>,
    body_start: usize,
    old: String,
    new: String,
}

fn case() -> impl Strategy<Value = Case> {
    (
        any::<bool>(),
        any::<bool>(),
        prop::collection::vec("[ab \té]{0,5}", 1..7),
        any::<bool>(),
        any::<Index>(),
        any::<Index>(),
        "[ab \n]{0,4}",
        "[ab \n]{0,4}",
    )
        .prop_filter_map(
            "no unique substring there",
            |(bom, crlf, lines, final_newline, at, len, pre, post)| {
                let eol = if crlf { "\r\n" } else { "\n" };
                let mut body = lines.join(eol);
                if final_newline {
                    body.push_str(eol);
                }
                let old = unique_substring(&body, at, len)?;
                let prefix = if bom { "\u{feff}" } else { "" };
                let file = format!("{prefix}{body}").into_bytes();
                Some(Case {
                    file,
                    body_start: prefix.len(),
                    old,
                    new: format!("{pre}§{post}"),
                })
            },
        )
}

/// A substring of `body` starting at a character picked by `at`, at least as long as `len`
/// picks, grown until it occurs once (overlaps counted). It never splits a `\r\n`: that pair is
/// one line break in the text the model sees.
fn unique_substring(body: &str, at: Index, len: Index) -> Option<String> {
    let bounds: Vec<usize> = body
        .char_indices()
        .map(|(i, _)| i)
        .chain([body.len()])
        .filter(|&i| !(body[..i].ends_with('\r') && body[i..].starts_with('\n')))
        .collect();
    if bounds.len() < 2 {
        return None;
    }
    let start = at.index(bounds.len() - 1);
    let min_end = start + 1 + len.index(bounds.len() - 1 - start);
    (min_end..bounds.len())
        .map(|end| &body[bounds[start]..bounds[end]])
        .find(|s| occurrences(body, s) == 1)
        .map(str::to_owned)
}

fn occurrences(haystack: &str, needle: &str) -> usize {
    (0..haystack.len())
        .filter(|&i| haystack.is_char_boundary(i) && haystack[i..].starts_with(needle))
        .count()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn edit_then_inverse_edit_restores_the_bytes(case in case()) {
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        rt.block_on(async {
            let env = Env::new().unwrap();
            env.write("f.txt", &case.file).unwrap();
            env.read_tool("f.txt").await.unwrap();
            let forward = env.call("edit_file", json!({"file_path": "f.txt", "old_string": case.old, "new_string": case.new})).await.unwrap();
            prop_assert!(!forward.is_error, "forward edit refused: {}", forward.content);
            let edited = env.read("f.txt").unwrap();
            prop_assert_eq!(&edited[..case.body_start], &case.file[..case.body_start], "byte-order mark kept");
            let back = env.call("edit_file", json!({"file_path": "f.txt", "old_string": case.new, "new_string": case.old})).await.unwrap();
            prop_assert!(!back.is_error, "inverse edit refused: {}", back.content);
            prop_assert_eq!(env.read("f.txt").unwrap(), case.file);
            Ok(())
        })?;
    }
}
