//! `rein eval SUITE`: runs a suite of tasks, each in a fresh workspace with the rein binary as
//! the agent, scores each by its validation script, and adds the results up — on this machine
//! (`-j N` at once) or across a Ray cluster (`--ray ADDRESS`). See docs/eval.md.
//!
//! Every attempt runs the same code wherever it runs: locally it is called in-process; on a
//! Ray worker the task runs `rein eval SUITE --attempt ID:N`, which calls it there and prints
//! the record. Results are appended to `results.jsonl` as each attempt ends, so a killed run
//! loses only the attempts in flight, and `--resume` redoes only those.

mod attempt;
mod progress;
mod ray;
mod record;
mod results;
mod spawn;
mod suggest;
mod suite;
mod summary;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc};

use crate::args::{Args, EvalArgs};
use crate::exit::Exit;
use crate::render;
use attempt::{Cassettes, Overrides, Place, Shared};
use record::Record;
use results::Results;
use suite::{Suite, Task};
use summary::Summary;

/// Where results go without `--out`: `rein-eval/<timestamp>/` in the current directory.
const DEFAULT_OUT: &str = "rein-eval";

/// Runs `rein eval`.
pub(crate) async fn run(args: &Args, eval: &EvalArgs) -> Exit {
    match run_checked(args, eval).await {
        Ok(exit) => exit,
        Err(Failure::Usage(message)) => {
            render::error(&format!("eval: {message}"));
            Exit::Usage
        }
        Err(Failure::Runtime(message)) => {
            render::error(&format!("eval: {message}"));
            Exit::Runtime
        }
    }
}

/// Why `rein eval` stopped before scoring.
enum Failure {
    /// Bad input: exit 2.
    Usage(String),
    /// Everything else: exit 1.
    Runtime(String),
}

async fn run_checked(args: &Args, eval: &EvalArgs) -> Result<Exit, Failure> {
    if let [a, b] = eval.compare.as_slice() {
        return compare(a, b);
    }
    let Some(suite_path) = &eval.suite else {
        return Err(Failure::Usage(
            "which suite? `rein eval SUITE` (a TOML file, or a directory holding suite.toml)"
                .into(),
        ));
    };
    let suite = suite::load(suite_path).map_err(Failure::Usage)?;
    let plan = Plan::from_args(args, eval, &suite)?;
    if let Some(which) = &eval.attempt {
        return one_attempt(&suite, which, eval, &plan.shared).await;
    }
    let out = out_dir(eval)?;
    let earlier = results::read(&out.join(results::RESULTS_FILE))
        .map_err(|e| Failure::Runtime(format!("cannot read {}: {e}", out.display())))?;
    if !earlier.is_empty() && !eval.resume {
        return Err(Failure::Usage(format!(
            "{} already holds results: add --resume to finish that run, or choose another --out",
            out.display()
        )));
    }
    let done = results::done(&earlier);
    let todo: Vec<(Task, u32)> = plan
        .tasks
        .iter()
        .flat_map(|task| (1..=plan.repeat).map(move |n| (task.clone(), n)))
        .filter(|(task, n)| !done.contains(&(task.id.clone(), *n)))
        .collect();
    let mut results = Results::open(&out)
        .map_err(|e| Failure::Runtime(format!("cannot write results in {}: {e}", out.display())))?;
    if eval.resume && !earlier.is_empty() {
        render::notice(&format!(
            "rein eval: resuming {}: {} attempts done, {} to run",
            out.display(),
            earlier.len(),
            todo.len()
        ));
    }
    let interrupted = match &eval.ray {
        Some(address) => ray::run(address, eval, &suite, &plan, &todo, &mut results)
            .await
            .map_err(Failure::Runtime)?,
        None => run_local(&plan, &out, todo, &mut results).await?,
    };
    let records = results::read(results.path())
        .map_err(|e| Failure::Runtime(format!("cannot read {}: {e}", results.path().display())))?;
    finish(eval, &suite, &plan, &records, results.path(), interrupted)
}

