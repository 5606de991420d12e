//! `/undo`, `/rewind`, `/fork`, and the picker of `/resume` without an id. Nothing is
//! restored before the person has seen the diff and said yes; a file someone changed since
//! rein last wrote it is named, and the person decides whether it is overwritten.

use rein_core::agent::Agent;
use rein_core::checkpoint::{Checkpoints, OnChanged, RewindPlan, RewindScope};
use rein_core::session::SessionStore;

use super::{Flow, Rebuild, Repl};
use crate::commands::{rewind as headless, sessions};
use crate::render::{fit, full_diff, neutralize};

/// A conversation rewind waiting for the agent to let go of the session file.
pub(super) struct Pending {
    checkpoints: Checkpoints,
    plan: RewindPlan,
    on_changed: OnChanged,
}

impl Repl {
    fn checkpoints(&self) -> Checkpoints {
        let (checkpoints, warnings) = Checkpoints::open(
            &self.rein_home,
            &self.session_id,
            &self.cwd,
            headless::settings(&self.args),
        );
        for warning in warnings {
            self.say_warn(&format!("warning: {}", neutralize(&warning)));
        }
        checkpoints
    }

    /// Asks a question; the answer, trimmed and in lower case (empty on end of input).
    async fn ask(&mut self, question: &str) -> String {
        self.say(&self.style.bold(question));
        self.read_line(String::new())
            .await
            .unwrap_or_default()
            .trim()
            .to_lowercase()
    }

    /// `/undo`: the last turn's file changes taken back, after the diff and a yes.
    pub(super) async fn undo(&mut self, agent: &mut Agent) -> Flow {
        let _ = agent.save_session();
        let mut checkpoints = self.checkpoints();
        let last = match checkpoints.turns() {
            Ok(turns) => turns.into_iter().rev().find(|t| !t.code_reverted),
            Err(e) => {
                self.say_error(&format!("cannot read the checkpoints: {e}"));
                return Flow::Continue;
            }
        };
        let Some(last) = last else {
            self.say_dim("nothing to undo");
            return Flow::Continue;
        };
        self.restore_code(&mut checkpoints, last.number, "undo")
            .await;
        Flow::Continue
    }

    /// Plans, shows, asks and restores the files of the point before `turn`.
    async fn restore_code(&mut self, checkpoints: &mut Checkpoints, turn: u32, verb: &str) {
        let Some((plan, on_changed)) = self
            .confirmed_plan(checkpoints, turn, RewindScope::Code, verb)
            .await
        else {
            return;
        };
        self.applied(checkpoints, &plan, on_changed);
    }

    /// The plan for `turn`, once shown and agreed to (`None`: nothing to do, or declined).
    async fn confirmed_plan(
        &mut self,
        checkpoints: &mut Checkpoints,
        turn: u32,
        scope: RewindScope,
        verb: &str,
    ) -> Option<(RewindPlan, OnChanged)> {
        let s = self.style;
        let plan = match checkpoints.plan(turn, scope) {
            Ok(plan) => plan,
            Err(e) => {
                self.say(&s.error(&neutralize(&e.to_string())));
                return None;
            }
        };
        if scope.code() {
            let width = self.live.width();
            let mut out = String::new();
            for restore in &plan.restores {
                // The file first: the diff alone does not say which file it is.
                let heading = format!("{} {}", headless::intent(restore), restore.path);
                out.push_str(&fit(&s.bold(&neutralize(&heading)), width));
                out.push('\n');
                for line in full_diff(s, &checkpoints.diff(restore)) {
                    out.push_str(&fit(&format!("  {line}"), width));
                    out.push('\n');
                }
            }
            for dir in &plan.created_dirs {
                let line = format!("remove {dir}/ if it is left empty (the turn created it)");
                out.push_str(&fit(&s.bold(&neutralize(&line)), width));
                out.push('\n');
            }
            for line in headless::not_restored(&plan) {
                out.push_str(&s.warn(&neutralize(&line)));
                out.push('\n');
            }
            self.live.write(&out);
            if plan.restores.is_empty() && plan.created_dirs.is_empty() && !scope.conversation() {
                self.say(&s.dim("no files to restore"));
                return None;
            }
        }
        let changed = plan.changed_since();
        let on_changed = if changed.is_empty() {
            let answer = self.ask(&format!("{verb}? [y/N]")).await;
            if answer != "y" && answer != "yes" {
                self.say(&s.dim("nothing changed"));
                return None;
            }
            OnChanged::Refuse
        } else {
            self.say(&s.warn(&format!(
                "changed since rein last wrote {}: {}",
                if changed.len() == 1 { "it" } else { "them" },
                neutralize(&changed.join(", "))
            )));
            let answer = self
                .ask(&format!(
                    "{verb} and overwrite {} [o], {verb} but keep {} [k], or cancel [N]?",
                    if changed.len() == 1 { "it" } else { "them" },
                    if changed.len() == 1 { "it" } else { "them" },
                ))
                .await;
            match answer.as_str() {
                "o" => OnChanged::Overwrite,
                "k" => OnChanged::Keep,
                _ => {
                    self.say(&s.dim("nothing changed"));
                    return None;
                }
            }
        };
        Some((plan, on_changed))
    }

