//! What the policy needs to know about a call beyond its arguments: where a file tool
//! points, and what a shell command line holds. Worked out the same way for a run and for
//! `rein explain-permission`.

use std::path::{Component, Path, PathBuf};

use rein_shell::{Analyzed, CheckPlaces, SimpleCommand};
use rein_tools::ToolContext;
use serde_json::Value;

use super::{PathTarget, ShellFacts};

/// Where a file tool's `file_path` points, resolved as the tool resolves it. An error is
/// the tool's own message (a path it would refuse).
pub fn path_target(
    ctx: &ToolContext,
    arguments: &Value,
) -> Result<Option<PathTarget>, rein_tools::ToolError> {
    let Some(raw) = arguments.get("file_path").and_then(Value::as_str) else {
        return Ok(None);
    };
    let absolute = rein_tools::paths::resolve_anywhere(ctx, raw)?;
    Ok(Some(PathTarget {
        outside: !rein_tools::paths::is_allowed(ctx, &absolute),
        write: false,
        in_workspace: absolute
            .strip_prefix(ctx.workspace_root())
            .ok()
            .map(std::path::Path::to_path_buf),
        absolute,
    }))
}

/// The most file names taken from one command line for file rules (a generated command
/// line of thousands of words must not cost thousands of matches); past it, the files are
/// unknown.
const MAX_FILES: usize = 256;

/// The most entries looked through for one recursive search (`grep -r x dir`, `rg x`);
/// past it, what the search reads is unknown.
const MAX_SEARCHED: usize = 20_000;

/// Programs whose operands are not files they read.
const NOT_FILES: [&str; 20] = [
    "echo", "printf", "pwd", "true", "false", "test", "[", "seq", "date", "basename", "dirname",
    "expr", "sleep", "type", "which", "whoami", "id", "uname", "cd", "export",
];

/// What a shell call's command line holds, from rein-shell's analyzer; `None` for other tools.
pub fn shell_facts(ctx: &ToolContext, tool: &str, arguments: &Value) -> Option<ShellFacts> {
    shell_analysis(ctx, tool, arguments).map(|analyzed| facts_of(ctx, &analyzed))
}

/// A shell call's command line analysed where it would run; `None` for other tools.
pub(crate) fn shell_analysis(ctx: &ToolContext, tool: &str, arguments: &Value) -> Option<Analyzed> {
    if tool != "bash" {
        return None;
    }
    let command = arguments.get("command").and_then(Value::as_str)?;
    let places = CheckPlaces {
        workspace_root: ctx.workspace_root().to_path_buf(),
        home_dir: ctx.config().home_dir.clone(),
        cwd: Some(ctx.cwd()),
    };
    Some(Analyzed::new(command, places))
}

/// What the policy reads from a command line's analysis.
pub(crate) fn facts_of(ctx: &ToolContext, analyzed: &Analyzed) -> ShellFacts {
    let analysis = analyzed.analysis();
    let cwd = analyzed.places().cwd.clone().unwrap_or_else(|| ctx.cwd());
    let mut named = Named::new(ctx, &cwd);
    for simple in &analysis.simple_commands {
        named.add_command(simple);
    }
    let structure_ok = analysis.structure.is_ok();
    ShellFacts {
        harmless: analysis
            .simple_commands
            .iter()
            .map(|c| structure_ok && c.read_only.is_ok())
            .collect(),
        dynamic_args: analysis
            .simple_commands
            .iter()
            .map(|c| {
                c.argv.iter().enumerate().skip(1).any(|(index, word)| {
                    word.is_none() && !c.globs.iter().any(|(i, _)| *i == index)
                })
            })
            .collect(),
        rule_texts: analysis
            .simple_commands
            .iter()
            .map(|c| c.rule_text.clone())
            .collect(),
        simple_commands: analysis
            .simple_commands
            .iter()
            .map(|c| c.text.clone())
            .collect(),
        read_only: analysis.read_only.clone(),
        prefix: analysis.session_prefix(),
        danger: analysis.danger.as_ref().map(|d| d.reason.clone()),
        files: named.files,
        unknown_files: named.unknown,
    }
}

