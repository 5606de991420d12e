//! Finding where a near miss was aimed, to show the model the real text: the window of file
//! lines (as many as old_string has) that shares the most whole lines and words with it. Linear
//! in the file; it only points, it never decides a match.

use std::collections::HashSet;

use super::lines::{LineSpan, line_spans, line_text, model_lines, split_trailing_newline};

/// Lines shown around the closest region at most.
const CLOSEST_MAX_LINES: usize = 12;
/// Score of a file line equal to a line of old_string (ignoring surrounding whitespace), and
/// again per word in it.
const WHOLE_LINE_SCORE: usize = 2;
/// Words counted per line at most, so one long line cannot win alone.
const WORDS_PER_LINE_MAX: usize = 6;

/// The part of the file old_string most resembles.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Region {
    /// 1-based number of the first line shown.
    pub first_line: usize,
    /// The lines shown.
    pub lines: Vec<String>,
}

/// The region of `text` most like `old`, or `None` when nothing resembles it.
pub(crate) fn closest_region(text: &str, old: &str) -> Option<Region> {
    let (old_body, _) = split_trailing_newline(old);
    let old_lines = model_lines(old_body);
    let whole: HashSet<&str> = old_lines
        .iter()
        .map(|l| l.trim())
        .filter(|l| !l.is_empty())
        .collect();
    let words: HashSet<&str> = old_lines.iter().flat_map(|l| words(l)).collect();
    let spans = line_spans(text);
    if spans.is_empty() {
        return None;
    }
    let scores: Vec<usize> = spans
        .iter()
        .map(|&span| score(line_text(text, span), &whole, &words))
        .collect();
    let k = old_lines.len().clamp(1, spans.len());
    let mut sum: usize = scores[..k].iter().sum();
    let (mut best, mut best_start) = (sum, 0);
    for start in 1..=spans.len() - k {
        sum = sum + scores[start + k - 1] - scores[start - 1];
        if sum > best {
            (best, best_start) = (sum, start);
        }
    }
    if best == 0 {
        return None;
    }
    Some(region(text, &spans, best_start, k))
}

fn score(line: &str, whole: &HashSet<&str>, words_wanted: &HashSet<&str>) -> usize {
    let trimmed = line.trim();
    if trimmed.is_empty() {
        return 0;
    }
    if whole.contains(trimmed) {
        // A bare `}` says little; a long equal line says a lot.
        return WHOLE_LINE_SCORE + WHOLE_LINE_SCORE * words(line).count();
    }
    words(line)
        .filter(|w| words_wanted.contains(w))
        .take(WORDS_PER_LINE_MAX)
        .count()
}

/// Identifier-like words and numbers.
fn words(line: &str) -> impl Iterator<Item = &str> {
    line.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The window with one line of context on each side, capped.
fn region(text: &str, spans: &[LineSpan], start: usize, k: usize) -> Region {
    let from = start.saturating_sub(1);
    let to = (start + k + 1)
        .min(spans.len())
        .min(from + CLOSEST_MAX_LINES);
    Region {
        first_line: from + 1,
        lines: spans[from..to]
            .iter()
            .map(|&s| line_text(text, s).to_owned())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_at_the_near_miss() {
        let text = "fn main() {\n    let x = 1;\n}\n\nfn helper(a: u32) -> u32 {\n    a + 1\n}\n";
        let region = closest_region(text, "fn helper(a: u64) -> u32 {\n    a + 2\n}").unwrap();
        assert_eq!(region.first_line, 4);
        assert!(region.lines.iter().any(|l| l.contains("fn helper")));
    }

    #[test]
    fn nothing_alike_gives_none() {
        assert_eq!(closest_region("alpha\nbeta\n", "zzz qqq"), None);
    }
}
