//! The read-only proof for one simple command: a known read-only program, reached at most
//! through transparent wrappers, with flags that neither write a file nor run another
//! program, no assignment but locale variables, and no redirection to a file.
//!
//! The rules, in full:
//! - **Programs** (`programs.rs`): file viewers and text filters (`cat`, `head`, `tail`,
//!   `wc`, `grep`, `rg`, `cut`, `sort`, `uniq`, `jq`, `diff`, `od`...), file and system
//!   information (`ls`, `stat`, `du`, `df`, `file`, `tree`, `find`, `fd`, `which`, `ps`,
//!   `uname`, `date`...), shell builtins that change nothing outside the shell (`echo`,
//!   `printf`, `pwd`, `cd`, `test`, `true`, `set`...), `git` read-only subcommands
//!   (`git.rs`), `sed` without `-i` and with a script of printing commands only (`sed.rs`),
//!   `awk` programs without `system()`, pipes, redirections or `getline` from commands
//!   (`awk.rs`), and `--version` of common tools.
//! - **Flags**: options that write files or run programs are refused: `sort -o`,
//!   `sort --compress-program`, `find -exec/-execdir/-ok/-delete/-fprint*/-fls`,
//!   `fd -x/-X`, `rg --pre`, `rg --pre-glob`, `tree -o/-R`, `file -C`, `date -s`, `printf -v`, a second
//!   operand of `uniq` or `xxd` (an output file), `git -c`, `git --output`, `--ext-diff`,
//!   `git branch -D` and every other writing form of `branch`, `tag`, `config`, `stash`...
//!   Long options are matched with GNU-style abbreviations (`--out` counts as `--output`).
//! - **Arguments known only at run time** (variables, globs, `~`): fine for programs that
//!   have no dangerous option; for the others, such an argument could be that option
//!   (`sort $OPTS`), so it is refused unless it cannot start with `-` (`./$f`, `src/*.rs`)
//!   or comes after `--`.
//! - **Command position**: the command name must be literal (no `$X`, glob or `$( )`), a
//!   bare name or one in `/bin`, `/usr/bin`, `/usr/local/bin` (not `./ls`).
//! - **Wrappers**: `timeout`, `nice`, `time`, `command`, `builtin`, `stdbuf` and `env`
//!   (with locale assignments only) are transparent; `sudo`, `nohup`, `exec`, `watch`,
//!   `xargs` (its arguments are names no rule has seen) and every other wrapper are not.
//! - **Assignments**: only `LANG`, `LANGUAGE`, `LC_*`, `TZ`, `NO_COLOR`, `TERM`, `COLUMNS`
//!   and `LINES` before a command; a bare assignment (`X=1`) is not read-only, since later
//!   commands depend on it (`PATH=.`).
//! - **Redirections**: reading (`<`, here-documents, here-strings) and duplicating
//!   descriptors (`2>&1`, `>&2`) are fine; output goes only to `/dev/null`, `/dev/stdout`,
//!   `/dev/stderr` or `/dev/fd/1`, `/dev/fd/2`.

mod awk;
mod git;
mod programs;
mod sed;

use super::NotReadOnly;
use super::commands::{Resolution, StdinArgs, resolve, split_assignment};
use super::tree::Simple;
use super::walker::Walker;
use super::words::{Part, Redirect, RedirectKind, Word};

/// Directories from which a program given with its path is the same as its bare name.
const SYSTEM_BIN_DIRS: [&str; 4] = ["/bin", "/usr/bin", "/usr/local/bin", "/sbin"];

/// Wrappers that run the command as it is, with nothing but limits or locale changed.
/// Not `xargs`: the words it reads are file names no permission rule has seen
/// (`find . -name '.e*' | xargs cat`).
const TRANSPARENT_WRAPPERS: [&str; 7] = [
    "timeout", "nice", "time", "command", "builtin", "stdbuf", "env",
];

/// Where output may go without writing a file.
const HARMLESS_OUTPUTS: [&str; 5] = [
    "/dev/null",
    "/dev/stdout",
    "/dev/stderr",
    "/dev/fd/1",
    "/dev/fd/2",
];

/// An argument as the checks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Arg {
    /// Literal text.
    Known(String),
    /// Known only at run time, but cannot start with `-` (`./$f`, `~/x`, `src/*.rs`).
    Operand(String),
    /// Known only at run time and could be anything, an option included (as written).
    Unknown(String),
}

impl Arg {
    fn of(word: &Word) -> Arg {
        if let Some(text) = word.literal() {
            return Arg::Known(text);
        }
        let first = word
            .parts
            .iter()
            .find(|p| !matches!(p, Part::Lit(t) if t.is_empty()));
        match first {
            Some(Part::Lit(text)) if !text.starts_with('-') => Arg::Operand(word.raw.clone()),
            Some(Part::Tilde(_)) => Arg::Operand(word.raw.clone()),
            _ => Arg::Unknown(word.raw.clone()),
        }
    }

    /// The literal text, if known.
    pub(super) fn known(&self) -> Option<&str> {
        match self {
            Arg::Known(text) => Some(text),
            Arg::Operand(_) | Arg::Unknown(_) => None,
        }
    }
}

