//! Children rein starts besides commands (hooks): their whole group is stopped on `stop`, or
//! when they are dropped while running, even processes that left the group.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use anyhow::{Result, bail};
use rein_tools::bash::{ProcessTracker, spawn_tracked};
use tokio::io::AsyncReadExt;

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        let state = stat
            .rsplit(')')
            .next()
            .and_then(|s| s.split_whitespace().next());
        !matches!(state, Some("Z" | "X") | None)
    })
}

async fn gone(pid: u32) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        if Instant::now() > deadline {
            bail!("{pid} is still running");
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

async fn pids_in(path: &Path, count: usize) -> Result<Vec<u32>> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let pids: Vec<u32> = std::fs::read_to_string(path)
            .unwrap_or_default()
            .split_whitespace()
            .filter_map(|p| p.parse().ok())
            .collect();
        if pids.len() >= count {
            return Ok(pids);
        }
        if Instant::now() > deadline {
            bail!("{} never held {count} pids", path.display());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A script that starts a sleep in its group and one in a session of its own, writes their
/// pids, and hangs.
fn hanging(pids: &Path) -> tokio::process::Command {
    let mut command = tokio::process::Command::new("bash");
    command
        .arg("-c")
        .arg(format!(
            "sleep 300 & echo $! >> {p}; setsid sleep 301 & echo $! >> {p}; sleep 302",
            p = pids.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    command
}

#[tokio::test]
async fn stop_ends_the_whole_group_and_what_left_it() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let pids = dir.path().join("pids");
    let tracker = ProcessTracker::new();
    let mut child = spawn_tracked(&mut hanging(&pids), &tracker)?;
    let started = pids_in(&pids, 2).await?;
    assert!(child.stop().await.is_some(), "the child itself is reaped");
    for pid in started.into_iter().chain([child.pid()]) {
        gone(pid).await?;
    }
    Ok(())
}

#[tokio::test]
async fn dropping_a_running_child_ends_its_group() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let pids = dir.path().join("pids");
    let tracker = ProcessTracker::new();
    let child = spawn_tracked(&mut hanging(&pids), &tracker)?;
    let started = pids_in(&pids, 2).await?;
    let pid = child.pid();
    drop(child);
    for pid in started.into_iter().chain([pid]) {
        gone(pid).await?;
    }
    Ok(())
}

#[tokio::test]
async fn a_child_that_exits_is_reaped_and_its_leftovers_stay_tracked() -> Result<()> {
    let dir = tempfile::tempdir()?;
    let pids = dir.path().join("pids");
    let tracker = ProcessTracker::new();
    let mut command = tokio::process::Command::new("bash");
    command
        .arg("-c")
        .arg(format!(
            "sleep 303 >/dev/null & echo $! > {}; echo \"$REIN_COMMAND_ID\"",
            pids.display()
        ))
        .stdin(Stdio::null())
        .stdout(Stdio::piped());
    let mut child = spawn_tracked(&mut command, &tracker)?;
    let mut stdout = child.take_stdout().unwrap();
    let status = child.wait().await?;
    assert!(status.success());
    let mut marker = String::new();
    stdout.read_to_string(&mut marker).await?;
    assert!(
        marker.starts_with(&format!("{}.", std::process::id())),
        "marked as rein's: {marker}"
    );
    drop(child);
    let leftover = pids_in(&pids, 1).await?[0];
    assert!(alive(leftover), "an exited child's leftovers keep running");
    assert_eq!(tracker.kill_all().await, 1, "but the tracker holds them");
    gone(leftover).await
}
