//! What each slash command does.

use clap::ValueEnum;
use rein_core::agent::{Agent, CompactOutcome};
use rein_core::face::{Part, Role};
use rein_core::session::SessionStore;

use super::slash::{self, Slash};
use super::{Flow, Rebuild, Repl};
use crate::args::PermissionMode;
use crate::mcp_status::{self, NO_SERVERS};
use crate::render::{self, fit, full_diff, neutralize};

/// Sessions `/sessions` lists.
const SESSIONS_LISTED: usize = 20;

impl Repl {
    /// Runs a slash command.
    pub(super) async fn slash(&mut self, agent: &mut Agent, command: Slash) -> Flow {
        let s = self.style;
        match command {
            Slash::Help => {
                let custom = self.all_custom_commands(agent).await;
                self.live.write(&slash::help(s, &custom));
            }
            Slash::Model(None) => self.say(&format!(
                "model: {} ({}) · switch with /model NAME",
                s.bold(&neutralize(agent.model())),
                agent.provider_kind()
            )),
            Slash::Model(Some(name)) if name.contains(char::is_whitespace) => {
                self.say(&s.error(&format!(
                    "{} is not a model name: a name has no spaces (/model NAME)",
                    neutralize(&name)
                )));
            }
            Slash::Model(Some(name)) => {
                let mut args = self.same_session();
                args.model = Some(name.clone());
                // The provider follows the model (and the base URL), unless set there.
                args.provider = None;
                self.say(&s.dim(&format!("switching to {}…", neutralize(&name))));
                return Flow::Rebuild(Box::new(Rebuild {
                    args,
                    other_session: false,
                    then: None,
                }));
            }
            Slash::Tokens => {
                let usage = self.session_usage(agent);
                self.say(&format!("{} in this session", render::tokens(&usage)));
            }
            Slash::Cost => {
                for line in cost_lines(agent, self.earlier_usage) {
                    self.say(&line);
                }
            }
            Slash::Context => {
                let report = agent.context_report().await.to_string();
                self.say(neutralize(&report).trim_end());
            }
            Slash::Init => return self.init(agent).await,
            Slash::Compact(focus) => self.compact(agent, focus.as_deref()).await,
            Slash::Diff => self.diff(),
            Slash::Sessions => self.sessions(),
            Slash::Resume(None) => match self.pick_session().await {
                Some(id) => return self.resume_other(id),
                None => self.say(&s.dim("no session chosen")),
            },
            Slash::Undo => return self.undo(agent).await,
            Slash::Rewind(turn) => return self.rewind(agent, turn.as_deref()).await,
            Slash::Fork(turn) => return self.fork(agent, turn.as_deref()),
            Slash::Resume(Some(id)) => return self.resume_other(id),
            Slash::Clear => {
                let mut args = self.args.clone();
                args.resume = None;
                args.continue_session = false;
                return Flow::Rebuild(Box::new(Rebuild {
                    args,
                    other_session: true,
                    then: None,
                }));
            }
            Slash::Permissions(None) => self.permissions(),
            Slash::Permissions(Some(mode)) => return self.switch_mode(&mode),
            Slash::Todos => {
                let todos = agent.todos();
                if todos.is_empty() {
                    self.say(&s.dim("no todo list yet"));
                } else {
                    self.say(&todo_list(&todos));
                }
            }
            Slash::Mcp => self.mcp(agent),
            Slash::Exit => return Flow::Exit,
            Slash::Unknown(name) if name.starts_with("/mcp__") => self.say(&format!(
                "Unknown command: {} (an MCP server's prompts are commands once the server is \
                 ready: /mcp shows the servers, /help the prompts)",
                neutralize(&name)
            )),
            Slash::Unknown(name) => self.say(&format!(
                "Unknown command: {} (try /help)",
                neutralize(&name)
            )),
        }
        Flow::Continue
    }

    /// `/init`: the model writes AGENTS.md, asking before each edit in every mode; refused
    /// in plan mode.
    async fn init(&mut self, agent: &mut Agent) -> Flow {
        let root = rein_core::config::find_project_root(&self.cwd).dir;
        let prompt = rein_core::commands::init_prompt(&root);
        if self.args.mode() == rein_core::face::PermissionMode::Plan {
            self.say_warn("/init writes AGENTS.md: leave plan mode first (/permissions default)");
            return Flow::Continue;
        }
        // Shown and asked about in every mode, even where edits need no asking.
        agent.ask_first(rein_core::commands::init_ask_rules(&root));
        let sent = self.turn(agent, &prompt).await;
        agent.ask_first(Vec::new());
        match sent {
            Ok(typed) => Flow::Typed(typed),
            Err(_) => Flow::Continue,
        }
    }

