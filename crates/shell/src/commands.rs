//! Finding the command a simple command really runs: past assignments, keywords and
//! wrappers such as `sudo`, `env`, `nohup`, `timeout`, `busybox` or `xargs`.

use super::words::{Part, Word};
use super::wrappers::{WRAPPERS, Wrapper};

/// What a simple command runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Resolution<'a> {
    /// A named command with its arguments.
    Command {
        /// The command name, without its directory (`/bin/rm` → `rm`).
        name: String,
        /// The arguments after the name.
        args: &'a [Word],
        /// Arguments the command also gets from its standard input (`xargs`).
        stdin_args: StdinArgs,
        /// The wrappers looked through, with the index of each one's word, and the index
        /// of the command's own word last (`sudo nice rm` → sudo 0, nice 1; rm at 2).
        wrappers: Vec<(&'static str, usize)>,
        /// The index of the command's name among the words.
        at: usize,
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

/// Arguments a wrapper such as `xargs` reads from its standard input and hands on.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) enum StdinArgs {
    /// None: the arguments are all in the text.
    #[default]
    None,
    /// Appended after the written arguments (`xargs rm -rf`).
    Appended,
    /// Put in place of this placeholder (`xargs -I {} rm -rf {}`).
    Replacing(String),
}

/// Words that start compound commands; what follows them is the command that runs. (A
/// parsed command line has none left in command position, but the token fallback for text
/// that does not parse does, and brush-parser 0.3 reads `coproc cmd` as a simple command.)
const KEYWORDS: [&str; 13] = [
    "{", "}", "!", "if", "then", "elif", "else", "fi", "do", "done", "while", "until", "coproc",
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
    let mut stdin_args = StdinArgs::None;
    let mut wrappers = Vec::new();
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
                stdin_args,
                wrappers,
                at: i,
            };
        };
        wrappers.push((wrapper.name, i));
        match skip_wrapper(words, i + 1, wrapper) {
            Skipped::Command(next) => {
                if let Some(args) = stdin_args_of(wrapper.name, &words[i + 1..next], &words[next..])
                {
                    stdin_args = args;
                }
                // `watch` always runs its words through `sh -c`; `parallel` does when the
                // command is one quoted string (`parallel 'rm -rf {}' ::: a b`).
                let joined = wrapper.name == "watch"
                    || (wrapper.name == "parallel"
                        && words[next]
                            .literal()
                            .is_some_and(|t| t.contains(char::is_whitespace)));
                if joined {
                    return Resolution::SplitString {
                        text: words[next].clone(),
                        rest: &words[next + 1..],
                    };
                }
                i = next;
            }
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

/// What `xargs` or `parallel` adds to the command from its standard input, given the
/// wrapper's own options and the command words after them.
fn stdin_args_of(wrapper: &str, options: &[Word], command: &[Word]) -> Option<StdinArgs> {
    let texts: Vec<String> = options.iter().filter_map(Word::literal).collect();
    match wrapper {
        "xargs" => {
            let mut placeholder = None;
            for (k, text) in texts.iter().enumerate() {
                if text == "-I" {
                    placeholder = texts.get(k + 1).cloned();
                } else if let Some(p) = text.strip_prefix("-I").filter(|p| !p.is_empty()) {
                    placeholder = Some(p.to_owned());
                } else if text == "-i" || text == "--replace" {
                    placeholder = Some("{}".to_owned());
                } else if let Some(p) = text
                    .strip_prefix("--replace=")
                    .or_else(|| text.strip_prefix("-i"))
                {
                    placeholder = Some(p.to_owned());
                }
            }
            Some(placeholder.map_or(StdinArgs::Appended, StdinArgs::Replacing))
        }
        "parallel" => {
            let listed = command
                .iter()
                .chain(options)
                .filter_map(Word::literal)
                .any(|t| t.starts_with(":::") || t == "-a" || t == "--arg-file");
            (!listed).then_some(StdinArgs::Appended)
        }
        _ => None,
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
            // `-c` alone, or last in a cluster of short options (`script -qc 'cmd'`).
            let command_option = wrapper.command_options.iter().any(|option| {
                *option == text
                    || (!text.starts_with("--")
                        && option.len() == 2
                        && !option.starts_with("--")
                        && text.ends_with(&option[1..]))
            });
            if command_option {
                let Some(value) = words.get(i + 1) else {
                    return Skipped::NotRun;
                };
                return Skipped::SplitString {
                    text: value.clone(),
                    rest: i + 2,
                };
            }
            if let Some((option, value)) = text.split_once('=')
                && wrapper.command_options.contains(&option)
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
    let raw = word.raw.split_once('=').map_or("", |(_, v)| v).to_owned();
    Some((name.to_owned(), Word { parts, raw }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::parse;

    fn resolved(src: &str) -> Option<(String, Vec<String>)> {
        let parsed = parse(src);
        let words = parsed
            .script
            .only_simple()
            .map(|s| s.words.clone())
            .unwrap_or_default();
        match resolve(&words) {
            Resolution::Command { name, args, .. } => Some((
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
            "if then ! rm -rf /",
            "busybox rm -rf /",
            "flock /tmp/lock rm -rf /",
            "flock -w 5 /tmp/lock rm -rf /",
            "strace -f -o log rm -rf /",
            "chroot /mnt rm -rf /",
            "unshare -r --map-user 0 rm -rf /",
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
