//! Processes that leave the command's process group and session (`setsid`, double forks,
//! daemons) are still the command's: found and stopped at its timeout, on cancellation, and by
//! `kill_all`, like its background jobs.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use rein_tools::ToolError;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::{Env, run_tool};

/// Whether `pid` runs (a zombie counts as gone).
fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        !matches!(state, Some("Z" | "X") | None)
    })
}

/// Waits for `pid` to be gone.
async fn gone(pid: u32, what: &str) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        if Instant::now() > deadline {
            bail!("{what} ({pid}) is still running");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

/// The pid a command wrote to `path`, once it is there.
async fn pid_in(path: &Path) -> Result<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Ok(text) = std::fs::read_to_string(path)
            && let Ok(pid) = text.trim().parse()
        {
            return Ok(pid);
        }
        if Instant::now() > deadline {
            bail!("{} never held a pid", path.display());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Ends a test's `sleep` if the test failed before rein did: checked by name, so a reused pid
/// is never hit.
struct Reap(u32);

impl Drop for Reap {
    fn drop(&mut self) {
        let comm = std::fs::read_to_string(format!("/proc/{}/comm", self.0)).unwrap_or_default();
        if self.0 > 1 && alive(self.0) && comm.trim() == "sleep" {
            let _ = std::process::Command::new("kill")
                .args(["-KILL", &self.0.to_string()])
                .status();
        }
    }
}

#[tokio::test]
async fn a_child_in_its_own_session_is_stopped_at_the_timeout() -> Result<()> {
    let env = Env::new()?;
    let command = "setsid sleep 60 > /dev/null 2>&1 & echo $! > orphan.pid; sleep 60";
    let out = env
        .call("bash", json!({"command": command, "timeout": 1}))
        .await?;
    ensure!(
        out.content.contains("timed out after 1 s"),
        "{}",
        out.content
    );
    let pid = pid_in(&env.root.join("orphan.pid")).await?;
    let _reap = Reap(pid);
    gone(pid, "the setsid child").await
}

#[tokio::test]
async fn a_child_with_a_cleared_environment_is_found_by_its_parent() -> Result<()> {
    let env = Env::new()?;
    let command = "setsid env -i sleep 60 > /dev/null 2>&1 & echo $! > orphan.pid; sleep 60";
    let out = env
        .call("bash", json!({"command": command, "timeout": 1}))
        .await?;
    ensure!(
        out.content.contains("timed out after 1 s"),
        "{}",
        out.content
    );
    let pid = pid_in(&env.root.join("orphan.pid")).await?;
    let _reap = Reap(pid);
    gone(pid, "the child with no environment").await
}

#[tokio::test]
async fn an_orphan_left_running_is_reported_and_ended_by_kill_all() -> Result<()> {
    let env = Env::new()?;
    // A double fork: the subshell exits at once, so the sleeper is nobody's child here.
    let command = "(setsid sleep 60 > /dev/null 2>&1 & echo $! > orphan.pid)";
    let out = env.ok("bash", json!({"command": command})).await?;
    let pid = pid_in(&env.root.join("orphan.pid")).await?;
    let _reap = Reap(pid);
    ensure!(
        out.contains("background processes are still running"),
        "{out}"
    );
    ensure!(alive(pid), "the orphan should outlive its call");
    assert_eq!(env.ctx.processes().kill_all().await, 1);
    gone(pid, "the orphan").await
}

#[tokio::test]
async fn cancelling_stops_a_child_in_its_own_session() -> Result<()> {
    let env = Env::new()?;
    let token = CancellationToken::new();
    let ctx = env.ctx.with_cancel(token.clone());
    let pid_file = env.root.join("orphan.pid");
    let command = "setsid sleep 60 > /dev/null 2>&1 & echo $! > orphan.pid; sleep 60";
    let call = run_tool(&env.tools, "bash", json!({ "command": command }), &ctx);
    let cancel = async {
        let pid = pid_in(&pid_file).await?;
        token.cancel();
        Ok::<_, anyhow::Error>(pid)
    };
    let (result, pid) = tokio::join!(call, cancel);
    let pid = pid?;
    let _reap = Reap(pid);
    ensure!(
        matches!(result, Err(ToolError::Cancelled { .. })),
        "{result:?}"
    );
    gone(pid, "the setsid child").await.context("after cancel")
}
