//! Shell commands inside code for another language: `awk 'BEGIN{system("rm -rf /")}'`,
//! `perl -e '`rm -rf /`'`, `python3 -c 'import os; os.system("rm -rf /")'`. The code is
//! not parsed as that language; its string literals are checked against the deny list as
//! command lines when the code calls something that runs one (best effort: a string rein
//! cannot read as a command is not a refusal).

use super::Danger;
use super::walker::{Shell, Walker};

/// Names of functions and methods that run a shell command or a program, across awk,
/// Perl, Python, Ruby, Node, PHP and Lua.
const RUNNERS: [&str; 23] = [
    "system",
    "exec",
    "execSync",
    "execFile",
    "execFileSync",
    "spawn",
    "spawnSync",
    "popen",
    "Popen",
    "run",
    "call",
    "check_call",
    "check_output",
    "getoutput",
    "getstatusoutput",
    "qx",
    "shell_exec",
    "passthru",
    "proc_open",
    "execute",
    "execv",
    "execvp",
    "spawnv",
];

/// How many strings of one program are checked, and how long each may be.
const MAX_STRINGS: usize = 64;
const MAX_STRING_BYTES: usize = 4096;

/// How a language runs shell commands besides calling a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Language {
    /// `` `cmd` `` runs a shell (Perl, Ruby, PHP).
    Backticks,
    /// `print | "cmd"` and `"cmd" | getline` run a shell (awk).
    Awk,
    /// Only functions run commands (Python, Node, Lua).
    Calls,
}

impl Walker {
    /// Checks the command lines `code` would run, against the deny list only.
    pub(super) fn check_code_strings(&self, code: &str, language: Language) -> Result<(), Danger> {
        let candidates = command_strings(code, language);
        if candidates.is_empty() {
            return Ok(());
        }
        let mut shadow = self.clone();
        shadow.silent = true;
        for candidate in candidates.iter().take(MAX_STRINGS) {
            if candidate.len() <= MAX_STRING_BYTES {
                shadow.walk_source(candidate, Shell::Subshell)?;
            }
        }
        Ok(())
    }
}

/// The strings in `code` that may be run as command lines: every string literal (and the
/// literals of a `[...]` list, and those of a runner's call up to the end of its statement,
/// joined as shell words: `["rm", "-rf", "/"]`, Perl's `system("rm", "-rf", "/")`) when the
/// code calls a runner, and the body of backticks where they run a shell.
fn command_strings(code: &str, language: Language) -> Vec<String> {
    let chars: Vec<char> = code.chars().collect();
    let mut literals = Vec::new();
    let mut backticks = Vec::new();
    let mut lists: Vec<Vec<String>> = Vec::new();
    let mut joined = Vec::new();
    let mut runs = language == Language::Awk && code.contains('|');
    // The literals since the last runner's name, up to the end of its statement: a program
    // and its arguments given one by one.
    let mut call: Option<Vec<String>> = None;
    let flush = |call: &mut Option<Vec<String>>, joined: &mut Vec<String>| {
        if let Some(words) = call.take().filter(|w| w.len() > 1) {
            joined.push(shell_words(&words));
        }
    };
    let mut i = 0;
    while let Some(&c) = chars.get(i) {
        match c {
            '"' | '\'' | '`' => {
                let (text, end) = literal(&chars, i + 1, c);
                i = end;
                if c == '`' && language == Language::Backticks {
                    backticks.push(text);
                } else {
                    if let Some(list) = lists.last_mut() {
                        list.push(text.clone());
                    }
                    if let Some(words) = call.as_mut() {
                        words.push(text.clone());
                    }
                    literals.push(text);
                }
                continue;
            }
            ';' | '\n' => flush(&mut call, &mut joined),
            '[' => lists.push(Vec::new()),
            ']' => {
                if let Some(list) = lists.pop().filter(|l| l.len() > 1) {
                    joined.push(shell_words(&list));
                }
            }
            c if c.is_ascii_alphabetic() || c == '_' => {
                let start = i;
                while chars
                    .get(i)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if RUNNERS.contains(&word.as_str()) {
                    runs = true;
                    flush(&mut call, &mut joined);
                    call = Some(Vec::new());
                }
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    flush(&mut call, &mut joined);
    if runs {
        backticks.extend(literals);
        backticks.extend(joined);
    }
    backticks
}

/// `words` as one shell command line: each a word of its own, quoted where it needs it.
fn shell_words(words: &[String]) -> String {
    let quoted: Vec<String> = words
        .iter()
        .map(|word| {
            let plain = !word.is_empty()
                && word
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || "/._-=+:,@%~".contains(c));
            if plain {
                word.clone()
            } else {
                format!("'{}'", word.replace('\'', "'\\''"))
            }
        })
        .collect();
    quoted.join(" ")
}

/// The string literal that starts at `from` (after its opening `quote`), with backslash
/// escapes read, and where it ends.
fn literal(chars: &[char], mut from: usize, quote: char) -> (String, usize) {
    let mut text = String::new();
    while let Some(&c) = chars.get(from) {
        from += 1;
        match c {
            '\\' => {
                match chars.get(from) {
                    Some('n') => text.push('\n'),
                    Some('t') => text.push('\t'),
                    Some(&other) => text.push(other),
                    None => {}
                }
                from += 1;
            }
            c if c == quote => break,
            c => text.push(c),
        }
    }
    (text, from)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_commands_only_where_the_code_runs_one() {
        assert_eq!(
            command_strings("import os; os.system(\"rm -rf /\")", Language::Calls),
            ["rm -rf /"]
        );
        assert_eq!(
            command_strings("subprocess.run([\"rm\", \"-rf\", \"/\"])", Language::Calls),
            ["rm", "-rf", "/", "rm -rf /", "rm -rf /"]
        );
        // Perl's list form, with and without parentheses; words keep their spaces.
        for code in [
            "system(\"rm\",\"-rf\",\"/\")",
            "system \"rm\", \"-rf\", \"/\"; print 1",
        ] {
            let strings = command_strings(code, Language::Backticks);
            assert!(
                strings.contains(&"rm -rf /".to_owned()),
                "{code}: {strings:?}"
            );
        }
        assert!(
            command_strings("system('rm', '-rf', 'a b')", Language::Calls)
                .contains(&"rm -rf 'a b'".to_owned())
        );
        assert_eq!(
            command_strings("`rm -rf /`", Language::Backticks),
            ["rm -rf /"]
        );
        assert!(command_strings("print(\"rm -rf /\")", Language::Calls).is_empty());
        assert!(command_strings("`rm -rf /`", Language::Calls).is_empty());
        assert_eq!(
            command_strings("{ print \"rm -rf /\" | \"sh\" }", Language::Awk),
            ["rm -rf /", "sh"]
        );
        assert_eq!(
            command_strings("system(\"a \\\"b\\\"\")", Language::Calls),
            ["a \"b\""]
        );
    }
}
