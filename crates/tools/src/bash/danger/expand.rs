//! What words expand to, as far as the text tells: known variables, the home directory, the
//! current directory as `cd` changed it, and variables that may be empty.

use super::Walker;
use super::commands::split_assignment;
use super::paths::{AbsPath, GLOB_MARK, resolve as resolve_path};
use super::words::{Part, Var, Word};

/// What a word expands to, as far as the checker can tell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Expanded {
    /// Fully known; unquoted globs are [`GLOB_MARK`].
    Known(String),
    /// Known if the named variables, which may be empty or unset, are empty.
    IfEmpty { text: String, vars: Vec<String> },
    /// Depends on the run (command substitution, `~user`, `${X:?}`...).
    Unknown,
}

impl Walker {
    /// Follows `cd`/`pushd`, so that later relative paths resolve where the shell would be.
    pub(super) fn change_dir(&mut self, args: &[Word]) {
        let operand = args.iter().find(|w| !self.is_option(w));
        let target = match operand {
            None => Expanded::Known(self.vars.get("HOME").cloned().unwrap_or_default()),
            Some(word) => self.expand(word),
        };
        self.cwd = match target {
            Expanded::Known(text)
                if text != "-" && !text.contains(GLOB_MARK) && !text.is_empty() =>
            {
                resolve_path(&text, self.cwd.as_ref())
            }
            Expanded::Known(_) | Expanded::IfEmpty { .. } | Expanded::Unknown => None,
        };
    }

    /// Records `NAME=value` words: known values are remembered, others forgotten.
    pub(super) fn assign(&mut self, words: &[Word]) {
        for (name, value) in words.iter().filter_map(split_assignment) {
            self.non_empty.remove(&name);
            match self.expand(&value) {
                Expanded::Known(text) => self.vars.insert(name, text.replace(GLOB_MARK, "*")),
                Expanded::IfEmpty { .. } | Expanded::Unknown => self.vars.remove(&name),
            };
        }
    }

    /// `$CMD args` with a known `CMD="rm -rf"`: the value is split into words, as bash does.
    pub(super) fn split_command_variable(&self, words: &[Word]) -> Vec<Word> {
        if let Some(Word { parts }) = words.first()
            && let [Part::Var(var)] = parts.as_slice()
            && var.modifier.is_empty()
            && let Some(value) = self.vars.get(&var.name)
        {
            let mut split: Vec<Word> = value.split_whitespace().map(Word::literal_word).collect();
            split.extend(words[1..].iter().cloned());
            return split;
        }
        words.to_vec()
    }

    /// A variable's value, when known.
    pub(super) fn var_value(&self, var: &Var) -> Option<String> {
        if var.name == "PWD" && !self.vars.contains_key("PWD") {
            return self.cwd.as_ref().map(AbsPath::as_text);
        }
        self.vars.get(&var.name).cloned()
    }

