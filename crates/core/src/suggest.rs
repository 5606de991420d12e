//! "Did you mean" hints: the one edit distance rein uses wherever a person mistypes a name
//! (config keys, tool names in rules, eval suite fields, slash commands).

/// Levenshtein distance between two strings, counted in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

/// How many edits a name may be away and still be suggested: two, or a third of a long
/// name (a longer name tolerates more typos before the hint stops helping).
pub fn tolerance(typed: &str) -> usize {
    2.max(typed.chars().count() / 3)
}

/// The known name closest to `typed` within [`tolerance`], ignoring case differences
/// first (`bash` for `BASH`); ties go to the earlier name.
pub fn closest<'k>(typed: &str, known: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    let lower = typed.to_lowercase();
    known
        .into_iter()
        .enumerate()
        .map(|(at, name)| {
            let exact = edit_distance(typed, name);
            let folded = edit_distance(&lower, &name.to_lowercase());
            ((exact.min(folded), exact, at), name)
        })
        .min_by_key(|(rank, _)| *rank)
        .filter(|((distance, _, _), _)| *distance <= tolerance(typed))
        .map(|(_, name)| name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("modle", "model"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("retries", "retries"), 0);
        assert_eq!(edit_distance("Bsh", "Bash"), 1);
    }

    #[test]
    fn closest_picks_the_nearest_name_within_reach() {
        let known = ["Bash", "Read", "bash", "read_file"];
        assert_eq!(closest("Bsh", known), Some("Bash"));
        assert_eq!(closest("Reed", known), Some("Read"));
        assert_eq!(closest("bsh", known), Some("bash"));
        assert_eq!(closest("read_fil", known), Some("read_file"));
        assert_eq!(closest("completely_else", known), None);
    }
}
