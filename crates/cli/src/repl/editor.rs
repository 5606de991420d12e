//! The input line: rustyline with rein's keys. Persistent history in `$REIN_HOME/history`
//! (Ctrl+R searches it), a paste keeps its newlines (bracketed paste; a large one shows as a
//! placeholder, see `paste.rs`), Alt+Enter or a
//! trailing `\` adds a line, Tab completes slash commands and paths after `@`, Ctrl+C
//! clears a line (and, on an empty one, is handed to the REPL to warn or exit).

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use rustyline::completion::{Completer, Pair};
use rustyline::highlight::{CmdKind, Highlighter};
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{
    Cmd, CompletionType, ConditionalEventHandler, Config, Context, Editor, Event, EventContext,
    EventHandler, Helper, KeyCode, KeyEvent, Modifiers, Movement, RepeatCount,
};

use super::paste::{self, SharedPastes};
use super::slash;

/// Entries kept in the history file.
const HISTORY_ENTRIES: usize = 10_000;
/// Completions offered for one `@` path.
const PATH_COMPLETIONS: usize = 200;

/// The prompt.
pub(crate) const PROMPT: &str = "› ";

/// The line editor.
pub(crate) type LineEditor = Editor<ReplHelper, FileHistory>;

/// Completion and multi-line input for the editor.
#[derive(Debug)]
pub(crate) struct ReplHelper {
    cwd: PathBuf,
    colored: bool,
    /// The custom commands: `/name` and whether it takes arguments.
    custom: Vec<(String, bool)>,
    /// The session's MCP servers, whose prompts are commands too (asked at each Tab: a
    /// server may become ready, or change its prompts, while the person types).
    hub: Option<Arc<rein_core::face::McpHub>>,
    /// Large pastes, shown as placeholders.
    pastes: SharedPastes,
    /// Set by Ctrl+O to what was typed: the input ends for the REPL to show the last
    /// command's output, then the prompt comes back with the same text.
    output_view: Arc<Mutex<Option<String>>>,
}

impl ReplHelper {
    /// `input` with its paste placeholders replaced by what was pasted.
    pub(crate) fn expand_pastes(&self, input: &str) -> String {
        self.pastes.lock().expand(input)
    }

    /// A paste placeholder in `input` whose paste is not held (from an earlier session).
    pub(crate) fn missing_paste(&self, input: &str) -> Option<String> {
        self.pastes.lock().missing(input)
    }

    /// What was typed when Ctrl+O ended the input (`None`: it was not Ctrl+O).
    pub(crate) fn take_output_view(&self) -> Option<String> {
        self.output_view.lock().take()
    }

    /// The MCP servers of the agent now running (another after they started again).
    pub(crate) fn follow(&mut self, hub: Option<Arc<rein_core::face::McpHub>>) {
        self.hub = hub;
    }
}

/// What Tab offers of the custom commands.
pub(crate) fn custom_completions(
    commands: &[rein_core::commands::CustomCommand],
) -> Vec<(String, bool)> {
    commands
        .iter()
        .map(|c| {
            let takes =
                c.argument_hint.is_some() || c.body.contains("$ARGUMENTS") || c.body.contains("$1");
            (format!("/{}", c.name), takes)
        })
        .collect()
}

/// A line editor for the REPL in `cwd`, its history loaded from `history`.
pub(crate) fn new(
    cwd: &Path,
    history: &Path,
    colored: bool,
    custom: Vec<(String, bool)>,
    hub: Option<Arc<rein_core::face::McpHub>>,
) -> rustyline::Result<LineEditor> {
    let config = Config::builder()
        .max_history_size(HISTORY_ENTRIES)?
        .history_ignore_dups(true)?
        .history_ignore_space(true)
        .auto_add_history(false)
        .completion_type(CompletionType::List)
        .bracketed_paste(true)
        // rein ends all its output with a newline: no need to ask the terminal.
        .check_cursor_position(false)
        .build();
    let mut editor = LineEditor::with_config(config)?;
    let pastes = SharedPastes::default();
    paste::bind(&mut editor, &pastes);
    let output_view = Arc::default();
    editor.bind_sequence(
        KeyEvent::ctrl('O'),
        EventHandler::Conditional(Box::new(CtrlO(Arc::clone(&output_view)))),
    );
    editor.set_helper(Some(ReplHelper {
        cwd: cwd.to_path_buf(),
        colored,
        pastes,
        output_view,
        custom,
        hub,
    }));
    editor.bind_sequence(KeyEvent(KeyCode::Enter, Modifiers::ALT), Cmd::Newline);
    editor.bind_sequence(
        KeyEvent::ctrl('C'),
        EventHandler::Conditional(Box::new(CtrlC)),
    );
    // No history yet, or one rein cannot read: start afresh.
    let _ = editor.load_history(history);
    Ok(editor)
}

/// Adds `line` to the history and appends it to the file, which only its owner may read
/// (requests can hold secrets).
pub(crate) fn remember(editor: &mut LineEditor, history: &Path, line: &str) {
    let _ = editor.add_history_entry(line);
    if !history.exists() {
        if let Some(dir) = history.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        use std::os::unix::fs::OpenOptionsExt;
        let _ = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(history);
    }
    let _ = editor.append_history(history);
}

/// What was typed, with `\` line continuations joined into newlines.
pub(crate) fn joined(line: &str) -> String {
    line.replace("\\\n", "\n")
}

/// Ctrl+O: ends the input, keeping what was typed, for the REPL to show the last command's
/// whole output.
struct CtrlO(Arc<Mutex<Option<String>>>);

impl ConditionalEventHandler for CtrlO {
    fn handle(
        &self,
        _event: &Event,
        _count: RepeatCount,
        _positive: bool,
        ctx: &EventContext<'_>,
    ) -> Option<Cmd> {
        *self.0.lock() = Some(ctx.line().to_owned());
        Some(Cmd::Interrupt)
    }
}

