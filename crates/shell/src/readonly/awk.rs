//! `awk` programs that only print: no `system()`, no output redirection or pipe
//! (`print > "f"`, `print | "sh"`, `"cmd" | getline`), no `@load`/`@include`, no program
//! read from a file.
//!
//! The program is split into tokens (strings, regular expressions, names, operators). Inside
//! an action (`{ ... }`), a `>` or `|` outside parentheses is taken as a redirection even
//! where awk would read a comparison (`x = a > b`): that refuses a few harmless programs,
//! never a writing one. A `/` is read as the start of a regular expression only where a
//! division cannot stand, so no text is skipped that could hold a redirection.

use super::Arg;
use super::programs::{could_be_option, raw};

/// Options that take a value in the next word (or attached).
const WITH_VALUE: [&str; 2] = ["-F", "-v"];
/// Options without a value that change nothing about what the program can do.
const FLAGS: [&str; 23] = [
    "-b",
    "-c",
    "-C",
    "-M",
    "-N",
    "-n",
    "-O",
    "-P",
    "-r",
    "-s",
    "-S",
    "-t",
    "-V",
    "--posix",
    "--traditional",
    "--sandbox",
    "--characters-as-bytes",
    "--bignum",
    "--re-interval",
    "--lint",
    "--optimize",
    "--no-optimize",
    "--use-lc-numeric",
];

/// Whether `awk ARGS` only prints; `Err` says why not.
pub(super) fn check(name: &str, args: &[Arg]) -> Result<(), String> {
    let mut programs = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Arg::Known(text) = arg else {
            return Err(could_be_option(name, &raw(arg)));
        };
        if text == "--" {
            break;
        }
        if !text.starts_with('-') || text == "-" {
            i -= 1;
            break;
        }
        if WITH_VALUE.contains(&text.as_str()) {
            i += 1;
        } else if WITH_VALUE.iter().any(|o| text.starts_with(o)) || FLAGS.contains(&text.as_str()) {
        } else if text == "-e" || text == "--source" {
            match args.get(i) {
                Some(Arg::Known(program)) => programs.push(program.clone()),
                Some(other) => return Err(could_be_option(name, &raw(other))),
                None => return Err(format!("`{name} {text}` without a program")),
            }
            i += 1;
        } else {
            return Err(format!(
                "`{name} {text}` reads a program file, loads code or writes a file (or is not an \
                 option rein knows)"
            ));
        }
    }
    if programs.is_empty() {
        match args.get(i) {
            Some(Arg::Known(program)) => programs.push(program.clone()),
            Some(other) => {
                return Err(format!(
                    "the awk program `{}` is known only when it runs",
                    raw(other)
                ));
            }
            None => return Err(format!("`{name}` without a program")),
        }
    }
    programs
        .iter()
        .try_for_each(|p| program(p).map_err(|why| format!("the awk program `{p}` {why}")))
}

/// Whether an awk program only prints.
pub(super) fn program(src: &str) -> Result<(), &'static str> {
    let chars: Vec<char> = src.chars().collect();
    let mut braces = 0usize;
    let mut parens = 0usize;
    // Whether the previous token ends an operand (a name, number, string, `)` or `]`), so
    // that a `/` is a division rather than the start of a regular expression.
    let mut after_operand = false;
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        i += 1;
        match c {
            '"' => {
                i = skip_delimited(&chars, i, '"');
                after_operand = true;
            }
            '/' if !after_operand => {
                i = skip_delimited(&chars, i, '/');
                after_operand = true;
            }
            '#' => {
                while chars.get(i).is_some_and(|&c| c != '\n') {
                    i += 1;
                }
            }
            '@' => return Err("loads code (`@load`, `@include`)"),
            '{' => {
                braces += 1;
                after_operand = false;
            }
            '}' => {
                braces = braces.saturating_sub(1);
                after_operand = false;
            }
            '(' => {
                parens += 1;
                after_operand = false;
            }
            ')' => {
                parens = parens.saturating_sub(1);
                after_operand = true;
            }
            '|' if chars.get(i) == Some(&'|') => {
                i += 1;
                after_operand = false;
            }
            '|' => return Err("pipes into or out of a command (`|`)"),
            '>' if braces > 0 && parens == 0 => {
                return Err("redirects output to a file (`>`)");
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i - 1;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if matches!(word.as_str(), "system" | "getline") {
                    return Err("runs commands or reads from them (`system`, `getline`)");
                }
                after_operand = true;
            }
            c if c.is_ascii_digit() || c == '$' || c == ']' => after_operand = true,
            c if c.is_whitespace() => {
                if c == '\n' {
                    after_operand = false;
                }
            }
            _ => after_operand = false,
        }
    }
    Ok(())
}

/// Just past the unescaped `end` that closes text starting at `from`.
fn skip_delimited(chars: &[char], mut from: usize, end: char) -> usize {
    while let Some(&c) = chars.get(from) {
        from += 1;
        if c == '\\' {
            from += 1;
        } else if c == end {
            break;
        }
    }
    from
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn printing_programs_pass() {
        for ok in [
            "{ print $1 }",
            "$3 > 10 { print $2 }",
            "NR==1, NR==5",
            "/error/ { n++ } END { print n }",
            "{ if ($2 > max) max = $2 } END { print max }",
            "{ s += $1 / 2 } END { printf \"%d\\n\", s }",
            "BEGIN { FS = \":\" } $1 == \"x\" || $2 ~ /a|b/ { print $1 }",
        ] {
            assert_eq!(program(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn writing_or_running_programs_fail() {
        for bad in [
            "{ print > \"out\" }",
            "{ print >> \"out\" }",
            "{ print | \"sh\" }",
            "BEGIN { system(\"rm -rf x\") }",
            "BEGIN { \"date\" | getline d }",
            "BEGIN { while ((getline line < \"f\") > 0) print line }",
            "@load \"x\"",
            "{ printf \"%s\", $0 > \"/tmp/x\" }",
        ] {
            assert!(program(bad).is_err(), "{bad}");
        }
        let args = |a: &[&str]| {
            a.iter()
                .map(|s| Arg::Known((*s).to_owned()))
                .collect::<Vec<_>>()
        };
        assert!(check("awk", &args(&["-f", "prog.awk"])).is_err());
        assert!(check("awk", &args(&["-F:", "{ print $1 }", "/etc/passwd"])).is_ok());
        assert!(check("gawk", &args(&["-i", "inplace", "{ print }", "f"])).is_err());
    }
}
