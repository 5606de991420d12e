//! Parsing a command line with brush-parser, and what to do when it fails.
//!
//! A command line that does not parse is never proven read-only, but the deny list must
//! still see what it could run. bash runs every complete line before the one with a syntax
//! error, and a checker that gave up on the whole text would let `rm -rf /` on the first
//! line through. So a failed parse is retried with unterminated quotes and substitutions
//! closed, and if that still fails, the text is split into tokens by brush-parser's
//! tokenizer and every run of words between operators is judged as a command: coarser than
//! a parse, but it misses no command name that bash could run.

use brush_parser::{ParseError, Parser, SourceInfo, Token, TokenizerError};

use super::NotReadOnly;
use super::lower;
use super::lower_words::{lower_one, lower_word};
use super::options::OPTIONS;
use super::tree::{Command, Item, Pipeline, Script, Simple};
use super::words::{HereDoc, Redirect, RedirectKind};

/// How many times a failed parse is retried with one more closing quote or bracket.
const MAX_REPAIRS: usize = 8;

/// A command line as far as it could be parsed.
#[derive(Debug)]
pub(crate) struct Parsed {
    /// What it runs.
    pub(crate) script: Script,
    /// Why it did not parse as written, if it did not.
    pub(crate) failure: Option<NotReadOnly>,
    /// The text as parsed: the source, or the source with unterminated parts closed.
    pub(crate) text: String,
}

/// Parses `src`; see the module documentation for what happens when it fails.
pub(crate) fn parse(src: &str) -> Parsed {
    let error = match parse_exact(src) {
        Ok(script) => {
            return Parsed {
                script,
                failure: None,
                text: src.to_owned(),
            };
        }
        Err(error) => error,
    };
    let failure = Some(NotReadOnly::Unparsed {
        error: error.to_string(),
    });
    let mut text = src.to_owned();
    let mut error = error;
    for _ in 0..MAX_REPAIRS {
        let ParseError::Tokenizing { inner, .. } = &error else {
            break;
        };
        let Some(repaired) = repair(&text, inner) else {
            break;
        };
        text = repaired;
        match parse_exact(&text) {
            Ok(script) => {
                return Parsed {
                    script,
                    failure,
                    text,
                };
            }
            Err(next) => error = next,
        }
    }
    Parsed {
        script: token_commands(&text),
        failure,
        text,
    }
}

fn parse_exact(src: &str) -> Result<Script, ParseError> {
    let program = Parser::new(src.as_bytes(), &OPTIONS, &SourceInfo::default()).parse_program()?;
    Ok(lower::program(&program))
}

/// `text` with what the tokenizer found unterminated closed.
fn repair(text: &str, error: &TokenizerError) -> Option<String> {
    let closer = match error {
        TokenizerError::UnterminatedSingleQuote(_) | TokenizerError::UnterminatedAnsiCQuote(_) => {
            "'".to_owned()
        }
        TokenizerError::UnterminatedDoubleQuote(_) => "\"".to_owned(),
        TokenizerError::UnterminatedBackquote(_) => "`".to_owned(),
        TokenizerError::UnterminatedCommandSubstitution
        | TokenizerError::UnterminatedExtendedGlob(_) => ")".to_owned(),
        TokenizerError::UnterminatedVariable => "}".to_owned(),
        TokenizerError::UnterminatedHereDocuments(tag, _) => format!("\n{tag}\n"),
        TokenizerError::UnterminatedEscapeSequence => {
            return text.strip_suffix('\\').map(str::to_owned);
        }
        _ => return None,
    };
    Some(format!("{text}{closer}"))
}

/// The words between operators (and braces), each run taken as a simple command; `<`, `>`
/// and the like take the next word as their target.
pub(crate) fn token_commands(text: &str) -> Script {
    let Ok(tokens) = brush_parser::tokenize_str(text) else {
        return Script::default();
    };
    let mut items = Vec::new();
    let mut current = Simple::default();
    let mut pending_redirect: Option<RedirectKind> = None;
    let mut finish = |current: &mut Simple| {
        if !current.words.is_empty() || !current.redirects.is_empty() {
            items.push(Item {
                pipelines: vec![Pipeline {
                    commands: vec![Command::Simple(std::mem::take(current))],
                }],
                background: false,
            });
        }
    };
    for token in &tokens {
        match token {
            // Braces group commands: what follows one starts a command (`coproc N { rm`).
            Token::Word(raw, _) if pending_redirect.is_none() && (raw == "{" || raw == "}") => {
                finish(&mut current);
            }
            Token::Word(raw, _) => match pending_redirect.take() {
                Some(kind) => current.redirects.push(Redirect {
                    fd: None,
                    kind,
                    target: lower_one(raw),
                    body: (kind == RedirectKind::HereDoc).then(|| HereDoc {
                        text: String::new(),
                        expands: false,
                    }),
                }),
                None => {
                    current.words.extend(lower_word(raw));
                    current.written.push(raw.clone());
                }
            },
            Token::Operator(op, _) => match redirect_kind(op) {
                Some(kind) => pending_redirect = Some(kind),
                None => finish(&mut current),
            },
        }
    }
    finish(&mut current);
    Script { items }
}

fn redirect_kind(op: &str) -> Option<RedirectKind> {
    Some(match op {
        "<" => RedirectKind::Read,
        ">" | ">|" => RedirectKind::Write,
        ">>" => RedirectKind::Append,
        "&>" | "&>>" => RedirectKind::WriteBoth,
        "<>" => RedirectKind::ReadWrite,
        "<<" | "<<-" => RedirectKind::HereDoc,
        "<<<" => RedirectKind::HereString,
        "<&" => RedirectKind::DupRead,
        ">&" => RedirectKind::DupWrite,
        _ => return None,
    })
}

/// An upper bound on how deeply `src` can nest: brackets, backquotes and the keywords that
/// open compound commands. The parser recurses once per level, so this says how much stack
/// parsing may need (it over-counts: quoted text and here-documents count too).
pub(crate) fn nesting_bound(src: &str) -> usize {
    let brackets = src
        .bytes()
        .filter(|b| matches!(b, b'(' | b'{' | b'`' | b'['))
        .count();
    let keywords = src
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| matches!(*w, "if" | "while" | "until" | "for" | "case" | "select"))
        .count();
    brackets + keywords
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(parsed: &Parsed) -> Vec<String> {
        let mut names = Vec::new();
        parsed.script.each_simple(&mut |s| {
            names.push(s.words.first().map(|w| w.raw.clone()).unwrap_or_default());
        });
        names
    }

    #[test]
    fn unterminated_text_is_closed_and_still_read() {
        let parsed = parse("echo ok; rm -rf / 'unterminated");
        assert!(parsed.failure.is_some());
        assert_eq!(names(&parsed), ["echo", "rm"]);
        assert_eq!(names(&parse("echo \"$(rm -rf /")), ["echo"]);
    }

    #[test]
    fn syntax_errors_fall_back_to_tokens() {
        let parsed = parse("select x in a; do rm -rf /; done");
        assert!(parsed.failure.is_some());
        assert!(names(&parsed).contains(&"do".to_owned()));
        let parsed = parse("echo a > out; fi");
        assert_eq!(names(&parsed), ["echo", "fi"]);
        assert_eq!(names(&parse("coproc N { rm -rf /; }")), ["coproc", "rm"]);
    }

    #[test]
    fn nesting_is_bounded_from_above() {
        assert_eq!(nesting_bound("ls -la; pwd"), 0);
        assert_eq!(nesting_bound("if true; then (ls); fi"), 2);
        assert!(nesting_bound(&"{ ".repeat(100)) >= 100);
    }
}
