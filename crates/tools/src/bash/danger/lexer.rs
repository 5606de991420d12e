//! A small shell tokenizer: bash's quoting, escapes, expansions and operators, enough to see
//! which commands a string would run.
//!
//! It is lenient on purpose: malformed input never fails, it is read as far as it goes. bash
//! runs the complete commands that come before a syntax error, so those must still be seen.

use super::braces::expand_braces;
use super::words::{Op, Part, Redirect, RedirectKind, Token, Var, Word};

/// Splits `src` into tokens.
pub(crate) fn tokenize(src: &str) -> Vec<Token> {
    let mut lexer = Lexer {
        chars: src.chars().collect(),
        pos: 0,
        tokens: Vec::new(),
        heredocs: Vec::new(),
    };
    lexer.run();
    lexer.tokens
}

struct PendingHeredoc {
    token: usize,
    delimiter: String,
    strip_tabs: bool,
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    tokens: Vec<Token>,
    heredocs: Vec<PendingHeredoc>,
}

fn is_meta(c: char) -> bool {
    matches!(
        c,
        ' ' | '\t' | '\n' | ';' | '&' | '|' | '(' | ')' | '<' | '>'
    )
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, offset: usize) -> Option<char> {
        self.chars.get(self.pos + offset).copied()
    }

    /// Moves on by `n` characters, never past the end.
    fn skip(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.chars.len());
    }

    fn starts_with(&self, s: &str) -> bool {
        s.chars()
            .enumerate()
            .all(|(i, c)| self.peek_at(i) == Some(c))
    }

    fn op(&mut self, op: Op, len: usize) {
        self.pos += len;
        self.tokens.push(Token::Op(op));
    }

    fn run(&mut self) {
        while let Some(c) = self.peek() {
            match c {
                ' ' | '\t' | '\r' => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.skip(2),
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                '\n' => {
                    self.op(Op::Newline, 1);
                    self.read_heredoc_bodies();
                }
                ';' => {
                    let len = if self.starts_with(";;&") {
                        3
                    } else if self.starts_with(";;") || self.starts_with(";&") {
                        2
                    } else {
                        1
                    };
                    self.op(Op::Semi, len);
                }
                '&' if self.starts_with("&&") => self.op(Op::And, 2),
                '&' if self.starts_with("&>>") => self.redirect(RedirectKind::WriteBoth, 3),
                '&' if self.starts_with("&>") => self.redirect(RedirectKind::WriteBoth, 2),
                '&' => self.op(Op::Amp, 1),
                '|' if self.starts_with("||") => self.op(Op::Or, 2),
                '|' if self.starts_with("|&") => self.op(Op::Pipe, 2),
                '|' => self.op(Op::Pipe, 1),
                '(' => self.op(Op::Open, 1),
                ')' => self.op(Op::Close, 1),
                '<' | '>' if self.peek_at(1) == Some('(') => self.word(),
                '<' | '>' => self.redirect_at_cursor(),
                _ => self.word(),
            }
        }
    }

    fn word(&mut self) {
        let start = self.pos;
        let word = self.read_word();
        let raw_is_fd =
            self.pos > start && self.chars[start..self.pos].iter().all(char::is_ascii_digit);
        if raw_is_fd && matches!(self.peek(), Some('<' | '>')) && self.peek_at(1) != Some('(') {
            // `2>file`: the digits name the descriptor, they are not a word.
            self.redirect_at_cursor();
            return;
        }
        let raw: String = self.chars[start..self.pos].iter().collect();
        match expand_braces(&raw) {
            Some(alternatives) => {
                // Brace expansion comes before every other expansion: each alternative is
                // read again as a word of its own (`{~,x}` → `~` and `x`).
                for alternative in alternatives {
                    let words = tokenize(&alternative).into_iter().filter_map(|t| match t {
                        Token::Word(w) => Some(w),
                        Token::Op(_) | Token::Redirect(_) => None,
                    });
                    self.tokens.extend(words.map(Token::Word));
                }
            }
            None => self.tokens.push(Token::Word(word)),
        }
    }

    fn redirect_at_cursor(&mut self) {
        let (kind, len) = if self.starts_with("<<<") {
            (RedirectKind::HereString, 3)
        } else if self.starts_with("<<-") {
            (RedirectKind::HereDoc, 3)
        } else if self.starts_with("<<") {
            (RedirectKind::HereDoc, 2)
        } else if self.starts_with("<&") {
            (RedirectKind::DupRead, 2)
        } else if self.starts_with("<>") {
            (RedirectKind::ReadWrite, 2)
        } else if self.starts_with(">>") {
            (RedirectKind::Append, 2)
        } else if self.starts_with(">|") {
            (RedirectKind::Write, 2)
        } else if self.starts_with(">&") {
            (RedirectKind::DupWrite, 2)
        } else if self.starts_with("<") {
            (RedirectKind::Read, 1)
        } else {
            (RedirectKind::Write, 1)
        };
        let strip_tabs = self.starts_with("<<-");
        self.redirect(kind, len);
        if kind == RedirectKind::HereDoc
            && let Some(Token::Redirect(redirect)) = self.tokens.last()
        {
            let delimiter = redirect.target.literal().unwrap_or_default();
            self.heredocs.push(PendingHeredoc {
                token: self.tokens.len() - 1,
                delimiter,
                strip_tabs,
            });
        }
    }

    fn redirect(&mut self, mut kind: RedirectKind, len: usize) {
        self.pos += len;
        while matches!(self.peek(), Some(' ' | '\t')) {
            self.pos += 1;
        }
        let target = match self.peek() {
            Some(c) if !is_meta(c) => self.read_word(),
            _ => Word::default(),
        };
        if kind == RedirectKind::DupWrite {
            let numeric = target
                .literal()
                .is_some_and(|t| t == "-" || t.chars().all(|c| c.is_ascii_digit()));
            if !numeric {
                kind = RedirectKind::WriteBoth;
            }
        }
        self.tokens.push(Token::Redirect(Redirect {
            kind,
            target,
            body: None,
        }));
    }

    fn read_heredoc_bodies(&mut self) {
        for pending in std::mem::take(&mut self.heredocs) {
            let mut body = String::new();
            while self.pos < self.chars.len() {
                let end = self.chars[self.pos..]
                    .iter()
                    .position(|&c| c == '\n')
                    .map_or(self.chars.len(), |i| self.pos + i);
                let line: String = self.chars[self.pos..end].iter().collect();
                self.pos = (end + 1).min(self.chars.len());
                let line = if pending.strip_tabs {
                    line.trim_start_matches('\t').to_owned()
                } else {
                    line
                };
                if line == pending.delimiter {
                    break;
                }
                body.push_str(&line);
                body.push('\n');
            }
            if let Some(Token::Redirect(redirect)) = self.tokens.get_mut(pending.token) {
                redirect.body = Some(body);
            }
        }
    }

    fn read_word(&mut self) -> Word {
        let mut word = Word::default();
        if self.peek() == Some('~') {
            self.pos += 1;
            let mut user = String::new();
            if self.peek() == Some('+') && self.peek_at(1).is_none_or(|c| c == '/' || is_meta(c)) {
                // `~+`: the current directory.
                user.push('+');
                self.pos += 1;
            }
            while let Some(c) = self
                .peek()
                .filter(|&c| c.is_alphanumeric() || matches!(c, '_' | '-' | '.'))
            {
                user.push(c);
                self.pos += 1;
            }
            word.parts.push(Part::Tilde(user));
        }
        while let Some(c) = self.peek() {
            match c {
                '\\' => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(next) => word.push_lit(next.encode_utf8(&mut [0; 4])),
                        None => word.push_lit("\\"),
                    }
                    self.skip(2);
                }
                '\'' => {
                    self.pos += 1;
                    let text = self.take_until('\'');
                    word.push_lit(&text);
                }
                '"' => {
                    self.pos += 1;
                    self.read_double_quoted(&mut word);
                }
                '$' => self.read_dollar(&mut word, Quoting::Unquoted),
                '`' => {
                    let inner = self.read_backticks();
                    word.parts.push(Part::Subst(inner));
                }
                '<' | '>' if self.peek_at(1) == Some('(') => {
                    self.pos += 1;
                    let inner = self.read_balanced();
                    word.parts.push(Part::ProcSubst(inner));
                }
                '*' | '?' | '+' | '@' | '!' if self.peek_at(1) == Some('(') => {
                    // An extglob group such as `*(a|b)`.
                    self.pos += 1;
                    let inner = self.read_balanced();
                    word.push_glob(&format!("{c}({inner})"));
                }
                '*' | '?' | '[' => {
                    self.pos += 1;
                    word.push_glob(c.encode_utf8(&mut [0; 4]));
                }
                c if is_meta(c) => break,
                c => {
                    self.pos += 1;
                    word.push_lit(c.encode_utf8(&mut [0; 4]));
                }
            }
        }
        word
    }

    /// Reads up to (and past) `end`; an unterminated quote runs to the end of the input.
    fn take_until(&mut self, end: char) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            if c == end {
                break;
            }
            text.push(c);
        }
        text
    }

    fn read_double_quoted(&mut self, word: &mut Word) {
        word.push_lit("");
        while let Some(c) = self.peek() {
            match c {
                '"' => {
                    self.pos += 1;
                    return;
                }
                '\\' => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(next @ ('$' | '`' | '"' | '\\')) => {
                            word.push_lit(next.encode_utf8(&mut [0; 4]));
                        }
                        Some(next) => {
                            word.push_lit("\\");
                            word.push_lit(next.encode_utf8(&mut [0; 4]));
                        }
                        None => word.push_lit("\\"),
                    }
                    self.skip(2);
                }
                '$' => self.read_dollar(word, Quoting::Double),
                '`' => {
                    let inner = self.read_backticks();
                    word.parts.push(Part::Subst(inner));
                }
                c => {
                    self.pos += 1;
                    word.push_lit(c.encode_utf8(&mut [0; 4]));
                }
            }
        }
    }

    fn read_dollar(&mut self, word: &mut Word, quoting: Quoting) {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => {
                self.pos += 1;
                let inner = self.read_balanced();
                word.parts.push(Part::Arith(inner));
            }
            Some('(') => {
                self.pos += 1;
                let inner = self.read_balanced();
                word.parts.push(Part::Subst(inner));
            }
            Some('{') => {
                self.skip(2);
                let inner = self.read_braced();
                word.parts.push(Part::Var(parse_braced_var(&inner)));
            }
            Some('\'') if quoting == Quoting::Unquoted => {
                self.skip(2);
                let text = self.read_ansi_c();
                word.push_lit(&text);
            }
            Some('"') if quoting == Quoting::Unquoted => {
                self.skip(2);
                self.read_double_quoted(word);
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                self.pos += 1;
                let mut name = String::new();
                while let Some(c) = self
                    .peek()
                    .filter(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    name.push(c);
                    self.pos += 1;
                }
                word.parts.push(Part::Var(Var {
                    name,
                    modifier: String::new(),
                }));
            }
            Some(c)
                if c.is_ascii_digit() || matches!(c, '@' | '*' | '#' | '?' | '$' | '!' | '-') =>
            {
                self.skip(2);
                word.parts.push(Part::Var(Var {
                    name: c.to_string(),
                    modifier: String::new(),
                }));
            }
            _ => {
                self.pos += 1;
                word.push_lit("$");
            }
        }
    }

    /// At an opening `(`: reads to the matching `)` and returns what is between.
    fn read_balanced(&mut self) -> String {
        self.pos += 1;
        self.read_to_matching('(', ')')
    }

    /// After `${`: reads to the matching `}`.
    fn read_braced(&mut self) -> String {
        self.read_to_matching('{', '}')
    }

    /// Just after an `open`: reads to the `close` that balances it, skipping quoted text, and
    /// returns what is between (the rest of the input when it never closes).
    fn read_to_matching(&mut self, open: char, close: char) -> String {
        let start = self.pos;
        let mut depth = 1usize;
        while let Some(c) = self.peek() {
            match c {
                '\\' => self.skip(2),
                '\'' => {
                    self.pos += 1;
                    self.take_until('\'');
                }
                '"' => {
                    self.pos += 1;
                    let mut scratch = Word::default();
                    self.read_double_quoted(&mut scratch);
                }
                '`' => {
                    self.read_backticks();
                }
                c if c == open => {
                    depth += 1;
                    self.pos += 1;
                }
                c if c == close => {
                    depth -= 1;
                    self.pos += 1;
                    if depth == 0 {
                        return self.chars[start..self.pos - 1].iter().collect();
                    }
                }
                _ => self.pos += 1,
            }
        }
        self.pos = self.pos.min(self.chars.len());
        self.chars[start..].iter().collect()
    }

    /// At a backtick: reads to the closing one and returns the inner source, unescaped.
    fn read_backticks(&mut self) -> String {
        self.pos += 1;
        let mut inner = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '`' => break,
                '\\' => match self.peek() {
                    Some(next @ ('`' | '\\' | '$')) => {
                        inner.push(next);
                        self.pos += 1;
                    }
                    _ => inner.push('\\'),
                },
                c => inner.push(c),
            }
        }
        inner
    }

    /// After `$'`: reads an ANSI-C quoted string, decoding its escapes.
    fn read_ansi_c(&mut self) -> String {
        let mut text = String::new();
        while let Some(c) = self.peek() {
            self.pos += 1;
            match c {
                '\'' => break,
                '\\' => {
                    let Some(e) = self.peek() else { break };
                    self.pos += 1;
                    match e {
                        'n' => text.push('\n'),
                        't' => text.push('\t'),
                        'r' => text.push('\r'),
                        'a' => text.push('\u{7}'),
                        'b' => text.push('\u{8}'),
                        'e' | 'E' => text.push('\u{1b}'),
                        'f' => text.push('\u{c}'),
                        'v' => text.push('\u{b}'),
                        'x' => text.push(self.read_code(16, 2)),
                        'u' => text.push(self.read_code(16, 4)),
                        'U' => text.push(self.read_code(16, 8)),
                        '0'..='7' => {
                            self.pos -= 1;
                            text.push(self.read_code(8, 3));
                        }
                        other => text.push(other),
                    }
                }
                c => text.push(c),
            }
        }
        text
    }

    fn read_code(&mut self, radix: u32, max_digits: usize) -> char {
        let mut value = 0u32;
        let mut digits = 0;
        while digits < max_digits {
            let Some(d) = self.peek().and_then(|c| c.to_digit(radix)) else {
                break;
            };
            value = value * radix + d;
            self.pos += 1;
            digits += 1;
        }
        char::from_u32(value).unwrap_or(char::REPLACEMENT_CHARACTER)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quoting {
    Unquoted,
    Double,
}

fn parse_braced_var(inner: &str) -> Var {
    if inner.len() > 1 && (inner.starts_with('#') || inner.starts_with('!')) {
        return Var {
            name: String::new(),
            modifier: inner.to_owned(),
        };
    }
    let name_len = match inner.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => inner
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(inner.len()),
        Some(c) if c.is_ascii_digit() => inner
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(inner.len()),
        Some(c) => c.len_utf8(),
        None => 0,
    };
    Var {
        name: inner[..name_len].to_owned(),
        modifier: inner[name_len..].to_owned(),
    }
}

#[cfg(test)]
#[path = "lexer_tests.rs"]
mod tests;