    /// `/compact [focus]`.
    async fn compact(&mut self, agent: &mut Agent, focus: Option<&str>) {
        let s = self.style;
        let running = self.begin("compacting");
        let outcome = agent.compact(focus, &self.events, &running.cancel).await;
        let _ = self.end(running);
        match outcome {
            // The compaction's own line said what was done.
            CompactOutcome::Compacted(_) => {}
            CompactOutcome::NothingToCompact => {
                self.say(&s.dim("nothing to compact yet: the conversation is short"));
            }
            CompactOutcome::Cancelled => {
                self.say(&s.warn("compaction interrupted; the context is unchanged"));
            }
        }
    }

    /// `/permissions MODE`: the same session again in `mode`.
    fn switch_mode(&mut self, mode: &str) -> Flow {
        let s = self.style;
        match PermissionMode::from_str(mode, true) {
            Ok(mode) => {
                let mut args = self.same_session();
                args.permission_mode = Some(mode);
                self.say(&s.dim(&format!(
                    "permission mode: {}",
                    rein_core::permissions::PermissionMode::from(mode)
                )));
                Flow::Rebuild(Box::new(Rebuild {
                    args,
                    other_session: false,
                    then: None,
                }))
            }
            Err(_) => {
                self.say(&s.error(&format!(
                    "unknown mode {}: one of {}",
                    neutralize(mode),
                    slash::MODES.join(", ")
                )));
                Flow::Continue
            }
        }
    }

    /// Switches to session `id`.
    pub(super) fn resume_other(&mut self, id: String) -> Flow {
        if id == self.session_id {
            self.say_dim("that is this session");
            return Flow::Continue;
        }
        let mut args = self.args.clone();
        args.resume = Some(id);
        args.continue_session = false;
        // The session's own model, unless one was chosen on the command line.
        Flow::Rebuild(Box::new(Rebuild {
            args,
            other_session: true,
            then: None,
        }))
    }

    /// Tokens of the whole session: earlier runs and this one.
    fn session_usage(&self, agent: &Agent) -> rein_core::face::Usage {
        let mut usage = self.earlier_usage;
        usage += agent.total_usage();
        usage
    }

    /// The arguments that reopen this session.
    pub(super) fn same_session(&self) -> crate::args::Args {
        let mut args = self.args.clone();
        args.resume = Some(self.session_id.clone());
        args.continue_session = false;
        args
    }

    /// `/diff`: each file changed this session, with the diffs of its edits.
    fn diff(&self) {
        let s = self.style;
        let edits = self.live.edits();
        if edits.is_empty() {
            self.say(&s.dim("no files changed in this session"));
            return;
        }
        let mut paths: Vec<&str> = Vec::new();
        for edit in &edits {
            if !paths.contains(&edit.path.as_str()) {
                paths.push(&edit.path);
            }
        }
        let width = self.live.width();
        let mut out = String::new();
        for path in paths {
            out.push_str(&s.bold(&neutralize(path)));
            out.push('\n');
            for edit in edits.iter().filter(|e| e.path == path) {
                for line in full_diff(s, &edit.diff) {
                    out.push_str(&fit(&format!("  {line}"), width));
                    out.push('\n');
                }
            }
        }
        self.live.write(&out);
    }

    /// `/sessions`: the newest sessions of this directory.
    fn sessions(&self) {
        let s = self.style;
        let store = SessionStore::new(&self.rein_home);
        let mut sessions = match store.list() {
            Ok(sessions) => sessions,
            Err(e) => {
                self.say(&s.error(&format!("cannot list the sessions: {e}")));
                return;
            }
        };
        sessions.retain(|summary| summary.header.cwd == self.cwd);
        sessions.sort_by_key(|summary| std::cmp::Reverse(summary.modified));
        if sessions.is_empty() {
            self.say(&s.dim("no sessions here yet"));
            return;
        }
        let width = self.live.width();
        let mut out = String::new();
        for summary in sessions.iter().take(SESSIONS_LISTED) {
            let id = &summary.header.id;
            let first = store
                .load(id)
                .ok()
                .and_then(|loaded| {
                    loaded
                        .messages
                        .iter()
                        .find(|m| m.role == Role::User)
                        .and_then(|m| {
                            m.parts.iter().find_map(|p| match p {
                                Part::Text { text } => {
                                    Some(text.lines().next().unwrap_or_default().to_owned())
                                }
                                Part::Reasoning { .. }
                                | Part::ToolCall(_)
                                | Part::ToolResult(_)
                                | Part::Image(_) => None,
                            })
                        })
                })
                .unwrap_or_default();
            let date = summary
                .header
                .created
                .get(..16)
                .unwrap_or(&summary.header.created)
                .replace('T', " ");
            let marker = if *id == self.session_id { "*" } else { " " };
            let line = format!(
                "{marker} {}  {}  {}",
                s.bold(id),
                s.dim(&date),
                neutralize(&first)
            );
            out.push_str(&fit(&line, width));
            out.push('\n');
        }
        out.push_str(&s.dim("continue one with /resume ID\n"));
        self.live.write(&out);
    }