/// The files a command line names, gathered command by command. Resolved lexically against
/// the directory the line starts in; only recursive searches look at the file system.
struct Named<'a> {
    ctx: &'a ToolContext,
    cwd: &'a Path,
    files: Vec<PathTarget>,
    unknown: Option<String>,
    searched: usize,
}

impl<'a> Named<'a> {
    fn new(ctx: &'a ToolContext, cwd: &'a Path) -> Self {
        Named {
            ctx,
            cwd,
            files: Vec::new(),
            unknown: None,
            searched: 0,
        }
    }

    fn add_command(&mut self, command: &SimpleCommand) {
        let program = command
            .program
            .as_deref()
            .or_else(|| command.argv.first().and_then(Option::as_deref))
            .map(base_name);
        let reads_operands = !program.is_some_and(|p| NOT_FILES.contains(&p));
        if reads_operands {
            let mut operands = Vec::new();
            for (index, word) in command.argv.iter().enumerate().skip(1) {
                match word.as_deref() {
                    None => match command.globs.iter().find(|(i, _)| *i == index) {
                        Some((_, pattern)) => self.add_glob(pattern, &command.text),
                        None => self.unknown_because(&command.text),
                    },
                    Some("") => {}
                    Some(word) if word.starts_with('-') => {
                        // `--from-file=.env`, `--file=x`: the value may be a file.
                        if let Some((_, value)) = word.split_once('=')
                            && !value.is_empty()
                        {
                            self.add(value, false);
                        }
                    }
                    Some(word) => {
                        operands.push(word);
                        self.add(word, false);
                    }
                }
            }
            if command.argv.first().is_some_and(Option::is_none) {
                self.unknown_because(&command.text);
            }
            if let Some(filters) = program.and_then(|p| recursive_search(p, &command.argv)) {
                self.add_searched(&operands, filters);
            }
        }
        for redirect in &command.redirects {
            if redirect.contains("<<") {
                continue; // a here-document or here-string: text, not a file
            }
            let write = redirect.contains('>');
            let target =
                redirect.trim_start_matches(|c: char| c.is_ascii_digit() || "<>&|".contains(c));
            let target = target.trim().trim_matches(|c| c == '\'' || c == '"');
            if target.is_empty()
                || target.starts_with('-')
                || target.chars().all(|c| c.is_ascii_digit())
            {
                continue; // `2>&1`, `>&-`
            }
            if target.contains(['$', '`', '*', '?', '[', '{']) {
                self.unknown_because(&command.text);
                continue;
            }
            self.add(target, write);
        }
    }

    fn unknown_because(&mut self, text: &str) {
        if self.unknown.is_none() {
            self.unknown = Some(format!(
                "`{text}` names a file rein can only know when it runs"
            ));
        }
    }

    fn add(&mut self, word: &str, write: bool) {
        if self.files.len() >= MAX_FILES {
            if self.unknown.is_none() {
                self.unknown = Some(format!(
                    "the command line names more than {MAX_FILES} files"
                ));
            }
            return;
        }
        let expanded = match (word.strip_prefix("~/"), &self.ctx.config().home_dir) {
            (Some(rest), Some(home)) => home.join(rest),
            _ => PathBuf::from(word),
        };
        self.files
            .push(self.target(&self.cwd.join(expanded), write));
    }

