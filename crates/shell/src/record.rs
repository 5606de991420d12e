//! What the walk records of each command it meets, for the rules (`Bash(git push:*)`) and
//! the read-only proof: its text, its words as bash passes them, and the verdict.

use super::commands::{Resolution, resolve};
use super::readonly;
use super::tree::Simple;
use super::walker::Walker;
use super::words::{Part, Redirect, Word};
use super::{NotReadOnly, SimpleCommand};

impl Walker {
    /// Records a simple command for the rules and judges it for the read-only proof.
    pub(super) fn record(&self, simple: &Simple) {
        if self.silent {
            return;
        }
        let words = &simple.words;
        let verdict = readonly::simple(self, simple);
        if let Err(reason) = &verdict {
            self.note_command(reason);
        }
        let program = match resolve(words) {
            Resolution::Command { name, .. } => Some(name),
            Resolution::Assignments(_) | Resolution::SplitString { .. } | Resolution::Nothing => {
                None
            }
        };
        let assignments: Vec<String> = simple.assignments.iter().map(|a| a.raw.clone()).collect();
        let redirects: Vec<String> = simple.redirects.iter().map(Redirect::text).collect();
        let written: Vec<String> = if simple.written.is_empty() {
            words.iter().map(|w| w.raw.clone()).collect()
        } else {
            simple.written.clone()
        };
        let text = assignments
            .iter()
            .chain(&written)
            .chain(&redirects)
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join(" ");
        self.found.borrow_mut().commands.push(SimpleCommand {
            text,
            argv: words.iter().map(|word| self.argv_word(word)).collect(),
            assignments,
            redirects,
            program,
            rule_text: self.rule_text(words),
            globs: self.globs(words),
            read_only: verdict,
        });
    }

    /// A word as bash passes it, when the text tells: literal text, or `~/...` once the home
    /// directory is known.
    fn argv_word(&self, word: &Word) -> Option<String> {
        if let Some(text) = word.literal() {
            return Some(text);
        }
        let (first, rest) = word.parts.split_first()?;
        let home = self.home.as_ref()?;
        let mut text = match first {
            Part::Tilde(user) if user.is_empty() => home.display(),
            _ => return None,
        };
        for part in rest {
            match part {
                Part::Lit(lit) => text.push_str(lit),
                _ => return None,
            }
        }
        Some(text)
    }

    /// Records a command that is not a simple command (`(( x++ ))`) for the rules.
    pub(super) fn record_other(&self, text: String, why_not_read_only: NotReadOnly) {
        if self.silent {
            return;
        }
        self.note_command(&why_not_read_only);
        self.found.borrow_mut().commands.push(SimpleCommand {
            argv: vec![None],
            text,
            assignments: Vec::new(),
            redirects: Vec::new(),
            program: None,
            rule_text: None,
            globs: Vec::new(),
            read_only: Err(why_not_read_only),
        });
    }
}