    /// `/mcp`: each MCP server as it is now (as `rein mcp list` shows them), and those left
    /// out at start.
    fn mcp(&self, agent: &Agent) {
        let s = self.style;
        let mut out = String::new();
        match agent.mcp_hub() {
            Some(hub) => {
                for line in mcp_status::server_lines(&hub.statuses(), s) {
                    out.push_str(&line);
                    out.push('\n');
                }
            }
            // The warnings below say why none started, if some were configured.
            None if self.mcp_warnings.is_empty() => {
                out.push_str(&s.dim(NO_SERVERS));
                out.push('\n');
            }
            None => {}
        }
        for warning in &self.mcp_warnings {
            out.push_str(&s.warn(&format!("warning: {}", neutralize(warning))));
            out.push('\n');
        }
        self.live.write(&out);
    }

    /// `/permissions`: the mode, the rules, and what was allowed for the session.
    fn permissions(&self) {
        let s = self.style;
        let mode = self.args.mode();
        let mut out = format!(
            "mode: {} · change with /permissions {}\n",
            s.bold(mode.into()),
            slash::MODES.join("|")
        );
        match crate::setup::rule_lists(&self.args) {
            Ok(lists) => {
                for (name, rules) in [
                    ("allow", &lists.allow),
                    ("ask", &lists.ask),
                    ("deny", &lists.deny),
                ] {
                    if rules.is_empty() {
                        continue;
                    }
                    out.push_str(&format!("{name}:\n"));
                    for rule in rules {
                        out.push_str(&format!(
                            "  {} {}\n",
                            neutralize(&rule.text),
                            s.dim(&format!("({})", neutralize(&rule.source.to_string())))
                        ));
                    }
                }
            }
            Err(message) => out.push_str(&s.error(&format!("cannot read the rules: {message}\n"))),
        }
        let granted = self.interaction.granted();
        if !granted.is_empty() {
            out.push_str("allowed for this session:\n");
            for rule in granted {
                out.push_str(&format!("  {}\n", neutralize(&rule.to_string())));
            }
        }
        self.live.write(&out);
    }
}

/// The model's todo list, one item a line with its state.
fn todo_list(todos: &[rein_core::tools::TodoItem]) -> String {
    use rein_core::tools::TodoStatus;
    todos
        .iter()
        .map(|todo| {
            let mark = match todo.status {
                TodoStatus::Completed => "☑",
                TodoStatus::InProgress => "▶",
                TodoStatus::Pending => "☐",
            };
            format!("{mark} {}", neutralize(&todo.content))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// `/cost`: what the session spent (its earlier runs included), then sub-agents' and
/// compactions' part of this run apart.
fn cost_lines(agent: &Agent, earlier: rein_core::face::Usage) -> Vec<String> {
    let spent = agent.spent();
    if !spent.reported && earlier == rein_core::face::Usage::default() {
        return vec!["usage not reported by the server: nothing to count yet".to_owned()];
    }
    let mut usage = earlier;
    usage += spent.usage;
    let earlier_cost = if earlier == rein_core::face::Usage::default() {
        Some(0.0)
    } else {
        agent.prices().call_cost(agent.model(), &earlier)
    };
    let cost = spent
        .cost_usd
        .zip(earlier_cost)
        .map(|(run, before)| rein_core::face::micro_dollars(run + before));
    let mut lines = vec![match cost {
        Some(usd) => format!(
            "{} so far in this session · {}",
            render::dollars(usd),
            render::tokens(&usage)
        ),
        None => format!(
            "the price of {} is unknown ([pricing.\"{}\"] in the configuration sets it) · {}",
            neutralize(agent.model()),
            neutralize(agent.model()),
            render::tokens(&usage)
        ),
    }];
    for (what, usage) in [
        ("sub-agents", spent.subagents),
        ("compactions", spent.compactions),
    ] {
        if usage != rein_core::face::Usage::default() {
            let cost = agent
                .prices()
                .call_cost(agent.model(), &usage)
                .map(|usd| format!("{} · ", render::dollars(usd)))
                .unwrap_or_default();
            lines.push(format!(
                "  of which {what}: {cost}{}",
                render::tokens(&usage)
            ));
        }
    }
    lines
}
