//! The `bash` tool: runs a command with `bash -c` in the tracked current directory.
//!
//! - Each command starts a new session (so a new process group, and no controlling terminal)
//!   with stdin closed and an environment in which nothing waits for a person.
//! - stdout and stderr arrive interleaved through one pipe; the exit code (or the signal) is
//!   always the last line. A non-zero exit is reported with `is_error` set, with the full
//!   output: the model needs it either way, and `grep`'s or `diff`'s exit 1 is visible as such.
//! - Output too big for the budget is saved whole to a file in the offload directory as it
//!   arrives (up to `offload_max_bytes`), while memory keeps only its two ends; the model gets
//!   those ends and the file's name (`spool.rs`, `result.rs`).
//! - Timeout and cancellation end the whole process group (SIGTERM, SIGKILL after 2 s) and
//!   return what was printed so far. A timeout above [`BASH_MAX_TIMEOUT`] is clamped to it,
//!   with a notice: the model plainly wanted a long wait, and refusing would only cost a
//!   round. A timeout of 0 is refused.
//! - Processes left in the background keep running after the call (a server to query next);
//!   the [`ProcessTracker`] in the context ends them on turn cancel, exit, or drop. That
//!   includes processes that left the command's process group and session (`setsid cmd &`,
//!   double forks): they carry the command's marker or descend from its processes
//!   (`procs.rs`). With [`adopt_orphans`] (Linux), rein also becomes their parent, reaps them,
//!   and stops whatever is still below it when it exits (`reaper.rs`).
//! - `cd` persists, captured by bash itself on exit (see `cwd.rs`), inside the workspace only.
//! - Dangerous commands are refused before they run ([`check_command`]); [`analyze`] tells
//!   rein-core which commands are provably read-only and what rules should match.

mod background;
mod background_tools;
mod child;
mod cwd;
mod output;
mod process;
mod procs;
mod reaper;
mod result;
mod signals;
mod spool;
mod tracker;
mod watchdog;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

pub use background::{
    BackgroundError, BackgroundShells, MAX_RUNNING as MAX_BACKGROUND, OutputRead,
};
pub use background_tools::{BashOutputArgs, BashOutputTool, KillShellArgs, KillShellTool};
pub use child::{BashCommand, TrackedChild, spawn_tracked};
pub use reaper::{OrphanCare, adopt_orphans};
pub use rein_shell::{
    Analyzed, CheckPlaces, CommandAnalysis, Danger, DangerKind, SimpleCommand, analyze,
    check_command,
};
pub use tracker::{KILL_GRACE, ProcessTracker};

use crate::{Preview, Tool, ToolContext, ToolError, ToolKind, ToolOutput};
use cwd::{CwdChange, CwdFile};
use process::{RunSpec, Stop};
use spool::SpoolSpec;

/// The longest timeout a command may have.
pub const BASH_MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// Arguments of the `bash` tool.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BashArgs {
    /// The command.
    pub command: String,
    /// Seconds (default 120, max 600).
    #[serde(default)]
    pub timeout: Option<u64>,
    /// Return an id at once.
    #[serde(default)]
    pub run_in_background: Option<bool>,
}

/// The `bash` tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct BashTool;

#[async_trait]
impl Tool for BashTool {
    type Args = BashArgs;

    fn name(&self) -> &'static str {
        "bash"
    }

    fn description(&self) -> &'static str {
        include_str!("description.md")
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Execute
    }

    async fn run(&self, args: BashArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        run_bash(args, ctx).await
    }

    async fn preview(&self, args: &BashArgs, ctx: &ToolContext) -> Option<Preview> {
        Some(Preview::Command {
            command: args.command.clone(),
            cwd: ctx.cwd().display().to_string(),
        })
    }
}

