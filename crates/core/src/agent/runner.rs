//! The one path every tool call takes, started early or not. Read it top to bottom:
//!
//! 1. **Arguments**: the JSON the model sent, checked against the tool's parameters. A call
//!    that fails here never reaches a hook or the policy: the model is told what to fix.
//! 2. **PreToolUse hooks**: they may refuse, ask, allow (never past a deny) or replace the
//!    arguments (checked again).
//! 3. **Decision**: the [`Policy`] allows, asks or refuses.
//! 4. **Approval**: when it asks, the person answers through the [`Interaction`]; with no one
//!    to ask, the call is refused and the model told how the person can allow it.
//! 5. **Run**, cancellable.
//! 6. **PostToolUse hooks**: what they add for the model goes with the result.
//! 7. **Output budget**: a result over the budget is saved whole to a file, the model gets
//!    its head and tail.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rein_llm::{ToolArguments, ToolCall, ToolResult};
use rein_shell::Analyzed;
use rein_tools::{
    Display, FileChange, PreparedCall, ToolContext, ToolKind, ToolOutput, ToolRegistry,
};
use tokio_util::sync::CancellationToken;

use super::call_args::{arguments_value, hook_call, invalid_arguments_message, json_arguments};
use super::event::{AgentEvent, Events};
use super::masking::mask_saved_output;
use super::subagents::AGENT_TOOL;
use crate::hooks::{HookDecision, Hooks};
use crate::interaction::Interaction;
use crate::permissions::facts;
use crate::permissions::{CallView, Decision, PathTarget, Policy, ShellFacts};
use crate::secrets::Secrets;

/// How one call ended.
#[derive(Debug)]
pub(crate) struct CallOutcome {
    pub(crate) result: ToolResult,
    /// What the person sees of it.
    pub(crate) display: Display,
    /// The files it changed.
    pub(crate) changes: Vec<FileChange>,
    pub(crate) duration: Duration,
    /// Set when the call ended the turn.
    pub(crate) fatal: Option<Fatal>,
}

/// A tool failure that ends the turn.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fatal {
    /// The person interrupted.
    Cancelled,
    /// rein itself failed.
    Internal(String),
    /// The model kept making the same call with the same result.
    RepeatedCalls,
}

/// What the pipeline is made of; shared by every call of an agent.
pub(crate) struct ToolRunner {
    pub(crate) registry: Arc<ToolRegistry>,
    pub(crate) policy: Arc<dyn Policy>,
    pub(crate) interaction: Arc<dyn Interaction>,
    pub(crate) hooks: Arc<dyn Hooks>,
    /// Who makes the calls, when not the main conversation (a sub-agent's name).
    pub(crate) agent: Option<String>,
    /// What results must not show.
    pub(crate) secrets: Arc<Secrets>,
    /// One question at a time: calls running together must not ask over each other.
    pub(crate) asking: tokio::sync::Mutex<()>,
    /// The nested AGENTS.md files, given with the first call that reads or edits below them.
    pub(crate) nested: Option<Arc<super::NestedInstructions>>,
}

impl ToolRunner {
    pub(crate) fn new(
        registry: Arc<ToolRegistry>,
        policy: Arc<dyn Policy>,
        interaction: Arc<dyn Interaction>,
        hooks: Arc<dyn Hooks>,
        agent: Option<String>,
        secrets: Arc<Secrets>,
    ) -> Self {
        ToolRunner {
            registry,
            policy,
            interaction,
            hooks,
            agent,
            secrets,
            asking: tokio::sync::Mutex::new(()),
            nested: None,
        }
    }

    /// The same pipeline, giving the nested instruction files.
    pub(crate) fn with_nested(mut self, nested: Option<Arc<super::NestedInstructions>>) -> Self {
        self.nested = nested;
        self
    }

