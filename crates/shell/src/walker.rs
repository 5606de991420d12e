//! Walks a parsed command line the way bash would run it, keeping what the shell would know
//! (variables, the current directory as far as the text tells, how deep the nesting is),
//! recording every simple command, and applying the deny list and the read-only proof to
//! each.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

use super::commands::{Resolution, StdinArgs, resolve};
use super::lower_words::lower_one;
use super::paths::AbsPath;
use super::readonly;
use super::rules::{FETCHERS, WriteVia};
use super::tree::{Body, Command, Compound, Function, Pipeline, Script, Simple};
use super::words::{Part, Redirect, RedirectKind, VarOp, Word};
use super::{Danger, DangerKind, NotReadOnly, SimpleCommand};

/// What the walk found besides refusals.
#[derive(Debug, Default)]
pub(super) struct Findings {
    /// Every simple command, in the order bash would meet them.
    pub(super) commands: Vec<SimpleCommand>,
    /// The first reason the command line is not provably read-only.
    pub(super) not_read_only: Option<NotReadOnly>,
    /// The first such reason that is not one simple command's own (a substitution, a
    /// function, `&`, a line that does not parse).
    pub(super) structure: Option<NotReadOnly>,
    /// How many command lines (the whole or nested ones) did not parse.
    pub(super) failures: usize,
    /// Symbolic links the command line makes (`ln -s / x`): the link and where it points.
    /// Kept for the whole walk, subshells included, since a link outlives them.
    pub(super) links: Vec<(AbsPath, AbsPath)>,
}

/// The shell's state as the walk goes, and where findings go.
#[derive(Debug, Clone)]
pub(super) struct Walker {
    pub(super) home: Option<AbsPath>,
    pub(super) workspace: Option<AbsPath>,
    /// The current directory; `None` once it cannot be known (`cd "$X"`).
    pub(super) cwd: Option<AbsPath>,
    /// The directory the command line starts in.
    pub(super) start_cwd: Option<AbsPath>,
    /// Variables whose value is known; others are unknown.
    pub(super) vars: HashMap<String, String>,
    /// Variables whose value is unknown but never empty (`for` loop variables).
    pub(super) non_empty: HashSet<String>,
    /// The values a `for` loop variable takes, when the loop lists them (`for d in a /*`);
    /// unquoted globs in them stay globs.
    pub(super) loop_values: HashMap<String, Vec<String>>,
    /// Variables holding what a command printed or read (`d=$(cmd)`, `read d`): any path.
    pub(super) run_time: HashSet<String>,
    /// Levels of nested command lines entered so far.
    pub(super) depth: usize,
    /// How much more nesting the stack this runs on has room for.
    pub(super) nesting_budget: usize,
    /// The command line as given. A nested command line taken from it (`bash -c '...'`)
    /// nests no deeper than it did there, so it costs no budget; text made up from
    /// variables (`bash -c "$X$X"`) does.
    pub(super) source: Rc<str>,
    /// Set while text is checked against the deny list only, as a precaution: nothing is
    /// recorded for the rules or the read-only proof.
    pub(super) silent: bool,
    pub(super) found: Rc<RefCell<Findings>>,
}

/// Where a command's standard input comes from, as far as it matters here.
#[derive(Debug, Clone, Default)]
pub(super) struct Stdin {
    /// Whether an earlier command of the pipeline downloads (`curl`, `wget`).
    pub(super) from_fetcher: bool,
    /// The text the previous command prints, when the command line says it (`echo 'ls'`).
    pub(super) printed: Option<String>,
}

/// A command found by [`resolve`], as the rules see it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Named<'a> {
    /// The command name, without its directory.
    pub(super) name: &'a str,
    /// Its arguments.
    pub(super) args: &'a [Word],
    /// Arguments it also reads from its standard input (`xargs`).
    pub(super) stdin_args: &'a StdinArgs,
}

/// Whether shell state changes (`cd`, assignments) made by a command last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Shell {
    /// The same shell: `cd` and assignments affect what follows.
    Same,
    /// A subshell or another process: they do not.
    Subshell,
}

