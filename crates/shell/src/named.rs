//! What particular commands mean to the walk: the deny rules each one is checked against,
//! and the shell state (`cd`, variables) the builtins change.

use super::code_strings::Language;
use super::commands::split_assignment;
use super::expand::Expanded;
use super::git_globals;
use super::paths::Scope;
use super::rules::WriteVia;
use super::shells::refuse_piped_download;
use super::walker::{Named, Shell, Stdin, Walker, refuse};
use super::words::{Part, Redirect, Word};
use super::{Danger, DangerKind, FORMATTERS, INTERPRETERS, SHELLS};

impl Walker {
    /// Applies the rules for the command `named` runs.
    pub(super) fn check_named(
        &mut self,
        named: &Named<'_>,
        redirects: &[Redirect],
        stdin: &Stdin,
        shell: Shell,
    ) -> Result<(), Danger> {
        let Named { name, args, .. } = *named;
        match name {
            "rm" => self.check_recursive(named, Scope::Delete),
            "chmod" | "chown" | "chgrp" => self.check_recursive(named, Scope::Permissions),
            "find" => self.check_find(args),
            "mv" => self.check_move(args),
            "ln" => {
                self.record_link(args);
                Ok(())
            }
            "awk" | "gawk" | "mawk" | "nawk" => match awk_program(args) {
                Some(word) => {
                    let code = self.script_text(word);
                    self.check_code_strings(&code, Language::Awk)
                }
                None => Ok(()),
            },
            "rsync" => self.check_rsync(args),
            "tar" | "gtar" | "bsdtar" => self.check_tar(args),
            "dd" => {
                for arg in args {
                    if let Expanded::Known(text) = self.expand(arg)
                        && let Some(target) = text.strip_prefix("of=")
                    {
                        self.check_device_text(target, WriteVia::DdOutput)?;
                    }
                }
                Ok(())
            }
            "tee" | "shred" => {
                for arg in args.iter().filter(|a| !self.is_option(a)) {
                    self.check_device_write(arg, WriteVia::Command(name))?;
                }
                Ok(())
            }
            "cp" => match args.iter().rfind(|a| !self.is_option(a)) {
                Some(target) => self.check_device_write(target, WriteVia::Command(name)),
                None => Ok(()),
            },
            n if n == "mkfs" || n.starts_with("mkfs.") || FORMATTERS.contains(&n) => refuse(
                DangerKind::Format,
                format!(
                    "`{n}` writes a new file system (or wipes one), destroying what is on the device"
                ),
            ),
            n if SHELLS.contains(&n) => self.check_shell(named, redirects, stdin),
            n if n.starts_with("python") || n.starts_with("perl") || INTERPRETERS.contains(&n) => {
                self.check_interpreter(n, args, redirects, stdin)
            }
            "eval" => self.check_eval(args, shell),
            "source" | "." => self.check_source(name, args, stdin, shell),
            "su" => self.check_su(args),
            // `trap 'cmd' EXIT` runs cmd later, in this shell.
            "trap" => match args
                .iter()
                .position(|a| a.literal().is_none_or(|t| !t.starts_with('-')))
            {
                Some(at) if at + 1 < args.len() => {
                    let src = self.script_text(&args[at]);
                    self.walk_source(&src, Shell::Subshell)
                }
                Some(_) | None => Ok(()),
            },
            // An alias runs its text where it is used: checked against the deny list now.
            "alias" => self.check_alias(args),
            "git" => self.check_git_config(args),
            _ => {
                self.track_builtin(name, args, shell);
                Ok(())
            }
        }
    }

    /// `eval ARGS`: its words are a script of their own, walked in this shell.
    fn check_eval(&mut self, args: &[Word], shell: Shell) -> Result<(), Danger> {
        self.refuse_downloaded_code(args, "eval")?;
        let src: Vec<String> = args.iter().map(|a| self.script_text(a)).collect();
        self.walk_source(&src.join(" "), shell)
    }

    /// `source FILE` / `. FILE`: downloaded code refused, a printed script walked.
    fn check_source(
        &mut self,
        name: &str,
        args: &[Word],
        stdin: &Stdin,
        shell: Shell,
    ) -> Result<(), Danger> {
        self.refuse_downloaded_code(args, name)?;
        if let Some([Part::ProcSubst(inner)]) = args.first().map(|w| w.parts.as_slice())
            && let Some(printed) = self.script_output(inner)
        {
            return self.walk_source(&printed, shell);
        }
        let reads_stdin = args
            .first()
            .and_then(Word::literal)
            .is_some_and(|t| t == "/dev/stdin");
        if reads_stdin && stdin.from_fetcher {
            return refuse_piped_download(name);
        }
        Ok(())
    }

