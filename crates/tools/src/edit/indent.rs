//! Re-indenting new_string when old_string matched only with indentation ignored: the model's
//! indentation levels are mapped onto the file's, so a tab-indented file stays tab-indented and
//! a block the model wrote flush left lands at the file's depth.

use std::collections::HashMap;

/// Columns a tab counts for when measuring the model's indentation.
const TAB_COLUMNS: usize = 4;

/// `new` re-indented. `old_lines` are the model's old_string lines and `file_lines` the file
/// lines they matched, pair by pair; `file_unit` is one indentation level of the file.
pub(crate) fn reindent(
    new: &str,
    old_lines: &[&str],
    file_lines: &[&str],
    file_unit: &str,
) -> String {
    let pairs: Vec<(&str, &str)> = old_lines
        .iter()
        .zip(file_lines)
        .filter(|(old, _)| !old.trim().is_empty())
        .map(|(old, file)| (indentation(old), indentation(file)))
        .collect();
    let Some(&(base_old, base_file)) = pairs.iter().min_by_key(|(old, _)| width(old)) else {
        return new.to_owned();
    };
    let direct = direct_map(&pairs);
    let new_lines: Vec<&str> = new.split('\n').collect();
    let old_unit = model_unit(
        pairs
            .iter()
            .map(|(old, _)| *old)
            .chain(new_lines.iter().map(|l| indentation(l))),
        width(base_old),
    );
    let file_unit = file_unit_from_pairs(&pairs, base_file).unwrap_or_else(|| file_unit.to_owned());

    let new_count =
        new_lines.len() - usize::from(new_lines.len() > 1 && new_lines.last() == Some(&""));
    let positional = direct.is_none() && new_count == old_lines.len();
    let mut out = String::with_capacity(new.len() + new.len() / 8);
    for (i, line) in new_lines.iter().enumerate() {
        if i > 0 {
            out.push('\n');
        }
        let (line, cr) = match line.strip_suffix('\r') {
            Some(line) => (line, "\r"),
            None => (*line, ""),
        };
        if line.trim().is_empty() {
            out.push_str(cr);
            continue;
        }
        let indent = indentation(line);
        // Without one consistent mapping, a line is placed relative to the file line that the
        // old line in the same position matched, when old and new line up one to one.
        let anchor = match (positional, old_lines.get(i), file_lines.get(i)) {
            (true, Some(old), Some(file)) if !old.trim().is_empty() => {
                (indentation(old), indentation(file))
            }
            _ => (base_old, base_file),
        };
        match direct.as_ref().and_then(|map| map.get(indent)) {
            Some(mapped) => out.push_str(mapped),
            None => {
                let delta = width(indent) as isize - width(anchor.0) as isize;
                let levels = (delta as f64 / old_unit as f64).round() as isize;
                push_levels(&mut out, anchor.1, &file_unit, levels);
            }
        }
        out.push_str(&line[indent.len()..]);
        out.push_str(cr);
    }
    out
}

/// One indentation level of a file: a tab if most indented lines start with one, else the
/// most common step between the indentation of neighbouring lines (4 spaces when unclear).
pub(crate) fn file_indent_unit(lines: impl Iterator<Item = impl AsRef<str>>) -> String {
    let mut tabs = 0usize;
    let mut spaces = 0usize;
    let mut steps: HashMap<usize, usize> = HashMap::new();
    let mut previous = 0usize;
    for line in lines {
        let line = line.as_ref();
        if line.trim().is_empty() {
            continue;
        }
        let indent = indentation(line);
        if indent.starts_with('\t') {
            tabs += 1;
        } else if !indent.is_empty() {
            spaces += 1;
            let w = indent.len();
            if w > previous {
                *steps.entry(w - previous).or_default() += 1;
            }
        }
        previous = if indent.starts_with('\t') {
            previous
        } else {
            indent.len()
        };
    }
    if tabs > spaces {
        return "\t".to_owned();
    }
    let step = steps
        .into_iter()
        .max_by_key(|&(step, count)| (count, std::cmp::Reverse(step)))
        .map_or(4, |(s, _)| s);
    " ".repeat(step.clamp(1, 8))
}

fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn width(indent: &str) -> usize {
    indent
        .chars()
        .map(|c| if c == '\t' { TAB_COLUMNS } else { 1 })
        .sum()
}

/// The model's indentation string to the file's, when the matched pairs agree on one.
fn direct_map<'a>(pairs: &[(&'a str, &'a str)]) -> Option<HashMap<&'a str, &'a str>> {
    let mut map = HashMap::new();
    for &(old, file) in pairs {
        if *map.entry(old).or_insert(file) != file {
            return None;
        }
    }
    Some(map)
}

/// The model's indentation step: the greatest common divisor of its depths past the base.
fn model_unit<'a>(indents: impl Iterator<Item = &'a str>, base_width: usize) -> usize {
    let unit = indents
        .map(|i| width(i).abs_diff(base_width))
        .filter(|&d| d > 0)
        .fold(0, gcd);
    if unit == 0 { TAB_COLUMNS } else { unit }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// The file's step as seen in the matched lines themselves, when they show one.
fn file_unit_from_pairs(pairs: &[(&str, &str)], base_file: &str) -> Option<String> {
    let extras = || {
        pairs
            .iter()
            .filter_map(|&(_, file)| file.strip_prefix(base_file))
            .filter(|e| !e.is_empty())
    };
    if extras().any(|extra| extra.starts_with('\t')) {
        return Some("\t".to_owned());
    }
    let step = extras()
        .filter(|e| e.chars().all(|c| c == ' '))
        .map(str::len)
        .fold(0, gcd);
    (step > 0).then(|| " ".repeat(step))
}

/// Appends `base` moved by `levels` steps of `unit` (removing steps when negative).
fn push_levels(out: &mut String, base: &str, unit: &str, levels: isize) {
    if levels >= 0 {
        out.push_str(base);
        for _ in 0..levels {
            out.push_str(unit);
        }
        return;
    }
    let mut kept = base;
    for _ in 0..levels.unsigned_abs() {
        kept = kept
            .strip_suffix(unit)
            .unwrap_or_else(|| &kept[..kept.len().saturating_sub(unit.len())]);
    }
    out.push_str(kept);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spaces_from_the_model_become_tabs_in_a_tab_file() {
        let old = ["    if x {", "        y();", "    }"];
        let file = ["\tif x {", "\t\ty();", "\t}"];
        let new = "    if x {\n        y();\n        z();\n    }";
        assert_eq!(
            reindent(new, &old, &file, "\t"),
            "\tif x {\n\t\ty();\n\t\tz();\n\t}"
        );
    }

    #[test]
    fn a_flush_left_block_lands_at_the_file_depth_with_deeper_lines_mapped() {
        let old = ["foo();", "bar();"];
        let file = ["        foo();", "        bar();"];
        let new = "foo();\nif c {\n  baz();\n}\nbar();";
        let out = reindent(new, &old, &file, "    ");
        assert_eq!(
            out,
            "        foo();\n        if c {\n            baz();\n        }\n        bar();"
        );
    }

    #[test]
    fn shallower_new_lines_lose_levels() {
        let old = ["    a", "        b"];
        let file = ["\t\ta", "\t\t\tb"];
        let new = "a\n    b";
        assert_eq!(reindent(new, &old, &file, "\t"), "\ta\n\t\tb");
    }

    #[test]
    fn blank_lines_stay_blank_and_crlf_is_kept() {
        let old = ["x", "y"];
        let file = ["  x", "  y"];
        assert_eq!(
            reindent("x\r\n   \r\ny", &old, &file, "  "),
            "  x\r\n\r\n  y"
        );
    }

    #[test]
    fn detects_file_units() {
        assert_eq!(file_indent_unit(["fn a() {", "\tx", "\t\ty"].iter()), "\t");
        assert_eq!(
            file_indent_unit(["a:", "  b:", "    c:", "  d:"].iter()),
            "  "
        );
        assert_eq!(file_indent_unit(["a", "b"].iter()), "    ");
    }
}