    /// Applies a plan and says what it did.
    fn applied(&self, checkpoints: &mut Checkpoints, plan: &RewindPlan, on_changed: OnChanged) {
        let s = self.style;
        match checkpoints.apply(plan, on_changed, None) {
            Ok(done) => {
                let mut out = String::new();
                for restore in &done.restores {
                    out.push_str(&neutralize(&format!(
                        "{} {}\n",
                        headless::action(restore),
                        restore.path
                    )));
                }
                for dir in &done.removed_dirs {
                    out.push_str(&headless::removed_dir_line(dir));
                    out.push('\n');
                }
                if plan.scope.conversation() {
                    out.push_str(&format!(
                        "conversation rewound to before turn {}\n",
                        plan.to_turn
                    ));
                }
                self.live.write(&out);
            }
            Err(e) => self.say(&s.error(&neutralize(&e.to_string()))),
        }
    }

    /// Completes a conversation rewind once the agent let go of the session.
    pub(super) fn finish_rewind(&mut self, mut pending: Pending) {
        self.applied(&mut pending.checkpoints, &pending.plan, pending.on_changed);
    }

    /// `/rewind [N]`: the turns, then the point before one restored.
    pub(super) async fn rewind(&mut self, agent: &mut Agent, turn: Option<&str>) -> Flow {
        let s = self.style;
        let _ = agent.save_session();
        let mut checkpoints = self.checkpoints();
        let turns = match checkpoints.turns() {
            Ok(turns) => turns,
            Err(e) => {
                self.say(&s.error(&format!("cannot read the checkpoints: {e}")));
                return Flow::Continue;
            }
        };
        if turns.is_empty() {
            self.say(&s.dim("no turns to rewind yet"));
            return Flow::Continue;
        }
        let mut out = String::new();
        for t in &turns {
            out.push_str(&fit(&headless::turn_line(t), self.live.width()));
            out.push('\n');
        }
        self.live.write(&out);
        let answer = match turn {
            Some(turn) => turn.to_owned(),
            None => {
                self.ask(&format!(
                    "rewind to before which turn? [1-{}, Enter: cancel]",
                    turns.len()
                ))
                .await
            }
        };
        let Some(number) = answer
            .parse::<u32>()
            .ok()
            .filter(|n| turns.iter().any(|t| t.number == *n))
        else {
            self.say(&s.dim("nothing changed"));
            return Flow::Continue;
        };
        let scope = match self
            .ask("restore [b]oth, [c]ode only or con[v]ersation only? (Enter: cancel)")
            .await
            .as_str()
        {
            "b" | "both" => RewindScope::Both,
            "c" | "code" => RewindScope::Code,
            "v" | "conversation" => RewindScope::Conversation,
            _ => {
                self.say(&s.dim("nothing changed"));
                return Flow::Continue;
            }
        };
        let Some((plan, on_changed)) = self
            .confirmed_plan(&mut checkpoints, number, scope, "rewind")
            .await
        else {
            return Flow::Continue;
        };
        if !scope.conversation() {
            self.applied(&mut checkpoints, &plan, on_changed);
            return Flow::Continue;
        }
        // The session file is the agent's until it is dropped: the rewind completes then,
        // and the agent is rebuilt from the rewound session.
        Flow::Rebuild(Box::new(Rebuild {
            args: self.same_session(),
            other_session: false,
            then: Some(Pending {
                checkpoints,
                plan,
                on_changed,
            }),
        }))
    }

    /// `/fork [N]`: a new session from this one's history (before turn N), this one kept.
    pub(super) fn fork(&mut self, agent: &mut Agent, turn: Option<&str>) -> Flow {
        let s = self.style;
        let _ = agent.save_session();
        let (line, to_turn) = match turn {
            None => (None, None),
            Some(turn) => {
                let found = turn.parse::<u32>().ok().and_then(|n| {
                    self.checkpoints()
                        .turns()
                        .ok()?
                        .into_iter()
                        .find(|t| t.number == n)
                });
                match found {
                    Some(t) => (Some(t.line), Some(t.number)),
                    None => {
                        self.say(&s.error(&format!("no turn {}", neutralize(turn))));
                        return Flow::Continue;
                    }
                }
            }
        };
        let store = SessionStore::new(&self.rein_home);
        let child = match store.fork(&self.session_id, line) {
            Ok(child) => child,
            Err(e) => {
                self.say(&s.error(&format!("cannot fork: {e}")));
                return Flow::Continue;
            }
        };
        if let Err(e) =
            rein_core::checkpoint::copy_for_fork(&self.rein_home, &self.session_id, &child, to_turn)
        {
            self.say(&s.warn(&format!("the fork has no checkpoints: {e}")));
        }
        self.say(&s.dim(&format!(
            "forked {} from {} (left unchanged)",
            child, self.session_id
        )));
        self.resume_other(child)
    }

    /// The picker of `/resume` without an id: this directory's sessions, numbered.
    pub(super) async fn pick_session(&mut self) -> Option<String> {
        let store = SessionStore::new(&self.rein_home);
        let rows = match sessions::rows(&store, &self.cwd, false) {
            Ok(rows) => rows,
            Err(e) => {
                self.say_error(&neutralize(&e));
                return None;
            }
        };
        if rows.is_empty() {
            return None;
        }
        let mut out = String::new();
        for (i, row) in rows.iter().enumerate().take(sessions::PICKER_ROWS) {
            let marker = if row.id == self.session_id { "*" } else { " " };
            out.push_str(&fit(
                &format!("{marker}{:>3}  {}", i + 1, sessions::line(row, false)),
                self.live.width(),
            ));
            out.push('\n');
        }
        self.live.write(&out);
        let answer = self
            .ask(&format!(
                "resume which session? [1-{}, Enter: none]",
                rows.len().min(sessions::PICKER_ROWS)
            ))
            .await;
        sessions::choose(&rows, &answer)
    }
}
