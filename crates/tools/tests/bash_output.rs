//! Big command output: saved whole to a file as it arrives, shown as its two ends within the
//! budget, named so the model can read or search the rest.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context as _, Result, bail, ensure};
use rein_tools::ToolError;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::{Env, run_tool};

/// `seq 1 n` as the command prints it.
fn seq(n: u64) -> String {
    (1..=n).map(|i| format!("{i}\n")).collect()
}

/// The file the notice in `out` names.
fn named_file(out: &str) -> Result<PathBuf> {
    let path = out
        .split("file_path=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .with_context(|| format!("no file named in: {out}"))?;
    Ok(PathBuf::from(path))
}

/// The `offset=` the notice gives.
fn named_offset(out: &str) -> Result<u64> {
    out.split("offset=")
        .nth(1)
        .and_then(|rest| rest.split(|c: char| !c.is_ascii_digit()).next())
        .and_then(|n| n.parse().ok())
        .with_context(|| format!("no offset in: {out}"))
}

/// The regular files in the offload directory (bash's `cd` record files are hidden and gone
/// once a call ends).
fn offload_files(env: &Env) -> Result<Vec<PathBuf>> {
    if !env.offload.exists() {
        return Ok(Vec::new());
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(&env.offload)? {
        files.push(entry?.path());
    }
    files.sort();
    Ok(files)
}

#[tokio::test]
async fn a_big_output_is_saved_whole_and_can_be_read_and_searched() -> Result<()> {
    let env = Env::new()?;
    let out = env.call("bash", json!({"command": "seq 1 700000"})).await?;
    assert!(!out.is_error, "{}", out.content);
    let budget = env.ctx.config().output_budget_chars;
    assert!(
        out.content.chars().count() <= budget,
        "{} chars",
        out.content.len()
    );
    assert!(
        out.content.starts_with("1\n2\n3\n"),
        "{}",
        &out.content[..50]
    );
    assert!(out.content.ends_with("699999\n700000\nexit code: 0"));
    assert!(!out.content.contains("lost"), "{}", out.content);

    let path = named_file(&out.content)?;
    assert!(path.starts_with(&env.offload), "{}", path.display());
    // Byte for byte what the command printed: 4,788,895 bytes, where memory keeps 2 MiB.
    let saved = std::fs::read_to_string(&path)?;
    ensure!(saved == seq(700_000), "the file is not the whole output");
    assert_eq!(offload_files(&env)?, std::slice::from_ref(&path));

    // The offset given is the first line not shown.
    let offset = named_offset(&out.content)?;
    let head_last: u64 = out
        .content
        .lines()
        .take_while(|l| !l.starts_with("[..."))
        .last()
        .context("no head")?
        .parse()?;
    assert_eq!(offset, head_last + 1);
    let file_path = path.to_string_lossy();
    let rest = env
        .ok(
            "read_file",
            json!({"file_path": file_path, "offset": offset, "limit": 2}),
        )
        .await?;
    assert!(rest.starts_with(&format!("{offset}\t{offset}\n")), "{rest}");
    let found = env
        .ok(
            "grep",
            json!({"pattern": "^350000$", "path": file_path, "output_mode": "count"}),
        )
        .await?;
    assert!(found.contains('1'), "{found}");
    Ok(())
}

#[tokio::test]
async fn small_outputs_leave_no_file() -> Result<()> {
    let env = Env::with_config(|c| c.output_budget_chars = 1000)?;
    env.ok("bash", json!({"command": "seq 1 100"})).await?;
    // 1,200 bytes but 600 characters: saved while it ran, deleted once it fitted.
    let out = env
        .ok(
            "bash",
            json!({"command": "for i in $(seq 600); do printf 'é'; done"}),
        )
        .await?;
    assert_eq!(out, format!("{}\nexit code: 0", "é".repeat(600)));
    assert_eq!(offload_files(&env)?, Vec::<PathBuf>::new());
    Ok(())
}

#[tokio::test]
async fn the_saved_file_stops_at_the_cap_and_says_so_at_its_end() -> Result<()> {
    let cap = 1024 * 1024;
    let env = Env::with_config(|c| c.offload_max_bytes = cap)?;
    // 3,000,000 bytes of 10-byte lines, then a last line.
    let command = "yes 123456789 | head -n 300000; echo LAST";
    let out = env.ok("bash", json!({"command": command})).await?;
    assert!(out.ends_with("123456789\nLAST\nexit code: 0"), "{out}");
    assert!(
        out.contains("saved up to rein's 1 MiB limit (about its first 104858 lines"),
        "{out}"
    );
    let saved = std::fs::read_to_string(named_file(&out)?)?;
    let (kept, note) = saved.split_at(1024 * 1024);
    assert!(kept.starts_with("123456789\n") && !kept.contains("LAST"));
    let more = 3_000_005 - 1024 * 1024;
    assert_eq!(
        note,
        format!(
            "\n[rein stopped saving here: the output reached the 1 MiB limit for a saved tool \
             result (the tool_output_file_max_bytes setting); the {more} bytes that followed are not saved.]\n"
        )
    );
    Ok(())
}

/// Waits for a file a command writes.
async fn wait_for(path: &Path) -> Result<()> {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !path.exists() {
        if Instant::now() > deadline {
            bail!("{} never appeared", path.display());
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    Ok(())
}

#[tokio::test]
async fn a_cancelled_command_keeps_its_big_output_too() -> Result<()> {
    let env = Env::new()?;
    let token = CancellationToken::new();
    let ctx = env.ctx.with_cancel(token.clone());
    let marker = env.root.join("printed");
    let call = run_tool(
        &env.tools,
        "bash",
        json!({"command": "seq 1 300000; touch printed; sleep 30"}),
        &ctx,
    );
    let cancel = async {
        wait_for(&marker).await?;
        token.cancel();
        Ok::<_, anyhow::Error>(())
    };
    let (result, waited) = tokio::join!(call, cancel);
    waited?;
    let Err(ToolError::Cancelled { partial }) = result else {
        bail!("expected a cancellation, got {result:?}");
    };
    assert!(partial.contains("(cancelled: the command and every process"));
    assert!(partial.chars().count() <= env.ctx.config().output_budget_chars);
    assert!(partial.starts_with("1\n2\n"), "{}", &partial[..40]);
    assert!(std::fs::read_to_string(named_file(&partial)?)? == seq(300_000));
    Ok(())
}

#[tokio::test]
async fn a_timed_out_command_keeps_its_big_output_too() -> Result<()> {
    let env = Env::new()?;
    let out = env
        .call(
            "bash",
            json!({"command": "seq 1 300000; sleep 30", "timeout": 1}),
        )
        .await?;
    assert!(out.is_error);
    assert!(
        out.content.contains("(timed out after 1 s"),
        "{}",
        out.content
    );
    assert!(out.content.contains("299999\n300000\n"), "{}", out.content);
    assert!(std::fs::read_to_string(named_file(&out.content)?)? == seq(300_000));
    Ok(())
}

#[tokio::test]
async fn an_unwritable_offload_directory_still_returns_the_ends() -> Result<()> {
    let env = Env::new()?;
    std::fs::write(&env.offload, "a file where the directory should be")?;
    let out = env.call("bash", json!({"command": "seq 1 700000"})).await?;
    assert!(out.content.ends_with("700000\n") || out.content.contains("700000\n"));
    assert!(out.content.contains("could not"), "{}", out.content);
    Ok(())
}

#[tokio::test]
async fn a_long_offload_path_still_fits_the_budget() -> Result<()> {
    let env = Env::with_config(|c| {
        c.output_budget_chars = 2000;
        c.offload_dir = c.offload_dir.join("d".repeat(200)).join("e".repeat(200));
    })?;
    let out = env.call("bash", json!({"command": "seq 1 100000"})).await?;
    assert!(out.content.chars().count() <= 2000, "{}", out.content);
    let path = named_file(&out.content)?;
    assert!(std::fs::read_to_string(path)? == seq(100_000));
    Ok(())
}
