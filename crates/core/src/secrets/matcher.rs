//! Finding every form of every secret in a text: one Aho-Corasick automaton over the literal
//! forms ([`super::forms`]), and a scan for the value written with a separator between its
//! characters.

use aho_corasick::{AhoCorasick, AhoCorasickKind, MatchKind};

use super::forms::literal_forms;

/// The longest separator looked for between a secret's characters: `'s', 'k'` (a Python
/// list printed) has four.
const MAX_SEPARATOR_BYTES: usize = 4;

/// One form of a secret found: its byte range and the index of its secret's label.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Found {
    pub(crate) start: usize,
    pub(crate) end: usize,
    pub(crate) label: usize,
}

/// The forms of a set of secrets, ready to search.
#[derive(Clone)]
pub(crate) struct Matcher {
    automaton: AhoCorasick,
    /// The label of each pattern of the automaton.
    pattern_labels: Vec<usize>,
    /// The literal forms, sorted: what a text's end may be the start of (streaming).
    sorted_forms: Vec<Vec<u8>>,
    /// ASCII values searched for with separators, with their labels.
    spaced: Vec<(Vec<u8>, usize)>,
    /// The longest match any form can make, in bytes.
    longest: usize,
}

impl Matcher {
    /// The matcher of `values` (each with its label's index); `None` when there are none.
    pub(crate) fn new(values: &[(usize, &str)]) -> Option<Self> {
        let mut forms: Vec<(String, usize)> = Vec::new();
        let mut spaced = Vec::new();
        for &(label, value) in values {
            for form in literal_forms(value) {
                if !forms.iter().any(|(f, _)| *f == form) {
                    forms.push((form, label));
                }
            }
            if value.is_ascii() && value.len() >= 2 {
                spaced.push((value.as_bytes().to_vec(), label));
            }
        }
        if forms.is_empty() {
            return None;
        }
        // A contiguous NFA builds in a third of the time of the DFA the builder would pick
        // for so few patterns (0.35 M instructions at every start), and masking a round's
        // output with it is no slower to notice: its prefilter does most of the search.
        let automaton = AhoCorasick::builder()
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .match_kind(MatchKind::LeftmostLongest)
            .build(forms.iter().map(|(form, _)| form.as_bytes()))
            .ok()?;
        let longest_spaced = spaced
            .iter()
            .map(|(value, _)| value.len() + (value.len() - 1) * MAX_SEPARATOR_BYTES)
            .max()
            .unwrap_or(0);
        let longest_form = forms.iter().map(|(form, _)| form.len()).max().unwrap_or(0);
        let mut sorted_forms: Vec<Vec<u8>> = forms
            .iter()
            .map(|(form, _)| form.as_bytes().to_vec())
            .collect();
        sorted_forms.sort();
        Some(Matcher {
            automaton,
            pattern_labels: forms.iter().map(|(_, label)| *label).collect(),
            sorted_forms,
            spaced,
            longest: longest_form.max(longest_spaced),
        })
    }

    /// The longest match any form can make, in bytes.
    pub(crate) fn longest(&self) -> usize {
        self.longest
    }

    /// Every form found in `text`, in order and without overlaps (at one place, the longest
    /// wins).
    pub(crate) fn find(&self, text: &[u8]) -> Vec<Found> {
        let mut found: Vec<Found> = self
            .automaton
            .find_iter(text)
            .map(|m| Found {
                start: m.start(),
                end: m.end(),
                label: self.pattern_labels[m.pattern().as_usize()],
            })
            .collect();
        let literal = found.len();
        for (value, label) in &self.spaced {
            find_spaced(text, value, *label, &mut found);
        }
        if found.len() == literal {
            return found;
        }
        found.sort_by_key(|f| (f.start, std::cmp::Reverse(f.end)));
        let mut kept: Vec<Found> = Vec::with_capacity(found.len());
        for f in found {
            if kept.last().is_none_or(|last| f.start >= last.end) {
                kept.push(f);
            }
        }
        kept
    }

