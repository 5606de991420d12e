//! `--ray ADDRESS`: the attempts run as Ray tasks on a cluster. A Python driver (Ray's API is
//! Python's) submits them and streams each record back as a JSON line; this side writes them
//! to the same `results.jsonl` and shows the same progress and summary as a local run.

use std::process::Stdio;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::Command;

use super::Plan;
use super::attempt::Cassettes;
use super::progress::Progress;
use super::record::Record;
use super::results::Results;
use super::suite::{Suite, Task};
use crate::args::EvalArgs;
use crate::render;

/// The driver, run with the Python that has Ray (`--python`, default `python3`).
const DRIVER: &str = include_str!("ray_driver.py");

/// Environment variables that carry the endpoint and its key to the workers (their own
/// environment is the cluster's, not the person's shell's).
const ENDPOINT_VARIABLES: [&str; 4] = ["REIN_", "OPENAI_", "ANTHROPIC_", "DEEPSEEK_"];

/// Runs `todo` on the cluster at `address`; returns whether the run was interrupted.
pub(super) async fn run(
    address: &str,
    eval: &EvalArgs,
    suite: &Suite,
    plan: &Plan,
    todo: &[(Task, u32)],
    results: &mut Results,
) -> Result<bool, String> {
    if matches!(plan.shared.cassettes, Cassettes::Record(_)) {
        return Err(
            "--record with --ray: record on this machine (without --ray), then replay \
                    the recordings on the cluster with --replay"
                .into(),
        );
    }
    let replay_dir = match &plan.shared.cassettes {
        Cassettes::Replay(dir) => Some(dir.display().to_string()),
        _ => None,
    };
    let suite_file = suite
        .file
        .strip_prefix(&suite.dir)
        .map_err(|_| "the suite file is not inside its directory".to_owned())?;
    let env: serde_json::Map<String, Value> = std::env::vars()
        .filter(|(name, _)| ENDPOINT_VARIABLES.iter().any(|p| name.starts_with(p)))
        .filter(|(name, _)| name != "REIN_HOME")
        .map(|(name, value)| (name, Value::String(value)))
        .collect();
    let plan_json = json!({
        "address": address,
        "rein": plan.shared.rein,
        "suite_dir": suite.dir,
        "suite_file": suite_file,
        "replay_dir": replay_dir,
        "attempts": todo.iter().map(|(task, n)| json!([task.id, n])).collect::<Vec<_>>(),
        "flags": plan.attempt_flags,
        "env": env,
        "jobs": eval.jobs.unwrap_or(0),
    });
    let python = eval.python.clone().unwrap_or_else(|| "python3".into());
    let mut driver = Command::new(&python)
        .arg("-c")
        .arg(DRIVER)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            format!(
                "cannot run {}: {e} (--python names the Python that has Ray)",
                python.display()
            )
        })?;
    render::notice(&format!(
        "rein eval: {} attempts on the Ray cluster at {address}",
        todo.len()
    ));
    if let Some(mut stdin) = driver.stdin.take() {
        stdin
            .write_all(plan_json.to_string().as_bytes())
            .await
            .map_err(|e| format!("cannot hand the plan to the Ray driver: {e}"))?;
    }
    let Some(stdout) = driver.stdout.take() else {
        return Err("the Ray driver has no output".into());
    };
    let mut lines = BufReader::new(stdout).lines();
    let mut progress = Progress::new(todo.len());
    let mut failure = None;
    let interrupted = loop {
        tokio::select! {
            line = lines.next_line() => {
                let Ok(Some(line)) = line else { break false };
                let Ok(message) = serde_json::from_str::<Value>(&line) else { continue };
                if let Some(error) = message.get("error").and_then(Value::as_str) {
                    failure = Some(error.to_owned());
                    continue;
                }
                let Some(record) = message
                    .get("record")
                    .and_then(|r| serde_json::from_value::<Record>(r.clone()).ok())
                else {
                    continue;
                };
                progress.finished(&record);
                results
                    .append(&record)
                    .map_err(|e| format!("cannot write {}: {e}", results.path().display()))?;
            }
            _ = tokio::signal::ctrl_c() => break true,
        }
    };
    progress.clear();
    if interrupted {
        let _ = driver.start_kill();
        return Ok(true);
    }
    let status = driver
        .wait()
        .await
        .map_err(|e| format!("the Ray driver: {e}"))?;
    match failure {
        Some(error) => Err(format!("the Ray driver: {error}")),
        None if !status.success() => Err(format!("the Ray driver exited with {status}")),
        None => Ok(false),
    }
}
