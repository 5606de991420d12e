//! Refuses dangerous commands before they run: recursive deletes of `/`, the home directory
//! or the workspace root, file system formatting, raw writes to disks, recursive permission
//! changes of the system, fork bombs, and code downloaded and piped into a shell.
//!
//! The command is parsed (words, quotes, variables, operators, nested `bash -c`, wrappers such
//! as `sudo`, command substitutions) rather than matched as a string, so spacing, quoting,
//! `$HOME` for `~` and the like do not slip past it. It judges what it can know from the
//! text, with the current directory for `$(pwd)`, `$PWD` and `~+`; a recursive delete of a
//! path known only at run time (`rm -rf "$(cmd)"`, `... | xargs rm -rf`) is refused because
//! it cannot be checked.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

mod braces;
mod commands;
mod expand;
mod find;
mod lexer;
mod paths;
mod rules;
mod script;
mod words;
mod wrappers;

use commands::{Resolution, StdinArgs, resolve};
use expand::Expanded;
use paths::{AbsPath, GLOB_MARK, HOME_MARK, Scope};
use rules::{FETCHERS, WriteVia, refuse_piped_download};
use script::{Command, Pipeline, Script, parse};
use words::{Part, Redirect, Word};

/// Where a command would run, for judging the paths it names.
#[derive(Debug, Clone)]
pub struct CheckPlaces {
    /// The workspace root: deleting it (or a directory containing it) is refused.
    pub workspace_root: PathBuf,
    /// The home directory; `~` and `$HOME` are protected even when it is not known.
    pub home_dir: Option<PathBuf>,
    /// The directory the command starts in, for relative paths.
    pub cwd: Option<PathBuf>,
}

/// The kind of harm a refused command would do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DangerKind {
    /// A recursive delete of `/`, a system directory, the home directory or the workspace.
    RecursiveDelete,
    /// Making a file system (`mkfs`, `mkswap`, `wipefs`).
    Format,
    /// Writing straight to a disk or to kernel memory (`dd of=/dev/sda`, `> /dev/sda`).
    DeviceWrite,
    /// A recursive `chmod`/`chown`/`chgrp` of `/`, a system directory or the home directory.
    RecursivePermissions,
    /// A function that starts copies of itself without end.
    ForkBomb,
    /// Code downloaded with `curl`/`wget` and run by a shell or interpreter.
    RemoteCode,
    /// Nested so deeply that it cannot be checked.
    TooComplex,
}

/// Why a command is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct Danger {
    /// The kind of harm.
    pub kind: DangerKind,
    /// What would happen, for the model.
    pub reason: String,
}

/// How many levels of `bash -c`, `$( )` and `eval` the checker follows.
const MAX_NESTING_LEVELS: usize = 16;

pub(super) const SHELLS: [&str; 10] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];
pub(super) const INTERPRETERS: [&str; 6] = ["perl", "ruby", "node", "nodejs", "php", "lua"];
pub(super) const FORMATTERS: [&str; 4] = ["mke2fs", "mkswap", "wipefs", "mkdosfs"];

/// Checks `command` before it runs; `Err` says why it must not.
pub fn check_command(command: &str, places: &CheckPlaces) -> Result<(), Danger> {
    if command.contains("fork while fork") {
        return Err(Danger {
            kind: DangerKind::ForkBomb,
            reason: "`fork while fork` is a fork bomb: it starts processes until the machine stops"
                .to_owned(),
        });
    }
    let home = places.home_dir.as_deref().and_then(AbsPath::from_path);
    let mut vars = HashMap::new();
    vars.insert(
        "HOME".to_owned(),
        home.as_ref()
            .map_or_else(|| HOME_MARK.to_string(), AbsPath::as_text),
    );
    let mut walker = Walker {
        home,
        workspace: AbsPath::from_path(&places.workspace_root),
        cwd: places.cwd.as_deref().and_then(AbsPath::from_path),
        vars,
        non_empty: HashSet::new(),
        loop_values: HashMap::new(),
        depth: 0,
    };
    walker.walk_script(&parse(command))
}

/// Walks a parsed command line, keeping what the shell would know as it runs: variables,
/// the current directory (as far as the text tells), how deep the nesting is.
#[derive(Debug, Clone)]
struct Walker {
    home: Option<AbsPath>,
    workspace: Option<AbsPath>,
    /// The current directory; `None` once it cannot be known (`cd "$X"`).
    cwd: Option<AbsPath>,
    /// Variables whose value is known; others are unknown.
    vars: HashMap<String, String>,
    /// Variables whose value is unknown but never empty (`for` loop variables).
    non_empty: HashSet<String>,
    /// The values a `for` loop variable takes, when the loop lists them (`for d in a /`).
    loop_values: HashMap<String, Vec<String>>,
    /// Levels of nested command lines entered so far.
    depth: usize,
}

/// Where a command's standard input comes from, as far as it matters here.
#[derive(Debug, Clone, Default)]
struct Stdin {
    /// Whether an earlier command of the pipeline downloads (`curl`, `wget`).
    from_fetcher: bool,
    /// The text the previous command prints, when the command line says it (`echo 'ls'`).
    printed: Option<String>,
}

/// A command found by [`resolve`], as the rules see it.
#[derive(Debug, Clone, Copy)]
struct Named<'a> {
    /// The command name, without its directory.
    name: &'a str,
    /// Its arguments.
    args: &'a [Word],
    /// Arguments it also reads from its standard input (`xargs`).
    stdin_args: &'a StdinArgs,
}

