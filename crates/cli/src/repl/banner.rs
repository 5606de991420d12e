//! What the session shows at its start: the banner, a resumed session's last exchange, and
//! the first-time question whether to trust a project with hooks.

use std::io::{IsTerminal as _, Write as _};
use std::path::Path;

use rein_core::agent::Agent;
use rein_core::face::{Part, Role};

use super::{Repl, editor};
use crate::args::Args;
use crate::exit::Exit;
use crate::render::{self, Style};
use crate::setup;

impl Repl {
    /// The banner: version, model, provider, directory, session, permission mode.
    pub(super) fn banner(&self, agent: &Agent) {
        let s = self.style;
        let provider: &str = agent.provider_kind().into();
        self.say(&format!(
            "{} {} · {} · {}",
            s.bold("rein"),
            env!("CARGO_PKG_VERSION"),
            s.bold(&render::neutralize(agent.model())),
            s.dim(provider),
        ));
        self.say(&s.dim(&format!(
            "{} · session {} · permissions: {}",
            render::neutralize(&home_relative(&self.cwd)),
            self.session_id,
            self.args.mode()
        )));
        self.say(&s.dim("/help for commands · @file to attach · !cmd to run · Ctrl+D to leave"));
    }

    /// A resumed session's last request and answer.
    pub(super) fn show_last_exchange(&self, agent: &Agent) {
        let history = agent.history();
        let Some(asked) = history.iter().rposition(|m| {
            m.role == Role::User && m.parts.iter().any(|p| matches!(p, Part::Text { .. }))
        }) else {
            return;
        };
        let text_of = |index: usize| -> String {
            history[index]
                .parts
                .iter()
                .find_map(|p| match p {
                    Part::Text { text } => Some(text.clone()),
                    Part::Reasoning { .. }
                    | Part::ToolCall(_)
                    | Part::ToolResult(_)
                    | Part::Image(_) => None,
                })
                .unwrap_or_default()
        };
        let request = text_of(asked);
        let first_line = request.lines().next().unwrap_or_default();
        self.say_dim("Last exchange:");
        self.say(&format!(
            "{}{}",
            self.style.accent(editor::PROMPT),
            self.style.italic(&render::fit(
                &render::neutralize(first_line),
                self.live.width().saturating_sub(2)
            ))
        ));
        let answer = history[asked + 1..]
            .iter()
            .rposition(|m| m.role == Role::Assistant)
            .map(|i| text_of(asked + 1 + i))
            .unwrap_or_default();
        if !answer.trim().is_empty() {
            self.live.markdown(&answer);
        }
    }
}

/// When a project's hooks would not run because it is not trusted, asks once whether to
/// trust it (`rein trust` does the same).
pub(super) fn ask_trust_once(args: &Args, s: Style) -> Result<(), Exit> {
    let Some(untrusted) = setup::untrusted_project(args) else {
        return Ok(());
    };
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "{}\n{}",
        s.warn(&format!(
            "This project ({}) has {} in {} {}{}.",
            render::neutralize(&untrusted.project.display().to_string()),
            untrusted.what,
            render::neutralize(&untrusted.files.join(", ")),
            untrusted.effect,
            if untrusted.changed {
                ", and these files changed since you trusted it"
            } else {
                ""
            }
        )),
        s.dim("They apply only once you trust the project. Trust it? [y/N] ")
    );
    let _ = out.flush();
    let mut answer = String::new();
    if std::io::stdin().read_line(&mut answer).is_err() {
        return Ok(());
    }
    if matches!(answer.trim(), "y" | "Y" | "yes") {
        if let Err(e) = setup::trust(&untrusted.project) {
            render::error(&format!("cannot record the trust: {e}"));
            return Err(Exit::Runtime);
        }
        let _ = writeln!(
            out,
            "{}",
            s.dim(&format!(
                "Trusted: its {} will {}.",
                untrusted.what, untrusted.verb
            ))
        );
    } else {
        let _ = writeln!(
            out,
            "{}",
            s.dim(&format!(
                "Not trusted: its {} will not {} (`rein trust` changes that).",
                untrusted.what, untrusted.verb
            ))
        );
    }
    Ok(())
}

/// Settles the REPL's permission mode when `--permission-mode` is not given: the configured
/// one, else (where the sandbox is enforced, once per machine) the person is offered auto, and
/// the answer is recorded in rein's config.
pub(super) fn settle_mode(args: &mut Args, s: Style) {
    use rein_core::permissions::PermissionMode;
    if args.permission_mode.is_some() {
        return;
    }
    let path = match setup::repl_mode(args) {
        setup::ReplMode::Configured(mode) => {
            args.permission_mode = Some(mode.into());
            return;
        }
        setup::ReplMode::Default => return,
        setup::ReplMode::Offer(path) => path,
    };
    if !std::io::stdin().is_terminal() {
        return;
    }
    let mut out = std::io::stdout();
    let width = super::terminal::width();
    let wrap = |text: &str| render::wrap_words(text, width);
    // No newline after the question: the answer is typed on its line.
    let _ = write!(
        out,
        "{}\n{}\n{}",
        s.bold(&wrap("Commands can run in an OS sandbox on this machine.")),
        s.dim(&wrap(
            "In the auto permission mode, edits and commands inside this workspace run without \
             asking, sandboxed: the rest of the machine stays read-only. rein asks only when \
             something must leave the sandbox, and the list of destructive commands still holds."
        )),
        s.dim(&wrap("Make auto the REPL's default? [y/N]")),
    );
    let _ = write!(out, " ");
    let _ = out.flush();
    let mut answer = String::new();
    // Ctrl+D or a read error is no answer: nothing is recorded, and the question comes again.
    if !matches!(std::io::stdin().read_line(&mut answer), Ok(n) if n > 0) {
        let _ = writeln!(out);
        return;
    }
    let mode = if matches!(answer.trim(), "y" | "Y" | "yes") {
        PermissionMode::Auto
    } else {
        PermissionMode::Default
    };
    let shown = path.display().to_string();
    let shown = render::neutralize(&shown);
    let said = match setup::record_repl_mode(&path, mode) {
        Ok(true) if mode == PermissionMode::Auto => s.dim(&format!(
            "The REPL now starts in auto ([repl] permission_mode in {shown})."
        )),
        Ok(true) => s.dim(&format!(
            "The REPL keeps the default mode; `/permissions auto` switches, and [repl] \
             permission_mode in {shown} changes the default."
        )),
        Ok(false) => s.warn(&format!(
            "{shown} already has a [repl] table: set permission_mode there; this session uses \
             {mode}"
        )),
        Err(e) => s.warn(&format!(
            "cannot record the answer in {shown}: {e}; this session uses {mode}"
        )),
    };
    let _ = writeln!(out, "{said}");
    args.permission_mode = Some(mode.into());
}

/// `~/project` for a path under the home directory.
fn home_relative(path: &Path) -> String {
    match std::env::home_dir() {
        Some(home) if path.starts_with(&home) && home != Path::new("/") => {
            let rest = path.strip_prefix(&home).unwrap_or(path);
            if rest.as_os_str().is_empty() {
                "~".to_owned()
            } else {
                format!("~/{}", rest.display())
            }
        }
        _ => path.display().to_string(),
    }
}
