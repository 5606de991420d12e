//! Finding the command a simple command really runs: past assignments, keywords and
//! wrappers such as `sudo`, `env`, `nohup`, `timeout` or `xargs`.

use super::words::{Part, Word};

/// What a simple command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution<'a> {
    /// A named command with its arguments.
    Command {
        /// The command name, without its directory (`/bin/rm` → `rm`).
        name: String,
        /// The arguments after the name.
        args: &'a [Word],
    },
    /// Only variable assignments: they change the shell's variables.
    Assignments(&'a [Word]),
    /// `env -S STRING args`: the string is split into words and run.
    SplitString {
        /// The string to split.
        text: Word,
        /// Words after it.
        rest: &'a [Word],
    },
    /// Nothing runs (`command -v x`, a lone keyword), or the command name is not known
    /// before run time (`$CMD args`).
    Nothing,
}

/// Words that start compound commands; what follows them is the command that runs.
const KEYWORDS: [&str; 12] = [
    "{", "}", "!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until",
];

/// A command that runs another command given as its arguments.
struct Wrapper {
    name: &'static str,
    /// Options that take a value as the next word.
    with_value: &'static [&'static str],
    /// Operands before the command (`timeout 10 cmd`).
    operands: usize,
    /// Whether `NAME=value` words may come before the command.
    assignments: bool,
}