    /// The same pipeline over other tools (an MCP server's joined or changed); between
    /// rounds, when no call is running.
    pub(crate) fn with_registry(&self, registry: Arc<ToolRegistry>) -> Self {
        ToolRunner::new(
            registry,
            Arc::clone(&self.policy),
            Arc::clone(&self.interaction),
            Arc::clone(&self.hooks),
            self.agent.clone(),
            Arc::clone(&self.secrets),
        )
        .with_nested(self.nested.clone())
    }
}

/// A call whose arguments passed step 1, ready to run.
pub(super) struct Checked {
    kind: ToolKind,
    /// The tool's effects stay inside the OS sandbox (see [`rein_tools::DynTool::confined`]).
    confined: bool,
    pub(super) call: Box<dyn PreparedCall>,
    path: Option<PathTarget>,
    /// For a shell call, what the parser found.
    shell: Option<ShellFacts>,
    /// For a shell call, the analysis those facts came from, handed on to the tool.
    pub(super) analyzed: Option<Arc<Analyzed>>,
}

impl Checked {
    /// The tool context for this call: one the call's file outside the workspace may be
    /// touched through, once the decision let it.
    pub(super) fn ctx(&self, ctx: &ToolContext) -> ToolContext {
        match &self.path {
            Some(target) if target.outside => ctx.with_approved_path(target.absolute.clone()),
            _ => ctx.clone(),
        }
    }

    pub(super) fn view<'b>(&'b self, call: &'b ToolCall) -> CallView<'b> {
        CallView {
            tool: &call.name,
            kind: self.kind,
            arguments: json_arguments(call),
            path: self.path.as_ref(),
            shell: self.shell.as_ref(),
            confined: self.confined,
        }
    }
}

/// The runner, bound to one turn: its tool context, where events go, and its cancellation.
#[derive(Clone)]
pub(crate) struct CallEnv {
    pub(crate) runner: Arc<ToolRunner>,
    pub(crate) ctx: ToolContext,
    pub(crate) events: Events,
    pub(crate) cancel: CancellationToken,
}

/// A call offered for an early start: checked already, when it may start.
pub(crate) struct EarlyCheck(Option<Checked>);

impl CallEnv {
    /// Whether `call` only looks (or fails at once without effect), so it may run beside
    /// others.
    pub(crate) fn runs_concurrently(&self, call: &ToolCall) -> bool {
        match self.runner.registry.get(&call.name) {
            Some(tool) => match &call.arguments {
                ToolArguments::Invalid { .. } => true,
                ToolArguments::Json { .. } => match tool.kind() {
                    ToolKind::ReadOnly => true,
                    ToolKind::Edit | ToolKind::Execute => false,
                },
            },
            None => true,
        }
    }

    /// Whether `call` leaves the workspace as it is, so it need not wait for the turn's
    /// checkpoint: it only looks (or fails at once), no tool hook runs around it, and it is
    /// no sub-agent (whose own calls may edit).
    pub(crate) fn leaves_workspace(&self, call: &ToolCall) -> bool {
        self.runs_concurrently(call)
            && call.name != AGENT_TOOL
            && !self.runner.hooks.runs_on_tools()
    }

    /// Whether `call` may start while its response is still streaming: it runs beside
    /// others, and the policy lets it run without asking (a question must not appear before
    /// the response that leads to it is complete). The check is kept for the run.
    pub(crate) fn may_start_early(&self, call: &ToolCall) -> Option<EarlyCheck> {
        if !self.runs_concurrently(call) {
            return None;
        }
        match self.check(call) {
            Ok(checked) => (self.runner.policy.decide(&checked.view(call)) == Decision::Allow)
                .then_some(EarlyCheck(Some(checked))),
            // It fails at step 1 without effect.
            Err(_) => Some(EarlyCheck(None)),
        }
    }

