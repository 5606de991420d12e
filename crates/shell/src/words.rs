//! Shell words as the analysis sees them: literal, glob and expansion parts, with the text
//! the model wrote kept beside them.

use super::tree::Script;

/// One piece of a shell word.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Part {
    /// Literal text, with quotes and escapes removed.
    Lit(String),
    /// An unquoted pattern: `*`, `?`, a bracket expression `[a-z]` or an extglob group.
    Glob(String),
    /// An unquoted `~` (empty name), `~+` or `~user` at the start of a word.
    Tilde(String),
    /// `$NAME` or `${NAME...}`.
    Var(Var),
    /// `$(...)` or backticks: the inner source.
    Subst(String),
    /// `<(...)` or `>(...)`: the commands inside.
    ProcSubst(Box<Script>),
    /// `$((...))`: an arithmetic expansion.
    Arith(String),
    /// Text the word parser could not read; it is known only when the command runs.
    Unreadable(String),
}

/// A parameter expansion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Var {
    /// The parameter name (`HOME`, `1`, `@`).
    pub(crate) name: String,
    /// What the expansion does with the value.
    pub(crate) op: VarOp,
    /// Other words bash expands with it: patterns, replacements, offsets, an array index,
    /// an error message (`${x//$(cmd)/y}` runs `cmd`).
    pub(crate) inner: Vec<Word>,
}

/// What a parameter expansion does with the parameter's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum VarOp {
    /// `$X`, `${X}`, `${X[1]}`.
    Plain,
    /// `${X:-word}`, `${X-word}` (`assign` for `${X:=word}`): `word` when X is unset (or,
    /// with `null_too`, empty).
    Default {
        /// The fallback word.
        word: Box<Word>,
        /// Whether an empty value falls back too (the `:` forms).
        null_too: bool,
        /// Whether the fallback is also assigned to X.
        assign: bool,
    },
    /// `${X:?}`, `${X?}`: the shell stops instead of expanding to nothing.
    Required,
    /// `${X:+word}`: `word` when X is set (and, with the `:`, not empty), else nothing.
    Alternative {
        /// The word used when X is set.
        word: Box<Word>,
    },
    /// `${#X}`, `${!X}`, `${!prefix*}`: a value that is not X's.
    Other,
    /// `${X%/*}`, `${X/a/b}`, `${X:1}`, `${X^^}`: X's value changed at run time.
    Transformed,
}

/// A shell word: the parts that are concatenated when it is expanded.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Word {
    /// The parts in order.
    pub(crate) parts: Vec<Part>,
    /// The word as written (quotes included).
    pub(crate) raw: String,
}

impl Word {
    /// A word of plain literal text.
    pub(crate) fn literal_word(text: &str) -> Word {
        Word {
            parts: vec![Part::Lit(text.to_owned())],
            raw: text.to_owned(),
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
                | Part::Arith(_)
                | Part::Unreadable(_) => return None,
            }
        }
        Some(out)
    }

    /// Whether the word runs commands when it is expanded (`$( )`, backticks, `<( )`).
    pub(crate) fn substitutes(&self) -> bool {
        self.parts.iter().any(|p| match p {
            Part::Subst(_) | Part::ProcSubst(_) => true,
            Part::Var(var) => {
                var.inner.iter().any(Word::substitutes)
                    || match &var.op {
                        VarOp::Default { word, .. } | VarOp::Alternative { word } => {
                            word.substitutes()
                        }
                        VarOp::Plain | VarOp::Required | VarOp::Other | VarOp::Transformed => false,
                    }
            }
            Part::Lit(_)
            | Part::Glob(_)
            | Part::Tilde(_)
            | Part::Arith(_)
            | Part::Unreadable(_) => false,
        })
    }
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

    /// The operator as written.
    pub(crate) fn operator(self) -> &'static str {
        match self {
            RedirectKind::Read => "<",
            RedirectKind::Write => ">",
            RedirectKind::Append => ">>",
            RedirectKind::WriteBoth => "&>",
            RedirectKind::ReadWrite => "<>",
            RedirectKind::HereDoc => "<<",
            RedirectKind::HereString => "<<<",
            RedirectKind::DupRead => "<&",
            RedirectKind::DupWrite => ">&",
        }
    }
}

/// A here-document's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HereDoc {
    /// The text between the lines with the delimiter.
    pub(crate) text: String,
    /// Whether `$`, `` ` `` and `$( )` in it are expanded (the delimiter was not quoted).
    pub(crate) expands: bool,
}

/// A redirection with its target (the delimiter for a here-document).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// The file descriptor written before the operator (`2>`), if any.
    pub(crate) fd: Option<i32>,
    /// What it does.
    pub(crate) kind: RedirectKind,
    /// The file, descriptor, delimiter or here-string.
    pub(crate) target: Word,
    /// The body of a here-document.
    pub(crate) body: Option<HereDoc>,
}

impl Redirect {
    /// The redirection as written, without a here-document's body (`2>&1`, `> out.txt`).
    pub(crate) fn text(&self) -> String {
        let fd = self.fd.map(|fd| fd.to_string()).unwrap_or_default();
        let space = match self.kind {
            RedirectKind::DupRead | RedirectKind::DupWrite | RedirectKind::HereDoc => "",
            RedirectKind::Read
            | RedirectKind::Write
            | RedirectKind::Append
            | RedirectKind::WriteBoth
            | RedirectKind::ReadWrite
            | RedirectKind::HereString => " ",
        };
        format!("{fd}{}{space}{}", self.kind.operator(), self.target.raw)
    }
}