/// Runs a command: 1. check its text, 2. analyse it (refusing the hard deny list), 3. run it
/// (in the background when asked), 4. judge what happened (sandbox refusals, `cd`).
async fn run_bash(args: BashArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let mut notices = Vec::new();
    check_text(&args.command)?;
    let timeout = effective_timeout(
        args.timeout,
        ctx.config().bash_default_timeout,
        &mut notices,
    )?;
    let root = ctx.workspace_root();
    let root_physical = std::fs::canonicalize(root).map_err(|err| {
        ToolError::Model(format!(
            "cannot run commands: the workspace root {} is not usable: {err}",
            root.display()
        ))
    })?;
    let cwd = current_dir(ctx, &mut notices);
    let places = CheckPlaces {
        workspace_root: root_physical.clone(),
        home_dir: ctx.config().home_dir.clone(),
        cwd: Some(std::fs::canonicalize(&cwd).unwrap_or_else(|_| cwd.clone())),
    };
    // rein-core refuses these before asking anyone; refusing here too keeps the bash tool
    // safe on its own (another caller, a rule that slipped).
    let handed = ctx.scope().shell.as_deref();
    let fresh;
    let analysis = match handed.and_then(|a| a.of(&args.command, &places)) {
        Some(analysis) => analysis,
        None => {
            fresh = analyze(&args.command, &places);
            &fresh
        }
    };
    if let Some(danger) = &analysis.danger {
        return Err(ToolError::Model(danger.refusal()));
    }
    // A line rein may run without asking must stay read-only whatever git config a
    // repository holds: a planted bare repository or a nested one's config could name
    // programs git runs (core.fsmonitor, hooks).
    let read_only_git = analysis.read_only.is_ok()
        && analysis
            .simple_commands
            .iter()
            .any(|c| c.program.as_deref() == Some("git"));
    if ctx.cancel_token().is_cancelled() {
        return Err(ToolError::Cancelled {
            partial: "(cancelled before the command started)".to_owned(),
        });
    }
    // bash runs elsewhere: a relative offload directory must mean what it means to rein.
    let offload_dir = std::path::absolute(&ctx.config().offload_dir)
        .unwrap_or_else(|_| ctx.config().offload_dir.clone());
    if args.run_in_background == Some(true) {
        return start_in_background(&args, ctx, &cwd, &offload_dir, read_only_git, notices);
    }
    let cwd_file = match CwdFile::create(&offload_dir) {
        Ok(file) => Some(file),
        Err(err) => {
            notices.push(format!(
                "`cd` is not tracked for this command: cannot use rein's output directory: {err}"
            ));
            None
        }
    };
    let spec = RunSpec {
        command: &args.command,
        cwd: &cwd,
        cwd_file: cwd_file
            .as_ref()
            .map_or(Path::new("/dev/null"), CwdFile::path),
        timeout,
        env_remove: &ctx.config().env_remove,
        env_set: &ctx.config().env_set,
        sandbox: ctx.sandbox().filter(|s| s.is_enforced()),
        git_guard: read_only_git,
        spool: SpoolSpec {
            dir: offload_dir,
            // Bytes bound characters from above: an output within the budget in bytes fits.
            threshold_bytes: ctx.config().output_budget_chars as u64,
            cap_bytes: ctx.config().offload_max_bytes,
        },
    };
    // What a sandboxed command must not create (`.git/commondir`) is removed after it.
    let plants = spec.sandbox.map(|s| s.policy().watch());
    let started = std::time::Instant::now();
    let report = |progress: crate::Progress| ctx.report(progress);
    let report: Option<&(dyn Fn(crate::Progress) + Send + Sync)> =
        ctx.wants_progress().then_some(&report);
    let outcome = process::run(spec, ctx.cancel_token(), ctx.processes(), report)
        .await
        .map_err(|err| {
            ToolError::Model(format!("could not start bash in {}: {err}", cwd.display()))
        })?;
    notices.extend(plants.iter().flat_map(crate::sandbox::PlantWatch::sweep));
    let places = Places {
        root,
        root_physical: &root_physical,
        cwd: &cwd,
    };
    let sandbox_refusal = judge_outcome(ctx, &outcome, cwd_file.as_ref(), &places, &mut notices);
    result::finish(
        &args.command,
        outcome,
        notices,
        sandbox_refusal,
        timeout,
        ctx.config().output_budget_chars,
        started.elapsed(),
    )
}

/// A command text bash can run: not empty, no NUL byte.
fn check_text(command: &str) -> Result<(), ToolError> {
    if command.trim().is_empty() {
        return Err(ToolError::Model(
            "`command` is empty: give the shell command to run".to_owned(),
        ));
    }
    if command.contains('\0') {
        return Err(ToolError::Model(
            "`command` contains a NUL byte, which bash cannot run".to_owned(),
        ));
    }
    Ok(())
}

/// The workspace root as given and as the file system resolves it, and where the command ran.
struct Places<'a> {
    root: &'a Path,
    root_physical: &'a Path,
    cwd: &'a Path,
}

/// After the command: what the sandbox refused it (the message for the model), and where its
/// `cd` left the shell (followed when inside the workspace, a notice either way).
fn judge_outcome(
    ctx: &ToolContext,
    outcome: &process::RunOutcome,
    cwd_file: Option<&CwdFile>,
    places: &Places<'_>,
    notices: &mut Vec<String>,
) -> Option<String> {
    let cwd = places.cwd;
    // Judged whatever the exit status: `python3 -c 'os.system("rm -rf ~")'` exits 0 after
    // the refusals it printed.
    let exited = outcome.stop == Stop::Exited;
    let file_refusal = ctx
        .sandbox()
        .filter(|s| exited && s.is_enforced())
        .and_then(|s| crate::sandbox::refusal(&outcome.output.render(), s.policy(), cwd));
    // What rein's proxy refused is known for certain, whatever the command printed.
    let hosts = crate::sandbox::host_refusals(&outcome.net.refused());
    notices.extend(hosts.person_refused);
    let sandbox_refusal = match (file_refusal, hosts.unlisted) {
        (Some(files), Some(hosts)) => Some(format!("{files}; {hosts}")),
        (files, hosts) => files.or(hosts),
    };
    if outcome.stop == Stop::Exited
        && let Some(final_dir) = cwd_file.and_then(CwdFile::read)
    {
        match cwd::judge(&final_dir, places.root, places.root_physical, cwd) {
            CwdChange::Same => {}
            CwdChange::Moved(dir) => {
                notices.push(format!("current directory is now {}", dir.display()));
                ctx.set_cwd(dir);
            }
            CwdChange::Outside(dir) => notices.push(format!(
                "the command ended in {}, outside the workspace; the current directory stays {}",
                dir.display(),
                cwd.display()
            )),
        }
    }
    sandbox_refusal
}