    /// Announces `call` and starts it on its own task (with its early check, if it had one).
    pub(crate) fn spawn(
        &self,
        call: &ToolCall,
        early: Option<EarlyCheck>,
    ) -> tokio::task::JoinHandle<CallOutcome> {
        self.events.emit(AgentEvent::ToolCallStarted {
            id: call.id.clone(),
            name: call.name.clone(),
            arguments: arguments_value(call),
        });
        let env = self.clone();
        let call = call.clone();
        tokio::spawn(async move { env.run(&call, early.and_then(|e| e.0)).await })
    }

    /// Runs one call through the whole pipeline.
    async fn run(&self, call: &ToolCall, checked: Option<Checked>) -> CallOutcome {
        let started = Instant::now();
        tracing::debug!(tool = %call.name, id = %call.id, "tool start");
        // The time the person took to answer a question is not the call's.
        // (Microseconds, in an atomic: the future is sent between threads.)
        let asking = std::sync::atomic::AtomicU64::new(0);
        let done = |output: ToolOutput, fatal: Option<Fatal>| {
            let duration = started.elapsed().saturating_sub(Duration::from_micros(
                asking.load(std::sync::atomic::Ordering::Relaxed),
            ));
            call_outcome(call, output, fatal, duration)
        };

        // 1. Arguments.
        let mut checked = match checked.map_or_else(|| self.check(call), Ok) {
            Ok(checked) => checked,
            Err(message) => return done(ToolOutput::error(message), None),
        };

        // 2. PreToolUse hooks. A hook may replace the arguments: those are checked again, and
        // they are what the policy judges and the tool runs with.
        let mut warnings = Vec::new();
        // Ctrl+C must not wait out a hook's timeout: dropping the hook stops its processes.
        let asked = hook_call(call);
        let pre = tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            pre = self.runner.hooks.pre_tool_use(&asked, &mut warnings) => Some(pre),
        };
        self.warn(warnings);
        let Some(pre) = pre else {
            let message = "Cancelled: the person interrupted the turn before this call ran.";
            return done(ToolOutput::error(message), Some(Fatal::Cancelled));
        };
        let replaced;
        let call = match pre.updated_input {
            Some(input) => {
                replaced = ToolCall {
                    arguments: ToolArguments::Json { value: input },
                    ..call.clone()
                };
                checked = match self.check(&replaced) {
                    Ok(checked) => checked,
                    Err(message) => {
                        let message = format!(
                            "A hook replaced this call's arguments with ones that fail: {message}"
                        );
                        return done(ToolOutput::error(message), None);
                    }
                };
                &replaced
            }
            None => call,
        };

        // 3. Decision (the hooks' and the policy's), and 4. approval.
        let permitting = Instant::now();
        let permitted = self.permit(call, &checked, pre.decision).await;
        asking.store(
            u64::try_from(permitting.elapsed().as_micros()).unwrap_or(u64::MAX),
            std::sync::atomic::Ordering::Relaxed,
        );
        let leave_sandbox = match permitted {
            Ok(leave_sandbox) => leave_sandbox,
            Err((output, fatal)) => return done(output, fatal),
        };

        let file = checked.path.as_ref().map(|p| p.absolute.clone());
        // 5. Run, with secrets masked before anyone (a hook, the model, the person, the
        // session file) sees the result.
        let (mut output, fatal) = self.run_checked(call, checked, leave_sandbox).await;
        mask_saved_output(
            &self.runner.secrets,
            &output.content,
            &self.ctx.config().offload_dir,
        )
        .await;
        crate::secrets::mask_output(&self.runner.secrets, &mut output);

