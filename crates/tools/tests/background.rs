//! Background commands at the tool level: start, poll, finish, kill, limits and bad ids,
//! with real processes.

use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Result, bail, ensure};
use serde_json::json;

use crate::support::Env;

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
    let deadline = Instant::now() + Duration::from_secs(20);
    while alive(pid) {
        ensure!(Instant::now() < deadline, "{pid} is still running");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    Ok(())
}

async fn pid_in(path: &Path) -> Result<u32> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        if let Some(pid) = std::fs::read_to_string(path)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return Ok(pid);
        }
        ensure!(
            Instant::now() < deadline,
            "{} never held a pid",
            path.display()
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// The id a start result names.
fn started_id(out: &str) -> Result<String> {
    match out.split("in the background as ").nth(1) {
        Some(rest) => Ok(rest
            .chars()
            .take_while(char::is_ascii_alphanumeric)
            .collect()),
        None => bail!("no id in: {out}"),
    }
}

/// Polls `bash_output` until `want` shows in what it returned, gathering the output.
async fn poll_until(env: &Env, id: &str, want: &str) -> Result<String> {
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut seen = String::new();
    loop {
        let out = env.ok("bash_output", json!({ "id": id })).await?;
        seen.push_str(&out);
        if seen.contains(want) {
            return Ok(seen);
        }
        ensure!(Instant::now() < deadline, "never saw {want:?}: {seen}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn a_command_starts_at_once_is_polled_and_its_end_is_noticed() -> Result<()> {
    let env = Env::new()?;
    let started = Instant::now();
    let out = env
        .ok(
            "bash",
            json!({"command": "echo first; while [ ! -e go ]; do sleep 0.05; done; echo second; exit 3", "run_in_background": true}),
        )
        .await?;
    ensure!(started.elapsed() < Duration::from_secs(10), "it waited");
    let id = started_id(&out)?;
    assert_eq!(id, "bg1");
    let seen = poll_until(&env, &id, "first").await?;
    assert!(seen.contains("bg1 is running"), "{seen}");
    assert!(
        env.ctx.background().take_finish_notices().is_empty(),
        "nothing ended yet"
    );
    env.write("go", "")?;
    // New output only: `first` is not repeated.
    let seen = poll_until(&env, &id, "exited with code 3").await?;
    assert!(seen.contains("second"), "{seen}");
    assert!(!seen.contains("first"), "{seen}");
    // An offset reads again from there.
    let again = env
        .ok("bash_output", json!({"id": "bg1", "offset": 0}))
        .await?;
    assert!(again.starts_with("first\nsecond\n"), "{again}");
    // It was seen to end: no notice.
    assert!(env.ctx.background().take_finish_notices().is_empty());
    Ok(())
}

#[tokio::test]
async fn an_unread_end_is_told_once_with_the_last_lines_and_the_file() -> Result<()> {
    let env = Env::new()?;
    let out = env
        .ok(
            "bash",
            json!({"command": "seq 1 20; exit 0", "run_in_background": true}),
        )
        .await?;
    let id = started_id(&out)?;
    let deadline = Instant::now() + Duration::from_secs(30);
    let notices = loop {
        let notices = env.ctx.background().take_finish_notices();
        if !notices.is_empty() {
            break notices;
        }
        ensure!(Instant::now() < deadline, "no notice came");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(notices.len(), 1);
    let notice = &notices[0];
    assert!(
        notice.contains(&format!("{id} (`seq 1 20; exit 0`) exited with code 0")),
        "{notice}"
    );
    assert!(notice.contains("16\n17\n18\n19\n20"), "{notice}");
    assert!(!notice.contains("\n15\n"), "{notice}");
    assert!(
        notice.contains(&env.offload.display().to_string()),
        "{notice}"
    );
    assert!(
        env.ctx.background().take_finish_notices().is_empty(),
        "told once"
    );
    Ok(())
}

#[tokio::test]
async fn kill_shell_stops_the_whole_group_and_bad_ids_are_named() -> Result<()> {
    let env = Env::new()?;
    let msg = env.err("bash_output", json!({"id": "bg1"})).await?;
    assert!(msg.contains("none has been started"), "{msg}");
    let out = env
        .ok(
            "bash",
            json!({"command": "sleep 300 & echo $! > child.pid; wait", "run_in_background": true}),
        )
        .await?;
    let id = started_id(&out)?;
    let child = pid_in(&env.root.join("child.pid")).await?;
    assert!(alive(child));
    let msg = env.err("kill_shell", json!({"id": "bg7"})).await?;
    assert!(
        msg.contains("no background command `bg7`; the ids are bg1"),
        "{msg}"
    );
    let msg = env.ok("kill_shell", json!({ "id": id })).await?;
    assert!(msg.contains("Stopped bg1"), "{msg}");
    gone(child).await?;
    let out = env.ok("bash_output", json!({"id": "bg1"})).await?;
    assert!(out.contains("was stopped after"), "{out}");
    let again = env.ok("kill_shell", json!({"id": "bg1"})).await?;
    assert!(again.contains("had already ended"), "{again}");
    Ok(())
}

#[tokio::test]
async fn at_most_eight_run_and_a_timeout_is_optional() -> Result<()> {
    let env = Env::new()?;
    for _ in 0..8 {
        env.ok(
            "bash",
            json!({"command": "sleep 300", "run_in_background": true}),
        )
        .await?;
    }
    let msg = env
        .err(
            "bash",
            json!({"command": "true", "run_in_background": true}),
        )
        .await?;
    assert!(msg.contains("8 background commands are running"), "{msg}");
    assert_eq!(env.ctx.background().stop_all().await, 8);
    assert_eq!(env.ctx.background().running(), 0);
    // The bash timeout does not apply, a given one does.
    let out = env
        .ok(
            "bash",
            json!({"command": "sleep 300", "run_in_background": true, "timeout": 1}),
        )
        .await?;
    let id = started_id(&out)?;
    poll_until(&env, &id, "timed out").await?;
    let msg = env
        .err(
            "bash",
            json!({"command": "true", "run_in_background": true, "timeout": 0}),
        )
        .await?;
    assert!(msg.contains("at least 1 second"), "{msg}");
    Ok(())
}

#[tokio::test]
async fn what_a_finished_command_left_in_its_group_is_stopped() -> Result<()> {
    let env = Env::new()?;
    env.ok(
        "bash",
        json!({"command": "sleep 300 > /dev/null 2>&1 & echo $! > left.pid", "run_in_background": true}),
    )
    .await?;
    let left = pid_in(&env.root.join("left.pid")).await?;
    gone(left).await
}

#[tokio::test]
async fn a_cancelled_turn_leaves_background_commands_running() -> Result<()> {
    let env = Env::new()?;
    env.ok(
        "bash",
        json!({"command": "echo $$ > bg.pid; exec sleep 300", "run_in_background": true}),
    )
    .await?;
    let pid = pid_in(&env.root.join("bg.pid")).await?;
    // A turn's cancel stops the turn's commands only.
    env.ctx.processes().kill_all().await;
    assert!(alive(pid));
    env.ctx.background().stop_all().await;
    gone(pid).await
}
