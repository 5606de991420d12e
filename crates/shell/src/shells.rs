//! Shells and interpreters: the code they would run, checked as a command line where the
//! text says it (`bash -c`, a here-document, text piped in), and refused when it is
//! downloaded (`curl | sh`, `bash <(curl ...)`) or a Perl fork bomb.

use super::code_strings::Language;
use super::commands::{Resolution, StdinArgs, resolve};
use super::parse::parse;
use super::rules::FETCHERS;
use super::tree::Script;
use super::walker::{Named, Shell, Stdin, Walker, refuse};
use super::words::{Part, Redirect, RedirectKind, Word};
use super::{Danger, DangerKind, SHELLS};

impl Walker {
    /// `bash -c SCRIPT` is checked as a command line; a shell reading its script from a pipe,
    /// `<(...)` or `$(...)` must not be fed a download.
    pub(super) fn check_shell(
        &mut self,
        named: &Named<'_>,
        redirects: &[Redirect],
        stdin: &Stdin,
    ) -> Result<(), Danger> {
        let Named {
            name,
            args,
            stdin_args,
        } = *named;
        let mut script_mode = false;
        let mut stdin_flag = false;
        let mut operand_at = None;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            let Some(text) = arg.literal() else {
                operand_at = Some(i);
                break;
            };
            if text == "-" {
                break;
            }
            if text == "--" {
                operand_at = (i + 1 < args.len()).then_some(i + 1);
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
            operand_at = Some(i);
            break;
        }
        let operand = operand_at.map(|at| &args[at]);
        if script_mode {
            let src = match (operand, stdin_args, &stdin.printed) {
                (Some(script), _, _) => {
                    self.refuse_downloaded_code(
                        std::slice::from_ref(script),
                        &format!("{name} -c"),
                    )?;
                    let src = self.script_text(script);
                    // `... | xargs -I{} sh -c '{}'`: the placeholder is what was printed.
                    match (stdin_args, &stdin.printed) {
                        (StdinArgs::Replacing(p), Some(printed)) if src.contains(p.as_str()) => {
                            src.replace(p.as_str(), printed.trim_end())
                        }
                        _ => src,
                    }
                }
                // `... | xargs sh -c`: the script is the first word read.
                (None, StdinArgs::Appended, Some(printed)) => printed.clone(),
                (None, _, _) => return Ok(()),
            };
            // The words after the script are `$0`, `$1`...
            let positional = operand_at.map_or(&[][..], |at| &args[at + 1..]);
            return self.walk_source_with_args(&src, positional);
        }
        if let Some(script) = operand {
            self.refuse_downloaded_code(std::slice::from_ref(script), name)?;
            if let [Part::ProcSubst(inner)] = script.parts.as_slice()
                && let Some(printed) = self.script_output(inner)
            {
                return self.walk_source(&printed, Shell::Subshell);
            }
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
        // Options that take the next word as their value (`ruby -r json`, `python3 -W
        // error`), so that a code option after them is still found.
        const WITH_VALUE: [&str; 5] = ["-r", "-I", "-W", "-X", "--require"];
        let mut operand = None;
        let mut i = 0;
        while let Some(arg) = args.get(i) {
            i += 1;
            match arg.literal() {
                Some(text) if text == "-" => break,
                // `python3 -m module ARGS`: the module runs, the rest are its arguments.
                Some(text) if text == "-m" => return Ok(()),
                Some(text) if text.starts_with('-') && text.len() > 1 => {
                    if let Some(code) = self.inline_code(name, &text, args.get(i)) {
                        if name.starts_with("perl") && forks_forever(&code) {
                            return refuse(
                                DangerKind::ForkBomb,
                                format!(
                                    "`{name}` would run `fork` in a loop, a fork bomb: it starts \
                                     processes until the machine stops"
                                ),
                            );
                        }
                        return self.check_code_strings(&code, language_of(name));
                    }
                    if WITH_VALUE.contains(&text.as_str()) {
                        i += 1;
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

    /// The code an interpreter's option gives it on the command line (`python3 -c CODE`,
    /// `perl -le CODE`, `node --eval=CODE`), when `text` is such an option.
    fn inline_code(&self, name: &str, text: &str, next: Option<&Word>) -> Option<String> {
        let letters: &[char] = if name.starts_with("python") {
            &['c']
        } else if name.starts_with("perl") {
            &['e', 'E']
        } else if name == "php" {
            &['r']
        } else if name == "node" || name == "nodejs" {
            &['e', 'p']
        } else {
            &['e']
        };
        let next_code = || next.map(|w| self.script_text(w));
        if let Some(long) = text.strip_prefix("--") {
            let (option, value) = long
                .split_once('=')
                .map_or((long, None), |(o, v)| (o, Some(v)));
            return matches!(option, "eval" | "print")
                .then(|| value.map(str::to_owned).or_else(next_code))
                .flatten();
        }
        // A cluster of flags ends at one that takes the rest as its value (`-MFile::Temp`,
        // `-Wdefault`): a code letter after it is part of that value.
        let at = text[1..]
            .char_indices()
            .take_while(|(_, c)| c.is_ascii_alphabetic() && !"MmIxWXQiCdD".contains(*c))
            .find(|(_, c)| letters.contains(c))?
            .0;
        match &text[at + 2..] {
            "" => next_code(),
            attached => Some(attached.to_owned()),
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
                    // `sh < <(echo 'cmd')`
                    if let [Part::ProcSubst(inner)] = redirect.target.parts.as_slice()
                        && let Some(printed) = self.script_output(inner)
                    {
                        self.walk_source(&printed, Shell::Subshell)?;
                    }
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

/// How the language named `name` runs shell commands.
fn language_of(name: &str) -> Language {
    if name.starts_with("perl") || name == "ruby" || name == "php" {
        Language::Backticks
    } else {
        Language::Calls
    }
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