    /// What `word` expands to.
    pub(super) fn expand(&self, word: &Word) -> Expanded {
        let mut text = String::new();
        let mut empty_vars = Vec::new();
        for (i, part) in word.parts.iter().enumerate() {
            match part {
                Part::Lit(lit) => text.push_str(lit),
                Part::Glob(glob) if glob.chars().all(|c| matches!(c, '*' | '?' | '[')) => {
                    text.extend(glob.chars().map(|_| GLOB_MARK));
                }
                Part::Glob(_) => text.push(GLOB_MARK),
                Part::Tilde(user) if i == 0 && user.is_empty() => {
                    text.push_str(self.vars.get("HOME").map_or("", String::as_str));
                }
                // `~+`, `$(pwd)`, `` `pwd` ``: the current directory, when it is known.
                Part::Tilde(user) if i == 0 && user == "+" => match &self.cwd {
                    Some(cwd) => text.push_str(&cwd.as_text()),
                    None => return Expanded::Unknown,
                },
                Part::Subst(inner) if prints_cwd(inner) => match &self.cwd {
                    Some(cwd) => text.push_str(&cwd.as_text()),
                    None => return Expanded::Unknown,
                },
                Part::Var(var)
                    if var.name.is_empty()
                        || matches!(var.name.as_str(), "$" | "?" | "#" | "!" | "-") =>
                {
                    return Expanded::Unknown;
                }
                Part::Var(var) => match (self.var_value(var), var.modifier.as_str()) {
                    (Some(value), "") => text.push_str(&value),
                    (Some(value), m) if m.starts_with(['-', '?', '=']) || m.starts_with(":?") => {
                        text.push_str(&value);
                    }
                    (Some(value), m)
                        if (m.starts_with(":-") || m.starts_with(":=")) && !value.is_empty() =>
                    {
                        text.push_str(&value);
                    }
                    (Some(_), m) if m.starts_with(":-") || m.starts_with(":=") => {
                        text.push_str(&m[2..]);
                    }
                    (Some(_), _) => return Expanded::Unknown,
                    (None, _) if var.never_empty() || self.non_empty.contains(&var.name) => {
                        return Expanded::Unknown;
                    }
                    (None, _) => empty_vars.push(var.name.clone()),
                },
                Part::Tilde(_) | Part::Subst(_) | Part::ProcSubst(_) | Part::Arith(_) => {
                    return Expanded::Unknown;
                }
            }
        }
        if empty_vars.is_empty() {
            Expanded::Known(text)
        } else {
            Expanded::IfEmpty {
                text,
                vars: empty_vars,
            }
        }
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
            | Part::Arith(_) => None,
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

    /// What `echo ARGS` or `printf FORMAT ARGS` prints, when the command line says it.
    pub(super) fn printed_text(&self, name: &str, args: &[Word]) -> Option<String> {
        let texts: Vec<String> = args.iter().map(|a| self.script_text(a)).collect();
        match name {
            "echo" => {
                let start = texts
                    .iter()
                    .take_while(|t| matches!(t.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                    .count();
                Some(texts[start..].join(" ").replace("\\n", "\n"))
            }
            "printf" => {
                let mut texts = texts.iter();
                let mut format = texts.next()?.clone();
                if format == "--" {
                    format = texts.next()?.clone();
                }
                for arg in texts {
                    match ["%s", "%b"].iter().filter_map(|f| format.find(f)).min() {
                        Some(at) => format.replace_range(at..at + 2, arg),
                        None => break,
                    }
                }
                Some(format.replace("\\n", "\n"))
            }
            _ => None,
        }
    }

    /// The text an outer shell hands to `bash -c`: known variables substituted, the rest as
    /// written so the inner check still sees them.
    pub(super) fn script_text(&self, word: &Word) -> String {
        let mut text = String::new();
        for part in &word.parts {
            match part {
                Part::Lit(lit) | Part::Glob(lit) => text.push_str(lit),
                Part::Tilde(user) => {
                    text.push('~');
                    text.push_str(user);
                }
                Part::Var(var) => match self.var_value(var) {
                    Some(value) if var.modifier.is_empty() => text.push_str(&value),
                    Some(_) | None => text.push_str(&format!("${{{}{}}}", var.name, var.modifier)),
                },
                Part::Subst(inner) => text.push_str(&format!("$({inner})")),
                Part::ProcSubst(inner) => text.push_str(&format!("<({inner})")),
                Part::Arith(inner) => text.push_str(&format!("$(({inner}))")),
            }
        }
        text
    }
}

/// Whether the command line `src` prints the current directory (`pwd`, `pwd -P`).
fn prints_cwd(src: &str) -> bool {
    matches!(
        src.split_whitespace().collect::<Vec<_>>().as_slice(),
        ["pwd"] | ["pwd", "-L" | "-P"]
    )
}

/// A word as the model wrote it, roughly, for messages.
pub(super) fn display_word(word: &Word) -> String {
    let mut text = String::new();
    for part in &word.parts {
        match part {
            Part::Lit(lit) | Part::Glob(lit) => text.push_str(lit),
            Part::Tilde(user) => {
                text.push('~');
                text.push_str(user);
            }
            Part::Var(var) if var.modifier.is_empty() => text.push_str(&format!("${}", var.name)),
            Part::Var(var) => text.push_str(&format!("${{{}{}}}", var.name, var.modifier)),
            Part::Subst(inner) => text.push_str(&format!("$({inner})")),
            Part::ProcSubst(inner) => text.push_str(&format!("<({inner})")),
            Part::Arith(inner) => text.push_str(&format!("$(({inner}))")),
        }
    }
    text
}
