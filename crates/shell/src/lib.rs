//! What a bash command would do, decided before it runs: the simple commands in it (for
//! permission rules), whether it is provably read-only (so it may run without asking), and
//! whether the hard deny list refuses it (in every mode).
//!
//! The command is parsed with brush-parser, a bash-compatible parser, and walked the way bash
//! would run it: lists, pipelines, compound commands, function bodies, `$( )`, `<( )`,
//! `bash -c '...'`, `eval`, text piped into a shell, wrappers such as `sudo`, `env`,
//! `timeout` or `xargs`. The walk keeps what the shell would know (variables assigned in the
//! text, the current directory after `cd`), so `D=/; rm -rf $D` and `cd / && rm -rf *` are
//! judged by what they delete. Nothing is decided on substrings of the text.
//!
//! # Read-only: fail closed
//!
//! A command is read-only only when every part of it is proven harmless (`readonly/mod.rs`
//! lists the programs and flags):
//! - every simple command runs a known read-only program (`ls`, `cat`, `grep`, `rg`,
//!   `git status`, `sed -n`, ...) with flags that neither write nor run other programs,
//!   through at most a transparent wrapper (`timeout`, `nice`, `env`, `command`, `xargs`);
//! - commands are joined by `&&`, `||`, `;`, newlines and `|`, possibly inside `{ }`, `( )`,
//!   `if`, `for`, `while` and `case`, whose words are checked the same way;
//! - no output is redirected to a file (`> /dev/null`, `2>&1` and `>&2` are fine);
//! - nothing is substituted (`$( )`, backticks, `<( )`), no arithmetic, nothing in the
//!   background, no function definition, no variable assignment (bar locale variables
//!   before a command), no variable or glob in a command position;
//! - variables and globs in arguments are fine, except for programs where an option could
//!   write a file or run a program (`sort`, `find`, `git`, `sed`...): there an argument
//!   known only at run time could be such an option;
//! - it parses: a syntax error is not read-only.
//!
//! Anything else is not proven read-only: the caller asks (or, headless, denies).
//!
//! # The hard deny list
//!
//! Refused in every mode: recursive deletes of `/`, a system directory, the home directory,
//! the workspace root or a directory containing either (also through globs such as `/*` or
//! `/[a-z]*`, `/proc/self/root`, `${X:-/}`, loop variables, or a path known only when the
//! command runs, such as `$(cmd)` or a variable set from one); making file systems; writes
//! to disks; recursive permission changes of the system or the home directory; fork bombs;
//! and code downloaded with `curl`/`wget` and handed to a shell or interpreter. Text that
//! merely mentions such a command (`echo 'rm -rf /'`, `git commit -m "fork while fork"`)
//! is not refused.
//!
//! A command line that does not parse is judged as far as it can be read (`parse.rs`), and
//! every word of it that could start a command is checked as if it did (`nested.rs`), so a
//! syntax error cannot hide a command from the deny list. Where brush-parser and bash read
//! the same text differently (`( ( cmd ) )` is arithmetic to the one, subshells to the
//! other; `${X:-~}` is not an expansion to brush), the walk takes bash's reading too.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;

mod braces;
mod code_strings;
mod commands;
mod dynamic;
mod expand;
mod find;
mod git_globals;
mod glob;
mod links;
mod lower;
mod lower_words;
mod moves;
mod named;
mod nested;
mod not_read_only;
mod options;
mod parse;
mod paths;
mod prefix;
mod printed;
mod readonly;
mod record;
mod rule_form;
mod rules;
mod shells;
mod tree;
mod walker;
mod words;
mod wrappers;

pub use not_read_only::NotReadOnly;
use paths::{AbsPath, HOME_MARK};
use walker::{Findings, Stdin, Walker};

/// Where a command would run, for judging the paths it names.
#[derive(Debug, Clone, PartialEq, Eq)]
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
    /// Nested so deeply (or so large) that it cannot be checked.
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

impl Danger {
    /// The refusal as the model reads it: what would happen and what to do instead.
    pub fn refusal(&self) -> String {
        format!(
            "Refused to run this command: {}. rein does not run commands that could destroy the \
             system, the user's files or the workspace. Use a narrower command; if this is really \
             intended, ask the user to run it themselves.",
            self.reason
        )
    }
}