/// Whether `simple`, on its own, is provably read-only; `Err` says why not.
pub(super) fn simple(walker: &Walker, simple: &Simple) -> Result<(), NotReadOnly> {
    // `cd "$X" && cat .env`: which files the relative paths name is not known, so rules on
    // files cannot judge them.
    if walker.cwd.is_none() && walker.start_cwd.is_some() {
        return Err(NotReadOnly::UnknownDirectory);
    }
    simple
        .redirects
        .iter()
        .try_for_each(|r| redirect(walker, r))?;
    let words = &simple.words;
    let Some(first) = words.first() else {
        return match simple.assignments.first() {
            Some(assignment) => Err(NotReadOnly::AssignsVariable {
                assignment: assignment.raw.clone(),
            }),
            None => Ok(()),
        };
    };
    for assignment in &simple.assignments {
        if !safe_env(&assignment.name) {
            return Err(NotReadOnly::ChangesEnvironment {
                assignment: assignment.raw.clone(),
                command: first.raw.clone(),
            });
        }
    }
    if first.literal().is_none() {
        return Err(NotReadOnly::NameAtRunTime {
            name: first.raw.clone(),
        });
    }
    match resolve(words) {
        Resolution::Nothing => runs_nothing(words),
        Resolution::Assignments(words) => Err(NotReadOnly::AssignsVariable {
            assignment: words.first().map(|w| w.raw.clone()).unwrap_or_default(),
        }),
        Resolution::SplitString { text, .. } => Err(NotReadOnly::RunsCommandLine {
            command: first.raw.clone(),
            line: text.raw.clone(),
        }),
        Resolution::Command {
            name,
            args,
            stdin_args,
            wrappers,
            at,
        } => {
            if wrappers.is_empty() && at > 0 {
                return Err(NotReadOnly::RunsOtherwise {
                    command: first.raw.clone(),
                    program: name,
                });
            }
            let ends = wrappers.iter().skip(1).map(|(_, i)| *i).chain([at]);
            for (&(wrapper, index), end) in wrappers.iter().zip(ends) {
                check_wrapper(wrapper, &words[index + 1..end])?;
            }
            let written = words[at].literal().unwrap_or_default();
            if written.contains('/')
                && !SYSTEM_BIN_DIRS
                    .iter()
                    .any(|dir| written == format!("{dir}/{name}"))
            {
                return Err(NotReadOnly::ProgramByPath { path: written });
            }
            let mut args: Vec<Arg> = args.iter().map(Arg::of).collect();
            if !matches!(stdin_args, StdinArgs::None) {
                args.push(Arg::Unknown("(arguments xargs reads)".to_owned()));
            }
            programs::check(&name, &args).map_err(NotReadOnly::Program)
        }
    }
}

/// A command that resolves to nothing runnable: `command -v x`, `env` alone, `sudo` alone.
fn runs_nothing(words: &[Word]) -> Result<(), NotReadOnly> {
    let name = words.first().and_then(Word::literal).unwrap_or_default();
    let args: Vec<Option<String>> = words[1..].iter().map(Word::literal).collect();
    let all_options = args
        .iter()
        .all(|a| a.as_deref().is_some_and(|t| t.starts_with('-')));
    match name.as_str() {
        "command" | "type" | "which" => Ok(()),
        "env" | "printenv" if all_options => Ok(()),
        "env" => words[1..]
            .iter()
            .filter_map(split_assignment)
            .try_for_each(|(name, _)| safe_env_or_err(&name)),
        _ => Err(NotReadOnly::RunsNoKnownCommand { name }),
    }
}

fn check_wrapper(wrapper: &str, options: &[Word]) -> Result<(), NotReadOnly> {
    if !TRANSPARENT_WRAPPERS.contains(&wrapper) {
        let wrapper = wrapper.to_owned();
        return Err(NotReadOnly::Wrapper { wrapper });
    }
    for word in options {
        let Some(option) = word.literal() else {
            let (wrapper, option) = (wrapper.to_owned(), word.raw.clone());
            return Err(NotReadOnly::WrapperOptionAtRunTime { wrapper, option });
        };
        if wrapper == "env"
            && let Some((name, _)) = split_assignment(word)
        {
            safe_env_or_err(&name)?;
        }
        if wrapper == "time" && (option == "-o" || option.starts_with("--o") || option == "-a") {
            return Err(NotReadOnly::TimeWritesReport { option });
        }
    }
    Ok(())
}

/// Environment variables that only change language, time zone or layout of output.
fn safe_env(name: &str) -> bool {
    matches!(
        name,
        "LANG" | "LANGUAGE" | "TZ" | "NO_COLOR" | "TERM" | "COLUMNS" | "LINES"
    ) || name.starts_with("LC_")
}

fn safe_env_or_err(name: &str) -> Result<(), NotReadOnly> {
    if safe_env(name) {
        Ok(())
    } else {
        let name = name.to_owned();
        Err(NotReadOnly::SetsEnvironment { name })
    }
}

/// Whether a redirection reads, duplicates a descriptor, or writes only to a terminal-like
/// device; `Err` says which file it writes.
pub(super) fn redirect(_walker: &Walker, redirect: &Redirect) -> Result<(), NotReadOnly> {
    match redirect.kind {
        RedirectKind::Read
        | RedirectKind::HereDoc
        | RedirectKind::HereString
        | RedirectKind::DupRead
        | RedirectKind::DupWrite => Ok(()),
        RedirectKind::Write | RedirectKind::Append | RedirectKind::WriteBoth => {
            match redirect.target.literal() {
                Some(target) if HARMLESS_OUTPUTS.contains(&target.as_str()) => Ok(()),
                _ => Err(NotReadOnly::WritesFile {
                    redirect: redirect.text(),
                }),
            }
        }
        RedirectKind::ReadWrite => Err(NotReadOnly::OpensForWriting {
            redirect: redirect.text(),
        }),
    }
}
