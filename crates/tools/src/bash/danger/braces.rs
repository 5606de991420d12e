//! Brace expansion (`{a,b}`), the first expansion bash makes, on a word as written.

/// Most words one brace expansion may become; past it the word is left as written.
const MAX_BRACE_WORDS: usize = 64;

/// The words bash's brace expansion makes of the raw word `raw` (`/{bin,usr}` → `/bin`,
/// `/usr`), or `None` when it has no unquoted `{a,b}` (or would make too many words).
/// Sequences such as `{1..3}` are not expanded.
pub(crate) fn expand_braces(raw: &str) -> Option<Vec<String>> {
    if !raw.contains('{') || !raw.contains(',') || is_assignment(raw) {
        return None;
    }
    let mut words = vec![raw.to_owned()];
    let mut changed = false;
    loop {
        let mut next = Vec::new();
        let mut expanded_any = false;
        for word in &words {
            match split_first_brace(word) {
                Some((prefix, alternatives, suffix)) => {
                    expanded_any = true;
                    next.extend(alternatives.iter().map(|a| format!("{prefix}{a}{suffix}")));
                }
                None => next.push(word.clone()),
            }
            if next.len() > MAX_BRACE_WORDS {
                return None;
            }
        }
        if !expanded_any {
            return changed.then_some(words);
        }
        changed = true;
        words = next;
    }
}

/// `NAME=...`: bash does not brace-expand assignments.
fn is_assignment(raw: &str) -> bool {
    raw.split_once('=').is_some_and(|(name, _)| {
        name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

/// The first unquoted `{a,b...}` of a raw word: what comes before, the alternatives and
/// what comes after.
fn split_first_brace(raw: &str) -> Option<(&str, Vec<&str>, &str)> {
    let bytes = raw.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'\'' => i = close_quote(bytes, i, b'\''),
            b'"' => i = close_quote(bytes, i, b'"'),
            // `${...}` is a parameter, not a brace expansion.
            b'$' if bytes.get(i + 1) == Some(&b'{') => {
                i = matching_brace(bytes, i + 1).map_or(bytes.len(), |e| e + 1);
            }
            b'{' => {
                if let Some(end) = matching_brace(bytes, i) {
                    let commas = top_level_commas(bytes, i + 1, end);
                    if !commas.is_empty() {
                        let mut alternatives = Vec::new();
                        let mut from = i + 1;
                        for comma in commas.into_iter().chain([end]) {
                            alternatives.push(&raw[from..comma]);
                            from = comma + 1;
                        }
                        return Some((&raw[..i], alternatives, &raw[end + 1..]));
                    }
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    None
}

/// Just past the quote that closes the one at `open` (the end when there is none).
fn close_quote(bytes: &[u8], open: usize, quote: u8) -> usize {
    let mut i = open + 1;
    while i < bytes.len() {
        if bytes[i] == b'\\' && quote == b'"' {
            i += 2;
            continue;
        }
        if bytes[i] == quote {
            return i + 1;
        }
        i += 1;
    }
    bytes.len()
}

/// The `}` that closes the unquoted `{` at `open`.
fn matching_brace(bytes: &[u8], open: usize) -> Option<usize> {
    let mut depth = 0usize;
    let mut i = open;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 1,
            b'\'' => i = close_quote(bytes, i, b'\'') - 1,
            b'"' => i = close_quote(bytes, i, b'"') - 1,
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// The unquoted commas between `from` and `to` that are not inside nested braces.
fn top_level_commas(bytes: &[u8], from: usize, to: usize) -> Vec<usize> {
    let mut commas = Vec::new();
    let mut depth = 0usize;
    let mut i = from;
    while i < to {
        match bytes[i] {
            b'\\' => i += 1,
            b'\'' => i = close_quote(bytes, i, b'\'') - 1,
            b'"' => i = close_quote(bytes, i, b'"') - 1,
            b'{' => depth += 1,
            b'}' => depth = depth.saturating_sub(1),
            b',' if depth == 0 => commas.push(i),
            _ => {}
        }
        i += 1;
    }
    commas
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expanded(raw: &str) -> Option<Vec<String>> {
        expand_braces(raw)
    }

    #[test]
    fn alternatives_become_words() {
        let words = |v: &[&str]| Some(v.iter().map(|w| (*w).to_owned()).collect::<Vec<_>>());
        assert_eq!(expanded("{/,}"), words(&["/", ""]));
        assert_eq!(expanded("/{bin,usr}"), words(&["/bin", "/usr"]));
        assert_eq!(
            expanded("a{b,c}d{1,2}"),
            words(&["abd1", "abd2", "acd1", "acd2"])
        );
        assert_eq!(expanded("{a,{b,c}}"), words(&["a", "b", "c"]));
    }

    #[test]
    fn quoted_parameters_and_sequences_are_left_alone() {
        assert_eq!(expanded("'{/,}'"), None);
        assert_eq!(expanded("\\{/,}"), None);
        assert_eq!(expanded("${X,,}"), None);
        assert_eq!(expanded("{1..3}"), None);
        assert_eq!(expanded("{}"), None);
        assert_eq!(expanded("X={a,b}"), None);
        assert_eq!(expanded(&"{a,b}".repeat(10)), None);
    }
}
