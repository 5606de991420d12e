//! The rules for particular commands: recursive deletes and permission changes, writes to
//! disks, shells and interpreters that would run downloaded code.

use super::commands::{Resolution, StdinArgs, resolve};
use super::expand::Expanded;
use super::parse::parse;
use super::paths::{Contents, Scope, is_block_device, protection, resolve as resolve_path};
use super::printed::display_word;
use super::tree::Script;
use super::walker::{Named, Shell, Stdin, Walker, refuse};
use super::words::{Part, Redirect, RedirectKind, VarOp, Word};
use super::{Danger, DangerKind, SHELLS};

/// Programs that download.
pub(super) const FETCHERS: [&str; 2] = ["curl", "wget"];

/// How a command writes to a path, for messages.
#[derive(Debug, Clone, Copy)]
pub(super) enum WriteVia<'a> {
    /// `> path`
    Redirect,
    /// A command with the path as an operand (`tee`, `cp`, `shred`).
    Command(&'a str),
    /// `dd of=path`
    DdOutput,
}

impl Walker {
    /// `rm -r`, `chmod -R` and friends on a protected directory.
    pub(super) fn check_recursive(&self, named: &Named<'_>, scope: Scope) -> Result<(), Danger> {
        let Named {
            name,
            args,
            stdin_args,
        } = *named;
        let mut recursive = false;
        let mut operands = Vec::new();
        let mut options_done = false;
        for arg in args {
            let expanded = self.expand(arg);
            if let Expanded::Known(text) = &expanded
                && !options_done
                && text.starts_with('-')
                && text.len() > 1
            {
                if text == "--" {
                    options_done = true;
                } else if let Some(long) = text.strip_prefix("--") {
                    // GNU tools accept any unambiguous prefix: `--rec` is `--recursive`.
                    recursive |= long.len() >= 3 && "recursive".starts_with(long);
                } else {
                    // `chmod -r` removes read permission; only `rm` takes a lowercase `-r`.
                    recursive |=
                        text.contains('R') || (scope == Scope::Delete && text.contains('r'));
                }
                continue;
            }
            operands.push(arg);
        }
        if !recursive {
            return Ok(());
        }
        let (kind, verb) = match scope {
            Scope::Delete => (DangerKind::RecursiveDelete, "delete"),
            Scope::Permissions => (
                DangerKind::RecursivePermissions,
                "change the permissions or owner of",
            ),
        };
        let shown = display_command(name, args);
        if scope == Scope::Delete {
            self.refuse_unseen_targets(&shown, &operands, stdin_args)?;
        }
        let expansions = operands
            .iter()
            .flat_map(|word| self.expand_each(word).into_iter().map(move |e| (*word, e)));
        for (word, expanded) in expansions {
            let (text, empty, set) = match expanded {
                Expanded::Known(text) => (text, Vec::new(), Vec::new()),
                Expanded::Maybe { text, empty, set } => (text, empty, set),
                Expanded::Unknown => continue,
            };
            if text.is_empty() {
                continue;
            }
            let Some(path) = resolve_path(&text, self.cwd.as_ref()) else {
                continue;
            };
            let Some((place, contents)) =
                protection(&path, self.home.as_ref(), self.workspace.as_ref(), scope)
            else {
                continue;
            };
            let what = match contents {
                Contents::Itself => place.describe(),
                Contents::Everything => format!("everything in {}", place.describe()),
            };
            let target = display_word(word);
            let listed = |vars: &[String]| {
                vars.iter()
                    .map(|v| format!("${v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let reason = match (empty.first(), set.is_empty()) {
                (None, true) => format!("`{shown}` would {verb} {what}"),
                (Some(first), true) => format!(
                    "`{shown}` would {verb} {what} if {} were empty or unset; write {target} \
                     with ${{{first}:?}} so the shell stops instead",
                    listed(&empty)
                ),
                (_, false) => format!("`{shown}` would {verb} {what} if {} were set", listed(&set)),
            };
            return refuse(kind, reason);
        }
        Ok(())
    }

    /// A recursive delete of paths rein cannot see before it runs. A path that starts with
    /// literal text (`./build/$NAME`, `"$(pwd)/x"`, `$TMPDIR/x` which is `/x` at worst) is
    /// judged by that text; plain variables are judged by what they are when empty (see
    /// [`Expanded::Maybe`]). What is refused here is a target decided wholly at run time:
    /// a command's output (`$(cmd)`, `` `cmd` ``), a transformed variable (`${HOME%/*}`),
    /// another user's home (`~root`), or arguments `xargs` reads from its input. Any of
    /// them may be `/` or the home directory, and the person approving cannot tell either.
    fn refuse_unseen_targets(
        &self,
        shown: &str,
        operands: &[&Word],
        stdin_args: &StdinArgs,
    ) -> Result<(), Danger> {
        let from_input = match stdin_args {
            StdinArgs::None => false,
            StdinArgs::Appended => true,
            StdinArgs::Replacing(placeholder) => operands.iter().any(|w| {
                w.parts.first().is_some_and(
                    |p| matches!(p, Part::Lit(t) if t.starts_with(placeholder.as_str())),
                )
            }),
        };
        if from_input {
            return refuse(
                DangerKind::RecursiveDelete,
                format!(
                    "`{shown}` would recursively delete paths read from its input, which rein \
                     cannot see before it runs; name them in the command, or use \
                     `find DIR -name PATTERN -exec rm -rf {{}} +` so they can be checked"
                ),
            );
        }
        for word in operands {
            if self.decided_at_run_time(word) {
                return refuse(
                    DangerKind::RecursiveDelete,
                    format!(
                        "`{shown}` would recursively delete {}, a path known only when the \
                         command runs (it could be / or your home directory); write the path \
                         out so it can be checked",
                        display_word(word)
                    ),
                );
            }
        }
        Ok(())
    }

    /// Whether what `word` names is wholly decided at run time: it is only command output,
    /// transformed variables or `~user`, with at most `/` and `*` after them.
    fn decided_at_run_time(&self, word: &Word) -> bool {
        let mut parts = word.parts.as_slice();
        while let Some((last, rest)) = parts.split_last()
            && match last {
                Part::Lit(t) => t.chars().all(|c| c == '/'),
                Part::Glob(g) => g.chars().all(|c| c == '*'),
                Part::Tilde(_)
                | Part::Var(_)
                | Part::Subst(_)
                | Part::ProcSubst(_)
                | Part::Arith(_)
                | Part::Unreadable(_) => false,
            }
        {
            parts = rest;
        }
        let decided = |part: &Part| match part {
            Part::Subst(_) | Part::ProcSubst(_) => {
                self.expand(&Word {
                    parts: vec![part.clone()],
                    raw: String::new(),
                }) == Expanded::Unknown
            }
            Part::Var(var) => {
                var.op == VarOp::Transformed
                    || (self.run_time.contains(&var.name) && !self.vars.contains_key(&var.name))
            }
            Part::Tilde(user) => !user.is_empty() && user != "+",
            Part::Unreadable(_) => true,
            Part::Lit(_) | Part::Glob(_) | Part::Arith(_) => false,
        };
        // Quotes leave empty literal parts (`"$(cmd)"`); they change nothing.
        let mut parts = parts
            .iter()
            .filter(|p| !matches!(p, Part::Lit(t) if t.is_empty()))
            .peekable();
        parts.peek().is_some() && parts.all(decided)
    }

    /// A write to the path `word` names, refused when it is a disk.
    pub(super) fn check_device_write(&self, word: &Word, via: WriteVia<'_>) -> Result<(), Danger> {
        match self.expand(word) {
            Expanded::Known(text) => self.check_device_text(&text, via),
            Expanded::Maybe { .. } | Expanded::Unknown => Ok(()),
        }
    }

    /// A write to the path `text`, refused when it is a disk.
    pub(super) fn check_device_text(&self, text: &str, via: WriteVia<'_>) -> Result<(), Danger> {
        match resolve_path(text, self.cwd.as_ref()) {
            Some(path) if is_block_device(&path) => {
                let path = path.display();
                let action = match via {
                    WriteVia::Redirect => format!("redirecting output to {path}"),
                    WriteVia::Command(name) => format!("`{name}` to {path}"),
                    WriteVia::DdOutput => format!("`dd of={path}`"),
                };
                refuse(
                    DangerKind::DeviceWrite,
                    format!(
                        "{action} writes straight to a disk or to memory, destroying what is there"
                    ),
                )
            }
            Some(_) | None => Ok(()),
        }
    }

    /// `bash -c SCRIPT` is checked as a command line; a shell reading its script from a pipe,
    /// `<(...)` or `$(...)` must not be fed a download.
    pub(super) fn check_shell(
        &mut self,
        name: &str,
        args: &[Word],
        redirects: &[Redirect],
        stdin: &Stdin,
    ) -> Result<(), Danger> {
        let mut script_mode = false;
        let mut stdin_flag = false;
        let mut operand = None;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let Some(text) = arg.literal() else {
                operand = Some(arg);
                break;
            };
            if text == "-" {
                break;
            }
            if text == "--" {
                operand = args.get(i + 1);
                break;
            }
            if text.len() > 1 && (text.starts_with('-') || text.starts_with('+')) {
                if text.starts_with("--") {
                    if text == "--rcfile" || text == "--init-file" {
                        i += 1;
                    }
                } else {
                    let letters = &text[1..];
                    script_mode |= text.starts_with('-') && letters.contains('c');
                    stdin_flag |= letters.contains('s');
                    if letters.ends_with(['o', 'O']) {
                        i += 1;
                    }
                }
                i += 1;
                continue;
            }
            operand = Some(arg);
            break;
        }
        if script_mode {
            let Some(script) = operand else { return Ok(()) };
            self.refuse_downloaded_code(std::slice::from_ref(script), &format!("{name} -c"))?;
            let src = self.script_text(script);
            return self.walk_source(&src, Shell::Subshell);
        }
        if let Some(script) = operand {
            self.refuse_downloaded_code(std::slice::from_ref(script), name)?;
        }
        let reads_stdin =
            stdin_flag || operand.is_none_or(|w| w.literal().is_some_and(|t| t == "/dev/stdin"));
        if reads_stdin {
            self.check_stdin_script(name, redirects, stdin)
        } else {
            Ok(())
        }
    }

    /// `python3`, `perl`...: like a shell, they must not run a download fed to them.
    pub(super) fn check_interpreter(
        &mut self,
        name: &str,
        args: &[Word],
        redirects: &[Redirect],
        stdin: &Stdin,
    ) -> Result<(), Danger> {
        let mut operand = None;
        for (i, arg) in args.iter().enumerate() {
            match arg.literal() {
                Some(text) if text == "-" => break,
                Some(text) if text.starts_with('-') && text.len() > 1 => {
                    if name.starts_with("perl")
                        && !text.starts_with("--")
                        && let Some(at) = text[1..].find(['e', 'E'])
                    {
                        let attached = &text[at + 2..];
                        let code = match attached {
                            "" => args.get(i + 1).map(|w| self.script_text(w)),
                            code => Some(code.to_owned()),
                        };
                        if code.as_deref().is_some_and(forks_forever) {
                            return refuse(
                                DangerKind::ForkBomb,
                                format!(
                                    "`{name}` would run `fork` in a loop, a fork bomb: it starts \
                                     processes until the machine stops"
                                ),
                            );
                        }
                    }
                    let code_flags = ["-c", "-m", "-e", "-E", "-r", "-p", "--eval", "--print"];
                    let short_code = !text.starts_with("--")
                        && text[1..].contains(['c', 'm', 'e', 'E', 'r', 'p']);
                    if code_flags.contains(&text.as_str()) || short_code {
                        return Ok(());
                    }
                }
                Some(_) | None => {
                    operand = Some(arg);
                    break;
                }
            }
        }
        match operand {
            Some(script) => self.refuse_downloaded_code(std::slice::from_ref(script), name),
            None => self.check_stdin_script(name, redirects, stdin),
        }
    }

    /// A shell or interpreter that reads its program from standard input.
    pub(super) fn check_stdin_script(
        &mut self,
        name: &str,
        redirects: &[Redirect],
        stdin: &Stdin,
    ) -> Result<(), Danger> {
        if stdin.from_fetcher {
            return refuse_piped_download(name);
        }
        if SHELLS.contains(&name)
            && let Some(script) = &stdin.printed
        {
            // `echo 'rm -rf /' | bash`: the printed text is the script.
            self.walk_source(script, Shell::Subshell)?;
        }
        for redirect in redirects {
            match redirect.kind {
                RedirectKind::Read => {
                    self.refuse_downloaded_code(std::slice::from_ref(&redirect.target), name)?;
                }
                RedirectKind::HereDoc => {
                    if let Some(body) = &redirect.body {
                        self.walk_source(&body.text, Shell::Subshell)?;
                    }
                }
                RedirectKind::HereString => {
                    let src = self.script_text(&redirect.target);
                    self.walk_source(&src, Shell::Subshell)?;
                }
                RedirectKind::Write
                | RedirectKind::Append
                | RedirectKind::WriteBoth
                | RedirectKind::ReadWrite
                | RedirectKind::DupRead
                | RedirectKind::DupWrite => {}
            }
        }
        Ok(())
    }

    /// `bash <(curl ...)`, `bash -c "$(curl ...)"`, `eval "$(wget -O- ...)"`.
    pub(super) fn refuse_downloaded_code(
        &self,
        words: &[Word],
        runner: &str,
    ) -> Result<(), Danger> {
        for word in words {
            for part in &word.parts {
                let fetcher = match part {
                    Part::Subst(inner) => runs_fetcher(&parse(inner).script),
                    Part::ProcSubst(script) => runs_fetcher(script),
                    Part::Lit(_)
                    | Part::Glob(_)
                    | Part::Tilde(_)
                    | Part::Var(_)
                    | Part::Arith(_)
                    | Part::Unreadable(_) => None,
                };
                if let Some(fetcher) = fetcher {
                    return refuse(
                        DangerKind::RemoteCode,
                        format!(
                            "`{runner}` would run code downloaded by {fetcher} without anyone reading it; \
                             download it to a file first so it can be inspected"
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}

pub(super) fn refuse_piped_download(runner: &str) -> Result<(), Danger> {
    refuse(
        DangerKind::RemoteCode,
        format!(
            "piping a download into `{runner}` runs code from the network without anyone reading it; \
             download it to a file first so it can be inspected"
        ),
    )
}

/// Whether Perl code forks in a loop: `fork while fork`, `fork until 0` (the statement
/// modifier form of the classic Perl fork bomb).
fn forks_forever(code: &str) -> bool {
    let words: Vec<&str> = code
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .any(|w| w[0] == "fork" && matches!(w[1], "while" | "until"))
}

/// The downloader a nested command line runs, if any.
fn runs_fetcher(script: &Script) -> Option<&'static str> {
    let mut found = None;
    script.each_simple(&mut |simple| {
        if found.is_none()
            && let Resolution::Command { name, .. } = resolve(&simple.words)
        {
            found = FETCHERS.iter().find(|f| **f == name).copied();
        }
    });
    found
}

/// A command as the model wrote it, roughly and at most about 100 characters, for messages.
fn display_command(name: &str, args: &[Word]) -> String {
    const MAX_SHOWN_CHARS: usize = 100;
    let mut text = name.to_owned();
    for arg in args {
        text.push(' ');
        text.push_str(&display_word(arg));
        if text.chars().count() > MAX_SHOWN_CHARS {
            let cut: String = text.chars().take(MAX_SHOWN_CHARS).collect();
            return format!("{cut}...");
        }
    }
    text
}