/// What one run of a suite does: which tasks, how often, how many at once, with what.
pub(crate) struct Plan {
    pub(crate) tasks: Vec<Task>,
    pub(crate) repeat: u32,
    pub(crate) jobs: usize,
    pub(crate) shared: Shared,
    /// The flags each `--attempt` on a Ray worker is run with, to do what this run does.
    pub(crate) attempt_flags: Vec<String>,
}

impl Plan {
    fn from_args(args: &Args, eval: &EvalArgs, suite: &Suite) -> Result<Plan, Failure> {
        let jobs = match eval.jobs {
            Some(0) => {
                return Err(Failure::Usage(
                    "-j 0: at least one task must run at a time".into(),
                ));
            }
            Some(n) => n as usize,
            None => std::thread::available_parallelism().map_or(1, usize::from),
        };
        if eval.repeat == 0 {
            return Err(Failure::Usage(
                "--repeat 0: run each task at least once".into(),
            ));
        }
        if let Some(rate) = eval.fail_under
            && !(0.0..=1.0).contains(&rate)
        {
            return Err(Failure::Usage(format!(
                "--fail-under {rate}: give a pass rate between 0 and 1 (0.8 for 80%)"
            )));
        }
        let tasks: Vec<Task> = suite
            .tasks
            .iter()
            .filter(|task| {
                eval.filter.is_empty() || eval.filter.iter().any(|p| matches(p, &task.id))
            })
            .cloned()
            .collect();
        if tasks.is_empty() {
            let ids: Vec<&str> = suite.tasks.iter().map(|t| t.id.as_str()).collect();
            return Err(Failure::Usage(format!(
                "--filter {} matches no task (tasks: {})",
                eval.filter.join(","),
                ids.join(", ")
            )));
        }
        let cassettes = match (&eval.record, &eval.replay) {
            (Some(dir), None) => {
                std::fs::create_dir_all(dir).map_err(|e| {
                    Failure::Runtime(format!("cannot create {}: {e}", dir.display()))
                })?;
                Cassettes::Record(absolute(dir)?)
            }
            (None, Some(dir)) if dir.is_dir() => Cassettes::Replay(absolute(dir)?),
            (None, Some(dir)) => {
                return Err(Failure::Usage(format!(
                    "--replay {}: not a directory of recordings",
                    dir.display()
                )));
            }
            _ => Cassettes::Live,
        };
        let rein = own_binary()
            .map_err(|e| Failure::Runtime(format!("cannot find the rein binary: {e}")))?;
        let overrides = Overrides {
            model: eval.model.clone().or_else(|| args.model.clone()),
            provider: eval
                .provider
                .or(args.provider)
                .map(|p| rein_core::config::ProviderKind::from(p).to_string()),
            base_url: eval.base_url.clone().or_else(|| args.base_url.clone()),
            permission_mode: args.permission_mode.map(|m| m.name().to_owned()),
        };
        let person_home = crate::setup::configuration(args)
            .ok()
            .map(|(config, _)| config.rein_home);
        let default_mode = default_mode(args);
        let mut attempt_flags = Vec::new();
        for (flag, value) in [
            ("--model", &overrides.model),
            ("--provider", &overrides.provider),
            ("--base-url", &overrides.base_url),
            ("--permission-mode", &overrides.permission_mode),
        ] {
            if let Some(value) = value {
                attempt_flags.extend([flag.to_owned(), value.clone()]);
            }
        }
        Ok(Plan {
            tasks,
            repeat: eval.repeat,
            jobs,
            shared: Shared {
                rein,
                person_home,
                overrides,
                cassettes,
                default_mode,
            },
            attempt_flags,
        })
    }
}

/// `auto` where the sandbox holds; `yolo` where it cannot, said once.
fn default_mode(args: &Args) -> &'static str {
    match crate::setup::auto_refusal(args) {
        None => "auto",
        Some(why) => {
            render::notice(&format!(
                "rein eval: the OS sandbox cannot be enforced here ({why}); tasks run in the \
                 yolo permission mode instead of auto"
            ));
            "yolo"
        }
    }
}

