//! `rein sessions`: this directory's sessions (`--all`: every directory's), newest first,
//! with what tells them apart: id, when, model, turns, cost, first prompt. The same rows
//! feed the picker of `rein -r` and `/resume` without an id.

use std::io::{BufRead, IsTerminal, Write};
use std::path::Path;

use rein_core::face::{Message, Part, Role, cost_usd};
use rein_core::session::{SessionEvent, SessionStore};
use serde::Serialize;

use crate::args::{Args, OutputFormat};
use crate::exit::Exit;
use crate::render::{self, neutralize};
use crate::setup;

/// One session, as listed.
#[derive(Debug, Clone, Serialize)]
pub(crate) struct Row {
    pub(crate) id: String,
    /// When it was last written (RFC 3339, UTC, to the second), else when created.
    pub(crate) when: String,
    pub(crate) model: String,
    pub(crate) turns: usize,
    /// USD, when the model's price is known.
    pub(crate) cost_usd: Option<f64>,
    pub(crate) first_prompt: String,
    pub(crate) cwd: String,
    /// The session it was forked from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) parent: Option<String>,
}

/// The sessions of `cwd` (all of them with `all`), newest first.
pub(crate) fn rows(store: &SessionStore, cwd: &Path, all: bool) -> Result<Vec<Row>, String> {
    let sessions = store
        .list()
        .map_err(|e| format!("cannot list the sessions: {e}"))?;
    Ok(sessions
        .into_iter()
        .filter(|s| all || s.header.cwd == cwd)
        .map(|summary| {
            let loaded = store.load_whole(&summary.header.id).ok();
            let (turns, cost, first) = loaded.as_ref().map_or((0, None, String::new()), |l| {
                let turns = l
                    .events
                    .iter()
                    .filter(|e| matches!(e.event, SessionEvent::TurnFinished { .. }))
                    .count();
                let (model, _) = l.model();
                let cost = cost_usd(model, &l.total_usage());
                (turns, cost, first_prompt(&l.messages))
            });
            Row {
                id: summary.header.id.clone(),
                when: rein_core::session::rfc3339(summary.modified),
                model: summary.header.model.clone(),
                turns,
                cost_usd: cost,
                first_prompt: first,
                cwd: summary.header.cwd.display().to_string(),
                parent: summary.header.parent.clone(),
            }
        })
        .collect())
}

fn first_prompt(messages: &[Message]) -> String {
    messages
        .iter()
        .filter(|m| m.role == Role::User)
        .find_map(|m| {
            m.parts.iter().find_map(|p| match p {
                Part::Text { text } => Some(text.lines().next().unwrap_or_default().to_owned()),
                Part::Reasoning { .. }
                | Part::ToolCall(_)
                | Part::ToolResult(_)
                | Part::Image(_) => None,
            })
        })
        .unwrap_or_default()
}

/// One row as a line of text.
pub(crate) fn line(row: &Row, all: bool) -> String {
    let cost = row
        .cost_usd
        .map_or_else(|| "-".to_owned(), |c| format!("${c:.4}"));
    let when = row.when.get(..16).unwrap_or(&row.when).replace('T', " ");
    let mut prompt: String = row.first_prompt.chars().take(60).collect();
    if row.first_prompt.chars().count() > 60 {
        prompt.push('…');
    }
    let place = if all {
        format!("  {}", row.cwd)
    } else {
        String::new()
    };
    neutralize(&format!(
        "{}  {when}  {}  {} turn(s)  {cost}  {prompt}{place}",
        row.id, row.model, row.turns
    ))
    .into_owned()
}

/// Runs `rein sessions`.
pub(crate) fn run(args: &Args, all: bool) -> Exit {
    let (store, cwd) = match store_and_cwd() {
        Ok(found) => found,
        Err(message) => {
            render::error(&message);
            return Exit::Runtime;
        }
    };
    let rows = match rows(&store, &cwd, all) {
        Ok(rows) => rows,
        Err(message) => {
            render::error(&message);
            return Exit::Runtime;
        }
    };
    print_rows(args, &rows, all);
    Exit::Done
}

/// Prints the rows as the output format asks.
pub(crate) fn print_rows(args: &Args, rows: &[Row], all: bool) {
    match args.output_format.unwrap_or(OutputFormat::Text) {
        OutputFormat::Text => {
            if rows.is_empty() {
                render::notice("no sessions here yet");
            }
            for row in rows {
                render::stdout_line(&line(row, all));
            }
        }
        OutputFormat::Json | OutputFormat::StreamJson => {
            render::stdout_line(&serde_json::json!({ "sessions": rows }).to_string());
        }
    }
}

/// The session store and the canonical working directory.
pub(crate) fn store_and_cwd() -> Result<(SessionStore, std::path::PathBuf), String> {
    let cwd = std::env::current_dir()
        .and_then(|d| d.canonicalize())
        .map_err(|e| format!("cannot determine the working directory: {e}"))?;
    let home = std::env::home_dir();
    let rein_home = rein_core::config::default_rein_home(&setup::process_env, home.as_deref())
        .ok_or("cannot find the home directory: set REIN_HOME")?;
    Ok((SessionStore::new(rein_home), cwd))
}

/// What `rein -r` without an id does: a picker on a terminal (the chosen id), else the list
/// (and no id).
pub(crate) fn pick(args: &Args) -> Result<Option<String>, String> {
    let (store, cwd) = store_and_cwd()?;
    let rows = rows(&store, &cwd, false)?;
    let on_terminal = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    if !on_terminal {
        print_rows(args, &rows, false);
        return Ok(None);
    }
    if rows.is_empty() {
        return Err(format!("no sessions in {} yet", cwd.display()));
    }
    let mut err = std::io::stderr().lock();
    for (i, row) in rows.iter().enumerate().take(PICKER_ROWS) {
        let _ = writeln!(err, "{:>3}  {}", i + 1, line(row, false));
    }
    let _ = write!(
        err,
        "resume which session? [1-{}, Enter: none] ",
        rows.len().min(PICKER_ROWS)
    );
    let _ = err.flush();
    drop(err);
    let mut answer = String::new();
    std::io::stdin()
        .lock()
        .read_line(&mut answer)
        .map_err(|e| format!("cannot read the answer: {e}"))?;
    Ok(choose(&rows, answer.trim()))
}

/// How many sessions the picker offers.
pub(crate) const PICKER_ROWS: usize = 20;

/// The row an answer names: its number in the list, or (a prefix of) its id.
pub(crate) fn choose(rows: &[Row], answer: &str) -> Option<String> {
    if answer.is_empty() {
        return None;
    }
    if let Ok(n) = answer.parse::<usize>() {
        return rows.get(n.checked_sub(1)?).map(|r| r.id.clone());
    }
    let mut matching = rows.iter().filter(|r| r.id.starts_with(answer));
    match (matching.next(), matching.next()) {
        (Some(row), None) => Some(row.id.clone()),
        _ => None,
    }
}
