//! [`CommandHooks`]: the configured hook commands, run at each event of a session.
//!
//! Every hook configured for the event whose matcher matches runs (identical commands once),
//! all at the same time, each in the workspace with the JSON of the event on stdin. What they
//! say is then taken together: a deny from any wins over an ask, which wins over an allow;
//! every context reaches the model; the first replacement of a call's arguments is used.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use rein_tools::bash::ProcessTracker;
use rein_tools::{ToolOutput, async_trait};

use super::SessionStartSource;
use super::input::{self, Common, EventInput, Subject};
use super::matcher::Matcher;
use super::process::{self, Launch};
use super::reply::{self, Ran, Said};
use super::{HookCall, HookWarnings, Hooks, PostToolUse, PreToolUse, PromptCheck, StopCheck};
use crate::config::{HookCommand, HookEvent, Source};
use crate::permissions::PermissionMode;
use crate::secrets::Secrets;
use crate::trust::TrustStore;

/// Where and how hooks run.
#[derive(Debug, Clone)]
pub struct HookSetup {
    /// The workspace: hooks run there, and are told it as `cwd`.
    pub workspace: PathBuf,
    /// The project root, given to hooks as `CLAUDE_PROJECT_DIR` and `REIN_PROJECT_DIR`.
    pub project_dir: PathBuf,
    /// The session's id, when the conversation is recorded.
    pub session_id: Option<String>,
    /// The session file, when the conversation is recorded.
    pub transcript_path: Option<PathBuf>,
    /// The permission mode, told to hooks as `permission_mode`.
    pub permission_mode: PermissionMode,
    /// The secrets of the run: their variables are kept from hooks, and their values masked
    /// in what hooks print (which may reach the model, the terminal and the session).
    pub secrets: Arc<Secrets>,
    /// Where hook processes are tracked: stopped with rein's commands, and when rein exits.
    pub processes: ProcessTracker,
    /// The OS sandbox hooks run in; `None` (the default: hooks are the person's own code)
    /// runs them as rein runs.
    pub sandbox: Option<rein_tools::sandbox::Sandbox>,
    /// Variables hooks get besides rein's environment (a settings file's `env`).
    pub env_set: Vec<(String, String)>,
}

/// One configured hook, ready to match.
#[derive(Debug, Clone)]
struct Entry {
    event: HookEvent,
    command: String,
    matcher: Matcher,
    timeout: Duration,
}

/// Hooks that run the configured commands.
#[derive(Debug)]
pub struct CommandHooks {
    entries: Vec<Entry>,
    setup: HookSetup,
}

impl CommandHooks {
    /// Hooks running `hooks` (already filtered for trust: see [`runnable_hooks`]).
    pub fn new(hooks: &[HookCommand], setup: HookSetup) -> Self {
        let entries = hooks
            .iter()
            .map(|hook| Entry {
                event: hook.event,
                command: hook.command.clone(),
                matcher: Matcher::new(hook.matcher.as_deref()),
                timeout: hook.timeout,
            })
            .collect();
        CommandHooks { entries, setup }
    }

    /// Runs the hooks of `input`'s event that match it; what each said, in configuration
    /// order.
    async fn run(&self, input: EventInput<'_>, warnings: &mut HookWarnings) -> Vec<Said> {
        let event = input.event();
        let subject = input.subject();
        let mut chosen: Vec<&Entry> = Vec::new();
        for entry in self.entries.iter().filter(|e| e.event == event) {
            let matches = match subject {
                Some(Subject::Tool(tool)) => entry.matcher.matches_tool(tool),
                Some(Subject::Name(name)) => entry.matcher.matches(name),
                None => true,
            };
            if matches && !chosen.iter().any(|c| c.command == entry.command) {
                chosen.push(entry);
            }
        }
        if chosen.is_empty() {
            return Vec::new();
        }
        let common = Common {
            session_id: self.setup.session_id.as_deref(),
            transcript_path: self.setup.transcript_path.as_deref(),
            cwd: &self.setup.workspace,
            mode: self.setup.permission_mode,
        };
        let stdin = input::render(&common, &input);
        let project_dir: &OsStr = self.setup.project_dir.as_os_str();
        let mut env: Vec<(&str, &OsStr)> = (self.setup.env_set.iter())
            .map(|(k, v)| (k.as_str(), OsStr::new(v.as_str())))
            .collect();
        env.extend([
            ("CLAUDE_PROJECT_DIR", project_dir),
            ("REIN_PROJECT_DIR", project_dir),
        ]);
        let runs = chosen.iter().map(|entry| {
            let launch = Launch {
                command: &entry.command,
                cwd: &self.setup.workspace,
                input: &stdin,
                timeout: entry.timeout,
                removed_env: self.setup.secrets.env_remove(),
                env: &env,
                processes: &self.setup.processes,
                sandbox: self.setup.sandbox.as_ref(),
            };
            async move { process::run(&launch).await }
        });
        let outputs = futures::future::join_all(runs).await;
        chosen
            .iter()
            .zip(outputs)
            .map(|(entry, output)| {
                let ran = Ran {
                    command: entry.command.clone(),
                    ended: output.ended,
                    stdout: self.setup.secrets.redact(&output.stdout).into_owned(),
                    stderr: self.setup.secrets.redact(&output.stderr).into_owned(),
                };
                reply::interpret(event, &ran, warnings)
            })
            .collect()
    }
}

