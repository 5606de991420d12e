//! `git` subcommands that only read the repository, and the options that would make them
//! write or run something.

use super::super::git_globals;
use super::Arg;
use super::programs::{could_be_option, denied, raw};

/// Subcommands that only show things, with no writing form.
const SHOWING: [&str; 27] = [
    "status",
    "log",
    "show",
    "diff",
    "whatchanged",
    "shortlog",
    "diff-tree",
    "diff-files",
    "diff-index",
    "range-diff",
    "blame",
    "annotate",
    "grep",
    "ls-files",
    "ls-tree",
    "cat-file",
    "rev-parse",
    "rev-list",
    "describe",
    "name-rev",
    "merge-base",
    "for-each-ref",
    "show-ref",
    "show-branch",
    "count-objects",
    "check-ignore",
    "check-attr",
];

/// Options of the showing subcommands that write a file or run a program: the output file,
/// an external diff, a pager for the files found, gpg to check signatures, and the
/// textconv and smudge filters that `.gitattributes` and the configuration name.
const WRITING_LONG: [&str; 7] = [
    "--output",
    "--ext-diff",
    "--open-files-in-pager",
    "--exec",
    "--show-signature",
    "--filters",
    "--textconv",
];

/// Whether `git ARGS` only reads; `Err` says why not.
pub(super) fn check(args: &[Arg]) -> Result<(), String> {
    let mut i = 0;
    let subcommand = loop {
        let Some(arg) = args.get(i) else {
            return Err("`git` without a subcommand is not a command rein checks".to_owned());
        };
        let Arg::Known(text) = arg else {
            return Err(could_be_option("git", &raw(arg)));
        };
        if git_globals::option_words(text).is_none() {
            break text.as_str();
        }
        if !git_globals::is_harmless(text) {
            return Err(format!(
                "`git {text}` points git at a repository, configuration or program rein has not \
                 checked (`-c`, `-C`, `--git-dir` can bring a pager, hook or diff program that \
                 runs); run it without that option"
            ));
        }
        i += 1;
    };
    let rest = &args[i + 1..];
    match subcommand {
        s if SHOWING.contains(&s) => showing(s, rest),
        "branch" => listing("branch", rest, BRANCH_VALUES, BRANCH_FLAGS),
        "tag" => listing("tag", rest, TAG_VALUES, TAG_FLAGS),
        "config" => config(rest),
        "remote" => only_forms(
            "remote",
            rest,
            &[&[], &["-v"], &["--verbose"]],
            // `git remote show` asks the remote, which may run ssh.
            &["get-url"],
        ),
        "stash" => only_forms("stash", rest, &[], &["list", "show"]),
        "worktree" => only_forms("worktree", rest, &[], &["list"]),
        "submodule" => only_forms("submodule", rest, &[], &["status"]),
        "notes" => only_forms("notes", rest, &[], &["list", "show"]),
        "reflog" => only_forms("reflog", rest, &[&[]], &["show"]),
        "version" => Ok(()),
        other => Err(format!(
            "`git {other}` is not one of the git subcommands rein knows to be read-only"
        )),
    }
}

fn showing(subcommand: &str, args: &[Arg]) -> Result<(), String> {
    for arg in args {
        match arg {
            Arg::Known(text) if text == "--" => return Ok(()),
            // `--text` (`-a`) is an option of its own, not an abbreviation of `--textconv`.
            Arg::Known(text) if text == "--text" => {}
            Arg::Known(text) => {
                let short = if subcommand == "grep" { "O" } else { "" };
                if denied(text, &WRITING_LONG, short) {
                    return Err(format!(
                        "`git {subcommand} {text}` writes a file or runs another program"
                    ));
                }
            }
            Arg::Operand(_) => {}
            Arg::Unknown(raw) => return Err(could_be_option(&format!("git {subcommand}"), raw)),
        }
    }
    Ok(())
}

const BRANCH_FLAGS: &[&str] = &[
    "-a",
    "--all",
    "-r",
    "--remotes",
    "-v",
    "-vv",
    "--verbose",
    "-l",
    "--list",
    "--show-current",
    "--color",
    "--no-color",
    "--column",
    "--no-column",
    "-i",
    "--ignore-case",
    "--omit-empty",
    "-q",
    "--quiet",
    "--no-abbrev",
];
const BRANCH_VALUES: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
    "--abbrev",
];
const TAG_FLAGS: &[&str] = &[
    "-l",
    "--list",
    "--column",
    "--no-column",
    "--color",
    "--no-color",
    "-i",
    "--ignore-case",
    "--omit-empty",
];
const TAG_VALUES: &[&str] = &[
    "--contains",
    "--no-contains",
    "--merged",
    "--no-merged",
    "--points-at",
    "--sort",
    "--format",
];