/// A refusal of the given kind.
pub(super) fn refuse<T>(kind: DangerKind, reason: String) -> Result<T, Danger> {
    Err(Danger { kind, reason })
}

impl Walker {
    /// Records that the command line is not provably read-only, for a reason beyond its
    /// simple commands (the first reason wins).
    pub(super) fn note(&self, reason: impl FnOnce() -> NotReadOnly) {
        if self.silent {
            return;
        }
        let mut found = self.found.borrow_mut();
        if found.structure.is_none() {
            let reason = reason();
            found.structure = Some(reason.clone());
            found.not_read_only.get_or_insert(reason);
        }
    }

    /// Records that one simple command is not provably read-only.
    pub(super) fn note_command(&self, reason: &NotReadOnly) {
        if self.silent {
            return;
        }
        self.found
            .borrow_mut()
            .not_read_only
            .get_or_insert_with(|| reason.clone());
    }

    pub(super) fn walk_script(&mut self, script: &Script, stdin: &Stdin) -> Result<(), Danger> {
        for item in &script.items {
            if item.background {
                self.note(|| NotReadOnly::Background);
            }
            for pipeline in &item.pipelines {
                self.walk_pipeline(pipeline, item.background, stdin)?;
            }
        }
        Ok(())
    }

    fn walk_pipeline(
        &mut self,
        pipeline: &Pipeline,
        background: bool,
        stdin: &Stdin,
    ) -> Result<(), Danger> {
        let shell = if background || pipeline.commands.len() > 1 {
            Shell::Subshell
        } else {
            Shell::Same
        };
        let mut stdin = stdin.clone();
        for command in &pipeline.commands {
            stdin = match command {
                Command::Simple(simple) => self.walk_simple(simple, &stdin, shell)?,
                Command::Compound(compound) => {
                    self.walk_compound(compound, &stdin, shell)?;
                    Stdin {
                        from_fetcher: stdin.from_fetcher,
                        printed: None,
                    }
                }
                Command::Function(function) => {
                    self.walk_function(function)?;
                    Stdin::default()
                }
            };
        }
        Ok(())
    }

    fn walk_function(&mut self, function: &Function) -> Result<(), Danger> {
        self.note(|| NotReadOnly::DefinesFunction {
            name: function.name.clone(),
        });
        let mut calls_itself_concurrently = false;
        for script in function.body.scripts() {
            for item in &script.items {
                for pipeline in &item.pipelines {
                    let concurrent = item.background || pipeline.commands.len() > 1;
                    calls_itself_concurrently |= concurrent
                        && pipeline.commands.iter().any(|c| match c {
                            Command::Simple(simple) => matches!(
                                resolve(&simple.words),
                                Resolution::Command { name, .. } if name == function.name
                            ),
                            Command::Compound(_) | Command::Function(_) => false,
                        });
                }
            }
        }
        if calls_itself_concurrently {
            return refuse(
                DangerKind::ForkBomb,
                format!(
                    "`{}` is a fork bomb: the function starts copies of itself until the machine stops",
                    function.name
                ),
            );
        }
        // The body runs when the function is called: check it as if it ran here.
        self.clone()
            .walk_compound(&function.body, &Stdin::default(), Shell::Same)
    }

    fn walk_compound(
        &mut self,
        compound: &Compound,
        stdin: &Stdin,
        shell: Shell,
    ) -> Result<(), Danger> {
        if shell == Shell::Subshell {
            return self.clone().walk_compound(compound, stdin, Shell::Same);
        }
        self.walk_redirects(&compound.redirects)?;
        for redirect in &compound.redirects {
            if let Err(reason) = readonly::redirect(self, redirect) {
                self.note(|| reason);
            }
        }
        match &compound.body {
            Body::Group(script) => self.walk_script(script, stdin),
            Body::Subshell(script) => self.clone().walk_script(script, stdin),
            Body::If(parts) => parts.iter().try_for_each(|s| self.walk_script(s, stdin)),
            Body::Loop { condition, body } => {
                self.walk_script(condition, stdin)?;
                self.walk_script(body, stdin)
            }
            Body::For { var, values, body } => {
                for value in values.iter().flatten() {
                    self.walk_word(value)?;
                }
                self.enter_for(var, values.as_deref());
                self.walk_script(body, stdin)
            }
            Body::ArithFor { exprs, body } => {
                for expr in exprs {
                    self.walk_arithmetic(expr)?;
                }
                self.walk_script(body, stdin)
            }
            Body::Case { subject, arms } => {
                self.walk_word(subject)?;
                for (patterns, script) in arms {
                    patterns.iter().try_for_each(|p| self.walk_word(p))?;
                    self.walk_script(script, stdin)?;
                }
                Ok(())
            }
            Body::Test(words) => words.iter().try_for_each(|w| self.walk_word(w)),
            Body::Arithmetic(text) => {
                // Listed for the rules, so that a list of commands never leaves it out.
                self.record_other(format!("(({text}))"), NotReadOnly::ArithmeticCommand);
                self.walk_arithmetic(text)
            }
        }
    }