/// What a bash command would do, as far as its text tells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandAnalysis {
    /// Every simple command, in order, as text a rule can match (`npm test -- --watch`),
    /// including those nested in `$( )`, `bash -c '...'`, subshells, pipelines, loops and
    /// function bodies. When `danger` is set, the list may stop at the refused command.
    pub simple_commands: Vec<SimpleCommand>,
    /// Ok when the whole command is provably read-only; Err(why not, one sentence a person
    /// and a model can act on) otherwise.
    pub read_only: Result<(), NotReadOnly>,
    /// Ok when nothing but its simple commands keeps it from being read-only (no
    /// substitution, function, `&`, arithmetic or unparsable text); then it is harmless when
    /// each simple command is read-only or allowed by a rule. Err(why) otherwise.
    pub structure: Result<(), NotReadOnly>,
    /// Set when the hard deny list refuses it, whatever the mode.
    pub danger: Option<Danger>,
}

/// One simple command: words, the assignments before them and their redirections.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimpleCommand {
    /// The assignments, words and redirections as written, separated by single spaces
    /// (`FOO=1 npm test -- --watch > log.txt`); a here-document's body is left out.
    pub text: String,
    /// The words (command name first) as bash passes them, quotes removed; `None` for a
    /// word known only when it runs (a variable, a glob, `$( )`).
    pub argv: Vec<Option<String>>,
    /// The `NAME=value` words before the command name, as written.
    pub assignments: Vec<String>,
    /// The redirections, as written (`2>&1`, `> log.txt`, `<<EOF`).
    pub redirects: Vec<String>,
    /// The program that runs, looked up through wrappers (`sudo -u x rm -rf y` → `rm`),
    /// when the text says it.
    pub program: Option<String>,
    /// The command as permission rules see it: the program's base name and the words after
    /// it, quotes removed, joined by single spaces, with what does not change the command
    /// taken away: wrappers and their options (`command`, `builtin`, `exec`, `env` with its
    /// assignments and options, `timeout 5`, `nice -n 5`, `nohup`, `stdbuf -oL`, `time`,
    /// `sudo -u x`, `doas`...), assignments before it, redirections, the program's directory
    /// (`/usr/bin/git` → `git`) and git's global options (`git -C . -c k=v push --force` →
    /// `git push --force`). A word whose value the text tells is written as that value
    /// (`G=git; $G push` → `git push`, `~/x` → `/home/me/x`); other words (`$X`, `$(cmd)`,
    /// globs) as written. `None` when the program is known only when it runs (`$CMD push`,
    /// `$(which git) push`, `g* push`, `sudo $CMD`, `env -S '...'`, whose commands are listed
    /// on their own). `Some("")` when no program runs (`X=1`, `> file`).
    pub rule_text: Option<String>,
    /// The pathname patterns among the words: `(index in argv, pattern)` for each word that
    /// is `None` in `argv` only because it holds an unquoted glob (no variable, no
    /// substitution; a brace expansion is already split into its words). The pattern has
    /// its quotes removed, quoted pattern characters (`\ * ? [ ] { }`) escaped with a
    /// backslash, and a leading `~` replaced by the home directory (`cat '*'x* ~/.e*` →
    /// `\*x*`, `/home/me/.e*`). Extglob groups (`@(a|b)`) are left as written. A relative
    /// pattern is relative to [`CheckPlaces::cwd`], except after a `cd` earlier in the line
    /// to a known directory, where it is made absolute (`cd src && cat *.rs` →
    /// `/work/src/*.rs`); after a `cd` to a directory the text does not tell, it is left
    /// relative, and no command after that `cd` is read-only.
    pub globs: Vec<(usize, String)>,
    /// Whether this command on its own is provably read-only (its program, flags,
    /// assignments and redirections). What surrounds it (substitutions, functions, `&`, a
    /// syntax error) is judged only in [`CommandAnalysis::read_only`].
    pub read_only: Result<(), NotReadOnly>,
}

/// How many levels of `bash -c`, `$( )` and `eval` the checker follows.
const MAX_NESTING_LEVELS: usize = 16;

/// Nesting (brackets, compound keywords) checked on the caller's stack; deeper command lines
/// are checked on a thread with a stack sized for them.
const INLINE_NESTING: usize = 24;
/// Past this much nesting a command line is refused as too complex.
const MAX_NESTING: usize = 10_000;
/// Stack per level of nesting for the parser and the walk, with room to spare (debug builds
/// use several times more than release builds).
const STACK_PER_LEVEL_BYTES: usize = if cfg!(debug_assertions) {
    64 << 10
} else {
    16 << 10
};
/// Stack for everything but the nesting.
const STACK_BASE_BYTES: usize = 4 << 20;