/// `git branch` and `git tag` that list: known flags only, and names only as patterns
/// after `--list` (`git branch NAME` creates one, `-D` deletes one).
fn listing(subcommand: &str, args: &[Arg], values: &[&str], flags: &[&str]) -> Result<(), String> {
    let listing = args
        .iter()
        .any(|a| matches!(a.known(), Some("-l" | "--list")));
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Arg::Known(text) = arg else {
            if listing {
                continue;
            }
            return Err(could_be_option(&format!("git {subcommand}"), &raw(arg)));
        };
        let name = text.split_once('=').map_or(text.as_str(), |(n, _)| n);
        if values.contains(&name) {
            i += usize::from(!text.contains('='));
        } else if flags.contains(&name) || (subcommand == "tag" && text.starts_with("-n")) {
        } else if text.starts_with('-') || !listing {
            return Err(format!(
                "`git {subcommand} {text}` creates, deletes or changes a {subcommand}"
            ));
        }
    }
    Ok(())
}

/// `git config` that reads: `--get`, `--list`... or `git config get/list`.
fn config(args: &[Arg]) -> Result<(), String> {
    const READS: [&str; 7] = [
        "--get",
        "--get-all",
        "--get-regexp",
        "--get-urlmatch",
        "--list",
        "-l",
        "get",
    ];
    const WRITES: [&str; 12] = [
        "--unset",
        "--unset-all",
        "--add",
        "--replace-all",
        "--rename-section",
        "--remove-section",
        "-e",
        "--edit",
        "set",
        "unset",
        "edit",
        "rename-section",
    ];
    let mut reads = false;
    for arg in args {
        let Arg::Known(text) = arg else {
            return Err(could_be_option("git config", &raw(arg)));
        };
        if WRITES.contains(&text.as_str()) {
            return Err(format!("`git config {text}` changes the configuration"));
        }
        reads |= READS.contains(&text.as_str()) || text == "list";
    }
    if reads {
        Ok(())
    } else {
        Err("`git config` without `--get` or `--list` may change the configuration".to_owned())
    }
}

/// Subcommands read-only only in some forms: exactly one of `whole` argument lists, or a
/// first argument among `first` (`git stash list`).
fn only_forms(
    subcommand: &str,
    args: &[Arg],
    whole: &[&[&str]],
    first: &[&str],
) -> Result<(), String> {
    let texts: Option<Vec<&str>> = args.iter().map(Arg::known).collect();
    let Some(texts) = texts else {
        return Err(format!(
            "`git {subcommand}` gets arguments known only when it runs"
        ));
    };
    let ok = whole.contains(&texts.as_slice()) || texts.first().is_some_and(|t| first.contains(t));
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`git {subcommand} {}` may change the repository",
            texts.join(" ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(args: &str) -> Result<(), String> {
        let args: Vec<Arg> = args
            .split_whitespace()
            .map(|a| Arg::Known(a.to_owned()))
            .collect();
        check(&args)
    }

    #[test]
    fn reading_forms_pass() {
        for ok in [
            "status",
            "status --porcelain -b",
            "-P log --oneline -5",
            "--no-pager diff --stat HEAD~1",
            "show HEAD:src/main.rs",
            "branch",
            "branch -a -v",
            "branch --list feat/*",
            "branch --contains HEAD",
            "tag -l v1.*",
            "config --get user.name",
            "config --list",
            "remote -v",
            "stash list",
            "log --output-indicator-new=+",
            "rev-parse --show-toplevel",
        ] {
            assert_eq!(git(ok), Ok(()), "{ok}");
        }
    }

    #[test]
    fn writing_forms_fail() {
        for bad in [
            "-c core.pager=sh status",
            "-C sub log",
            "--git-dir=x log",
            "--work-tree . diff",
            "--bare log",
            "log --show-signature",
            "log -p --textconv",
            "cat-file --filters HEAD:a",
            "remote show origin",
            "--exec-path=/tmp log",
            "diff --output=x",
            "diff --ext-diff",
            "log --out=x",
            "grep -O foo",
            "branch -D main",
            "branch new",
            "branch -m a b",
            "tag v1",
            "tag -d v1",
            "config user.name x",
            "config --unset user.name",
            "stash",
            "stash pop",
            "remote add o x",
            "commit -m x",
            "push",
            "checkout .",
        ] {
            assert!(git(bad).is_err(), "{bad}");
        }
    }
}
