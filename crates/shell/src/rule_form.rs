//! The forms of a simple command that permission rules are matched against: the command as
//! it runs, with the wrappers and spellings that do not change what it does taken away
//! (`command git "push"`, `timeout 5 /usr/bin/git -C . push` are both `git push`), and the
//! pathname patterns among its words, for file rules to expand.

use super::commands::{Resolution, resolve};
use super::expand::Expanded;
use super::git_globals;
use super::glob;
use super::walker::Walker;
use super::words::{Part, Word};

/// Characters a glob matcher reads as pattern syntax; a literal one is escaped.
const PATTERN_CHARS: [char; 7] = ['\\', '*', '?', '[', ']', '{', '}'];

impl Walker {
    /// The text rules match: the program's base name and its arguments, quotes removed,
    /// joined by single spaces, past wrappers (`sudo`, `env`, `timeout 5`, `command`...) and
    /// git's global options. `None` when the program (or git's subcommand) is known only
    /// when it runs.
    pub(super) fn rule_text(&self, words: &[Word]) -> Option<String> {
        if words.is_empty() {
            // Only assignments or redirections: no program runs.
            return Some(String::new());
        }
        let words = self.split_command_variable(words);
        match resolve(&words) {
            Resolution::Command { name, args, .. } => {
                // `A="-C x"; git $A push`: split as bash would, so git's options are seen.
                let split = self.split_fields(args);
                let mut args = split.as_slice();
                if name == "git" {
                    while let Some(first) = args.first() {
                        // `git $X push`: the subcommand is known only when it runs.
                        let text = self.known_text(first)?;
                        let Some(taken) = git_globals::option_words(&text) else {
                            break;
                        };
                        args = &args[taken.min(args.len())..];
                    }
                }
                let mut text = name;
                for arg in args {
                    text.push(' ');
                    text.push_str(&self.known_text(arg).unwrap_or_else(|| arg.raw.clone()));
                }
                Some(text)
            }
            // `command -v git`, `sudo` alone: all literal, nothing hidden. Otherwise a word
            // where the program should be is known only at run time (`sudo $CMD`).
            Resolution::Nothing | Resolution::Assignments(_) => words
                .iter()
                .map(Word::literal)
                .collect::<Option<Vec<String>>>()
                .map(|texts| texts.join(" ")),
            // `env -S 'cmd args'`: the string's commands are listed on their own.
            Resolution::SplitString { .. } => None,
        }
    }

    /// A word's value when the text tells it (and it is not a pattern).
    fn known_text(&self, word: &Word) -> Option<String> {
        if let Some(text) = word.literal() {
            return Some(text);
        }
        match self.expand(word) {
            Expanded::Known(text) if !glob::has_glob(&text) => Some(text),
            Expanded::Known(_) | Expanded::Maybe { .. } | Expanded::Unknown => None,
        }
    }

    /// The pathname patterns among `words`: (index, pattern) for each word that is not
    /// known before it runs only because it is a glob. Quotes are removed and quoted
    /// pattern characters escaped with `\`; `~` is the home directory.
    pub(super) fn globs(&self, words: &[Word]) -> Vec<(usize, String)> {
        words
            .iter()
            .enumerate()
            .filter_map(|(i, word)| Some((i, self.glob_pattern(word)?)))
            .collect()
    }

    fn glob_pattern(&self, word: &Word) -> Option<String> {
        if !word.parts.iter().any(|p| matches!(p, Part::Glob(_))) {
            return None;
        }
        let mut pattern = String::new();
        for (i, part) in word.parts.iter().enumerate() {
            match part {
                Part::Lit(text) => escape_into(text, &mut pattern),
                Part::Glob(glob) => pattern.push_str(glob),
                Part::Tilde(user) if i == 0 && user.is_empty() => {
                    escape_into(&self.home.as_ref()?.display(), &mut pattern);
                }
                Part::Tilde(_)
                | Part::Var(_)
                | Part::Subst(_)
                | Part::ProcSubst(_)
                | Part::Arith(_)
                | Part::Unreadable(_) => return None,
            }
        }
        // After `cd sub`, `*.rs` is matched in sub.
        if let Some(cwd) = self
            .cwd
            .as_ref()
            .filter(|c| Some(*c) != self.start_cwd.as_ref())
            && !pattern.starts_with('/')
        {
            let mut absolute = String::new();
            escape_into(&cwd.display(), &mut absolute);
            absolute.push('/');
            absolute.push_str(&pattern);
            pattern = absolute;
        }
        Some(pattern)
    }
}

fn escape_into(text: &str, out: &mut String) {
    for c in text.chars() {
        if PATTERN_CHARS.contains(&c) {
            out.push('\\');
        }
        out.push(c);
    }
}