pub(crate) const SHELLS: [&str; 10] = [
    "sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish", "csh", "tcsh",
];
pub(crate) const INTERPRETERS: [&str; 6] = ["perl", "ruby", "node", "nodejs", "php", "lua"];
pub(crate) const FORMATTERS: [&str; 4] = ["mke2fs", "mkswap", "wipefs", "mkdosfs"];

/// Analyses `command` before it runs.
pub fn analyze(command: &str, places: &CheckPlaces) -> CommandAnalysis {
    let needed = parse::nesting_bound(command);
    if needed <= INLINE_NESTING {
        return guarded(command, places, INLINE_NESTING);
    }
    if needed > MAX_NESTING {
        return too_complex();
    }
    let stack = STACK_BASE_BYTES + 2 * needed * STACK_PER_LEVEL_BYTES;
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("rein-bash-check".to_owned())
            .stack_size(stack)
            .spawn_scoped(scope, || guarded(command, places, needed))
            .ok()
            .and_then(|thread| thread.join().ok())
    })
    .unwrap_or_else(too_complex)
}

/// A command line's analysis with what it was made from, so that a later step (the bash tool
/// after the permission decision) uses it instead of analysing the line again.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analyzed {
    command: String,
    places: CheckPlaces,
    analysis: CommandAnalysis,
}

impl Analyzed {
    /// Analyses `command` in `places`.
    pub fn new(command: &str, places: CheckPlaces) -> Self {
        let analysis = analyze(command, &places);
        Analyzed {
            command: command.to_owned(),
            places,
            analysis,
        }
    }

    /// The analysis.
    pub fn analysis(&self) -> &CommandAnalysis {
        &self.analysis
    }

    /// Where the line was analysed as running.
    pub fn places(&self) -> &CheckPlaces {
        &self.places
    }

    /// The analysis, when it was made of `command` in `places`; `None` when either differs
    /// (a hook changed the line, a `cd` moved the directory since).
    pub fn of(&self, command: &str, places: &CheckPlaces) -> Option<&CommandAnalysis> {
        (self.command == command && &self.places == places).then_some(&self.analysis)
    }
}

/// Checks `command` against the hard deny list only; `Err` says why it must not run.
pub fn check_command(command: &str, places: &CheckPlaces) -> Result<(), Danger> {
    analyze(command, places).danger.map_or(Ok(()), Err)
}

/// [`walk`], with a panic in the parser turned into a refusal rather than a crash.
fn guarded(command: &str, places: &CheckPlaces, nesting_budget: usize) -> CommandAnalysis {
    catch_unwind(AssertUnwindSafe(|| walk(command, places, nesting_budget)))
        .unwrap_or_else(|_| too_complex())
}

fn walk(command: &str, places: &CheckPlaces, nesting_budget: usize) -> CommandAnalysis {
    let home = places.home_dir.as_deref().and_then(AbsPath::from_path);
    let mut walker = Walker {
        vars: [(
            "HOME".to_owned(),
            home.as_ref()
                .map_or_else(|| HOME_MARK.to_string(), AbsPath::as_text),
        )]
        .into(),
        home,
        workspace: AbsPath::from_path(&places.workspace_root),
        cwd: places.cwd.as_deref().and_then(AbsPath::from_path),
        start_cwd: places.cwd.as_deref().and_then(AbsPath::from_path),
        non_empty: Default::default(),
        loop_values: Default::default(),
        run_time: Default::default(),
        depth: 0,
        nesting_budget,
        source: command.into(),
        silent: false,
        found: Default::default(),
    };
    let parsed = parse::parse(command);
    if let Some(failure) = &parsed.failure {
        walker.failed(failure);
    }
    let mut danger = walker.walk_script(&parsed.script, &Stdin::default()).err();
    if danger.is_none() && walker.found.borrow().failures > 0 {
        danger = walker.scan_unparsed(&parsed.text).err();
    }
    let Findings {
        commands,
        not_read_only,
        structure,
        ..
    } = walker.found.take();
    let read_only = match not_read_only {
        Some(reason) => Err(reason),
        None if commands.is_empty() => Err(NotReadOnly::NoCommand),
        None => Ok(()),
    };
    CommandAnalysis {
        simple_commands: commands,
        read_only,
        structure: structure.map_or(Ok(()), Err),
        danger,
    }
}

fn too_complex() -> CommandAnalysis {
    CommandAnalysis {
        simple_commands: Vec::new(),
        read_only: Err(NotReadOnly::TooComplex),
        structure: Err(NotReadOnly::TooComplex),
        danger: Some(Danger {
            kind: DangerKind::TooComplex,
            reason: "the command is nested too deeply (or is too large) to check".to_owned(),
        }),
    }
}