    /// `su -c CMD`: the command is walked as a subshell's.
    fn check_su(&mut self, args: &[Word]) -> Result<(), Danger> {
        let mut args = args.iter();
        while let Some(arg) = args.next() {
            let text = arg.literal().unwrap_or_default();
            if let Some(src) = text.strip_prefix("--command=") {
                self.walk_source(src, Shell::Subshell)?;
            } else if (text == "-c" || text == "--command")
                && let Some(src) = args.next()
            {
                let src = self.script_text(src);
                self.walk_source(&src, Shell::Subshell)?;
            }
        }
        Ok(())
    }

    /// `alias NAME=TEXT`: the text is walked (silently) as if run.
    fn check_alias(&mut self, args: &[Word]) -> Result<(), Danger> {
        for word in args {
            if let Some((_, value)) = split_assignment(word) {
                let src = self.script_text(&value);
                let mut shadow = self.clone();
                shadow.silent = true;
                shadow.walk_source(&src, Shell::Subshell)?;
            }
        }
        Ok(())
    }

    /// The builtins that change the shell state the walk tracks (`cd`, variables, `for`).
    fn track_builtin(&mut self, name: &str, args: &[Word], shell: Shell) {
        // The token fallback for text that does not parse sees `for NAME in WORDS` as
        // a command.
        if name == "for" {
            if let Some(var) = args.first().and_then(Word::literal) {
                let listed = args
                    .get(1)
                    .and_then(Word::literal)
                    .is_some_and(|k| k == "in");
                let values = listed.then(|| &args[2..]);
                self.enter_for(&var, values);
            }
            return;
        }
        // The others change only the shell they run in.
        if shell != Shell::Same {
            return;
        }
        match name {
            "cd" | "pushd" => self.change_dir(args),
            "read" | "mapfile" | "readarray" => self.read_into(args),
            "set" => self.set_positional(args),
            "popd" => self.cwd = None,
            "export" | "declare" | "typeset" | "local" | "readonly" => self.assign(args),
            "unset" => {
                for name in args
                    .iter()
                    .filter_map(Word::literal)
                    .filter(|t| !t.starts_with('-'))
                {
                    self.non_empty.remove(&name);
                    self.run_time.remove(&name);
                    self.vars.insert(name, String::new());
                }
            }
            _ => {}
        }
    }
}

/// The program text of `awk ARGS` (`None` when it comes from a file, `-f`).
fn awk_program(args: &[Word]) -> Option<&Word> {
    let mut i = 0;
    while let Some(word) = args.get(i) {
        let Some(text) = word.literal() else {
            return Some(word);
        };
        match text.as_str() {
            "--" => return args.get(i + 1),
            "-f" | "--file" => return None,
            "-F" | "-v" => i += 2,
            t if t.starts_with("-f") || t.starts_with("--file=") => return None,
            t if t.starts_with('-') && t.len() > 1 => i += 1,
            _ => return Some(word),
        }
    }
    None
}

/// Configuration keys whose value git runs as a shell command (for `alias.*` and
/// `credential.helper`, when it starts with `!`).
const GIT_COMMAND_KEYS: [&str; 9] = [
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.fsmonitor",
    "sequence.editor",
    "diff.external",
    "gpg.program",
    "credential.helper",
    "alias.",
];

impl Walker {
    /// `git -c core.pager='rm -rf /' log`: a configuration value git runs is a command.
    fn check_git_config(&mut self, args: &[Word]) -> Result<(), Danger> {
        let mut i = 0;
        while let Some(text) = args.get(i).and_then(Word::literal) {
            // Past `-C dir` and the other options with a value, to every `-c` before the
            // subcommand.
            let Some(taken) = git_globals::option_words(&text) else {
                break;
            };
            if text == "-c"
                && let Some(setting) = args.get(i + 1)
            {
                let setting = self.script_text(setting);
                if let Some((key, value)) = setting.split_once('=') {
                    let key = key.to_ascii_lowercase();
                    let runs = GIT_COMMAND_KEYS.iter().any(|k| {
                        key == *k
                            || (k.ends_with('.') && key.starts_with(k))
                            || key.starts_with("pager.")
                    });
                    if runs {
                        let command = value.strip_prefix('!').unwrap_or(value);
                        self.walk_source(command, Shell::Subshell)?;
                    }
                }
            }
            i += taken;
        }
        Ok(())
    }
}
