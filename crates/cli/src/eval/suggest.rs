//! "Did you mean" hints for names a person typed.

/// `; did you mean "X"?` for the known name closest to `typed`, when one is close enough;
/// otherwise `; known: A, B, ...`.
pub(crate) fn did_you_mean<'a>(
    typed: &str,
    known: impl Iterator<Item = &'a str> + Clone,
) -> String {
    let closest = known
        .clone()
        .map(|name| (edit_distance(typed, name), name))
        .min();
    match closest {
        Some((distance, name)) if distance <= 2.max(typed.chars().count() / 3) => {
            format!("; did you mean \"{name}\"?")
        }
        _ => format!("; known: {}", known.collect::<Vec<_>>().join(", ")),
    }
}

/// Levenshtein distance.
fn edit_distance(a: &str, b: &str) -> usize {
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