    /// The files a glob operand names now (`cat src/*.rs`), as bash would expand it; a
    /// pattern matching too much, or that cannot be expanded here, makes the files unknown.
    fn add_glob(&mut self, pattern: &str, text: &str) {
        let absolute = normalize(&self.cwd.join(pattern));
        let text_pattern = absolute.to_string_lossy();
        // Look from the deepest directory the pattern names without a wildcard.
        let mut base = PathBuf::new();
        let mut depth = 0usize;
        let mut any_depth = false;
        for component in absolute.components() {
            let part = component.as_os_str().to_string_lossy();
            if depth == 0 && !part.contains(['*', '?', '[', '{', '\\']) {
                base.push(component);
            } else {
                depth += 1;
                any_depth |= part.contains("**");
            }
        }
        let matcher = globset::GlobBuilder::new(&text_pattern)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map(|glob| rein_tools::PathGlob::new(&glob));
        let Ok(matcher) = matcher else {
            return self.unknown_because(text);
        };
        let mut walk = ignore::WalkBuilder::new(&base);
        walk.standard_filters(false);
        if !any_depth {
            walk.max_depth(Some(depth));
        }
        for entry in walk.build().flatten() {
            self.searched += 1;
            if self.searched > MAX_SEARCHED {
                self.unknown = Some(format!("`{text}` names more files than rein looks through"));
                return;
            }
            if matcher.is_match(entry.path()) {
                let path = entry.path().to_string_lossy().into_owned();
                self.add(&path, false);
            }
        }
    }

    fn target(&self, path: &Path, write: bool) -> PathTarget {
        let workspace = self.ctx.workspace_root();
        let absolute = normalize(path);
        PathTarget {
            in_workspace: absolute.strip_prefix(workspace).ok().map(Path::to_path_buf),
            outside: !rein_tools::paths::is_allowed(self.ctx, &absolute),
            absolute,
            write,
        }
    }

    /// Every file a recursive search of `operands` would read (the directory the line runs
    /// in when none names one), so that a rule protecting one of them holds.
    fn add_searched(&mut self, operands: &[&str], filters: bool) {
        let mut dirs: Vec<PathBuf> = operands
            .iter()
            .map(|word| normalize(&self.cwd.join(word)))
            .filter(|path| path.is_dir())
            .collect();
        let names_a_file = operands.iter().any(|word| self.cwd.join(word).is_file());
        if dirs.is_empty() && !names_a_file {
            dirs.push(self.cwd.to_path_buf());
        }
        for dir in dirs {
            let walk = ignore::WalkBuilder::new(&dir)
                .standard_filters(filters)
                .require_git(false)
                .build();
            for entry in walk.flatten() {
                self.searched += 1;
                if self.searched > MAX_SEARCHED {
                    self.unknown = Some(format!(
                        "a recursive search of {} reads more than {MAX_SEARCHED} files",
                        dir.display()
                    ));
                    return;
                }
                if entry.file_type().is_some_and(|t| t.is_file()) {
                    let target = self.target(entry.path(), false);
                    self.files.push(target);
                }
            }
        }
    }
}

/// `/usr/bin/grep` → `grep`.
fn base_name(program: &str) -> &str {
    program.rsplit('/').next().unwrap_or(program)
}

/// For a search that reads whole directories, whether it skips hidden and ignored files
/// (ripgrep's defaults) — `None` when the command does not search recursively.
fn recursive_search(program: &str, argv: &[Option<String>]) -> Option<bool> {
    let flags = || argv.iter().skip(1).flatten().map(String::as_str);
    match program {
        "rg" | "ag" | "ack" => Some(!flags().any(|f| {
            f == "--hidden"
                || f == "-."
                || f.starts_with("--no-ignore")
                || f == "--unrestricted"
                || (f.starts_with("-u") && f[1..].chars().all(|c| c == 'u'))
        })),
        "grep" | "egrep" | "fgrep" => flags()
            .any(|f| {
                f == "--recursive"
                    || f == "--dereference-recursive"
                    || f == "--directories=recurse"
                    || (f.starts_with('-')
                        && !f.starts_with("--")
                        && f[1..].chars().all(|c| c.is_ascii_alphanumeric())
                        && f[1..].contains(['r', 'R']))
            })
            .then_some(false),
        _ => None,
    }
}

/// `path` with `.` and `..` taken out, as text (links are not followed).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}
