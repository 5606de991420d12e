//! One attempt at one task: a fresh workspace and rein home, the setup, the agent (the rein
//! binary itself, headless), the validation; scored by the validation's exit status.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::process::Command;

use super::record::{Reason, Record};
use super::spawn::{Groups, Stdout, run_step};
use super::suite::{Script, Task};

/// What every attempt of a run shares.
#[derive(Debug, Clone)]
pub(crate) struct Shared {
    /// The rein binary that plays the agent.
    pub(crate) rein: PathBuf,
    /// The person's rein home, whose config file each attempt's home gets a copy of.
    pub(crate) person_home: Option<PathBuf>,
    /// `--model`, `--provider`, `--base-url`, `--permission-mode`: over the suite's.
    pub(crate) overrides: Overrides,
    /// Model traffic saved or played back.
    pub(crate) cassettes: Cassettes,
    /// The permission mode when neither the suite nor the command line gives one.
    pub(crate) default_mode: &'static str,
}

/// Command-line settings that win over the suite's.
#[derive(Debug, Clone, Default)]
pub(crate) struct Overrides {
    pub(crate) model: Option<String>,
    pub(crate) provider: Option<String>,
    pub(crate) base_url: Option<String>,
    pub(crate) permission_mode: Option<String>,
}

/// `--record DIR` / `--replay DIR`.
#[derive(Debug, Clone, Default)]
pub(crate) enum Cassettes {
    /// The model is called.
    #[default]
    Live,
    /// Each attempt's model traffic is saved in the directory.
    Record(PathBuf),
    /// Each attempt plays the directory's recording back: no model, no network.
    Replay(PathBuf),
}

impl Cassettes {
    /// The cassette of `task`'s attempt `n`: `ID.jsonl` for the first, `ID.N.jsonl` after.
    fn file(dir: &Path, task: &str, attempt: u32) -> PathBuf {
        if attempt <= 1 {
            dir.join(format!("{task}.jsonl"))
        } else {
            dir.join(format!("{task}.{attempt}.jsonl"))
        }
    }
}

/// Where one attempt keeps its workspace, rein home and logs.
#[derive(Debug, Clone)]
pub(crate) struct Place {
    pub(crate) workspace: PathBuf,
    pub(crate) home: PathBuf,
    pub(crate) logs: PathBuf,
}

impl Place {
    /// `root/ID-N/{work,home}`, logs in `logs/ID-N/`.
    pub(crate) fn new(root: &Path, logs: &Path, task: &str, attempt: u32) -> Place {
        let name = format!("{task}-{attempt}");
        Place {
            workspace: root.join(&name).join("work"),
            home: root.join(&name).join("home"),
            logs: logs.join(name),
        }
    }
}

/// Runs attempt `attempt` of `task` and scores it.
pub(crate) async fn run(task: &Task, attempt: u32, place: &Place, shared: &Shared) -> Record {
    let started_at = now_ms();
    let clock = Instant::now();
    let mut groups = Groups::default();
    let mut record = Record::new(&task.id, attempt, &place.workspace, started_at);
    record.model = shared
        .overrides
        .model
        .clone()
        .or_else(|| task.settings.model.clone());
    if let Err(message) = prepare(task, place, shared) {
        record.finish(Reason::SetupFailed, Some(message), clock, now_ms());
        return record;
    }
    let env = task.settings.env.clone().unwrap_or_default();
    if let Err(detail) = run_setup(task, place, &env, &mut groups).await {
        record.finish(Reason::SetupFailed, Some(detail), clock, now_ms());
        return record;
    }

    // The agent.
    let agent = match agent_command(task, attempt, place, shared, &env) {
        Ok(command) => command,
        Err(message) => {
            record.finish(Reason::AgentError, Some(message), clock, now_ms());
            return record;
        }
    };
    let log = place.logs.join("agent.log");
    let limit = task.settings.timeout();
    let done = match run_step(agent, &log, Stdout::Capture, limit, &mut groups).await {
        Ok(done) => done,
        Err(e) => {
            let detail = format!("cannot run rein: {e}");
            record.finish(Reason::AgentError, Some(detail), clock, now_ms());
            return record;
        }
    };
    let report = last_json_line(&done.stdout);
    record.take_report(report.as_ref(), &place.home);
    match done.status {
        None => {
            let detail = format!("the agent did not finish in {} s", limit.as_secs());
            record.finish(Reason::Timeout, Some(detail), clock, now_ms());
            return record;
        }
        // 0 done; 3 stopped at a limit: the work may still be done, so validation decides.
        Some(status) if matches!(status.code(), Some(0 | 3)) => {}
        Some(status) => {
            let said = report
                .as_ref()
                .and_then(|r| r.get("error"))
                .and_then(Value::as_str)
                .map(str::to_owned)
                .unwrap_or_else(|| format!("rein {}; see {}", describe(status), log.display()));
            record.finish(Reason::AgentError, Some(said), clock, now_ms());
            return record;
        }
    }

    let (reason, detail) = validate(task, place, &env, &mut groups).await;
    groups.kill_all();
    record.finish(reason, detail, clock, now_ms());
    record
}