/// A `--filter` pattern: a task id, with `*` matching any run of characters.
fn matches(pattern: &str, id: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return pattern == id;
    };
    if parts.len() == 1 {
        return pattern == id;
    }
    let Some(mut rest) = id.strip_prefix(first) else {
        return false;
    };
    for part in middle {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

fn absolute(path: &Path) -> Result<PathBuf, Failure> {
    std::path::absolute(path).map_err(|e| Failure::Runtime(format!("{}: {e}", path.display())))
}

/// `--out`, or a new `rein-eval/<timestamp>`; with `--resume` and no `--out`, the newest.
fn out_dir(eval: &EvalArgs) -> Result<PathBuf, Failure> {
    let dir = match &eval.out {
        Some(dir) => dir.clone(),
        None if eval.resume => newest_run(Path::new(DEFAULT_OUT)).ok_or_else(|| {
            Failure::Usage(format!(
                "--resume: no earlier run under {DEFAULT_OUT}/; name it with --out DIR"
            ))
        })?,
        None => Path::new(DEFAULT_OUT).join(timestamp()),
    };
    std::fs::create_dir_all(&dir)
        .map_err(|e| Failure::Runtime(format!("cannot create {}: {e}", dir.display())))?;
    Ok(dir)
}

fn newest_run(parent: &Path) -> Option<PathBuf> {
    std::fs::read_dir(parent)
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| e.path().join(results::RESULTS_FILE).is_file())
        .map(|e| e.path())
        .max()
}

/// `20261127-011502`, in UTC.
fn timestamp() -> String {
    rein_core::session::utc_timestamp_compact(std::time::SystemTime::now())
}

/// Runs the attempts here, `plan.jobs` at once; returns whether the run was interrupted.
async fn run_local(
    plan: &Plan,
    out: &Path,
    todo: Vec<(Task, u32)>,
    results: &mut Results,
) -> Result<bool, Failure> {
    let root = tempfile::Builder::new()
        .prefix("rein-eval-")
        .tempdir()
        .map_err(|e| Failure::Runtime(format!("cannot create a temporary directory: {e}")))?
        .keep();
    let logs = absolute(&out.join("logs"))?;
    render::notice(&format!(
        "rein eval: {} attempts, {} at a time; workspaces under {}",
        todo.len(),
        plan.jobs,
        root.display()
    ));
    let mut progress = progress::Progress::new(todo.len());
    let gate = Arc::new(Semaphore::new(plan.jobs));
    let (send, mut finished) = mpsc::unbounded_channel::<Record>();
    let mut running = tokio::task::JoinSet::new();
    for (task, n) in todo {
        let (gate, send, shared) = (gate.clone(), send.clone(), plan.shared.clone());
        let place = Place::new(&root, &logs, &task.id, n);
        running.spawn(async move {
            let Ok(_permit) = gate.acquire_owned().await else {
                return;
            };
            let record = attempt::run(&task, n, &place, &shared).await;
            let _ = send.send(record);
        });
    }
    drop(send);
    let mut interrupted = false;
    loop {
        tokio::select! {
            record = finished.recv() => {
                let Some(record) = record else { break };
                progress.finished(&record);
                results.append(&record).map_err(|e| {
                    Failure::Runtime(format!("cannot write {}: {e}", results.path().display()))
                })?;
            }
            _ = tokio::signal::ctrl_c() => {
                interrupted = true;
                break;
            }
        }
    }
    // Dropping the attempts stops their process groups.
    running.shutdown().await;
    progress.clear();
    Ok(interrupted)
}

/// This rein's binary, to run each attempt's agent with. When the file was replaced since
/// rein started (a rebuild, an update), the kernel's link to the running one still works.
fn own_binary() -> std::io::Result<PathBuf> {
    let path = std::env::current_exe()?;
    let running = Path::new("/proc/self/exe");
    if !path.is_file() && running.is_file() {
        return Ok(running.to_path_buf());
    }
    Ok(path)
}

