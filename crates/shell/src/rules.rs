//! The rules for what commands do to paths: recursive deletes and permission changes of
//! protected directories, and writes to disks.

use super::commands::StdinArgs;
use super::expand::Expanded;
use super::paths::{Contents, Scope, is_block_device, protection, resolve as resolve_path};
use super::printed::display_word;
use super::walker::{Named, Walker, refuse};
use super::words::{Part, VarOp, Word};
use super::{Danger, DangerKind};

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
        let split = self.split_fields(args);
        let args = split.as_slice();
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
            // `x/` where x is a symlink: what it points to is deleted.
            let linked = match scope {
                Scope::Delete => self.through_links(&text),
                Scope::Permissions => None,
            };
            let Some((place, contents)) = [Some(path), linked]
                .into_iter()
                .flatten()
                .find_map(|p| protection(&p, self.home.as_ref(), self.workspace.as_ref(), scope))
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

    /// Whether what `word` names is decided at run time: it is only command output,
    /// transformed variables or `~user`, with at most `/` and `*` after them; or it starts
    /// with a value read from input (`read d`, `mapfile a`).
    ///
    /// For a value read from input only the start matters: `"$d"/..` or `"${a[@]}"` can be
    /// anything, `/` included. That refuses a few honest commands (`read d; rm -rf
    /// "$d/cache"`), which the person can run themselves, and lets none through that
    /// deletes a place the text cannot name. Command output is judged by the whole word, so
    /// `rm -rf "$(mktemp -d)/x"` stays allowed: a program that prints a path seldom prints
    /// `/`, while input can be anything. A variable from the environment (`$BUILD_DIR`) is
    /// judged by what it is when empty (see [`Expanded::Maybe`]), so `rm -rf
    /// "${BUILD_DIR:?}"` is not refused.
    fn decided_at_run_time(&self, word: &Word) -> bool {
        let read_from_input = |part: &Part| match part {
            Part::Var(var) => {
                // `${a[@]}`, `${a[0]}` after `mapfile a`.
                let name = var.name.split('[').next().unwrap_or_default();
                self.run_time.contains(name) && !self.vars.contains_key(&var.name)
            }
            _ => false,
        };
        let mut parts = word.parts.as_slice();
        // Quotes leave empty literal parts (`"$(cmd)"`); they change nothing.
        if parts
            .iter()
            .find(|p| !matches!(p, Part::Lit(t) if t.is_empty()))
            .is_some_and(read_from_input)
        {
            return true;
        }
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
            Part::Var(var) => var.op == VarOp::Transformed || read_from_input(part),
            Part::Tilde(user) => !user.is_empty() && user != "+",
            Part::Unreadable(_) => true,
            Part::Lit(_) | Part::Glob(_) | Part::Arith(_) => false,
        };
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
