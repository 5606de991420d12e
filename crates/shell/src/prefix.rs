//! The prefix a person may allow for the rest of a session after approving one command line
//! (`touch one.txt` → `touch`, `git commit -m x` → `git commit`, `npm run build -- --prod` →
//! `npm run build`), as Claude Code offers `Bash(touch:*)`. Offered only where a prefix means
//! what a person reads in it: one plain command, its program named in the text, run
//! directly. Never for a line that runs other code of its choosing (a shell, an interpreter,
//! a wrapper such as `sudo`, `env` or `xargs`), for one whose whole purpose is destructive
//! wherever it points (`rm`, `dd`, `chmod`...), nor for pipelines, lists, substitutions,
//! redirections or assignments: there only the exact line is offered.

use super::wrappers::WRAPPERS;
use super::{CommandAnalysis, INTERPRETERS, SHELLS};

/// Programs whose arguments are code they run, or that run other programs as they are told:
/// a prefix for them would allow anything.
const RUNS_CODE: [&str; 22] = [
    "python", "python2", "python3", "pypy", "pypy3", "deno", "bun", "awk", "gawk", "mawk", "nawk",
    "sed", "find", "eval", "source", ".", "ssh", "watch", "parallel", "chroot", "script", "expect",
];

/// Programs whose every use destroys or gives away something wherever it points: a yes to
/// one file must not become a yes to all of them.
const DESTRUCTIVE: [&str; 17] = [
    "rm", "rmdir", "shred", "dd", "truncate", "chmod", "chown", "chgrp", "kill", "killall",
    "pkill", "mkfs", "fdisk", "parted", "reboot", "shutdown", "crontab",
];

/// Programs whose first argument is a subcommand that says what they do: the prefix keeps it
/// (`git commit`, `cargo test`), never the bare program (`git:*` would allow `git push`).
const SUBCOMMANDS: [&str; 24] = [
    "git",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "npx",
    "go",
    "docker",
    "podman",
    "kubectl",
    "gh",
    "pip",
    "pip3",
    "uv",
    "poetry",
    "rustup",
    "brew",
    "apt",
    "apt-get",
    "dnf",
    "systemctl",
    "terraform",
    "dotnet",
    "mvn",
];

/// Subcommands that run a named script or package: the prefix keeps its name too
/// (`npm run build`, `npx prettier`, `cargo run` stays `cargo run`).
const RUNS_NAMED: [(&str, &str); 8] = [
    ("npm", "run"),
    ("npm", "exec"),
    ("pnpm", "run"),
    ("pnpm", "exec"),
    ("yarn", "run"),
    ("yarn", "exec"),
    ("uv", "run"),
    ("poetry", "run"),
];

/// Redirections that write nothing anywhere.
const HARMLESS_REDIRECTS: [&str; 7] = [
    "2>&1",
    ">&2",
    "1>&2",
    "2>/dev/null",
    ">/dev/null",
    "1>/dev/null",
    "&>/dev/null",
];

impl CommandAnalysis {
    /// The command prefix "yes for the session" may offer for this line (without `:*`), or
    /// `None` when only the exact line makes sense.
    pub fn session_prefix(&self) -> Option<String> {
        if self.danger.is_some() || self.structure.is_err() {
            return None;
        }
        let [command] = self.simple_commands.as_slice() else {
            return None;
        };
        if !command.assignments.is_empty()
            || command
                .redirects
                .iter()
                .any(|r| !HARMLESS_REDIRECTS.contains(&r.replace(' ', "").as_str()))
        {
            return None;
        }
        // The program run directly, by a plain name: no wrapper, no path, nothing dynamic.
        let words: Vec<&str> = command
            .argv
            .iter()
            .map(|w| w.as_deref())
            .collect::<Option<Vec<_>>>()?;
        let (&name, args) = words.split_first()?;
        if command.program.as_deref() != Some(name) || !is_plain_name(name) || refused(name) {
            return None;
        }
        if !SUBCOMMANDS.contains(&name) {
            return Some(name.to_owned());
        }
        let sub = args.first().filter(|s| is_plain_name(s))?;
        if RUNS_NAMED.contains(&(name, sub)) || name == "npx" {
            let target = if name == "npx" {
                sub
            } else {
                args.get(1).filter(|s| is_plain_name(s))?
            };
            return Some(if name == "npx" {
                format!("{name} {target}")
            } else {
                format!("{name} {sub} {target}")
            });
        }
        Some(format!("{name} {sub}"))
    }
}

/// A program or subcommand name as people type it: no path, option, quote or pattern.
fn is_plain_name(word: &str) -> bool {
    !word.is_empty()
        && !word.starts_with('-')
        && word
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.+-@".contains(c))
}

/// Whether no prefix of a command run by `name` may be offered.
fn refused(name: &str) -> bool {
    SHELLS.contains(&name)
        || INTERPRETERS.contains(&name)
        || RUNS_CODE.contains(&name)
        || DESTRUCTIVE.contains(&name)
        || name.starts_with("mkfs")
        || name.starts_with("python")
        || WRAPPERS.iter().any(|w| w.name == name)
}

#[cfg(test)]
mod tests {
    use super::super::{CheckPlaces, analyze};

    fn prefix(command: &str) -> Option<String> {
        let places = CheckPlaces {
            workspace_root: "/work/project".into(),
            home_dir: Some("/home/me".into()),
            cwd: Some("/work/project".into()),
        };
        analyze(command, &places).session_prefix()
    }

    #[test]
    fn a_plain_command_offers_its_program_or_subcommand() {
        for (line, expected) in [
            ("touch one.txt", "touch"),
            ("mkdir -p build/out", "mkdir"),
            ("git commit -m 'fix the import'", "git commit"),
            ("cargo test --workspace", "cargo test"),
            ("npm run build -- --prod", "npm run build"),
            ("npx prettier --write .", "npx prettier"),
            ("make test 2>&1", "make"),
            ("touch a > /dev/null", "touch"),
        ] {
            assert_eq!(prefix(line).as_deref(), Some(expected), "{line}");
        }
    }

    #[test]
    fn no_prefix_where_it_would_allow_anything_or_mean_nothing() {
        for line in [
            "bash -c 'touch x'",
            "sh script.sh",
            "sudo touch x",
            "env X=1 touch x",
            "X=1 touch x",
            "timeout 5 touch x",
            "xargs touch < list",
            "python3 -c 'print(1)'",
            "node build.js",
            "find . -name x -delete",
            "rm one.txt",
            "chmod +x run.sh",
            "touch a | tee b",
            "touch a && touch b",
            "touch $(cat names)",
            "touch $NAME",
            "$CMD one.txt",
            "./build.sh release",
            "/usr/bin/touch x",
            "echo hi > out.txt",
            "git -c core.pager=evil log",
            "git",
            "npm run",
            "touch a &",
        ] {
            assert_eq!(prefix(line), None, "{line}");
        }
    }
}
