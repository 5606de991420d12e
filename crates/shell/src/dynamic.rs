//! Programs and arguments that come from variables or command output, judged by what they
//! could be: `$SHELL -c 'rm -rf /'`, `${R:-rm} -rf /`, `` `which rm` -rf / ``,
//! `a="-rf /"; rm $a`, `set -- /; rm -rf "$1"`.

use super::commands::{StdinArgs, command_basename};
use super::expand::Expanded;
use super::glob;
use super::walker::{Named, Shell, Stdin, Walker};
use super::words::{Part, Redirect, VarOp, Word};
use super::{Danger, SHELLS};

/// Variables that hold the path of a shell: `$SHELL -c '...'` runs a command line.
const SHELL_VARIABLES: [&str; 4] = ["SHELL", "BASH", "0", "ZSH_NAME"];

impl Walker {
    /// A command whose program word is known only at run time: checked, against the deny
    /// list only, as each program it could be: what the text says (`$SHELL` is a shell,
    /// `${R:-rm}` is rm when R is empty), rm (`$R -rf /`), and a shell when it is given a
    /// command line (`$X -c 'rm -rf /'`). It is refused only when its arguments would destroy
    /// a protected place as one of these, so `$EDITOR notes.txt` or `$CC -o x x.c` are not.
    pub(super) fn check_dynamic_program(
        &self,
        words: &[Word],
        redirects: &[Redirect],
        stdin: &Stdin,
    ) -> Result<(), Danger> {
        // Past the wrappers (`sudo $CMD ...`), to the word that names the program.
        let Some(at) = words.iter().position(|w| w.literal().is_none()) else {
            return Ok(());
        };
        let (program, args) = (&words[at], &words[at + 1..]);
        let mut names: Vec<String> = Vec::new();
        if self.names_shell(program) {
            names.push("bash".to_owned());
        }
        // `${R:-rm}`: what it is when the variable is empty.
        if let Expanded::Known(text) | Expanded::Maybe { text, .. } = self.expand(program)
            && !text.is_empty()
            && !glob::has_glob(&text)
        {
            names.push(command_basename(text.trim()).to_owned());
        }
        names.push("rm".to_owned());
        // As a shell only where it is given a command line (`$X -c '...'`): `curl url |
        // $PAGER` is not refused as a download run by a shell.
        let command_line = args
            .first()
            .and_then(Word::literal)
            .is_some_and(|t| t.starts_with('-') && !t.starts_with("--") && t.contains('c'));
        if command_line {
            names.push("bash".to_owned());
        }
        names.dedup();
        let mut shadow = self.clone();
        shadow.silent = true;
        for name in &names {
            let named = Named {
                name,
                args,
                stdin_args: &StdinArgs::None,
            };
            shadow.check_named(&named, redirects, stdin, Shell::Subshell)?;
        }
        Ok(())
    }

    /// Whether `word` is `$SHELL`, `${BASH}`, `"$0"`... whose value is not known.
    fn names_shell(&self, word: &Word) -> bool {
        let mut parts = word
            .parts
            .iter()
            .filter(|p| !matches!(p, Part::Lit(t) if t.is_empty()));
        match (parts.next(), parts.next()) {
            (Some(Part::Var(var)), None) => {
                var.op != VarOp::Other
                    && (SHELL_VARIABLES.contains(&var.name.as_str())
                        || self
                            .var_value(var)
                            .is_some_and(|v| SHELLS.contains(&command_basename(&v))))
            }
            _ => false,
        }
    }

    /// The words bash passes for `words` when an unquoted variable holds several words or a
    /// pattern (`a="-rf /"; rm $a`). The text does not keep which expansions were quoted,
    /// so every one is split: for the deny list, reading `"$a"` as `$a` refuses a few odd
    /// file names (`"-rf /"`), never a command that destroys.
    pub(super) fn split_fields(&self, words: &[Word]) -> Vec<Word> {
        let mut out = Vec::with_capacity(words.len());
        for word in words {
            let has_var = word.parts.iter().any(|p| matches!(p, Part::Var(_)));
            match self.expand(word) {
                Expanded::Known(text)
                    if has_var
                        && (text.contains(char::is_whitespace) || text.contains(['*', '?'])) =>
                {
                    out.extend(text.split_whitespace().map(field_word));
                }
                Expanded::Known(_) | Expanded::Maybe { .. } | Expanded::Unknown => {
                    out.push(word.clone());
                }
            }
        }
        out
    }

    /// `set -- a b`, `set x y`: the positional parameters `$1`, `$2`, `$@`, `$*`.
    pub(super) fn set_positional(&mut self, args: &[Word]) {
        let operands = match args.first().and_then(Word::literal).as_deref() {
            // `set` alone lists the variables.
            None if args.is_empty() => return,
            Some("--") => &args[1..],
            Some(t) if t.starts_with(['-', '+']) => return,
            Some(_) | None => args,
        };
        for i in 1..=9 {
            self.vars.remove(&i.to_string());
        }
        let mut all = Some(Vec::new());
        for (i, word) in operands.iter().enumerate() {
            let name = (i + 1).to_string();
            self.non_empty.remove(&name);
            match self.expand(word) {
                Expanded::Known(text) => {
                    let text = glob::display(&text);
                    if let Some(all) = all.as_mut() {
                        all.push(text.clone());
                    }
                    self.vars.insert(name, text);
                }
                Expanded::Maybe { .. } | Expanded::Unknown => {
                    all = None;
                    self.vars.remove(&name);
                    if word.substitutes() {
                        self.run_time.insert(name);
                    }
                }
            }
        }
        for name in ["@", "*"] {
            match &all {
                Some(all) => self.vars.insert(name.to_owned(), all.join(" ")),
                None => self.vars.remove(name),
            };
        }
    }
}

/// One field of a split value: `*` and `?` in it are patterns, as bash would read them.
fn field_word(field: &str) -> Word {
    let mut parts = Vec::new();
    let mut lit = String::new();
    for c in glob::display(field).chars() {
        if matches!(c, '*' | '?') {
            if !lit.is_empty() {
                parts.push(Part::Lit(std::mem::take(&mut lit)));
            }
            parts.push(Part::Glob(c.to_string()));
        } else {
            lit.push(c);
        }
    }
    if !lit.is_empty() || parts.is_empty() {
        parts.push(Part::Lit(lit));
    }
    Word {
        parts,
        raw: field.to_owned(),
    }
}
