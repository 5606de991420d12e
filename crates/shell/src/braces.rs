//! Brace expansion (`{a,b}`, `{1..3}`), the first expansion bash makes, on a word as
//! written: brush-parser reads the braces, this makes the words.

use brush_parser::word::{self, BraceExpressionMember, BraceExpressionOrText};

use super::options::OPTIONS;

/// Most words one brace expansion may become; past it the word is left as written.
const MAX_BRACE_WORDS: usize = 64;

/// The raw words a brace expansion makes, or `None` when there is none (or too many).
pub(crate) fn expand_braces(raw: &str) -> Option<Vec<String>> {
    let pieces = word::parse_brace_expansions(raw, &OPTIONS).ok()??;
    if !pieces
        .iter()
        .any(|p| matches!(p, BraceExpressionOrText::Expr(_)))
    {
        return None;
    }
    let words = expand_pieces(&pieces)?;
    (words.len() > 1 || words.first().is_some_and(|w| w != raw)).then_some(words)
}

fn expand_pieces(pieces: &[BraceExpressionOrText]) -> Option<Vec<String>> {
    let mut words = vec![String::new()];
    for piece in pieces {
        let alternatives: Vec<String> = match piece {
            BraceExpressionOrText::Text(text) => vec![text.clone()],
            BraceExpressionOrText::Expr(members) => {
                let mut all = Vec::new();
                for member in members {
                    all.extend(expand_member(member)?);
                    if all.len() > MAX_BRACE_WORDS {
                        return None;
                    }
                }
                all
            }
        };
        if words.len() * alternatives.len() > MAX_BRACE_WORDS {
            return None;
        }
        words = words
            .iter()
            .flat_map(|w| alternatives.iter().map(move |a| format!("{w}{a}")))
            .collect();
    }
    Some(words)
}

fn expand_member(member: &BraceExpressionMember) -> Option<Vec<String>> {
    match member {
        BraceExpressionMember::Child(pieces) => expand_pieces(pieces),
        BraceExpressionMember::NumberSequence {
            start,
            end,
            increment,
        } => {
            let step = usize::try_from(increment.unsigned_abs()).ok()?.max(1);
            let (low, high) = (*start.min(end), *start.max(end));
            let count = usize::try_from(high.abs_diff(low)).ok()? / step + 1;
            if count > MAX_BRACE_WORDS {
                return None;
            }
            let mut values: Vec<String> = (0..count)
                .filter_map(|k| i64::try_from(k * step).ok())
                .map(|k| (low + k).to_string())
                .collect();
            if start > end {
                values.reverse();
            }
            Some(values)
        }
        BraceExpressionMember::CharSequence {
            start,
            end,
            increment,
        } => {
            let step = usize::try_from(increment.unsigned_abs()).ok()?.max(1);
            let (low, high) = (u32::from(*start.min(end)), u32::from(*start.max(end)));
            let values: Vec<String> = (low..=high)
                .step_by(step)
                .take(MAX_BRACE_WORDS + 1)
                .filter_map(char::from_u32)
                .map(String::from)
                .collect();
            (values.len() <= MAX_BRACE_WORDS).then_some(values)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::lower_words::lower_word;

    #[test]
    fn braces_make_words() {
        let raws = |raw: &str| {
            lower_word(raw)
                .into_iter()
                .map(|w| w.raw)
                .collect::<Vec<_>>()
        };
        assert_eq!(raws("{/,}"), ["/", ""]);
        assert_eq!(raws("/{bin,usr}"), ["/bin", "/usr"]);
        assert_eq!(raws("a{b,c}d{1,2}"), ["abd1", "abd2", "acd1", "acd2"]);
        assert_eq!(raws("{a,{b,c}}"), ["a", "b", "c"]);
        assert_eq!(raws("x{1..3}"), ["x1", "x2", "x3"]);
        assert_eq!(raws("'{/,}'"), ["'{/,}'"]);
        assert_eq!(raws("${X,,}"), ["${X,,}"]);
        assert_eq!(raws(&"{a,b}".repeat(10)).len(), 1);
    }
}
