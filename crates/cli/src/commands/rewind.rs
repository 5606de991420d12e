//! `rein rewind [-r ID] --list` and `rein rewind [-r ID] --to N [--code|--conversation|--both]`:
//! a session's turns, and the point before one of them restored. Headless, so it never
//! asks: a file someone changed since rein last wrote it makes it refuse, naming the file,
//! with nothing changed.

use rein_core::checkpoint::{
    Applied, CheckpointSettings, Checkpoints, OnChanged, Restore, RewindPlan, RewindScope,
    TurnRecord,
};
use rein_core::session::{SessionError, SessionStore};
use serde_json::json;

use crate::args::{Args, OutputFormat};
use crate::exit::Exit;
use crate::render::{self, neutralize};

/// Runs `rein rewind`: `to` is `None` for `--list`.
pub(crate) fn run(args: &Args, session: Option<&str>, to: Option<u32>, scope: RewindScope) -> Exit {
    match rewind(args, session, to, scope) {
        Ok(()) => Exit::Done,
        Err((message, exit)) => {
            if args.output_format.unwrap_or(OutputFormat::Text) != OutputFormat::Text {
                render::stdout_line(&json!({ "error": message }).to_string());
            }
            render::error(&message);
            exit
        }
    }
}

fn rewind(
    args: &Args,
    session: Option<&str>,
    to: Option<u32>,
    scope: RewindScope,
) -> Result<(), (String, Exit)> {
    let runtime = |m: String| (m, Exit::Runtime);
    let (store, cwd) = super::sessions::store_and_cwd().map_err(runtime)?;
    let rein_home = store
        .dir()
        .parent()
        .map(std::path::Path::to_path_buf)
        .unwrap_or_default();
    for note in rein_core::checkpoint::recover(&rein_home) {
        render::notice(&format!("rein: {note}"));
    }
    let id = match session {
        Some(id) => id.to_owned(),
        None => newest(&store, &cwd)?,
    };
    let (mut session, loaded) = store.open(&id).map_err(|e| match e {
        SessionError::NotFound { .. } | SessionError::InvalidId { .. } => {
            (e.to_string(), Exit::Usage)
        }
        other => (other.to_string(), Exit::Runtime),
    })?;
    let (mut checkpoints, warnings) =
        Checkpoints::open(&rein_home, &id, &loaded.header.cwd, settings(args));
    for warning in warnings {
        render::notice(&format!("rein: warning: {warning}"));
    }
    let json = args.output_format.unwrap_or(OutputFormat::Text) != OutputFormat::Text;
    let Some(to) = to else {
        let turns = checkpoints.turns().map_err(|e| runtime(e.to_string()))?;
        list(&id, &turns, json);
        return Ok(());
    };
    let plan = checkpoints
        .plan(to, scope)
        .map_err(|e| (e.to_string(), Exit::Usage))?;
    let done = checkpoints
        .apply(&plan, OnChanged::Refuse, Some(&mut session))
        .map_err(|e| runtime(e.to_string()))?;
    report(&id, &plan, &done, json);
    Ok(())
}

/// The checkpoint settings of the configuration here (the defaults when it cannot be read:
/// they only bound what a rewind's scan saves).
pub(crate) fn settings(args: &Args) -> CheckpointSettings {
    crate::setup::configuration(args)
        .map_or_else(|_| CheckpointSettings::default(), |(c, _)| c.checkpoints())
}

/// The newest session of `cwd`.
fn newest(store: &SessionStore, cwd: &std::path::Path) -> Result<String, (String, Exit)> {
    match store.newest_for_cwd(cwd) {
        Ok(Some(summary)) => Ok(summary.header.id),
        Ok(None) => Err((
            format!("no session in {}: name one with -r ID", cwd.display()),
            Exit::Usage,
        )),
        Err(e) => Err((e.to_string(), Exit::Runtime)),
    }
}