/// `--attempt ID:N`: one attempt here, its record on stdout (what a Ray worker runs).
async fn one_attempt(
    suite: &Suite,
    which: &str,
    eval: &EvalArgs,
    shared: &Shared,
) -> Result<Exit, Failure> {
    let bad = || Failure::Usage(format!("--attempt {which}: expected TASK:N"));
    let (id, n) = which.rsplit_once(':').ok_or_else(bad)?;
    let n: u32 = n.parse().map_err(|_| bad())?;
    let task = suite.tasks.iter().find(|t| t.id == id).ok_or_else(|| {
        Failure::Usage(format!("--attempt {which}: no task \"{id}\" in the suite"))
    })?;
    let root = match &eval.out {
        Some(dir) => dir.clone(),
        None => tempfile::Builder::new()
            .prefix("rein-eval-")
            .tempdir()
            .map_err(|e| Failure::Runtime(format!("cannot create a temporary directory: {e}")))?
            .keep(),
    };
    let place = Place::new(&root, &root.join("logs"), &task.id, n);
    let record = attempt::run(task, n, &place, shared).await;
    render::stdout_line(&record.to_line());
    Ok(Exit::Done)
}

/// The summary, the report, and the exit status `--fail-under` asks for.
fn finish(
    eval: &EvalArgs,
    suite: &Suite,
    plan: &Plan,
    records: &[Record],
    path: &Path,
    interrupted: bool,
) -> Result<Exit, Failure> {
    let wanted: std::collections::BTreeSet<&str> =
        plan.tasks.iter().map(|t| t.id.as_str()).collect();
    let mine: Vec<Record> = records
        .iter()
        .filter(|r| wanted.contains(r.task.as_str()))
        .cloned()
        .collect();
    let summary = Summary::of(&mine);
    render::stdout_line(&summary.table());
    render::notice(&format!("rein eval: results in {}", path.display()));
    if let Some(report) = &eval.report {
        let title = format!("rein eval: {}", suite.file.display());
        std::fs::write(report, summary.markdown(&title))
            .map_err(|e| Failure::Runtime(format!("cannot write {}: {e}", report.display())))?;
    }
    if interrupted {
        render::notice(
            "rein eval: interrupted; `rein eval SUITE --resume --out DIR` runs what is left",
        );
        return Ok(Exit::Interrupted);
    }
    if let Some(rate) = eval.fail_under
        && summary.pass_at_1() < rate
    {
        render::error(&format!(
            "eval: pass@1 {:.1}% is under --fail-under {:.1}%",
            summary.pass_at_1() * 100.0,
            rate * 100.0
        ));
        return Ok(Exit::Runtime);
    }
    Ok(Exit::Done)
}

/// `--compare A.jsonl B.jsonl`.
fn compare(a: &Path, b: &Path) -> Result<Exit, Failure> {
    let read = |path: &Path| {
        if !path.is_file() {
            return Err(Failure::Usage(format!(
                "--compare: no results file at {}",
                path.display()
            )));
        }
        results::read(path)
            .map(|records| Summary::of(&records))
            .map_err(|e| Failure::Runtime(format!("cannot read {}: {e}", path.display())))
    };
    let (sa, sb) = (read(a)?, read(b)?);
    render::stdout_line(&summary::compare(
        &sa,
        &sb,
        &a.display().to_string(),
        &b.display().to_string(),
    ));
    Ok(Exit::Done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_match_ids_with_stars() {
        assert!(matches("fix-*", "fix-import"));
        assert!(matches("*import", "fix-import"));
        assert!(matches("f*x*t", "fix-import"));
        assert!(matches("fix-import", "fix-import"));
        assert!(!matches("fix", "fix-import"));
        assert!(!matches("*z*", "fix-import"));
    }
}
