//! Indentation: the nesting check of rule 4 (a match may shift indentation as a whole or
//! change its unit, never move a line into or out of a block), and re-indenting the lines a
//! model changed: its indentation levels are mapped onto the file's, so a tab-indented file
//! stays tab-indented and a block written flush left lands at the file's depth.

use std::collections::HashMap;

/// Columns a tab counts for when measuring the model's indentation.
const TAB_COLUMNS: usize = 4;
/// Tab widths a file may have been written with; nesting is the same under either.
const FILE_TAB_COLUMNS: [usize; 2] = [4, 8];

/// Whether the quoted lines nest as the file lines they matched do: `pairs` holds the
/// indentation of each non-blank model line and of its file line. Depths may shift and steps
/// may differ; the order of depths may not (a line after a block stays after it).
pub(crate) fn same_nesting(pairs: &[(&str, &str)]) -> bool {
    FILE_TAB_COLUMNS.iter().any(|&tab| {
        let mut widths: Vec<(usize, usize)> = pairs
            .iter()
            .map(|(model, file)| (columns(model, tab), columns(file, tab)))
            .collect();
        widths.sort_unstable();
        widths
            .windows(2)
            .all(|w| (w[0].0 == w[1].0) == (w[0].1 == w[1].1) && w[0].1 <= w[1].1)
    })
}

/// Re-indents the lines of new_string the model changed, at one place.
#[derive(Debug)]
pub(crate) struct Reindent<'a> {
    base_model: &'a str,
    base_file: &'a str,
    direct: Option<HashMap<&'a str, &'a str>>,
    model_unit: usize,
    file_unit: String,
}

impl<'a> Reindent<'a> {
    /// `pairs` are the indentation of each matched non-blank model line and of its file line;
    /// `new_lines` the lines of new_string; `file_unit` one indentation level of the file.
    pub(crate) fn new(
        pairs: &[(&'a str, &'a str)],
        new_lines: &[&str],
        file_unit: &str,
    ) -> Option<Reindent<'a>> {
        let &(base_model, base_file) = pairs.iter().min_by_key(|(model, _)| width(model))?;
        let model_unit = model_unit(
            pairs
                .iter()
                .map(|(model, _)| *model)
                .chain(new_lines.iter().map(|l| indentation(l))),
            width(base_model),
        );
        Some(Reindent {
            base_model,
            base_file,
            direct: direct_map(pairs),
            model_unit,
            file_unit: file_unit_from_pairs(pairs, base_file)
                .unwrap_or_else(|| file_unit.to_owned()),
        })
    }

    /// One changed line (without its line ending) at the file's depth; blank lines become empty.
    pub(crate) fn line(&self, line: &str) -> String {
        if line.trim().is_empty() {
            return String::new();
        }
        let indent = indentation(line);
        let mut out = String::with_capacity(line.len() + 8);
        match self.direct.as_ref().and_then(|map| map.get(indent)) {
            Some(mapped) => out.push_str(mapped),
            None => {
                let delta = width(indent) as isize - width(self.base_model) as isize;
                let levels = (delta as f64 / self.model_unit as f64).round() as isize;
                push_levels(&mut out, self.base_file, &self.file_unit, levels);
            }
        }
        out.push_str(&line[indent.len()..]);
        out
    }
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

/// The leading spaces and tabs of a line.
pub(crate) fn indentation(line: &str) -> &str {
    &line[..line.len() - line.trim_start_matches([' ', '\t']).len()]
}

fn width(indent: &str) -> usize {
    columns(indent, TAB_COLUMNS)
}

fn columns(indent: &str, tab: usize) -> usize {
    indent
        .chars()
        .map(|c| if c == '\t' { tab } else { 1 })
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

    /// Every line of `new` re-indented, as if each were changed.
    fn reindent(new: &str, old: &[&str], file: &[&str], unit: &str) -> String {
        let pairs: Vec<(&str, &str)> = old
            .iter()
            .zip(file)
            .filter(|(o, _)| !o.trim().is_empty())
            .map(|(o, f)| (indentation(o), indentation(f)))
            .collect();
        let new_lines: Vec<&str> = new.split('\n').collect();
        let reindent = Reindent::new(&pairs, &new_lines, unit).unwrap();
        let lines: Vec<String> = new_lines.iter().map(|l| reindent.line(l)).collect();
        lines.join("\n")
    }

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
    fn blank_lines_become_empty() {
        let old = ["x", "y"];
        let file = ["  x", "  y"];
        assert_eq!(reindent("x\n   \ny", &old, &file, "  "), "  x\n\n  y");
    }

    #[test]
    fn nesting_may_shift_and_change_unit_but_not_order() {
        // Two-space model, tab file, shifted by one level.
        assert!(same_nesting(&[("", "\t"), ("  ", "\t\t"), ("", "\t")]));
        // A line after the block quoted as inside it.
        assert!(!same_nesting(&[
            ("", "    "),
            ("    ", "        "),
            ("    ", "    ")
        ]));
        // A line inside the block quoted as after it.
        assert!(!same_nesting(&[("", ""), ("  ", "    "), ("", "    ")]));
        // Deeper in the model, shallower in the file.
        assert!(!same_nesting(&[("", "    "), ("  ", "")]));
        // GNU style: a tab is eight columns next to two-space steps.
        assert!(same_nesting(&[
            ("", "      "),
            ("  ", "\t"),
            ("    ", "\t  ")
        ]));
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
