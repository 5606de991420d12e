//! `find` that deletes: `-delete`, or `-exec rm` on what it finds.

use super::commands::{Resolution, StdinArgs, resolve};
use super::expand::Expanded;
use super::paths::{Scope, protection, resolve as resolve_path};
use super::printed::display_word;
use super::tree::Simple;
use super::walker::{Named, Shell, Stdin, Walker, refuse};
use super::words::Word;
use super::{Danger, DangerKind};

/// Tests that pick files by name, place, age, size or owner. A `find` that deletes what such a
/// test picks (`find . -name '*.o' -delete`) is ordinary cleaning, even from `/` or `~`.
const SELECTIVE_TESTS: [&str; 30] = [
    "-name",
    "-iname",
    "-path",
    "-ipath",
    "-wholename",
    "-iwholename",
    "-regex",
    "-iregex",
    "-lname",
    "-ilname",
    "-inum",
    "-samefile",
    "-newer",
    "-anewer",
    "-cnewer",
    "-mtime",
    "-mmin",
    "-atime",
    "-amin",
    "-ctime",
    "-cmin",
    "-size",
    "-user",
    "-group",
    "-uid",
    "-gid",
    "-nouser",
    "-nogroup",
    "-empty",
    "-perm",
];

/// Selective tests that take no value.
const SELECTIVE_WITHOUT_VALUE: [&str; 3] = ["-nouser", "-nogroup", "-empty"];

/// Other expression words that take the next word as their value.
const OTHER_WITH_VALUE: [&str; 5] = ["-type", "-xtype", "-maxdepth", "-mindepth", "-printf"];

/// Whether the expression word `test` takes the next word as its value.
fn takes_value(test: &str) -> bool {
    (SELECTIVE_TESTS.contains(&test) && !SELECTIVE_WITHOUT_VALUE.contains(&test))
        || OTHER_WITH_VALUE.contains(&test)
}

/// What a `find` expression does, as far as deleting goes.
#[derive(Debug, Default)]
struct Expression {
    /// Whether a selective test (not negated, no `-o`) limits what the actions see.
    selective: bool,
    /// Whether `-delete` is there.
    deletes: bool,
    /// The commands of `-exec`, `-execdir`, `-ok` and `-okdir`.
    commands: Vec<Vec<Word>>,
}

fn parse_expression(words: &[Word]) -> Expression {
    let mut expression = Expression::default();
    let mut negated = false;
    let mut alternatives = false;
    let mut i = 0;
    while let Some(word) = words.get(i) {
        i += 1;
        let text = word.literal().unwrap_or_default();
        match text.as_str() {
            "!" | "-not" => {
                negated = true;
                continue;
            }
            "-o" | "-or" => alternatives = true,
            "-delete" => expression.deletes = true,
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let rest = &words[i..];
                let end = rest
                    .iter()
                    .position(|w| w.literal().is_some_and(|t| t == ";" || t == "+"))
                    .unwrap_or(rest.len());
                expression.commands.push(rest[..end].to_vec());
                i += end + 1;
            }
            t => {
                let test = if t.starts_with("-newer") { "-newer" } else { t };
                if SELECTIVE_TESTS.contains(&test) && !negated {
                    expression.selective = true;
                }
                if takes_value(test) {
                    i += 1;
                }
            }
        }
        negated = false;
    }
    // `-o` lets an action run for files the tests on the other side did not pick.
    expression.selective &= !alternatives;
    expression
}

impl Walker {
    /// `find START -delete` or `find START -exec rm ...` where START is `/`, the home
    /// directory, the workspace root or a system directory, and no test narrows what is
    /// found. Other `-exec` commands are checked with `{}` standing for the start points.
    pub(super) fn check_find(&mut self, args: &[Word]) -> Result<(), Danger> {
        let mut i = 0;
        while let Some(text) = args.get(i).and_then(Word::literal) {
            match text.as_str() {
                "-H" | "-L" | "-P" => i += 1,
                "-D" => i += 2,
                t if t.starts_with("-O") => i += 1,
                _ => break,
            }
        }
        let args = &args[i.min(args.len())..];
        let starts_at = args
            .iter()
            .position(|w| {
                w.literal()
                    .is_some_and(|t| t.starts_with('-') || t == "(" || t == "!")
            })
            .unwrap_or(args.len());
        let (starts, expression) = args.split_at(starts_at);
        let dot = [Word::literal_word(".")];
        let starts = if starts.is_empty() { &dot[..] } else { starts };
        let expression = parse_expression(expression);
        let runs_rm = expression.commands.iter().any(
            |words| matches!(resolve(words), Resolution::Command { name, .. } if name == "rm"),
        );
        if (expression.deletes || runs_rm) && !expression.selective {
            self.refuse_find_of_protected(args, starts)?;
        }
        for words in &expression.commands {
            // What `-exec` runs is a command of its own, for the rules.
            self.record(&Simple {
                words: words.clone(),
                ..Simple::default()
            });
            let placeholders: &[Word] = if expression.selective { &[] } else { starts };
            for start in placeholders.iter().chain([&Word::literal_word("{}")]) {
                let words: Vec<Word> = words
                    .iter()
                    .map(|w| {
                        if w.literal().is_some_and(|t| t == "{}") {
                            start.clone()
                        } else {
                            w.clone()
                        }
                    })
                    .collect();
                if let Resolution::Command { name, args, .. } = resolve(&words) {
                    let named = Named {
                        name: &name,
                        args,
                        stdin_args: &StdinArgs::None,
                    };
                    self.check_named(&named, &[], &Stdin::default(), Shell::Subshell)?;
                }
            }
        }
        Ok(())
    }

    fn refuse_find_of_protected(&self, args: &[Word], starts: &[Word]) -> Result<(), Danger> {
        for start in starts {
            for expanded in self.expand_each(start) {
                let text = match expanded {
                    Expanded::Known(text) | Expanded::Maybe { text, .. } => text,
                    Expanded::Unknown => continue,
                };
                let Some(path) = resolve_path(&text, self.cwd.as_ref()) else {
                    continue;
                };
                if let Some((place, _)) = protection(
                    &path,
                    self.home.as_ref(),
                    self.workspace.as_ref(),
                    Scope::Delete,
                ) {
                    let shown: Vec<String> = args.iter().map(display_word).collect();
                    return refuse(
                        DangerKind::RecursiveDelete,
                        format!(
                            "`find {}` would delete everything in {}; add a test such as \
                             -name PATTERN so it deletes only what you mean",
                            shown.join(" "),
                            place.describe()
                        ),
                    );
                }
            }
        }
        Ok(())
    }
}
