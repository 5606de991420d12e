//! The shape of a parsed command line, as the analysis walks it: lists, pipelines, simple
//! commands, compound commands and function definitions. It is lowered from brush-parser's
//! syntax tree (`lower.rs`) and keeps only what the checks need.

use super::words::{Redirect, Word};

/// Commands run one after another (`a; b & c && d`, or one per line).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Script {
    /// The and-or lists in order.
    pub(crate) items: Vec<Item>,
}

/// Pipelines joined by `&&` and `||`, possibly run in the background.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Item {
    /// The pipelines in order.
    pub(crate) pipelines: Vec<Pipeline>,
    /// Whether the list ends with `&`.
    pub(crate) background: bool,
}

/// Commands joined by `|`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Pipeline {
    /// The commands, left to right.
    pub(crate) commands: Vec<Command>,
}

/// One command of a pipeline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Words, assignments and redirections.
    Simple(Simple),
    /// `{ }`, `( )`, `if`, loops, `case`, `[[ ]]`, `(( ))`.
    Compound(Compound),
    /// `name() { ...; }`
    Function(Function),
}

/// A simple command.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Simple {
    /// The `NAME=value` words before the command name.
    pub(crate) assignments: Vec<Assignment>,
    /// The words, command name first (after brace expansion).
    pub(crate) words: Vec<Word>,
    /// The words as written, before brace expansion (`ls {a,b}`); empty when the words
    /// were not written so (a `find -exec` command).
    pub(crate) written: Vec<String>,
    /// The redirections, in order.
    pub(crate) redirects: Vec<Redirect>,
    /// The `NAME=value` words after the command name, as assignments (`declare -a a=(/)`
    /// assigns an array, which the word alone does not say).
    pub(crate) arg_assignments: Vec<Assignment>,
}

/// `NAME=value`, `NAME+=value` or `NAME=(a b)` before a command name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Assignment {
    /// The variable's name (without an array index).
    pub(crate) name: String,
    /// The value; the elements of an array.
    pub(crate) values: Vec<Word>,
    /// Whether it assigns an array or an array element (so the name's plain value is not
    /// known from it).
    pub(crate) array: bool,
    /// Array indexes and keys, which bash expands too (`a[$(cmd)]=x`).
    pub(crate) indexes: Vec<Word>,
    /// As written.
    pub(crate) raw: String,
}

/// A compound command and its redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Compound {
    /// What it is.
    pub(crate) body: Body,
    /// Redirections after it (`{ ...; } > out`).
    pub(crate) redirects: Vec<Redirect>,
}

/// The kinds of compound command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Body {
    /// `{ ...; }`: run in the same shell.
    Group(Script),
    /// `( ... )`: run in a subshell.
    Subshell(Script),
    /// `if`, `elif`, `else`: the conditions and bodies in order.
    If(Vec<Script>),
    /// `while` or `until`.
    Loop {
        /// The condition.
        condition: Script,
        /// The body.
        body: Script,
    },
    /// `for NAME in WORDS; do ...; done` (`values` is `None` without `in`).
    For {
        /// The loop variable.
        var: String,
        /// The words it takes in turn.
        values: Option<Vec<Word>>,
        /// The body.
        body: Script,
    },
    /// `for ((...; ...; ...)); do ...; done`.
    ArithFor {
        /// The three arithmetic expressions, as written.
        exprs: Vec<String>,
        /// The body.
        body: Script,
    },
    /// `case WORD in PATTERNS) ...;; esac`.
    Case {
        /// The word matched.
        subject: Word,
        /// Each arm's patterns and commands.
        arms: Vec<(Vec<Word>, Script)>,
    },
    /// `[[ ... ]]`: its operand words.
    Test(Vec<Word>),
    /// `(( ... ))`: arithmetic, which may assign variables.
    Arithmetic(String),
}

/// A function definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Function {
    /// The function's name.
    pub(crate) name: String,
    /// Its body.
    pub(crate) body: Box<Compound>,
}

impl Compound {
    /// The command lists inside, in source order.
    pub(crate) fn scripts(&self) -> Vec<&Script> {
        match &self.body {
            Body::Group(s) | Body::Subshell(s) | Body::ArithFor { body: s, .. } => vec![s],
            Body::If(parts) => parts.iter().collect(),
            Body::Loop { condition, body } => vec![condition, body],
            Body::For { body, .. } => vec![body],
            Body::Case { arms, .. } => arms.iter().map(|(_, s)| s).collect(),
            Body::Test(_) | Body::Arithmetic(_) => Vec::new(),
        }
    }
}

impl Script {
    /// Calls `f` on every simple command in this script (not those inside words), in order.
    pub(crate) fn each_simple<'a>(&'a self, f: &mut impl FnMut(&'a Simple)) {
        for command in self
            .items
            .iter()
            .flat_map(|i| &i.pipelines)
            .flat_map(|p| &p.commands)
        {
            match command {
                Command::Simple(simple) => f(simple),
                Command::Compound(compound) => {
                    compound.scripts().iter().for_each(|s| s.each_simple(f));
                }
                Command::Function(function) => {
                    function
                        .body
                        .scripts()
                        .iter()
                        .for_each(|s| s.each_simple(f));
                }
            }
        }
    }

    /// The simple command this script consists of, when it is exactly one.
    pub(crate) fn only_simple(&self) -> Option<&Simple> {
        match self.items.as_slice() {
            [item] if !item.background => match item.pipelines.as_slice() {
                [pipeline] => match pipeline.commands.as_slice() {
                    [Command::Simple(simple)] => Some(simple),
                    _ => None,
                },
                _ => None,
            },
            _ => None,
        }
    }
}
