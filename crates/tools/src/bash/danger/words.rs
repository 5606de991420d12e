//! The tokens of a command line: words made of literal, glob and expansion parts, control
//! operators and redirections.

/// One piece of a shell word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Literal text, with quotes and escapes removed.
    Lit(String),
    /// Unquoted glob characters (`*`, `?`, `[`, extglob groups).
    Glob(String),
    /// An unquoted `~` (empty name) or `~user` at the start of a word.
    Tilde(String),
    /// `$NAME` or `${NAME...}`.
    Var(Var),
    /// `$(...)` or backticks: the inner source.
    Subst(String),
    /// `<(...)` or `>(...)`: the inner source.
    ProcSubst(String),
    /// `$((...))`: an arithmetic expansion.
    Arith(String),
}

/// A parameter expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Var {
    /// The parameter name (`HOME`, `1`, `@`); empty for `${#x}` and `${!x}`.
    pub(crate) name: String,
    /// What follows the name inside `${...}` (`:-x`, `:?`, `/a/b`); empty for `$NAME`.
    pub(crate) modifier: String,
}

impl Var {
    /// Whether the expansion can never be empty: `${X:?}` stops the shell instead, and
    /// `${X:-default}` with a non-empty default falls back to it.
    pub(crate) fn never_empty(&self) -> bool {
        let m = self.modifier.as_str();
        m.starts_with(":?")
            || m.starts_with('?')
            || ((m.starts_with(":-") || m.starts_with(":=")) && m.len() > 2)
    }
}

/// A shell word: the parts that are concatenated when it is expanded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word {
    /// The parts in order.
    pub(crate) parts: Vec<Part>,
}

impl Word {
    /// A word of plain literal text.
    pub(crate) fn literal_word(text: &str) -> Word {
        Word {
            parts: vec![Part::Lit(text.to_owned())],
        }
    }

    /// The text, when the word is literal text only (no expansion, glob or tilde).
    pub(crate) fn literal(&self) -> Option<String> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Lit(text) => out.push_str(text),
                Part::Glob(_)
                | Part::Tilde(_)
                | Part::Var(_)
                | Part::Subst(_)
                | Part::ProcSubst(_)
                | Part::Arith(_) => return None,
            }
        }
        Some(out)
    }

    pub(super) fn push_lit(&mut self, text: &str) {
        if let Some(Part::Lit(last)) = self.parts.last_mut() {
            last.push_str(text);
        } else {
            self.parts.push(Part::Lit(text.to_owned()));
        }
    }

    pub(super) fn push_glob(&mut self, text: &str) {
        if let Some(Part::Glob(last)) = self.parts.last_mut() {
            last.push_str(text);
        } else {
            self.parts.push(Part::Glob(text.to_owned()));
        }
    }
}

/// A control operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    /// `&&`
    And,
    /// `||`
    Or,
    /// `;` (and the `case` terminators `;;`, `;&`, `;;&`)
    Semi,
    /// `&`
    Amp,
    /// `|` or `|&`
    Pipe,
    /// A newline.
    Newline,
    /// `(`
    Open,
    /// `)`
    Close,
}

/// What a redirection does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedirectKind {
    /// `<`
    Read,
    /// `>` or `>|`
    Write,
    /// `>>`
    Append,
    /// `&>`, `&>>` or `>&file`: stdout and stderr to a file.
    WriteBoth,
    /// `<>`
    ReadWrite,
    /// `<<` or `<<-`
    HereDoc,
    /// `<<<`
    HereString,
    /// `<&N`
    DupRead,
    /// `>&N`
    DupWrite,
}

impl RedirectKind {
    /// Whether the target is opened for writing.
    pub(crate) fn writes(self) -> bool {
        match self {
            RedirectKind::Write
            | RedirectKind::Append
            | RedirectKind::WriteBoth
            | RedirectKind::ReadWrite => true,
            RedirectKind::Read
            | RedirectKind::HereDoc
            | RedirectKind::HereString
            | RedirectKind::DupRead
            | RedirectKind::DupWrite => false,
        }
    }
}

/// A redirection with its target (the delimiter for a here-document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// What it does.
    pub(crate) kind: RedirectKind,
    /// The file, descriptor, delimiter or here-string.
    pub(crate) target: Word,
    /// The body of a here-document.
    pub(crate) body: Option<String>,
}

/// One token of a command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Token {
    /// A word.
    Word(Word),
    /// A control operator.
    Op(Op),
    /// A redirection.
    Redirect(Redirect),
}
