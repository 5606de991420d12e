//! What particular commands mean to the walk: the deny rules each one is checked against,
//! and the shell state (`cd`, variables) the builtins change.

use super::expand::Expanded;
use super::paths::Scope;
use super::rules::{WriteVia, refuse_piped_download};
use super::walker::{Named, Shell, Stdin, Walker, refuse};
use super::words::{Redirect, Word};
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
            n if SHELLS.contains(&n) => self.check_shell(n, args, redirects, stdin),
            n if n.starts_with("python") || n.starts_with("perl") || INTERPRETERS.contains(&n) => {
                self.check_interpreter(n, args, redirects, stdin)
            }
            "eval" => {
                self.refuse_downloaded_code(args, "eval")?;
                let src: Vec<String> = args.iter().map(|a| self.script_text(a)).collect();
                self.walk_source(&src.join(" "), shell)
            }
            "source" | "." => {
                self.refuse_downloaded_code(args, name)?;
                let reads_stdin = args
                    .first()
                    .and_then(Word::literal)
                    .is_some_and(|t| t == "/dev/stdin");
                if reads_stdin && stdin.from_fetcher {
                    return refuse_piped_download(name);
                }
                Ok(())
            }
            "su" => {
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
            "cd" | "pushd" => {
                if shell == Shell::Same {
                    self.change_dir(args);
                }
                Ok(())
            }
            // The token fallback for text that does not parse sees `for NAME in WORDS` as
            // a command.
            "for" => {
                if let Some(var) = args.first().and_then(Word::literal) {
                    let listed = args
                        .get(1)
                        .and_then(Word::literal)
                        .is_some_and(|k| k == "in");
                    let values = listed.then(|| &args[2..]);
                    self.enter_for(&var, values);
                }
                Ok(())
            }
            "read" | "mapfile" | "readarray" => {
                if shell == Shell::Same {
                    self.read_into(args);
                }
                Ok(())
            }
            "popd" => {
                if shell == Shell::Same {
                    self.cwd = None;
                }
                Ok(())
            }
            "export" | "declare" | "typeset" | "local" | "readonly" => {
                if shell == Shell::Same {
                    self.assign(args);
                }
                Ok(())
            }
            "unset" => {
                if shell == Shell::Same {
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
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