fn list(id: &str, turns: &[TurnRecord], json: bool) {
    if json {
        let turns: Vec<_> = turns
            .iter()
            .map(|t| {
                json!({
                    "turn": t.number,
                    "prompt": t.prompt,
                    "at": t.at,
                    "files": t.files(),
                    "code_reverted": t.code_reverted,
                })
            })
            .collect();
        render::stdout_line(&json!({ "session": id, "turns": turns }).to_string());
        return;
    }
    if turns.is_empty() {
        render::notice(&format!("session {id} has no turns with checkpoints"));
    }
    for turn in turns {
        render::stdout_line(&turn_line(turn));
    }
}

/// One turn as a line: number, when, prompt, files changed.
pub(crate) fn turn_line(turn: &TurnRecord) -> String {
    let when = turn.at.get(..16).unwrap_or(&turn.at).replace('T', " ");
    let prompt: String = turn
        .prompt
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(60)
        .collect();
    let files = turn.files();
    let files = match (files.len(), turn.changes.is_some()) {
        (_, false) => "files: unknown (not finished)".to_owned(),
        (0, true) => "no files changed".to_owned(),
        (_, true) => format!("{} file(s): {}", files.len(), files.join(", ")),
    };
    let reverted = if turn.code_reverted { "  (undone)" } else { "" };
    neutralize(&format!(
        "{:>3}  {when}  {prompt:?}  {files}{reverted}",
        turn.number
    ))
    .into_owned()
}

/// What a restore did, as a word.
pub(crate) fn action(restore: &Restore) -> &'static str {
    match (&restore.current, &restore.target) {
        (_, None) => "deleted",
        (None, Some(_)) => "recreated",
        (Some(_), Some(_)) => "restored",
    }
}

/// What a restore will do, as the words shown before its diff.
pub(crate) fn intent(restore: &Restore) -> &'static str {
    match (&restore.current, &restore.target) {
        (_, None) => "delete",
        (None, Some(_)) => "recreate",
        (Some(_), Some(_)) => "restore",
    }
}

/// The lines saying what could not be restored.
pub(crate) fn not_restored(plan: &RewindPlan) -> Vec<String> {
    let mut lines: Vec<String> = plan
        .unsaved
        .iter()
        .map(|u| format!("not restored: {} ({})", u.path, u.reason))
        .collect();
    if !plan.ignored.is_empty() {
        lines.push(format!(
            "not restored: {} (ignored by .gitignore or .ignore: never saved)",
            plan.ignored.join(", ")
        ));
    }
    lines
}

/// The line saying a directory was removed.
pub(crate) fn removed_dir_line(dir: &str) -> String {
    neutralize(&format!(
        "removed {dir}/ (an empty directory the turn created)"
    ))
    .into_owned()
}

fn report(id: &str, plan: &RewindPlan, done: &Applied, json: bool) {
    if json {
        let files: Vec<_> = (done.restores.iter())
            .map(|r| json!({ "path": r.path, "action": action(r) }))
            .collect();
        let mut not: Vec<_> = plan
            .unsaved
            .iter()
            .map(|u| json!({ "path": u.path, "reason": u.reason }))
            .collect();
        not.extend(
            plan.ignored
                .iter()
                .map(|p| json!({ "path": p, "reason": "ignored: never saved" })),
        );
        render::stdout_line(
            &json!({
                "session": id,
                "to_turn": plan.to_turn,
                "code": plan.scope.code(),
                "conversation": plan.scope.conversation(),
                "restored": files,
                "removed_dirs": done.removed_dirs,
                "not_restored": not,
            })
            .to_string(),
        );
        return;
    }
    for restore in &done.restores {
        render::stdout_line(&neutralize(&format!(
            "{} {}",
            action(restore),
            restore.path
        )));
    }
    for dir in &done.removed_dirs {
        render::stdout_line(&removed_dir_line(dir));
    }
    if plan.scope.code() && done.restores.is_empty() && done.removed_dirs.is_empty() {
        render::stdout_line("no files to restore");
    }
    if plan.scope.conversation() {
        render::stdout_line(&format!(
            "conversation rewound to before turn {}",
            plan.to_turn
        ));
    }
    for line in not_restored(plan) {
        render::stdout_line(&neutralize(&line));
    }
}
