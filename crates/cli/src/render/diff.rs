//! An edit's unified diff, from its display payload, as a person reads it: each line with its
//! number (in the new file; in the old one for a removed line), added and removed lines in
//! colour, hunks set apart by `⋮`. The `---`/`+++` header is dropped: the call line names the
//! file.

use super::{Style, neutralize};

/// A line of the diff, ready to lay out.
enum Row<'a> {
    /// A line of the file: `+` added, `-` removed, ` ` context.
    Line {
        number: u64,
        sign: char,
        text: &'a str,
    },
    /// Lines skipped between two hunks.
    Gap,
    /// A marker of the diff itself (`\ No newline at end of file`, a cut).
    Note(&'a str),
}

/// At most `max_lines` lines of `diff` (hunk gaps not counted), then how many were left out.
pub(super) fn diff_body(s: Style, diff: &str, max_lines: usize) -> Vec<String> {
    let rows = rows(diff);
    let mut shown = Vec::new();
    let mut counted = 0;
    let mut left_out = 0;
    for row in &rows {
        let is_line = !matches!(row, Row::Gap);
        if counted >= max_lines {
            left_out += usize::from(is_line);
            continue;
        }
        counted += usize::from(is_line);
        shown.push(row);
    }
    // A gap with nothing shown after it says nothing.
    if matches!(shown.last(), Some(Row::Gap)) {
        shown.pop();
    }
    let width = shown
        .iter()
        .filter_map(|row| match row {
            Row::Line { number, .. } => Some(number.to_string().len()),
            Row::Gap | Row::Note(_) => None,
        })
        .max()
        .unwrap_or(1);
    let mut out: Vec<String> = shown.iter().map(|row| lay_out(s, row, width)).collect();
    if left_out > 0 {
        let noun = if left_out == 1 { "line" } else { "lines" };
        out.push(s.dim(&format!("… {left_out} more {noun}")));
    }
    out
}

/// Every line of `diff`, laid out as under an edit (for `/diff`).
pub(crate) fn full_diff(s: Style, diff: &str) -> Vec<String> {
    diff_body(s, diff, usize::MAX)
}

fn lay_out(s: Style, row: &Row<'_>, width: usize) -> String {
    match *row {
        Row::Line { number, sign, text } => {
            let number = s.dim(&format!("{number:>width$}"));
            let text = neutralize(text);
            match sign {
                '+' => format!("{number} {}", s.added(&format!("+{text}"))),
                '-' => format!("{number} {}", s.removed(&format!("-{text}"))),
                // No trailing blanks for an empty context line.
                _ if text.is_empty() => number,
                _ => format!("{number}  {}", s.dim(&text)),
            }
        }
        Row::Gap => s.dim(&format!("{:>width$}", "⋮")),
        Row::Note(note) => format!("{:width$} {}", "", s.dim(&neutralize(note))),
    }
}

/// The diff's lines, numbered from its hunk headers.
fn rows(diff: &str) -> Vec<Row<'_>> {
    let mut rows = Vec::new();
    let (mut old, mut new) = (0u64, 0u64);
    let mut in_hunk = false;
    for line in diff.lines() {
        if let Some((old_start, new_start)) = hunk_start(line) {
            if in_hunk {
                rows.push(Row::Gap);
            }
            in_hunk = true;
            (old, new) = (old_start, new_start);
            continue;
        }
        if !in_hunk && (line.starts_with("--- ") || line.starts_with("+++ ")) {
            continue;
        }
        let mut chars = line.chars();
        let sign = chars.next();
        let text = chars.as_str();
        match sign {
            Some('+') if in_hunk => {
                rows.push(Row::Line {
                    number: new,
                    sign: '+',
                    text,
                });
                new += 1;
            }
            Some('-') if in_hunk => {
                rows.push(Row::Line {
                    number: old,
                    sign: '-',
                    text,
                });
                old += 1;
            }
            Some(' ') if in_hunk => {
                rows.push(Row::Line {
                    number: new,
                    sign: ' ',
                    text,
                });
                old += 1;
                new += 1;
            }
            _ => rows.push(Row::Note(line)),
        }
    }
    rows
}

/// The first old and new line numbers of a hunk header `@@ -a,b +c,d @@`.
fn hunk_start(line: &str) -> Option<(u64, u64)> {
    let ranges = line.strip_prefix("@@ -")?;
    let (old, rest) = ranges.split_once(" +")?;
    let (new, _) = rest.split_once(" @@")?;
    let first = |range: &str| range.split(',').next()?.parse::<u64>().ok();
    Some((first(old)?, first(new)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hunk_headers_give_the_line_numbers() {
        assert_eq!(hunk_start("@@ -12,4 +12,5 @@"), Some((12, 12)));
        assert_eq!(hunk_start("@@ -0,0 +1 @@"), Some((0, 1)));
        assert_eq!(hunk_start("@@ nonsense"), None);
        assert_eq!(hunk_start("-@@ -1 +1 @@"), None);
    }

    #[test]
    fn lines_are_numbered_and_capped() {
        let diff =
            "--- a.txt\n+++ a.txt\n@@ -1,2 +1,2 @@\n-old\n+new\n same\n@@ -40 +40,2 @@\n x\n+y\n";
        let body = diff_body(Style::plain(), diff, 4);
        assert_eq!(
            body,
            [
                " 1 -old",
                " 1 +new",
                " 2  same",
                " ⋮",
                "40  x",
                "… 1 more line"
            ]
        );
    }

    #[test]
    fn a_removed_line_that_looks_like_a_header_is_still_a_line() {
        let diff = "--- a\n+++ a\n@@ -1 +0,0 @@\n--- not a header\n";
        assert_eq!(diff_body(Style::plain(), diff, 10), ["1 --- not a header"]);
    }
}
