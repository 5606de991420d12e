//! Unquoted glob patterns inside expanded text, and matching them against the names of
//! protected directories (`/[a-z]*` names `/bin`).
//!
//! Expanded text is a plain string; pattern characters that came from an unquoted glob are
//! written as private-use characters so that a quoted `*` (a file really named `*`) stays
//! apart from a pattern.

/// Matches any string (`*`, and extglob groups, which are taken as matching anything).
pub(crate) const ANY: char = '\u{E000}';
/// Matches one character (`?`).
pub(crate) const ONE: char = '\u{E002}';
/// Opens a bracket expression (`[`); its characters follow as text up to [`CLASS_END`].
pub(crate) const CLASS_START: char = '\u{E003}';
/// Closes a bracket expression (`]`).
pub(crate) const CLASS_END: char = '\u{E004}';

/// Writes the glob text `glob` (as the lowering keeps it: `*`, `?`, `[a-z]`, `@(a|b)`...) into
/// `out` with its pattern characters marked.
pub(crate) fn encode(glob: &str, out: &mut String) {
    let chars: Vec<char> = glob.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let group = chars.get(i + 1) == Some(&'(') && matches!(c, '*' | '?' | '+' | '@' | '!');
        if group {
            let mut depth = 0usize;
            while let Some(&c) = chars.get(i) {
                i += 1;
                match c {
                    '(' => depth += 1,
                    ')' => {
                        depth -= 1;
                        if depth == 0 {
                            break;
                        }
                    }
                    _ => {}
                }
            }
            out.push(ANY);
            continue;
        }
        i += 1;
        match c {
            '*' => out.push(ANY),
            '?' => out.push(ONE),
            '[' => {
                out.push(CLASS_START);
                let mut first = true;
                while let Some(&c) = chars.get(i) {
                    i += 1;
                    if c == ']' && !first {
                        break;
                    }
                    first = first && matches!(c, '!' | '^');
                    out.push(c);
                }
                out.push(CLASS_END);
            }
            other => out.push(other),
        }
    }
}

/// Whether `text` holds a pattern.
pub(crate) fn has_glob(text: &str) -> bool {
    text.contains([ANY, ONE, CLASS_START])
}

/// `text` with its patterns written as a shell would (`*`, `?`, `[...]`).
pub(crate) fn display(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            ANY => '*',
            ONE => '?',
            CLASS_START => '[',
            CLASS_END => ']',
            other => other,
        })
        .collect()
}

/// Whether the path component `pattern` matches (nearly) every name: it can match any length
/// and has no literal character but dots (`*`, `.*`, `[a-z]*`, `?*`).
pub(crate) fn matches_everything(pattern: &str) -> bool {
    let mut in_class = false;
    let mut any = false;
    for c in pattern.chars() {
        match c {
            CLASS_START => in_class = true,
            CLASS_END => in_class = false,
            ANY => any = true,
            ONE | '.' => {}
            _ if in_class => {}
            _ => return false,
        }
    }
    any
}

/// Whether the path component `pattern` matches `name`.
pub(crate) fn matches(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    matches_at(&pattern, &name)
}

fn matches_at(pattern: &[char], name: &[char]) -> bool {
    let Some((&first, rest)) = pattern.split_first() else {
        return name.is_empty();
    };
    match first {
        ANY => (0..=name.len()).any(|skip| matches_at(rest, &name[skip..])),
        ONE => !name.is_empty() && matches_at(rest, &name[1..]),
        CLASS_START => {
            let end = rest
                .iter()
                .position(|&c| c == CLASS_END)
                .unwrap_or(rest.len());
            let Some((&c, name_rest)) = name.split_first() else {
                return false;
            };
            class_matches(&rest[..end], c)
                && matches_at(rest.get(end + 1..).unwrap_or(&[]), name_rest)
        }
        literal => name.first() == Some(&literal) && matches_at(rest, &name[1..]),
    }
}

/// Whether the bracket expression body `class` (`a-z`, `!abc`) matches `c`.
fn class_matches(class: &[char], c: char) -> bool {
    let (negated, class) = match class.split_first() {
        Some((&('!' | '^'), rest)) => (true, rest),
        _ => (false, class),
    };
    let mut found = false;
    let mut i = 0;
    while let Some(&low) = class.get(i) {
        if class.get(i + 1) == Some(&'-')
            && let Some(&high) = class.get(i + 2)
        {
            found |= (low..=high).contains(&c);
            i += 3;
        } else {
            // Character classes such as `[:alpha:]` are taken as matching anything.
            found |= low == c || low == '[' || low == ':';
            i += 1;
        }
    }
    found != negated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(glob: &str) -> String {
        let mut out = String::new();
        encode(glob, &mut out);
        out
    }

    #[test]
    fn patterns_match_names() {
        assert!(matches(&encoded("[a-z]*"), "bin"));
        assert!(matches(&encoded("?sr"), "usr"));
        assert!(matches(&encoded("e*c"), "etc"));
        assert!(!matches(&encoded("*.log"), "etc"));
        assert!(matches(&encoded("[!x]in"), "bin"));
        assert!(!matches(&encoded("[!b]in"), "bin"));
        assert!(matches(&encoded("@(usr|x)"), "usr"));
        assert_eq!(display(&encoded("[a-z]*")), "[a-z]*");
    }

    #[test]
    fn everything_like_patterns() {
        assert!(matches_everything(&encoded("*")));
        assert!(matches_everything(&encoded(".*")));
        assert!(matches_everything(&encoded("[a-z]*")));
        assert!(!matches_everything(&encoded("*.o")));
        assert!(!matches_everything(&encoded("?")));
    }
}