/// Ctrl+C: clears a line with text in it; on an empty line, ends the input with
/// `Interrupted` for the REPL to decide.
struct CtrlC;

impl ConditionalEventHandler for CtrlC {
    fn handle(
        &self,
        _event: &Event,
        _count: RepeatCount,
        _positive: bool,
        ctx: &EventContext<'_>,
    ) -> Option<Cmd> {
        if ctx.line().is_empty() {
            Some(Cmd::Interrupt)
        } else {
            Some(Cmd::Kill(Movement::WholeBuffer))
        }
    }
}

impl Helper for ReplHelper {}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(
        &'s self,
        prompt: &'p str,
        _default: bool,
    ) -> Cow<'b, str> {
        if self.colored {
            Cow::Owned(format!("\x1b[1;36m{prompt}\x1b[0m"))
        } else {
            Cow::Borrowed(prompt)
        }
    }

    fn highlight_char(&self, _line: &str, _pos: usize, _kind: CmdKind) -> bool {
        false
    }
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext<'_>) -> rustyline::Result<ValidationResult> {
        // A trailing backslash asks for another line.
        if ctx.input().ends_with('\\') {
            Ok(ValidationResult::Incomplete)
        } else {
            Ok(ValidationResult::Valid(None))
        }
    }
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        let before = &line[..pos];
        let start = before.rfind(char::is_whitespace).map_or(0, |i| {
            i + before[i..].chars().next().map_or(1, char::len_utf8)
        });
        let word = &before[start..];
        if start == 0 && word.starts_with('/') {
            let mut found = complete_command(word, &self.custom);
            found.extend(complete_prompt(word, self.hub.as_deref()));
            return Ok((0, found));
        }
        if let Some(argument) = before.strip_prefix("/permissions ") {
            return Ok((
                "/permissions ".len(),
                slash::MODES
                    .iter()
                    .filter(|mode| mode.starts_with(argument))
                    .map(|mode| pair(mode, mode))
                    .collect(),
            ));
        }
        if let Some(path) = word.strip_prefix('@') {
            return Ok((start, complete_path(&self.cwd, path)));
        }
        Ok((pos, Vec::new()))
    }
}

fn pair(display: &str, replacement: &str) -> Pair {
    Pair {
        display: display.to_owned(),
        replacement: replacement.to_owned(),
    }
}

/// Slash commands starting with `word`, the custom ones after the built-in ones.
fn complete_command(word: &str, custom: &[(String, bool)]) -> Vec<Pair> {
    let built_in = slash::COMMANDS
        .iter()
        .map(|command| (command.name, !command.argument.is_empty()));
    let custom = custom.iter().map(|(name, takes)| (name.as_str(), *takes));
    built_in
        .chain(custom)
        .filter(|(name, _)| name.starts_with(word))
        .map(|(name, takes)| {
            let replacement = if takes {
                format!("{name} ")
            } else {
                name.to_owned()
            };
            pair(name, &replacement)
        })
        .collect()
}

/// MCP prompts whose command starts with `word`, shown with their arguments and what they do.
fn complete_prompt(word: &str, hub: Option<&rein_core::face::McpHub>) -> Vec<Pair> {
    rein_core::commands::prompt_commands(hub)
        .into_iter()
        .map(|c| (format!("/{}", c.name), c))
        .filter(|(name, _)| name.starts_with(word))
        .map(|(name, command)| {
            let about = crate::render::neutralize(&command.description);
            let (display, replacement) = match &command.argument_hint {
                Some(hint) => (format!("{name} {hint}  {about}"), format!("{name} ")),
                None => (format!("{name}  {about}"), name),
            };
            pair(&display, &replacement)
        })
        .collect()
}

/// Files and directories whose path starts with `typed` (relative to `cwd`), as `@path`.
fn complete_path(cwd: &Path, typed: &str) -> Vec<Pair> {
    let (dir, prefix) = match typed.rfind('/') {
        Some(i) => (&typed[..=i], &typed[i + 1..]),
        None => ("", typed),
    };
    let base = if dir.starts_with('/') {
        PathBuf::from(dir)
    } else if let Some(rest) = dir.strip_prefix("~/") {
        std::env::home_dir().unwrap_or_default().join(rest)
    } else {
        cwd.join(dir)
    };
    let Ok(entries) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut found: Vec<Pair> = entries
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let name = entry.file_name().into_string().ok()?;
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let shown = if is_dir { format!("{name}/") } else { name };
            Some(pair(&shown, &format!("@{dir}{shown}")))
        })
        .take(PATH_COMPLETIONS)
        .collect();
    found.sort_by(|a, b| a.display.cmp(&b.display));
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_complete_from_their_start() {
        let names: Vec<String> = complete_command("/co", &[])
            .into_iter()
            .map(|p| p.replacement)
            .collect();
        assert_eq!(names, ["/cost", "/context", "/compact "]);
    }

    #[test]
    fn paths_complete_after_an_at_sign() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("src")).unwrap();
        std::fs::write(dir.path().join("src/main.rs"), "").unwrap();
        std::fs::write(dir.path().join(".env"), "").unwrap();
        let found: Vec<String> = complete_path(dir.path(), "")
            .into_iter()
            .map(|p| p.replacement)
            .collect();
        assert_eq!(found, ["@src/"]);
        let found: Vec<String> = complete_path(dir.path(), "src/m")
            .into_iter()
            .map(|p| p.replacement)
            .collect();
        assert_eq!(found, ["@src/main.rs"]);
    }

    #[test]
    fn backslash_newlines_join() {
        assert_eq!(joined("a \\\nb"), "a \nb");
    }
}
