//! Words as brush-parser reads them (quoting, escapes, tildes, parameter expansions,
//! substitutions, brace expansion) turned into [`Word`]s.
//!
//! brush-parser leaves two things to the shell that runs the word: unquoted pattern
//! characters stay in plain text, and `$'...'` keeps its escapes. Both decide what a word
//! means, so they are read here.

use brush_parser::word::{
    self, Parameter, ParameterExpr, ParameterTestType, SpecialParameter, WordPiece,
    WordPieceWithSource,
};

use super::braces::expand_braces;
use super::options::OPTIONS;
use super::words::{Part, Var, VarOp, Word};

/// The words bash makes of the raw word `raw`: several when it has a brace expansion
/// (`/{bin,usr}` → `/bin`, `/usr`), one otherwise.
pub(crate) fn lower_word(raw: &str) -> Vec<Word> {
    if raw.contains('{')
        && let Some(alternatives) = expand_braces(raw)
    {
        return alternatives.iter().map(|a| lower_one(a)).collect();
    }
    vec![lower_one(raw)]
}

/// One raw word, without brace expansion (assignment values, defaults, redirect targets).
pub(crate) fn lower_one(raw: &str) -> Word {
    let parts = match word::parse(raw, &OPTIONS) {
        Ok(pieces) => {
            let mut parts = Vec::new();
            push_pieces(&mut parts, pieces, Quoting::Unquoted);
            // Part of it unreadable: all of it unknown.
            if parts.iter().any(|p| matches!(p, Part::Unreadable(_))) {
                parts = vec![Part::Unreadable(raw.to_owned())];
            }
            parts
        }
        Err(_) => vec![Part::Unreadable(raw.to_owned())],
    };
    Word {
        parts,
        raw: raw.to_owned(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    Unquoted,
    Double,
}

fn push_pieces(parts: &mut Vec<Part>, pieces: Vec<WordPieceWithSource>, quoting: Quoting) {
    let mut pieces = pieces.into_iter().map(|p| p.piece).peekable();
    while let Some(piece) = pieces.next() {
        match piece {
            WordPiece::Text(text) if hides_expansion(&text, pieces.peek()) => {
                // A `$` that bash would expand but the parser left as text (it reads
                // `${X:-~}` so): the word's value is not known.
                parts.push(Part::Unreadable(text));
            }
            WordPiece::Text(text) => match quoting {
                Quoting::Unquoted => push_unquoted(parts, &text),
                Quoting::Double => push_lit(parts, &text),
            },
            WordPiece::SingleQuotedText(text) => push_lit(parts, &text),
            WordPiece::AnsiCQuotedText(text) => push_lit(parts, &decode_ansi_c(&text)),
            WordPiece::DoubleQuotedSequence(inner)
            | WordPiece::GettextDoubleQuotedSequence(inner) => {
                // An empty literal part records the quotes: `""` is a word, not nothing.
                parts.push(Part::Lit(String::new()));
                push_pieces(parts, inner, Quoting::Double);
            }
            WordPiece::TildePrefix(user) => parts.push(Part::Tilde(user)),
            WordPiece::ParameterExpansion(expr) => parts.push(lower_parameter(expr)),
            WordPiece::CommandSubstitution(src) => parts.push(Part::Subst(src)),
            WordPiece::BackquotedCommandSubstitution(src) => {
                parts.push(Part::Subst(unescape_backquoted(&src)));
            }
            WordPiece::EscapeSequence(seq) => {
                let escaped = seq.strip_prefix('\\').unwrap_or(&seq);
                if escaped != "\n" {
                    push_lit(parts, escaped);
                }
            }
            WordPiece::ArithmeticExpression(expr) => parts.push(Part::Arith(expr.value)),
        }
    }
}

/// Whether unquoted or double-quoted text holds a `$` that starts an expansion in bash
/// (`${`, `$(`, `$name`, `$1`, `$@`...).
fn hides_expansion(text: &str, next: Option<&WordPiece>) -> bool {
    let starts_expansion = |c: char| c.is_ascii_alphanumeric() || "{(_@*#?-$!".contains(c);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '$' {
            continue;
        }
        let following = chars.peek().copied().or_else(|| match next {
            Some(WordPiece::Text(next)) => next.chars().next(),
            _ => None,
        });
        if following.is_some_and(starts_expansion) {
            return true;
        }
    }
    false
}

fn push_lit(parts: &mut Vec<Part>, text: &str) {
    if let Some(Part::Lit(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(Part::Lit(text.to_owned()));
    }
}

fn push_glob(parts: &mut Vec<Part>, text: &str) {
    if let Some(Part::Glob(last)) = parts.last_mut() {
        last.push_str(text);
    } else {
        parts.push(Part::Glob(text.to_owned()));
    }
}

/// Unquoted text: pattern characters (`*`, `?`, `[...]`, extglob groups) become globs.
fn push_unquoted(parts: &mut Vec<Part>, text: &str) {
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        let next = chars.get(i + 1).copied();
        if matches!(c, '*' | '?' | '+' | '@' | '!')
            && next == Some('(')
            && let Some(end) = closing(&chars, i + 1, '(', ')')
        {
            push_glob(parts, &chars[i..=end].iter().collect::<String>());
            i = end + 1;
        } else if matches!(c, '*' | '?') {
            push_glob(parts, &c.to_string());
            i += 1;
        } else if c == '['
            && let Some(end) = bracket_end(&chars, i)
        {
            push_glob(parts, &chars[i..=end].iter().collect::<String>());
            i = end + 1;
        } else {
            push_lit(parts, &c.to_string());
            i += 1;
        }
    }
}

/// The `close` that balances the `open` at `at`.
fn closing(chars: &[char], at: usize, open: char, close: char) -> Option<usize> {
    let mut depth = 0usize;
    for (i, &c) in chars.iter().enumerate().skip(at) {
        if c == open {
            depth += 1;
        } else if c == close {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

/// The `]` closing the bracket expression that starts at `at` (`[]a]` and `[!]a]` include
/// the first `]`).
fn bracket_end(chars: &[char], at: usize) -> Option<usize> {
    let mut i = at + 1;
    if matches!(chars.get(i), Some('!' | '^')) {
        i += 1;
    }
    if chars.get(i) == Some(&']') {
        i += 1;
    }
    chars[i.min(chars.len())..]
        .iter()
        .position(|&c| c == ']')
        .map(|p| i + p)
}

/// An expansion read: the parameter, whether it is named indirectly (`${!x}`), what the
/// expansion does to its value, and the words bash expands as part of it (patterns,
/// replacements, offsets, messages), whose `$( )` run too.
struct Expansion {
    parameter: Parameter,
    indirect: bool,
    op: VarOp,
    inner: Vec<Option<String>>,
}

impl Expansion {
    fn new(parameter: Parameter, indirect: bool, op: VarOp) -> Self {
        let inner = Vec::new();
        Expansion {
            parameter,
            indirect,
            op,
            inner,
        }
    }

    fn with(mut self, words: impl IntoIterator<Item = Option<String>>) -> Self {
        self.inner.extend(words);
        self
    }
}

/// A parameter expansion as a variable part; one of a kind not read here is unreadable.
fn lower_parameter(expr: ParameterExpr) -> Part {
    let Ok(Expansion {
        parameter,
        indirect,
        op,
        mut inner,
    }) = picked_value(expr).or_else(transformed)
    else {
        return Part::Unreadable(String::new());
    };
    // `${a[INDEX]}`: the index is arithmetic, evaluated (and its `$( )` run) too.
    if let Parameter::NamedWithIndex { index, .. } = &parameter {
        inner.push(Some(index.clone()));
    }
    // `${!x}` names another variable: its value is not x's.
    let op = if indirect { VarOp::Other } else { op };
    Part::Var(Var {
        name: parameter_name(parameter),
        op,
        inner: inner.into_iter().flatten().map(|w| lower_one(&w)).collect(),
    })
}

/// The expansions that give the value or another in its place (a default, an alternative,
/// an error, its length, names); the others are handed back.
fn picked_value(expr: ParameterExpr) -> Result<Expansion, ParameterExpr> {
    Ok(match expr {
        ParameterExpr::Parameter {
            parameter,
            indirect,
        } => Expansion::new(parameter, indirect, VarOp::Plain),
        ParameterExpr::UseDefaultValues {
            parameter,
            indirect,
            test_type,
            default_value,
        } => Expansion::new(
            parameter,
            indirect,
            default(test_type, default_value, false),
        ),
        ParameterExpr::AssignDefaultValues {
            parameter,
            indirect,
            test_type,
            default_value,
        } => Expansion::new(parameter, indirect, default(test_type, default_value, true)),
        ParameterExpr::IndicateErrorIfNullOrUnset {
            parameter,
            indirect,
            error_message,
            ..
        } => Expansion::new(parameter, indirect, VarOp::Required).with([error_message]),
        ParameterExpr::UseAlternativeValue {
            parameter,
            indirect,
            alternative_value,
            ..
        } => Expansion::new(
            parameter,
            indirect,
            VarOp::Alternative {
                word: Box::new(lower_one(&alternative_value.unwrap_or_default())),
            },
        ),
        ParameterExpr::ParameterLength {
            parameter,
            indirect,
        } => Expansion::new(parameter, indirect, VarOp::Other),
        ParameterExpr::VariableNames { prefix, .. } => {
            Expansion::new(Parameter::Named(prefix), false, VarOp::Other)
        }
        ParameterExpr::MemberKeys { variable_name, .. } => {
            Expansion::new(Parameter::Named(variable_name), false, VarOp::Other)
        }
        other => return Err(other),
    })
}

/// The expansions that transform the value (a pattern removed or replaced, case changed, a
/// substring, an `@` operator); the others are handed back.
fn transformed(expr: ParameterExpr) -> Result<Expansion, ParameterExpr> {
    let transformed = |parameter, indirect| Expansion::new(parameter, indirect, VarOp::Transformed);
    Ok(match expr {
        ParameterExpr::RemoveSmallestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestSuffixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveSmallestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::RemoveLargestPrefixPattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::UppercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::UppercasePattern {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::LowercaseFirstChar {
            parameter,
            indirect,
            pattern,
        }
        | ParameterExpr::LowercasePattern {
            parameter,
            indirect,
            pattern,
        } => transformed(parameter, indirect).with([pattern]),
        ParameterExpr::Substring {
            parameter,
            indirect,
            offset,
            length,
        } => transformed(parameter, indirect).with([Some(offset.value), length.map(|l| l.value)]),
        ParameterExpr::Transform {
            parameter,
            indirect,
            ..
        } => transformed(parameter, indirect),
        ParameterExpr::ReplaceSubstring {
            parameter,
            indirect,
            pattern,
            replacement,
            ..
        } => transformed(parameter, indirect).with([Some(pattern), replacement]),
        other => return Err(other),
    })
}

fn default(test_type: ParameterTestType, value: Option<String>, assign: bool) -> VarOp {
    VarOp::Default {
        word: Box::new(lower_one(&value.unwrap_or_default())),
        null_too: matches!(test_type, ParameterTestType::UnsetOrNull),
        assign,
    }
}

fn parameter_name(parameter: Parameter) -> String {
    match parameter {
        Parameter::Positional(n) => n.to_string(),
        // Array elements are kept apart from the plain value (which is element 0), so
        // that a known array can be expanded (`"${a[@]}"`).
        Parameter::Named(name) => name,
        Parameter::NamedWithIndex { name, index } if index == "0" => name,
        Parameter::NamedWithIndex { name, index } => format!("{name}[{index}]"),
        Parameter::NamedWithAllIndices { name, .. } => format!("{name}[@]"),
        Parameter::Special(special) => match special {
            SpecialParameter::AllPositionalParameters { concatenate: true } => "*",
            SpecialParameter::AllPositionalParameters { concatenate: false } => "@",
            SpecialParameter::PositionalParameterCount => "#",
            SpecialParameter::LastExitStatus => "?",
            SpecialParameter::CurrentOptionFlags => "-",
            SpecialParameter::ProcessId => "$",
            SpecialParameter::LastBackgroundProcessId => "!",
            SpecialParameter::ShellName => "0",
        }
        .to_owned(),
    }
}

/// Inside backquotes, `\$`, `` \` `` and `\\` stand for the character itself.
fn unescape_backquoted(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\'
            && let Some(&next @ ('$' | '`' | '\\')) = chars.peek()
        {
            out.push(next);
            chars.next();
        } else {
            out.push(c);
        }
    }
    out
}

/// The text of `$'...'` with its escapes decoded (`$'\x2f'` is `/`).
pub(crate) fn decode_ansi_c(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::new();
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&e) = chars.get(i) else {
            out.push('\\');
            break;
        };
        i += 1;
        let code = |i: &mut usize, radix: u32, max: usize| {
            let mut value = 0u32;
            let mut digits = 0;
            while digits < max
                && let Some(d) = chars.get(*i).and_then(|c| c.to_digit(radix))
            {
                value = value * radix + d;
                *i += 1;
                digits += 1;
            }
            char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER)
        };
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\u{7}'),
            'b' => out.push('\u{8}'),
            'e' | 'E' => out.push('\u{1b}'),
            'f' => out.push('\u{c}'),
            'v' => out.push('\u{b}'),
            'x' => out.push(code(&mut i, 16, 2)),
            'u' => out.push(code(&mut i, 16, 4)),
            'U' => out.push(code(&mut i, 16, 8)),
            '0'..='7' => {
                i -= 1;
                out.push(code(&mut i, 8, 3));
            }
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(raw: &str) -> Vec<Part> {
        lower_one(raw).parts
    }

    #[test]
    fn quoting_escapes_and_globs() {
        assert_eq!(lower_one(r"r\m").literal().as_deref(), Some("rm"));
        assert_eq!(lower_one(r#""rm""#).literal().as_deref(), Some("rm"));
        assert_eq!(lower_one(r"$'\x2f'").literal().as_deref(), Some("/"));
        assert_eq!(
            parts("/[a-z]*"),
            [Part::Lit("/".into()), Part::Glob("[a-z]*".into())]
        );
        assert_eq!(lower_one("'*'").literal().as_deref(), Some("*"));
        assert_eq!(lower_one(r"\*").literal().as_deref(), Some("*"));
        assert_eq!(parts("a[b"), [Part::Lit("a[b".into())]);
        assert_eq!(parts("@(x|y)"), [Part::Glob("@(x|y)".into())]);
        assert_eq!(parts("~root/x")[0], Part::Tilde("root".into()));
    }

    #[test]
    fn parameters_keep_their_operation() {
        let var = |raw: &str| match parts(raw).as_slice() {
            [Part::Var(var)] => var.clone(),
            other => panic!("{raw}: {other:?}"),
        };
        let default = var("${X:-/}");
        assert_eq!(default.name, "X");
        assert!(
            matches!(&default.op, VarOp::Default { word, null_too: true, assign: false } if word.raw == "/")
        );
        assert_eq!(var("${HOME%/*}").op, VarOp::Transformed);
        assert_eq!(var("${!x}").op, VarOp::Other);
        assert_eq!(parts("`echo \\$x`"), [Part::Subst("echo $x".into())]);
    }

    #[test]
    fn ansi_c_escapes() {
        assert_eq!(decode_ansi_c(r"\x2f\n\101\u00e9"), "/\nAé");
        assert_eq!(decode_ansi_c("\\"), "\\");
    }
}