    /// Whether a text ending in `tail` may go on into a form that starts where `tail` does:
    /// a literal form longer than `tail` starts with it, or `tail` begins a secret written
    /// with separators.
    pub(crate) fn may_continue(&self, tail: &[u8]) -> bool {
        let at = self
            .sorted_forms
            .partition_point(|form| form.as_slice() < tail);
        let literal = self.sorted_forms[at..]
            .iter()
            .take_while(|form| form.starts_with(tail))
            .any(|form| form.len() > tail.len());
        literal
            || self
                .spaced
                .iter()
                .any(|(value, _)| begins_spaced(tail, value))
    }
}

/// Whether `tail` is the start of `value` written with a separator (one that is not yet
/// complete).
fn begins_spaced(tail: &[u8], value: &[u8]) -> bool {
    if tail.first() != value.first() {
        return false;
    }
    let is_separator = |b: &u8| !b.is_ascii_alphanumeric() && b.is_ascii();
    (1..=MAX_SEPARATOR_BYTES).any(|sep_len| {
        let step = sep_len + 1;
        let whole = (value.len() - 1) * step + 1;
        if tail.len() >= whole {
            return false;
        }
        let separator = &tail[1..tail.len().min(step)];
        if !separator.iter().all(is_separator) {
            return false;
        }
        tail.iter().enumerate().skip(1).all(|(i, &b)| {
            let (index, offset) = (i / step, i % step);
            if offset == 0 {
                value.get(index) == Some(&b)
            } else {
                separator.get(offset - 1).is_none_or(|&s| s == b)
            }
        })
    })
}

/// Adds the places where `value` is written with one separator (1 to 4 bytes, the same
/// throughout, none of them a letter or digit) between its characters.
fn find_spaced(text: &[u8], value: &[u8], label: usize, found: &mut Vec<Found>) {
    let (Some(&first), Some(&second)) = (value.first(), value.get(1)) else {
        return;
    };
    let mut from = 0;
    while let Some(offset) = memchr::memchr(first, &text[from..]) {
        let start = from + offset;
        from = start + 1;
        for sep_len in 1..=MAX_SEPARATOR_BYTES {
            let step = sep_len + 1;
            let end = start + (value.len() - 1) * step + 1;
            if end > text.len() || text[start + step] != second {
                continue;
            }
            let separator = &text[start + 1..start + step];
            if separator
                .iter()
                .any(|b| b.is_ascii_alphanumeric() || !b.is_ascii())
            {
                continue;
            }
            let matches = value.iter().enumerate().skip(1).all(|(i, &c)| {
                let at = start + i * step;
                text[at] == c && &text[at - sep_len..at] == separator
            });
            if matches {
                found.push(Found { start, end, label });
                from = end;
                break;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn labels(matcher: &Matcher, text: &str) -> Vec<(usize, usize)> {
        matcher
            .find(text.as_bytes())
            .iter()
            .map(|f| (f.start, f.end))
            .collect()
    }

    #[test]
    fn separated_characters_are_found_with_any_one_separator() {
        let matcher = Matcher::new(&[(0, "sk-abc123")]).unwrap();
        for text in [
            "s k - a b c 1 2 3",
            "s,k,-,a,b,c,1,2,3",
            "['s', 'k', '-', 'a', 'b', 'c', '1', '2', '3']",
            "s\nk\n-\na\nb\nc\n1\n2\n3",
        ] {
            let found = labels(&matcher, text);
            assert_eq!(found.len(), 1, "{text}: {found:?}");
        }
        assert!(labels(&matcher, "s k - a b c 1 2 4").is_empty());
        assert!(
            labels(&matcher, "sXkX-XaXbXcX1X2X3").is_empty(),
            "letters are not separators"
        );
    }

    #[test]
    fn a_text_end_that_may_begin_a_form_is_recognised() {
        let matcher = Matcher::new(&[(0, "sk-abc123")]).unwrap();
        assert!(matcher.may_continue(b"sk-a"));
        assert!(!matcher.may_continue(b"sk-abc123"), "already whole");
        assert!(!matcher.may_continue(b"sk-x"));
        assert!(matcher.may_continue(b"321"), "reversed");
        assert!(matcher.may_continue(b"s, k, -"), "separated");
        assert!(!matcher.may_continue(b"s, k, x"));
        assert!(!matcher.may_continue(b"hello\n"));
    }
}