#[async_trait]
impl Hooks for CommandHooks {
    async fn pre_tool_use(&self, call: &HookCall<'_>, warnings: &mut HookWarnings) -> PreToolUse {
        let said = self.run(EventInput::PreToolUse(call), warnings).await;
        reply::pre_tool_use(said, warnings)
    }

    async fn post_tool_use(
        &self,
        call: &HookCall<'_>,
        output: &ToolOutput,
        warnings: &mut HookWarnings,
    ) -> PostToolUse {
        let said = self
            .run(EventInput::PostToolUse(call, output), warnings)
            .await;
        reply::post_tool_use(said)
    }

    fn runs_on_prompt(&self) -> bool {
        self.entries
            .iter()
            .any(|e| e.event == HookEvent::UserPromptSubmit)
    }

    fn runs_on_tools(&self) -> bool {
        self.entries
            .iter()
            .any(|e| matches!(e.event, HookEvent::PreToolUse | HookEvent::PostToolUse))
    }

    async fn user_prompt_submit(&self, prompt: &str, warnings: &mut HookWarnings) -> PromptCheck {
        let said = self
            .run(EventInput::UserPromptSubmit(prompt), warnings)
            .await;
        reply::user_prompt_submit(said)
    }

    async fn stop(&self, stop_hook_active: bool, warnings: &mut HookWarnings) -> StopCheck {
        let said = self.run(EventInput::Stop(stop_hook_active), warnings).await;
        reply::stop(said)
    }

    async fn session_start(
        &self,
        source: SessionStartSource,
        warnings: &mut HookWarnings,
    ) -> Option<String> {
        let said = self.run(EventInput::SessionStart(source), warnings).await;
        reply::session_start(said)
    }

    async fn session_end(&self, warnings: &mut HookWarnings) {
        self.run(EventInput::SessionEnd, warnings).await;
    }

    async fn subagent_stop(&self, warnings: &mut HookWarnings) {
        let said = self.run(EventInput::SubagentStop(false), warnings).await;
        // The seam has no way yet to make a sub-agent go on; say so rather than drop it.
        if let StopCheck::Continue { reason } = reply::stop(said) {
            warnings.push(format!(
                "a SubagentStop hook asked the sub-agent to go on, which rein cannot do yet: \
                 {reason}"
            ));
        }
    }

    async fn pre_compact(&self, warnings: &mut HookWarnings) {
        self.run(EventInput::PreCompact, warnings).await;
    }
}

/// The hooks that may run: the user's always, a project's only once the person has trusted
/// the project (a hook is code a cloned repository could ship). When some were skipped, the
/// second value says so and how to trust the project.
pub fn runnable_hooks(
    hooks: &[HookCommand],
    project_root: &Path,
    trust: &TrustStore,
) -> (Vec<HookCommand>, Option<String>) {
    let from_project = |hook: &&HookCommand| matches!(hook.source, Source::ProjectFile(_));
    let project: Vec<&HookCommand> = hooks.iter().filter(from_project).collect();
    // The trust file is read only when there is something to decide.
    if project.is_empty() || trust.is_trusted(project_root) {
        return (hooks.to_vec(), None);
    }
    let files: Vec<String> = project
        .iter()
        .filter_map(|hook| match &hook.source {
            Source::ProjectFile(path) => Some(path.display().to_string()),
            _ => None,
        })
        .fold(Vec::new(), |mut files, file| {
            if !files.contains(&file) {
                files.push(file);
            }
            files
        });
    let warning = format!(
        "{} hook{} in {} did not run: this project is not trusted (or its config changed \
         since it was). If you trust its hooks, run `rein trust` in {} (or `rein trust {}`)",
        project.len(),
        if project.len() == 1 { "" } else { "s" },
        files.join(", "),
        project_root.display(),
        project_root.display(),
    );
    let kept = hooks
        .iter()
        .filter(|hook| !from_project(hook))
        .cloned()
        .collect();
    (kept, Some(warning))
}
