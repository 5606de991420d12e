//! What words expand to, as far as the text tells: known variables, the home directory, the
//! current directory as `cd` changed it, what `$(echo ...)` prints, and variables that may
//! be empty or set; and the shell state that builtins and assignments change.

use super::commands::split_assignment;
use super::glob;
use super::paths::{AbsPath, resolve as resolve_path};
use super::tree::Assignment;
use super::walker::Walker;
use super::words::{Part, Var, VarOp, Word};

/// What a word expands to, as far as the checker can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Expanded {
    /// Fully known; unquoted globs are marked (see `glob.rs`).
    Known(String),
    /// This text if the variables in `empty` are empty or unset and those in `set` are set
    /// (`$DIR/*` is `/*` when DIR is empty; `${X:-/}` is `/` when X is).
    Maybe {
        /// The text in that case.
        text: String,
        /// Variables taken as empty or unset.
        empty: Vec<String>,
        /// Variables taken as set.
        set: Vec<String>,
    },
    /// Depends on the run (command output, `~user`, `${X:?}`...).
    Unknown,
}

/// Parameters whose value is never a path the text could tell.
const SPECIAL_PARAMETERS: [&str; 5] = ["$", "?", "#", "!", "-"];

#[derive(Default)]
struct Builder {
    text: String,
    empty: Vec<String>,
    set: Vec<String>,
}

impl Walker {
    /// What `word` expands to.
    pub(super) fn expand(&self, word: &Word) -> Expanded {
        let mut out = Builder::default();
        for (i, part) in word.parts.iter().enumerate() {
            if !self.expand_part(part, i == 0, &mut out) {
                return Expanded::Unknown;
            }
        }
        if out.empty.is_empty() && out.set.is_empty() {
            Expanded::Known(out.text)
        } else {
            Expanded::Maybe {
                text: out.text,
                empty: out.empty,
                set: out.set,
            }
        }
    }

    /// Adds what `part` expands to; false when that is unknown.
    fn expand_part(&self, part: &Part, first: bool, out: &mut Builder) -> bool {
        match part {
            Part::Lit(lit) => out.text.push_str(lit),
            Part::Glob(pattern) => glob::encode(pattern, &mut out.text),
            Part::Tilde(user) if first && user.is_empty() => {
                out.text
                    .push_str(self.vars.get("HOME").map_or("", String::as_str));
            }
            // `~+`, `$(pwd)`, `` `pwd` ``: the current directory, when it is known.
            Part::Tilde(user) if first && user == "+" => match &self.cwd {
                Some(cwd) => out.text.push_str(&cwd.as_text()),
                None => return false,
            },
            Part::Subst(inner) => match self.substitution_output(inner) {
                Some(text) => out.text.push_str(&text),
                None => return false,
            },
            Part::Var(var) => return self.expand_var(var, out),
            Part::Tilde(_) | Part::ProcSubst(_) | Part::Arith(_) | Part::Unreadable(_) => {
                return false;
            }
        }
        true
    }

    fn expand_var(&self, var: &Var, out: &mut Builder) -> bool {
        if var.name.is_empty() || SPECIAL_PARAMETERS.contains(&var.name.as_str()) {
            return false;
        }
        let value = self.var_value(var);
        let unknown_but_set =
            self.non_empty.contains(&var.name) || self.run_time.contains(&var.name);
        match (&var.op, value) {
            (VarOp::Other, _) | (VarOp::Transformed, Some(_)) => false,
            (VarOp::Plain | VarOp::Transformed, None) if unknown_but_set => false,
            (VarOp::Plain | VarOp::Transformed, None) => {
                out.empty.push(var.name.clone());
                true
            }
            (VarOp::Plain, Some(value)) => {
                out.text.push_str(&value);
                true
            }
            (VarOp::Required, Some(value)) if !value.is_empty() => {
                out.text.push_str(&value);
                true
            }
            (VarOp::Required, _) => false,
            (VarOp::Default { word, null_too, .. }, Some(value)) => {
                if value.is_empty() && *null_too {
                    self.expand_inner(word, out)
                } else {
                    out.text.push_str(&value);
                    true
                }
            }
            (VarOp::Default { .. }, None) if unknown_but_set => false,
            (VarOp::Default { word, .. }, None) => {
                out.empty.push(var.name.clone());
                self.expand_inner(word, out)
            }
            (VarOp::Alternative { word }, Some(value)) => {
                value.is_empty() || self.expand_inner(word, out)
            }
            (VarOp::Alternative { word }, None) => {
                out.set.push(var.name.clone());
                self.expand_inner(word, out)
            }
        }
    }

    fn expand_inner(&self, word: &Word, out: &mut Builder) -> bool {
        match self.expand(word) {
            Expanded::Known(text) => out.text.push_str(&text),
            Expanded::Maybe { text, empty, set } => {
                out.text.push_str(&text);
                out.empty.extend(empty);
                out.set.extend(set);
            }
            Expanded::Unknown => return false,
        }
        true
    }

    /// A variable's value, when known.
    pub(super) fn var_value(&self, var: &Var) -> Option<String> {
        if var.name == "PWD" && !self.vars.contains_key("PWD") {
            return self.cwd.as_ref().map(AbsPath::as_text);
        }
        self.vars.get(&var.name).cloned()
    }

