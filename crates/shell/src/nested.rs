//! Command lines inside a command line (`bash -c '...'`, `$( )`, `eval`, `trap`), and text
//! that did not parse, which is searched for commands a parse could have missed.

use super::parse::{nesting_bound, parse, token_commands};
use super::tree::{Script, Simple};
use super::walker::{Shell, Stdin, Walker, refuse};
use super::words::Word;
use super::{Danger, DangerKind, MAX_NESTING_LEVELS, NotReadOnly};

impl Walker {
    /// Walks a nested command line (`bash -c`, `$( )`, `eval`).
    pub(super) fn walk_source(&mut self, src: &str, shell: Shell) -> Result<(), Danger> {
        let contained = self.source.contains(src);
        self.walk_source_within(src, shell, contained)
    }

    /// [`Walker::walk_source`]; `contained` says that `src` is made of the text of the
    /// command line being walked, so it nests no deeper than it did there.
    pub(super) fn walk_source_within(
        &mut self,
        src: &str,
        shell: Shell,
        contained: bool,
    ) -> Result<(), Danger> {
        let needed = nesting_bound(src);
        if needed > self.nesting_budget {
            return refuse(
                DangerKind::TooComplex,
                "the command is nested too deeply to check".to_owned(),
            );
        }
        let parsed = parse(src);
        let failures_before = self.found.borrow().failures;
        if let Some(failure) = &parsed.failure {
            self.failed(failure);
        }
        let budget = self.nesting_budget;
        if !contained {
            self.nesting_budget -= needed;
        }
        let result = self.walk_nested(&parsed.script, shell);
        self.nesting_budget = budget;
        result?;
        if self.found.borrow().failures > failures_before {
            self.scan_unparsed(&parsed.text)?;
        }
        Ok(())
    }

    /// Records that a command line did not parse.
    pub(super) fn failed(&self, why: &NotReadOnly) {
        if self.silent {
            return;
        }
        self.found.borrow_mut().failures += 1;
        self.note(|| why.clone());
    }

    /// Text that did not parse (or holds a part that did not) may hide a command where a
    /// parse would have put an argument: every word that could start a command is judged
    /// as if it did, against the deny list only. Quoted text stays one word, so
    /// `echo 'rm -rf /` is not refused; `echo rm -rf /; echo 'x` is.
    pub(super) fn scan_unparsed(&mut self, text: &str) -> Result<(), Danger> {
        const MAX_SCANNED_COMMANDS: usize = 256;
        const MAX_SCANNED_WORDS: usize = 64;
        let script = token_commands(text);
        let mut simples = Vec::new();
        script.each_simple(&mut |s| simples.push(s));
        let mut shadow = self.clone();
        shadow.silent = true;
        for simple in simples.into_iter().take(MAX_SCANNED_COMMANDS) {
            let starts = simple.words.len().min(MAX_SCANNED_WORDS);
            for start in 0..starts {
                let could_start = simple.words[start]
                    .literal()
                    .is_some_and(|t| !t.is_empty() && !t.starts_with('-'));
                if could_start {
                    let candidate = Simple {
                        words: simple.words[start..].to_vec(),
                        ..Simple::default()
                    };
                    shadow.walk_simple(&candidate, &Stdin::default(), Shell::Subshell)?;
                }
            }
        }
        Ok(())
    }

    /// Walks `bash -c SCRIPT ARG0 ARGS...`: the words after the script are its `$0`, `$1`...
    pub(super) fn walk_source_with_args(&mut self, src: &str, args: &[Word]) -> Result<(), Danger> {
        let mut inner = self.clone();
        let mut all = Some(Vec::new());
        for (i, word) in args.iter().enumerate() {
            let name = i.to_string();
            inner.non_empty.remove(&name);
            match self.expand(word) {
                super::expand::Expanded::Known(text) => {
                    if i > 0
                        && let Some(all) = all.as_mut()
                    {
                        all.push(text.clone());
                    }
                    inner.vars.insert(name, text);
                }
                super::expand::Expanded::Maybe { .. } | super::expand::Expanded::Unknown => {
                    all = None;
                    inner.vars.remove(&name);
                }
            }
        }
        if let Some(all) = all.filter(|a| !a.is_empty()) {
            inner.vars.insert("@".to_owned(), all.join(" "));
            inner.vars.insert("*".to_owned(), all.join(" "));
        }
        inner.walk_source(src, Shell::Same)
    }

    pub(super) fn walk_nested(&mut self, script: &Script, shell: Shell) -> Result<(), Danger> {
        if self.depth >= MAX_NESTING_LEVELS {
            return refuse(
                DangerKind::TooComplex,
                "the command is nested too deeply to check".to_owned(),
            );
        }
        match shell {
            Shell::Same => {
                self.depth += 1;
                let result = self.walk_script(script, &Stdin::default());
                self.depth -= 1;
                result
            }
            Shell::Subshell => {
                let mut inner = self.clone();
                inner.depth += 1;
                inner.walk_script(script, &Stdin::default())
            }
        }
    }
}