/// The task's setup script, when it has one: `Err` says why it failed.
async fn run_setup(
    task: &Task,
    place: &Place,
    env: &BTreeMap<String, String>,
    groups: &mut Groups,
) -> Result<(), String> {
    if let Some(setup) = &task.setup {
        let step = step(setup, &place.workspace, env, &place.home);
        let log = place.logs.join("setup.log");
        match run_step(
            step,
            &log,
            Stdout::Log,
            task.settings.setup_timeout(),
            groups,
        )
        .await
        {
            Ok(done) => match done.status {
                Some(status) if status.success() => {}
                Some(status) => {
                    return Err(format!("setup {}; see {}", describe(status), log.display()));
                }
                None => {
                    return Err(format!(
                        "setup timed out after {} s; see {}",
                        task.settings.setup_timeout().as_secs(),
                        log.display()
                    ));
                }
            },
            Err(e) => {
                return Err(format!("cannot run the setup: {e}"));
            }
        }
    }

    Ok(())
}

/// The task's validation: passed, or why not.
async fn validate(
    task: &Task,
    place: &Place,
    env: &BTreeMap<String, String>,
    groups: &mut Groups,
) -> (Reason, Option<String>) {
    let log = place.logs.join("validate.log");
    let step = step(&task.validate, &place.workspace, env, &place.home);
    let limit = task.settings.validate_timeout();
    match run_step(step, &log, Stdout::Log, limit, groups).await {
        Ok(done) => match done.status {
            Some(status) if status.success() => (Reason::Passed, None),
            Some(status) => (
                Reason::ValidateFailed,
                Some(format!(
                    "validation {}; see {}",
                    describe(status),
                    log.display()
                )),
            ),
            None => (
                Reason::ValidateFailed,
                Some(format!(
                    "validation timed out after {} s; see {}",
                    limit.as_secs(),
                    log.display()
                )),
            ),
        },
        Err(e) => (
            Reason::ValidateFailed,
            Some(format!("cannot run the validation: {e}")),
        ),
    }
}

/// A fresh workspace with the task's files, a rein home with the person's config file, and
/// the log directory.
fn prepare(task: &Task, place: &Place, shared: &Shared) -> Result<(), String> {
    for dir in [&place.workspace, &place.home, &place.logs] {
        if dir.exists() && dir != &place.logs {
            // A resumed run redoes an unfinished attempt from scratch.
            std::fs::remove_dir_all(dir)
                .map_err(|e| format!("cannot clear {}: {e}", dir.display()))?;
        }
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if let Some(files) = &task.files {
        copy_tree(files, &place.workspace)
            .map_err(|e| format!("cannot copy {}: {e}", files.display()))?;
    }
    if let Some(home) = &shared.person_home {
        let config = home.join("config.toml");
        if config.is_file() {
            std::fs::copy(&config, place.home.join("config.toml"))
                .map_err(|e| format!("cannot copy {}: {e}", config.display()))?;
        }
    }
    Ok(())
}

/// Copies `from`'s tree into `to`, keeping modes and symbolic links as they are.
fn copy_tree(from: &Path, to: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(from)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        let target = to.join(entry.file_name());
        if kind.is_dir() {
            std::fs::create_dir_all(&target)?;
            copy_tree(&entry.path(), &target)?;
        } else if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(entry.path())?, &target)?;
        } else {
            std::fs::copy(entry.path(), &target)?;
        }
    }
    Ok(())
}