    /// What `word` expands to on each turn of the `for` loops it is inside (one expansion
    /// when it uses no loop variable whose values are listed).
    pub(super) fn expand_each(&self, word: &Word) -> Vec<Expanded> {
        let loop_var = word.parts.iter().find_map(|p| match p {
            Part::Var(var) if !self.vars.contains_key(&var.name) => {
                self.loop_values.get_key_value(&var.name)
            }
            Part::Var(_)
            | Part::Lit(_)
            | Part::Glob(_)
            | Part::Tilde(_)
            | Part::Subst(_)
            | Part::ProcSubst(_)
            | Part::Arith(_)
            | Part::Unreadable(_) => None,
        });
        let Some((name, values)) = loop_var else {
            return vec![self.expand(word)];
        };
        values
            .iter()
            .flat_map(|value| {
                let mut turn = self.clone();
                turn.loop_values.remove(name);
                turn.non_empty.remove(name);
                turn.vars.insert(name.clone(), value.clone());
                turn.expand_each(word)
            })
            .collect()
    }

    /// Follows `cd`/`pushd`, so that later relative paths resolve where the shell would be.
    pub(super) fn change_dir(&mut self, args: &[Word]) {
        let operand = args.iter().find(|w| !self.is_option(w));
        let target = match operand {
            None => Expanded::Known(self.vars.get("HOME").cloned().unwrap_or_default()),
            Some(word) => self.expand(word),
        };
        self.cwd = match target {
            Expanded::Known(text) if text != "-" && !glob::has_glob(&text) && !text.is_empty() => {
                resolve_path(&text, self.cwd.as_ref())
            }
            Expanded::Known(_) | Expanded::Maybe { .. } | Expanded::Unknown => None,
        };
    }

    /// Records `NAME=value` words (`export`, `local`...): known values are remembered,
    /// others forgotten.
    pub(super) fn assign(&mut self, words: &[Word]) {
        for (name, value) in words.iter().filter_map(split_assignment) {
            self.set_var(name, &value);
        }
    }

    /// Records assignments that stand alone (`D=/; ...`, `a=(x y)`).
    pub(super) fn assign_all(&mut self, assignments: &[Assignment]) {
        for assignment in assignments {
            match assignment.values.as_slice() {
                [value] if !assignment.array => self.set_var(assignment.name.clone(), value),
                values => self.set_array(&assignment.name, values),
            }
        }
    }

    /// `a=(x y)`: `$a` is `x`, `${a[1]}` is `y`, `"${a[@]}"` is `x y`, when all are known.
    fn set_array(&mut self, name: &str, values: &[Word]) {
        let all = format!("{name}[@]");
        for key in [name, all.as_str()] {
            self.vars.remove(key);
            self.non_empty.remove(key);
            self.run_time.remove(key);
        }
        if values.iter().any(Word::substitutes) {
            self.run_time.insert(name.to_owned());
            self.run_time.insert(all);
            return;
        }
        let known: Option<Vec<String>> = values
            .iter()
            .map(|v| match self.expand(v) {
                Expanded::Known(text) => Some(glob::display(&text)),
                Expanded::Maybe { .. } | Expanded::Unknown => None,
            })
            .collect();
        if let Some(known) = known {
            for (i, value) in known.iter().enumerate().skip(1) {
                self.vars.insert(format!("{name}[{i}]"), value.clone());
            }
            self.vars
                .insert(name.to_owned(), known.first().cloned().unwrap_or_default());
            self.vars.insert(all, known.join(" "));
        }
    }

    fn set_var(&mut self, name: String, value: &Word) {
        self.non_empty.remove(&name);
        self.loop_values.remove(&name);
        self.run_time.remove(&name);
        match self.expand(value) {
            // Assignments are not globbed: a pattern in the value is plain text.
            Expanded::Known(text) => {
                self.vars.insert(name, glob::display(&text));
            }
            Expanded::Maybe { .. } | Expanded::Unknown => {
                self.vars.remove(&name);
                if value.substitutes() {
                    self.run_time.insert(name);
                }
            }
        }
    }

    /// A command name written with expansions whose value is known (`$CMD args` with
    /// `CMD="rm -rf"`, `$(echo rm) -rf`, `"${a[@]}"`) is split into words as bash does (on
    /// `$IFS` when the text sets it).
    pub(super) fn split_command_variable(&self, words: &[Word]) -> Vec<Word> {
        let Some(first) = words.first().filter(|w| w.literal().is_none()) else {
            return words.to_vec();
        };
        let Expanded::Known(text) = self.expand(first) else {
            return words.to_vec();
        };
        if glob::has_glob(&text) {
            return words.to_vec();
        }
        let separators = self.vars.get("IFS").map_or(" \t\n", String::as_str);
        let mut split: Vec<Word> = text
            .split(|c: char| separators.contains(c) || c.is_whitespace())
            .filter(|w| !w.is_empty())
            .map(Word::literal_word)
            .collect();
        split.extend(words[1..].iter().cloned());
        split
    }

    /// Whether `word` is an option (`-x`, `--long`).
    pub(super) fn is_option(&self, word: &Word) -> bool {
        matches!(self.expand(word), Expanded::Known(t) if t.starts_with('-') && t.len() > 1)
    }
}
