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
        // Each argument as the shell passes it (`~` expanded, quotes gone) when the text
        // says it; otherwise as written, so a nested check still sees it.
        let texts: Vec<String> = args
            .iter()
            .map(|a| match self.expand(a) {
                Expanded::Known(text) if !glob::has_glob(&text) => text,
                Expanded::Known(_) | Expanded::Maybe { .. } | Expanded::Unknown => {
                    self.script_text(a)
                }
            })
            .collect();
        match name {
            "echo" => {
                let flags: Vec<&String> = texts
                    .iter()
                    .take_while(|t| matches!(t.as_str(), "-n" | "-e" | "-E" | "-ne" | "-en"))
                    .collect();
                let escapes = flags.iter().any(|f| f.contains('e'));
                let text = texts[flags.len()..].join(" ");
                Some(if escapes {
                    backslash_escapes(&text)
                } else {
                    text.replace("\\n", "\n")
                })
            }
            "printf" => {
                let mut texts = texts.iter();
                let mut format = texts.next()?.clone();
                if format == "--" {
                    format = texts.next()?.clone();
                }
                // The format's escapes (`\x2f`, `\057`) are the format's; `%s` arguments are
                // printed as they are, `%b` ones with their escapes.
                let mut out = String::new();
                let mut rest = format.as_str();
                let mut texts = texts.peekable();
                while let Some(at) = ["%s", "%b", "%%"].iter().filter_map(|f| rest.find(f)).min() {
                    out.push_str(&backslash_escapes(&rest[..at]));
                    match &rest[at..at + 2] {
                        "%%" => out.push('%'),
                        "%b" => out.push_str(&backslash_escapes(texts.next().map_or("", |t| t))),
                        _ => out.push_str(texts.next().map_or("", |t| t)),
                    }
                    rest = &rest[at + 2..];
                    if texts.peek().is_none() && !rest.contains('%') {
                        break;
                    }
                }
                out.push_str(&backslash_escapes(rest));
                Some(out)
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

/// The backslash escapes `printf` (and `echo -e`) print: `\n`, `\t`, `\\`, `\xHH`, octal
/// `\NNN` / `\0NNN`, `\e`...; an unknown one stays as written.
fn backslash_escapes(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some(&next) = chars.peek() else {
            out.push('\\');
            break;
        };
        let simple = match next {
            'n' => Some('\n'),
            't' => Some('\t'),
            'r' => Some('\r'),
            'a' => Some('\x07'),
            'b' => Some('\x08'),
            'f' => Some('\x0c'),
            'v' => Some('\x0b'),
            'e' | 'E' => Some('\x1b'),
            '\\' => Some('\\'),
            '"' => Some('"'),
            '\'' => Some('\''),
            _ => None,
        };
        if let Some(escaped) = simple {
            chars.next();
            out.push(escaped);
            continue;
        }
        let (radix, max) = match next {
            'x' => (16, 2),
            '0'..='7' => (8, 3),
            _ => {
                out.push('\\');
                continue;
            }
        };
        if next == 'x' {
            chars.next();
        } else if next == '0' {
            // `\0NNN`: the zero introduces up to three more octal digits.
            chars.next();
        }
        let mut digits = String::new();
        while digits.len() < max
            && let Some(&d) = chars.peek()
            && d.is_digit(radix)
        {
            digits.push(d);
            chars.next();
        }
        match u32::from_str_radix(&digits, radix)
            .ok()
            .and_then(char::from_u32)
        {
            Some(byte) => out.push(byte),
            None if next == '0' => out.push('\0'),
            None => {
                out.push('\\');
                out.push_str(if next == 'x' { "x" } else { "" });
                out.push_str(&digits);
            }
        }
    }
    out
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

#[cfg(test)]
mod tests {
    use super::backslash_escapes;

    #[test]
    fn printf_escapes_are_printed_as_printf_does() {
        assert_eq!(backslash_escapes("\\x2f"), "/");
        assert_eq!(backslash_escapes("\\057tmp"), "/tmp");
        assert_eq!(backslash_escapes("\\0057"), "/");
        assert_eq!(backslash_escapes("a\\tb\\n"), "a\tb\n");
        assert_eq!(backslash_escapes("\\\\x2f"), "\\x2f");
        assert_eq!(backslash_escapes("\\q\\"), "\\q\\");
    }
}
