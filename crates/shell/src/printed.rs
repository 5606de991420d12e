//! Text a command line hands on as a script or a value: what `echo` and `printf` print,
//! what `$(echo ...)` and `$(pwd)` expand to, and the text of a word given to `bash -c` or
//! `eval`.

use super::commands::{Resolution, resolve};
use super::expand::Expanded;
use super::glob;
use super::parse::parse;
use super::tree::Script;
use super::walker::Walker;
use super::words::{Part, VarOp, Word};

impl Walker {
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

    /// What `$(src)` expands to, when the text says it: the current directory for `pwd`,
    /// the printed text for `echo`/`printf` with known arguments.
    pub(super) fn substitution_output(&self, src: &str) -> Option<String> {
        let parsed = parse(src);
        if parsed.failure.is_some() {
            return None;
        }
        self.script_output(&parsed.script)
            .map(|text| text.trim_end_matches('\n').to_owned())
    }

    /// What `script` prints, when it is one `pwd`, `echo` or `printf` whose output the text
    /// says.
    pub(super) fn script_output(&self, script: &Script) -> Option<String> {
        let simple = script.only_simple()?;
        if !simple.redirects.is_empty() {
            return None;
        }
        let Resolution::Command { name, args, .. } = resolve(&simple.words) else {
            return None;
        };
        match name.as_str() {
            "pwd"
                if args
                    .iter()
                    .all(|a| matches!(a.literal().as_deref(), Some("-L" | "-P"))) =>
            {
                self.cwd.as_ref().map(|cwd| cwd.as_text())
            }
            "echo" | "printf" => {
                // Arguments must be known (and substitute nothing, which also bounds the
                // recursion through this function).
                let known = args
                    .iter()
                    .all(|a| !a.substitutes() && matches!(self.expand(a), Expanded::Known(_)));
                known.then(|| self.printed_text(&name, args))?
            }
            _ => None,
        }
    }

    /// The text an outer shell hands to `bash -c` or `eval`: known variables and printed
    /// substitutions filled in, the rest as written so the inner check still sees it.
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
                    Some(value) if var.op == VarOp::Plain => text.push_str(&value),
                    Some(_) | None => text.push_str(&display_var(var)),
                },
                Part::Subst(inner) => match self.substitution_output(inner) {
                    Some(printed) => text.push_str(&glob::display(&printed)),
                    None => text.push_str(&format!("$({inner})")),
                },
                // The commands inside were walked where the word was; here the word only
                // needs to stay a word.
                Part::ProcSubst(_) => text.push_str("/dev/fd/63"),
                Part::Arith(inner) => text.push_str(&format!("$(({inner}))")),
                Part::Unreadable(raw) => text.push_str(raw),
            }
        }
        text
    }
}

/// A parameter expansion as it could be written.
fn display_var(var: &super::words::Var) -> String {
    match &var.op {
        VarOp::Plain => format!("${{{}}}", var.name),
        VarOp::Default {
            word,
            null_too,
            assign,
        } => {
            let colon = if *null_too { ":" } else { "" };
            let op = if *assign { '=' } else { '-' };
            format!("${{{}{colon}{op}{}}}", var.name, word.raw)
        }
        VarOp::Required => format!("${{{}:?}}", var.name),
        VarOp::Alternative { word } => format!("${{{}:+{}}}", var.name, word.raw),
        // Keeps the variable unknown to the inner check.
        VarOp::Other | VarOp::Transformed => format!("${{{}%/}}", var.name),
    }
}

/// A word as the model wrote it, for messages.
pub(super) fn display_word(word: &Word) -> String {
    word.raw.clone()
}