/// Starts the command in the background: the id and the output file at once.
fn start_in_background(
    args: &BashArgs,
    ctx: &ToolContext,
    cwd: &Path,
    offload_dir: &Path,
    git_guard: bool,
    mut notices: Vec<String>,
) -> Result<ToolOutput, ToolError> {
    // Only the model's own timeout applies to a background command.
    let timeout = match args.timeout {
        Some(0) => {
            return Err(ToolError::Model(
                "`timeout` must be at least 1 second".to_owned(),
            ));
        }
        Some(secs) => Some(Duration::from_secs(secs)),
        None => None,
    };
    let (id, file) = ctx
        .background()
        .start(background::StartSpec {
            command: &args.command,
            cwd,
            env_remove: &ctx.config().env_remove,
            env_set: &ctx.config().env_set,
            git_guard,
            sandbox: ctx.sandbox().filter(|s| s.is_enforced()),
            offload_dir,
            cap_bytes: ctx.config().offload_max_bytes,
            timeout,
            mask: ctx.config().output_mask.as_ref().map(|m| m.0.stream()),
        })
        .map_err(ToolError::Model)?;
    notices.push(format!("output file: {}", file.display()));
    let mut text = format!(
        "Started in the background as {id}. Read its output with bash_output {{\"id\": \"{id}\"}}; \
         stop it with kill_shell. You will be told when it ends."
    );
    for notice in notices {
        text.push_str(&format!("\n({notice})"));
    }
    Ok(ToolOutput::success(text))
}

/// The timeout to use; a value above the maximum is clamped with a notice.
fn effective_timeout(
    requested: Option<u64>,
    default: Duration,
    notices: &mut Vec<String>,
) -> Result<Duration, ToolError> {
    let max_secs = BASH_MAX_TIMEOUT.as_secs();
    match requested {
        None => Ok(default.min(BASH_MAX_TIMEOUT)),
        Some(0) => Err(ToolError::Model(format!(
            "`timeout` must be at least 1 second (at most {max_secs})"
        ))),
        Some(secs) if secs > max_secs => {
            notices.push(format!(
                "timeout {secs} s is above the maximum; used {max_secs} s"
            ));
            Ok(BASH_MAX_TIMEOUT)
        }
        Some(secs) => Ok(Duration::from_secs(secs)),
    }
}

/// The tracked current directory, or the workspace root (with a notice) if it was deleted.
fn current_dir(ctx: &ToolContext, notices: &mut Vec<String>) -> PathBuf {
    let cwd = ctx.cwd();
    if cwd.is_dir() {
        return cwd;
    }
    let root = ctx.workspace_root().to_path_buf();
    notices.push(format!(
        "the current directory {} no longer exists; ran in the workspace root {} instead",
        cwd.display(),
        root.display()
    ));
    ctx.set_cwd(root.clone());
    root
}

/// Keeps the commands rein runs from reading rein's own memory and environment (which holds
/// the API key) through `/proc/<rein's pid>/environ` or `mem`: a process that is not
/// dumpable can only be inspected by one with `CAP_SYS_PTRACE`. Commands exec other
/// programs, which are dumpable again: nothing changes for them. (The fork inherits it until
/// exec; a sandboxed child that makes a user namespace turns it back on just long enough to
/// write its own maps: `sandbox/protect.rs`.)
pub fn hide_from_commands() {
    #[cfg(target_os = "linux")]
    let _ = rustix::process::set_dumpable_behavior(rustix::process::DumpableBehavior::NotDumpable);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeouts_are_clamped_or_refused() {
        let default = Duration::from_secs(120);
        let mut notices = Vec::new();
        assert_eq!(
            effective_timeout(None, default, &mut notices).ok(),
            Some(default)
        );
        assert_eq!(
            effective_timeout(Some(5), default, &mut notices).ok(),
            Some(Duration::from_secs(5))
        );
        assert!(notices.is_empty());
        assert_eq!(
            effective_timeout(Some(3600), default, &mut notices).ok(),
            Some(BASH_MAX_TIMEOUT)
        );
        assert_eq!(notices, ["timeout 3600 s is above the maximum; used 600 s"]);
        assert!(
            matches!(effective_timeout(Some(0), default, &mut notices), Err(ToolError::Model(m)) if m.contains("at least 1"))
        );
    }
}