        self.after_run(call, file.as_deref(), pre.context, &mut output)
            .await;
        done(output, fatal)
    }

    /// Steps 6 to 8, on a call's masked output: the PostToolUse hooks (their context and
    /// the PreToolUse hooks' `pre_context` appended), the output budget, and a nested
    /// AGENTS.md the call reached in `file`.
    async fn after_run(
        &self,
        call: &ToolCall,
        file: Option<&Path>,
        pre_context: Option<String>,
        output: &mut ToolOutput,
    ) {
        // 6. PostToolUse hooks.
        let mut warnings = Vec::new();
        let asked = hook_call(call);
        let post = tokio::select! {
            biased;
            () = self.cancel.cancelled() => None,
            post = self.runner.hooks.post_tool_use(&asked, output, &mut warnings) => Some(post),
        };
        self.warn(warnings);
        let post_context = post.and_then(|post| post.context);
        for context in [pre_context, post_context].into_iter().flatten() {
            output.content.push_str("\n\n");
            output.content.push_str(&context);
        }

        // 7. Output budget.
        output.content = rein_tools::apply_output_budget(
            std::mem::take(&mut output.content),
            self.ctx.config(),
            &call.name,
        );

        // 8. A nested AGENTS.md the call reached for the first time goes with its result.
        if let (Some(nested), Some(file), false) = (&self.runner.nested, file, output.is_error) {
            let found = nested.for_file(file);
            if !found.is_empty() {
                output.content.push_str(&super::nested::note(&found));
                for (path, _) in found {
                    self.events.emit(AgentEvent::InstructionsLoaded { path });
                }
            }
        }
    }

    /// Steps 3 and 4: the decision, and the person's answer when it asks. Whether the call
    /// runs outside the sandbox, or the result that ends it here.
    async fn permit(
        &self,
        call: &ToolCall,
        checked: &Checked,
        hook: Option<HookDecision>,
    ) -> Result<bool, (ToolOutput, Option<Fatal>)> {
        match self.decide(call, checked, hook) {
            Decision::Allow => {}
            Decision::Deny { reason } => {
                let refusal = Refusal {
                    message: format!("rein did not run this call: {reason}."),
                    reason,
                };
                return Err((self.denied(call, refusal), None));
            }
            Decision::Ask { mut reason, .. } => {
                // A line that writes where the sandbox would refuse is asked about once: the
                // person who allows it lets it out of the sandbox too.
                let refused_write = self.sandbox_refused_write(checked);
                if let Some(path) = &refused_write {
                    reason.push_str(&format!(
                        "; the sandbox would refuse the write to {}, so if you allow it, it \
                         runs outside the sandbox (with your rights)",
                        path.display()
                    ));
                }
                match self
                    .ask(call, checked, &reason, refused_write.is_some())
                    .await
                {
                    Asked::Answered => return Ok(refused_write.is_some()),
                    // Covered by an answer about another call: that one's question, not this
                    // one's, said it would leave the sandbox.
                    Asked::Covered => {}
                    Asked::Refused(refusal) => return Err((self.denied(call, refusal), None)),
                    Asked::Cancelled => {
                        let message = "Cancelled: the person interrupted the turn while asked \
                                       about this call; it did not run.";
                        return Err((ToolOutput::error(message), Some(Fatal::Cancelled)));
                    }
                }
            }
        }
        Ok(false)
    }

    /// Step 3: the policy's decision, with the hooks' say. A hook's deny or ask wins; its
    /// allow waves the mode's questions but never a deny (a rule, the hard deny list) nor a
    /// firm question (an ask rule, an edit outside the workspace).
    fn decide(&self, call: &ToolCall, checked: &Checked, hook: Option<HookDecision>) -> Decision {
        let policy = self.runner.policy.decide(&checked.view(call));
        match (policy, hook) {
            (deny @ Decision::Deny { .. }, _) => deny,
            (_, Some(HookDecision::Deny { reason })) => Decision::Deny {
                reason: format!("a hook refused it: {reason}"),
            },
            (_, Some(HookDecision::Ask { reason })) => Decision::Ask {
                reason: format!("a hook asks: {reason}"),
                firm: true,
            },
            (Decision::Ask { firm: false, .. }, Some(HookDecision::Allow { .. })) => {
                Decision::Allow
            }
            (decision, _) => decision,
        }
    }

    /// Shows what the hooks could not do.
    fn warn(&self, warnings: Vec<String>) {
        for message in warnings {
            self.events.warn(message);
        }
    }

    /// Step 1: the call names a tool, and its arguments are JSON the tool accepts.
    pub(super) fn check(&self, call: &ToolCall) -> Result<Checked, String> {
        let Some(tool) = self.runner.registry.get(&call.name) else {
            return Err(self.unknown_tool_message(&call.name));
        };
        let arguments = match &call.arguments {
            ToolArguments::Json { value } => value,
            ToolArguments::Invalid { raw, error } => {
                return Err(invalid_arguments_message(&call.name, raw, error));
            }
        };
        let prepared = Arc::clone(tool).prepare(arguments)?;
        let kind = tool.kind();
        let confined = tool.confined();
        let path = facts::path_target(&self.ctx, arguments).map_err(|e| e.to_string())?;
        let analyzed = facts::shell_analysis(&self.ctx, &call.name, arguments).map(Arc::new);
        let shell = analyzed.as_deref().map(|a| facts::facts_of(&self.ctx, a));
        Ok(Checked {
            kind,
            confined,
            call: prepared,
            path,
            shell,
            analyzed,
        })
    }

    /// A file this shell line writes that its sandbox would refuse (outside the writable
    /// trees), when the sandbox is enforced.
    fn sandbox_refused_write(&self, checked: &Checked) -> Option<std::path::PathBuf> {
        let sandbox = self.ctx.sandbox()?;
        if !sandbox.is_enforced() {
            return None;
        }
        checked.shell.as_ref()?.files.iter().find_map(|file| {
            (file.write
                && !file.absolute.starts_with("/dev")
                && !sandbox.policy().may_write(&file.absolute))
            .then(|| file.absolute.clone())
        })
    }

    fn unknown_tool_message(&self, name: &str) -> String {
        let tools = self.runner.registry.names().join(", ");
        if name == AGENT_TOOL && self.runner.agent.is_some() {
            format!(
                "Sub-agents cannot start sub-agents: `{AGENT_TOOL}` is not available here, so \
                 nothing ran. Do the work yourself with your tools: {tools}."
            )
        } else if name == crate::session::UNNAMED_TOOL {
            format!("This tool call had no tool name, so nothing ran. The tools are: {tools}.")
        } else {
            format!("There is no tool named `{name}`, so nothing ran. The tools are: {tools}.")
        }
    }
}