/// `bash -c TEXT` or `bash FILE` in the workspace, with the task's variables.
fn step(script: &Script, workspace: &Path, env: &BTreeMap<String, String>, home: &Path) -> Command {
    let mut command = Command::new("bash");
    match script {
        Script::Inline(text) => command.arg("-c").arg(text),
        Script::File(file) => command.arg(file),
    };
    command
        .current_dir(workspace)
        .envs(env)
        .env("REIN_HOME", home)
        .env("REIN_EVAL_WORKSPACE", workspace);
    command
}

/// `rein -p PROMPT --output-format json ...` in the workspace, with its own rein home.
fn agent_command(
    task: &Task,
    attempt: u32,
    place: &Place,
    shared: &Shared,
    env: &BTreeMap<String, String>,
) -> Result<Command, String> {
    let settings = &task.settings;
    let mut command = Command::new(&shared.rein);
    command
        .current_dir(&place.workspace)
        .envs(env)
        .env("REIN_HOME", &place.home)
        .args(["-p", &task.prompt, "--output-format", "json"]);
    let mode = shared
        .overrides
        .permission_mode
        .as_deref()
        .or(settings.permission_mode.as_deref())
        .unwrap_or(shared.default_mode);
    command.args(["--permission-mode", mode]);
    let model = shared.overrides.model.as_ref().or(settings.model.as_ref());
    if let Some(model) = model {
        command.args(["--model", model]);
    }
    let provider = shared
        .overrides
        .provider
        .as_ref()
        .or(settings.provider.as_ref());
    if let Some(provider) = provider {
        command.args(["--provider", provider]);
    }
    if let Some(url) = &shared.overrides.base_url {
        command.args(["--base-url", url]);
    }
    if let Some(rounds) = settings.max_rounds {
        command.args(["--max-rounds", &rounds.to_string()]);
    }
    if let Some(cost) = settings.max_cost {
        command.args(["--max-cost", &cost.to_string()]);
    }
    match &shared.cassettes {
        Cassettes::Live => {}
        Cassettes::Record(dir) => {
            command
                .arg("--record")
                .arg(Cassettes::file(dir, &task.id, attempt));
        }
        Cassettes::Replay(dir) => {
            let mine = Cassettes::file(dir, &task.id, attempt);
            let first = Cassettes::file(dir, &task.id, 1);
            let file = if mine.is_file() { mine } else { first };
            if !file.is_file() {
                return Err(format!(
                    "no recording of task \"{}\" in {} (expected {})",
                    task.id,
                    dir.display(),
                    file.display()
                ));
            }
            command.arg("--replay").arg(file);
        }
    }
    Ok(command)
}

/// The last line of `out` that is a JSON object (rein's final report).
fn last_json_line(out: &[u8]) -> Option<Value> {
    String::from_utf8_lossy(out)
        .lines()
        .rev()
        .find_map(|line| serde_json::from_str::<Value>(line.trim()).ok())
        .filter(Value::is_object)
}

/// "exited with 1", "was killed by signal 9".
fn describe(status: std::process::ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exited with {code}"),
        (None, Some(signal)) => format!("was killed by signal {signal}"),
        (None, None) => "ended".to_owned(),
    }
}

/// Milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_is_the_last_json_object_printed() {
        let out = b"noise\n{\"type\":\"result\",\"rounds\":2}\n";
        assert_eq!(last_json_line(out).unwrap()["rounds"], serde_json::json!(2));
        assert!(last_json_line(b"[1,2]\n").is_none());
        assert!(last_json_line(b"").is_none());
    }

    #[test]
    fn cassettes_are_named_by_task_and_attempt() {
        let dir = Path::new("/r");
        assert_eq!(Cassettes::file(dir, "t", 1), Path::new("/r/t.jsonl"));
        assert_eq!(Cassettes::file(dir, "t", 3), Path::new("/r/t.3.jsonl"));
    }
}