    /// Arithmetic may assign variables, and runs the `$( )` inside it. bash also reads
    /// `( ( cmd ) )` and `(( cmd ) )` as nested subshells where brush-parser sees arithmetic,
    /// so the text is checked against the deny list as commands too.
    fn walk_arithmetic(&mut self, text: &str) -> Result<(), Danger> {
        self.note(|| NotReadOnly::Arithmetic);
        self.walk_word(&lower_one(text))?;
        let mut as_commands = self.clone();
        as_commands.silent = true;
        // The text is the inside of a parsed `(( ))`, respaced by the parser.
        as_commands.walk_source_within(text, Shell::Subshell, true)
    }

    /// Walks the commands a word runs when it is expanded.
    pub(super) fn walk_word(&mut self, word: &Word) -> Result<(), Danger> {
        for part in &word.parts {
            match part {
                Part::Subst(src) => {
                    self.note(|| NotReadOnly::CommandSubstitution {
                        command: src.trim().to_owned(),
                    });
                    self.walk_source(src, Shell::Subshell)?;
                }
                Part::ProcSubst(script) => {
                    self.note(|| NotReadOnly::ProcessSubstitution);
                    self.walk_nested(script, Shell::Subshell)?;
                }
                Part::Var(var) => {
                    for inner in &var.inner {
                        self.walk_word(inner)?;
                    }
                    match &var.op {
                        VarOp::Default { word, assign, .. } => {
                            if *assign {
                                self.note(|| NotReadOnly::AssignsInExpansion {
                                    name: var.name.clone(),
                                });
                            }
                            self.walk_word(word)?;
                        }
                        VarOp::Alternative { word } => self.walk_word(word)?,
                        VarOp::Plain | VarOp::Required | VarOp::Other | VarOp::Transformed => {}
                    }
                }
                Part::Arith(text) => self.walk_arithmetic(text)?,
                Part::Unreadable(text) => {
                    self.note(|| NotReadOnly::UnreadableWord { word: text.clone() });
                }
                Part::Lit(_) | Part::Glob(_) | Part::Tilde(_) => {}
            }
        }
        Ok(())
    }

    /// Substitutions in redirection targets and here-documents, and writes to disks.
    fn walk_redirects(&mut self, redirects: &[Redirect]) -> Result<(), Danger> {
        for redirect in redirects {
            self.walk_word(&redirect.target)?;
            if let Some(body) = redirect.body.as_ref().filter(|b| b.expands) {
                // Quotes are plain text in a here-document: neutralise them so that only
                // `$`, `` ` `` and `\` keep their meaning when the body is read as a word.
                let text: String = body
                    .text
                    .chars()
                    .map(|c| if matches!(c, '\'' | '"') { '_' } else { c })
                    .collect();
                self.walk_word(&lower_one(&text))?;
            }
            if redirect.kind.writes() {
                self.check_device_write(&redirect.target, WriteVia::Redirect)?;
            }
        }
        Ok(())
    }