/// Whether shell state changes (`cd`, assignments) made by a command last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shell {
    /// The same shell: `cd` and assignments affect what follows.
    Same,
    /// A subshell or another process: they do not.
    Subshell,
}

/// A refusal of the given kind.
fn refuse<T>(kind: DangerKind, reason: String) -> Result<T, Danger> {
    Err(Danger { kind, reason })
}

impl Walker {
    fn walk_script(&mut self, script: &Script) -> Result<(), Danger> {
        for function in &script.functions {
            let calls_itself_concurrently = function.body.pipelines.iter().any(|p| {
                (p.background || p.commands.len() > 1)
                    && p.commands.iter().any(|c| {
                        matches!(resolve(&c.words), Resolution::Command { name, .. } if name == function.name)
                    })
            });
            if calls_itself_concurrently {
                return refuse(
                    DangerKind::ForkBomb,
                    format!(
                        "`{}` is a fork bomb: the function starts copies of itself until the machine stops",
                        function.name
                    ),
                );
            }
            self.clone().walk_script(&function.body)?;
        }
        for pipeline in &script.pipelines {
            self.walk_pipeline(pipeline)?;
        }
        Ok(())
    }

    fn walk_pipeline(&mut self, pipeline: &Pipeline) -> Result<(), Danger> {
        let shell = if pipeline.background || pipeline.commands.len() > 1 {
            Shell::Subshell
        } else {
            Shell::Same
        };
        let mut stdin = Stdin::default();
        for command in &pipeline.commands {
            stdin = self.walk_command(command, &stdin, shell)?;
        }
        Ok(())
    }

    /// Walks a nested command line (`bash -c`, `$( )`, `eval`).
    fn walk_source(&mut self, src: &str, shell: Shell) -> Result<(), Danger> {
        if self.depth >= MAX_NESTING_LEVELS {
            return refuse(
                DangerKind::TooComplex,
                "the command is nested too deeply to check".to_owned(),
            );
        }
        let script = parse(src);
        match shell {
            Shell::Same => {
                self.depth += 1;
                let result = self.walk_script(&script);
                self.depth -= 1;
                result
            }
            Shell::Subshell => {
                let mut inner = self.clone();
                inner.depth += 1;
                inner.walk_script(&script)
            }
        }
    }

    /// Checks one simple command; returns what the next command of a pipeline reads.
    fn walk_command(
        &mut self,
        command: &Command,
        stdin: &Stdin,
        shell: Shell,
    ) -> Result<Stdin, Danger> {
        let targets = command.redirects.iter().map(|r| &r.target);
        for word in command.words.iter().chain(targets) {
            for part in &word.parts {
                if let Part::Subst(inner) | Part::ProcSubst(inner) = part {
                    self.walk_source(inner, Shell::Subshell)?;
                }
            }
        }
        for redirect in command.redirects.iter().filter(|r| r.kind.writes()) {
            self.check_device_write(&redirect.target, WriteVia::Redirect)?;
        }
        let words = self.split_command_variable(&command.words);
        let mut next = Stdin {
            from_fetcher: stdin.from_fetcher,
            printed: None,
        };
        match resolve(&words) {
            Resolution::Nothing => Ok(next),
            Resolution::Assignments(words) => {
                if shell == Shell::Same {
                    self.assign(words);
                }
                Ok(next)
            }
            Resolution::SplitString { text, rest } => {
                let mut src = self.script_text(&text);
                for word in rest {
                    src.push(' ');
                    src.push_str(&self.script_text(word));
                }
                self.walk_source(&src, Shell::Subshell)?;
                Ok(next)
            }
            Resolution::Command {
                name,
                args,
                stdin_args,
            } => {
                let named = Named {
                    name: &name,
                    args,
                    stdin_args: &stdin_args,
                };
                self.check_named(&named, &command.redirects, stdin, shell)?;
                next.from_fetcher |= FETCHERS.contains(&name.as_str());
                next.printed = match name.as_str() {
                    "echo" | "printf" => self.printed_text(&name, args),
                    // `tee` copies its input through; `cat` does when it reads no file.
                    "tee" => stdin.printed.clone(),
                    "cat" if args.iter().all(|a| self.is_option(a)) => stdin.printed.clone(),
                    _ => None,
                };
                Ok(next)
            }
        }
    }

    fn check_named(
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
            n if n.starts_with("python") || INTERPRETERS.contains(&n) => {
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
            "for" => {
                // Inside `for NAME in WORDS`, NAME is one of the words: never empty, and
                // one of them in turn when they are all known.
                if let Some(name) = args.first().and_then(Word::literal) {
                    self.vars.remove(&name);
                    self.loop_values.remove(&name);
                    let values: Option<Vec<String>> = match args.get(1).and_then(Word::literal) {
                        Some(keyword) if keyword == "in" => args[2..]
                            .iter()
                            .map(|w| match self.expand(w) {
                                Expanded::Known(text) if !text.contains(GLOB_MARK) => Some(text),
                                Expanded::Known(_)
                                | Expanded::IfEmpty { .. }
                                | Expanded::Unknown => None,
                            })
                            .collect(),
                        Some(_) | None => None,
                    };
                    if let Some(values) = values.filter(|v| !v.is_empty()) {
                        self.loop_values.insert(name.clone(), values);
                    }
                    self.non_empty.insert(name);
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
                        self.vars.insert(name, String::new());
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}