const WRAPPERS: [Wrapper; 16] = [
    Wrapper {
        name: "sudo",
        with_value: &[
            "-u",
            "-g",
            "-h",
            "-p",
            "-C",
            "-D",
            "-r",
            "-t",
            "-U",
            "-T",
            "-R",
            "--user",
            "--group",
            "--host",
            "--prompt",
            "--close-from",
            "--chdir",
            "--role",
            "--type",
            "--other-user",
            "--command-timeout",
            "--chroot",
        ],
        operands: 0,
        assignments: true,
    },
    Wrapper {
        name: "doas",
        with_value: &["-u", "-C"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "env",
        with_value: &["-u", "--unset", "-C", "--chdir"],
        operands: 0,
        assignments: true,
    },
    Wrapper {
        name: "nohup",
        with_value: &[],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "time",
        with_value: &["-f", "--format", "-o", "--output"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "command",
        with_value: &[],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "builtin",
        with_value: &[],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "exec",
        with_value: &["-a"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "xargs",
        with_value: &[
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-L",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
            "--process-slot-var",
        ],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "nice",
        with_value: &["-n", "--adjustment"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "ionice",
        with_value: &[
            "-c",
            "--class",
            "-n",
            "--classdata",
            "-p",
            "--pid",
            "-P",
            "--pgid",
            "-u",
            "--uid",
        ],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "timeout",
        with_value: &["-s", "--signal", "-k", "--kill-after"],
        operands: 1,
        assignments: false,
    },
    Wrapper {
        name: "stdbuf",
        with_value: &["-i", "-o", "-e", "--input", "--output", "--error"],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "setsid",
        with_value: &[],
        operands: 0,
        assignments: false,
    },
    Wrapper {
        name: "taskset",
        with_value: &[],
        operands: 1,
        assignments: false,
    },
    Wrapper {
        name: "unbuffer",
        with_value: &[],
        operands: 0,
        assignments: false,
    },
];

/// Finds what `words` runs.
pub(crate) fn resolve(words: &[Word]) -> Resolution<'_> {
    let leading_assignments = words
        .iter()
        .take_while(|w| split_assignment(w).is_some())
        .count();
    if leading_assignments == words.len() {
        return if words.is_empty() {
            Resolution::Nothing
        } else {
            Resolution::Assignments(words)
        };
    }
    let mut i = leading_assignments;
    loop {
        let Some(text) = words.get(i).and_then(Word::literal) else {
            return Resolution::Nothing;
        };
        let name = command_basename(&text);
        if KEYWORDS.contains(&name) {
            i += 1;
            continue;
        }
        let Some(wrapper) = WRAPPERS.iter().find(|w| w.name == name) else {
            return Resolution::Command {
                name: name.to_owned(),
                args: &words[i + 1..],
            };
        };
        match skip_wrapper(words, i + 1, wrapper) {
            Skipped::Command(next) => i = next,
            Skipped::SplitString { text, rest } => {
                return Resolution::SplitString {
                    text,
                    rest: &words[rest..],
                };
            }
            Skipped::NotRun => return Resolution::Nothing,
        }
    }
}

/// `/usr/bin/rm` → `rm`.
pub(crate) fn command_basename(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

enum Skipped {
    Command(usize),
    SplitString { text: Word, rest: usize },
    NotRun,
}

fn skip_wrapper(words: &[Word], mut i: usize, wrapper: &Wrapper) -> Skipped {
    let mut operands = wrapper.operands;
    let mut options_done = false;
    while let Some(word) = words.get(i) {
        let Some(text) = word.literal() else { break };
        if !options_done && text == "--" {
            options_done = true;
            i += 1;
            continue;
        }
        if !options_done && text.starts_with('-') && text.len() > 1 {
            if wrapper.name == "env" && (text == "-S" || text == "--split-string") {
                let Some(value) = words.get(i + 1) else {
                    return Skipped::NotRun;
                };
                return Skipped::SplitString {
                    text: value.clone(),
                    rest: i + 2,
                };
            }
            if wrapper.name == "env"
                && let Some(value) = text
                    .strip_prefix("--split-string=")
                    .or_else(|| text.strip_prefix("-S"))
            {
                return Skipped::SplitString {
                    text: Word::literal_word(value),
                    rest: i + 1,
                };
            }
            if wrapper.name == "command" && (text.contains('v') || text.contains('V')) {
                return Skipped::NotRun;
            }
            i += if wrapper.with_value.contains(&text.as_str()) {
                2
            } else {
                1
            };
            continue;
        }
        if wrapper.assignments && split_assignment(word).is_some() {
            i += 1;
            continue;
        }
        if operands > 0 {
            operands -= 1;
            i += 1;
            continue;
        }
        break;
    }
    if i >= words.len() {
        Skipped::NotRun
    } else {
        Skipped::Command(i)
    }
}

/// `NAME=value` → the name and the value as a word (`~` after `=` is a tilde, as in bash).
pub(crate) fn split_assignment(word: &Word) -> Option<(String, Word)> {
    let Some(Part::Lit(first)) = word.parts.first() else {
        return None;
    };
    let eq = first.find('=')?;
    let name = first[..eq].trim_end_matches('+');
    let mut chars = name.chars();
    let valid = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if !valid {
        return None;
    }
    let rest = &first[eq + 1..];
    let mut parts = Vec::new();
    if rest == "~" || rest.starts_with("~/") {
        parts.push(Part::Tilde(String::new()));
        if rest.len() > 1 {
            parts.push(Part::Lit(rest[1..].to_owned()));
        }
    } else if !rest.is_empty() {
        parts.push(Part::Lit(rest.to_owned()));
    }
    parts.extend(word.parts[1..].iter().cloned());
    if parts.is_empty() {
        parts.push(Part::Lit(String::new()));
    }
    Some((name.to_owned(), Word { parts }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bash::danger::lexer::tokenize;
    use crate::bash::danger::words::Token;

    fn resolved(src: &str) -> Option<(String, Vec<String>)> {
        let words: Vec<Word> = tokenize(src)
            .into_iter()
            .filter_map(|t| {
                if let Token::Word(w) = t {
                    Some(w)
                } else {
                    None
                }
            })
            .collect();
        match resolve(&words) {
            Resolution::Command { name, args } => Some((
                name,
                args.iter()
                    .map(|a| a.literal().unwrap_or_default())
                    .collect(),
            )),
            Resolution::Assignments(_) | Resolution::SplitString { .. } | Resolution::Nothing => {
                None
            }
        }
    }

    #[test]
    fn wrappers_are_looked_through() {
        let rm = Some(("rm".to_owned(), vec!["-rf".to_owned(), "/".to_owned()]));
        for src in [
            "rm -rf /",
            "/bin/rm -rf /",
            "sudo rm -rf /",
            "sudo -u root -E -- rm -rf /",
            "env -i FOO=1 rm -rf /",
            "nohup nice -n 5 rm -rf /",
            "time -p rm -rf /",
            "timeout -s KILL 10 rm -rf /",
            "xargs -I {} rm -rf /",
            "FOO=bar command rm -rf /",
            "if then ! { rm -rf /",
        ] {
            assert_eq!(resolved(src), rm, "{src}");
        }
    }

    #[test]
    fn commands_that_do_not_run_anything() {
        assert_eq!(resolved("command -v rm"), None);
        assert_eq!(resolved("FOO=1 BAR=2"), None);
        assert_eq!(resolved("$RM -rf /"), None);
        assert_eq!(resolved("sudo"), None);
    }

    #[test]
    fn assignments_split_at_the_first_equals_sign() {
        let word = Word::literal_word("D=/a=b");
        assert_eq!(
            split_assignment(&word),
            Some(("D".to_owned(), Word::literal_word("/a=b")))
        );
        assert_eq!(split_assignment(&Word::literal_word("--opt=x")), None);
        let (_, tilde) = split_assignment(&Word::literal_word("H=~/x")).unwrap_or_default();
        assert_eq!(tilde.parts[0], Part::Tilde(String::new()));
    }
}