    /// Checks one simple command; returns what the next command of a pipeline reads.
    pub(super) fn walk_simple(
        &mut self,
        simple: &Simple,
        stdin: &Stdin,
        shell: Shell,
    ) -> Result<Stdin, Danger> {
        for assignment in &simple.assignments {
            let words = assignment.values.iter().chain(&assignment.indexes);
            for word in words {
                self.walk_word(word)?;
            }
        }
        simple.words.iter().try_for_each(|w| self.walk_word(w))?;
        self.walk_redirects(&simple.redirects)?;
        self.record(simple);
        let mut next = Stdin {
            from_fetcher: stdin.from_fetcher,
            printed: None,
        };
        if simple.words.is_empty() {
            if shell == Shell::Same {
                self.assign_all(&simple.assignments);
            }
            return Ok(next);
        }
        let words = self.split_command_variable(&simple.words);
        match resolve(&words) {
            Resolution::Nothing => {
                self.check_dynamic_program(&words, &simple.redirects, stdin)?;
                Ok(next)
            }
            Resolution::Assignments(words) => {
                if shell == Shell::Same {
                    self.assign(words);
                }
                Ok(next)
            }
            Resolution::SplitString { text, rest } => {
                let mut src = self.script_text(&text);
                for word in rest {
                    src.push(' ');
                    src.push_str(&self.script_text(word));
                }
                self.walk_source(&src, Shell::Subshell)?;
                Ok(next)
            }
            Resolution::Command {
                name,
                args,
                stdin_args,
                ..
            } => {
                let named = Named {
                    name: &name,
                    args,
                    stdin_args: &stdin_args,
                };
                self.check_named(&named, &simple.redirects, stdin, shell)?;
                // `declare -a a=(/)`: the arrays and values the declaration builtins assign,
                // from the parsed assignments (the words alone read `a=(/)` as text).
                if shell == Shell::Same
                    && matches!(
                        name.as_str(),
                        "declare" | "typeset" | "local" | "export" | "readonly"
                    )
                {
                    self.assign_all(&simple.arg_assignments);
                }
                next.from_fetcher |= FETCHERS.contains(&name.as_str());
                next.printed = match name.as_str() {
                    "echo" | "printf" => self.printed_text(&name, args),
                    // `tee` copies its input through; `cat` does when it reads no file.
                    "tee" => stdin.printed.clone(),
                    "cat" if args.iter().all(|a| self.is_option(a)) => self
                        .redirected_input(&simple.redirects)
                        .or_else(|| stdin.printed.clone()),
                    _ => None,
                };
                Ok(next)
            }
        }
    }

    /// The text a command reads from a here-document or here-string, when it reads one.
    fn redirected_input(&self, redirects: &[Redirect]) -> Option<String> {
        redirects.iter().rev().find_map(|r| match r.kind {
            RedirectKind::HereDoc => r.body.as_ref().map(|b| b.text.clone()),
            RedirectKind::HereString => Some(format!("{}\n", self.script_text(&r.target))),
            _ => None,
        })
    }

    /// Sets a `for` loop's variable: one of the words in turn, never empty; a command's
    /// output when they come from `$( )`.
    pub(super) fn enter_for(&mut self, name: &str, values: Option<&[Word]>) {
        self.vars.remove(name);
        self.loop_values.remove(name);
        self.run_time.remove(name);
        let values = values.unwrap_or_default();
        if values.iter().any(Word::substitutes) {
            self.run_time.insert(name.to_owned());
        }
        let known: Option<Vec<String>> = values
            .iter()
            .map(|w| match self.expand(w) {
                super::expand::Expanded::Known(text) => Some(text),
                super::expand::Expanded::Maybe { .. } | super::expand::Expanded::Unknown => None,
            })
            .collect();
        if let Some(known) = known.filter(|v| !v.is_empty()) {
            self.loop_values.insert(name.to_owned(), known);
        }
        self.non_empty.insert(name.to_owned());
    }

    /// `read NAME...`, `mapfile NAME`: the variables hold whatever was read.
    pub(super) fn read_into(&mut self, args: &[Word]) {
        for name in args.iter().filter_map(Word::literal) {
            if name.starts_with('-') || name.is_empty() {
                continue;
            }
            self.vars.remove(&name);
            self.non_empty.remove(&name);
            self.run_time.insert(name);
        }
    }
}