/// The result of step 4.
pub(super) enum Asked {
    /// The person said yes to this call.
    Answered,
    /// An answer given while it waited (yes for the session) covers it.
    Covered,
    Refused(Refusal),
    Cancelled,
}

/// Why a call did not run: said to the model (what to do instead) and to the person (short).
pub(super) struct Refusal {
    /// The call's result, for the model.
    pub(super) message: String,
    /// For the person and the final report.
    pub(super) reason: String,
}

/// Images a tool gave, as the model client sends them (the two crates do not know each
/// other's types: core joins them).
pub(crate) fn llm_images(images: Vec<rein_tools::ImageData>) -> Vec<rein_llm::Image> {
    images
        .into_iter()
        .map(|image| rein_llm::Image {
            media_type: image.media_type.to_owned(),
            data: image.data,
        })
        .collect()
}

/// The outcome of `call` with `output`, taking `duration` (the person's answering left out).
fn call_outcome(
    call: &ToolCall,
    output: ToolOutput,
    fatal: Option<Fatal>,
    duration: Duration,
) -> CallOutcome {
    tracing::debug!(tool = %call.name, id = %call.id, ?duration, is_error = output.is_error, "tool end");
    CallOutcome {
        result: ToolResult {
            call_id: call.id.clone(),
            content: output.content,
            is_error: output.is_error,
            images: llm_images(output.images),
        },
        display: output.display,
        changes: output.changes,
        duration,
        fatal,
    }
}
