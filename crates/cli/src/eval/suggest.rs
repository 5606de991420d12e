//! "Did you mean" hints for names a person typed (the distance is core's, shared).

/// `; did you mean "X"?` for the known name closest to `typed`, when one is close enough;
/// otherwise `; known: A, B, ...`.
pub(crate) fn did_you_mean<'a>(
    typed: &str,
    known: impl Iterator<Item = &'a str> + Clone,
) -> String {
    match rein_core::suggest::closest(typed, known.clone()) {
        Some(name) => format!("; did you mean \"{name}\"?"),
        None => format!("; known: {}", known.collect::<Vec<_>>().join(", ")),
    }
}
