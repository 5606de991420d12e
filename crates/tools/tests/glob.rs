//! glob: patterns, order, ignore rules, limits.

use std::time::{Duration, SystemTime};

use anyhow::Result;
use serde_json::json;

use crate::support::Env;

/// Sets a file's modification time to `secs` seconds after an arbitrary base.
fn age(env: &Env, rel: &str, secs: u64) -> Result<()> {
    let file = std::fs::File::options()
        .write(true)
        .open(env.root.join(rel))?;
    file.set_modified(SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000 + secs))?;
    Ok(())
}

#[tokio::test]
async fn double_star_finds_nested_files_newest_first() -> Result<()> {
    let env = Env::new()?;
    for (rel, secs) in [
        ("a.rs", 10),
        ("src/b.rs", 30),
        ("src/deep/c.rs", 20),
        ("src/d.txt", 40),
    ] {
        env.write(rel, "x")?;
        age(&env, rel, secs)?;
    }
    assert_eq!(
        env.ok("glob", json!({"pattern": "**/*.rs"})).await?,
        "src/b.rs\nsrc/deep/c.rs\na.rs\n"
    );
    // Without a slash the pattern matches names at any depth; with one it is anchored.
    assert_eq!(
        env.ok("glob", json!({"pattern": "*.rs"})).await?,
        "src/b.rs\nsrc/deep/c.rs\na.rs\n"
    );
    assert_eq!(
        env.ok("glob", json!({"pattern": "src/*.rs"})).await?,
        "src/b.rs\n"
    );
    assert_eq!(
        env.ok("glob", json!({"pattern": "*.rs", "path": "src/deep"}))
            .await?,
        "src/deep/c.rs\n"
    );
    env.ctx.set_cwd(env.root.join("src"));
    assert_eq!(
        env.ok("glob", json!({"pattern": "deep/*.rs"})).await?,
        "deep/c.rs\n"
    );
    let abs = format!("{}/src/**/*.rs", env.root.display());
    assert_eq!(
        env.ok("glob", json!({"pattern": abs})).await?,
        "b.rs\ndeep/c.rs\n"
    );
    Ok(())
}

#[tokio::test]
async fn gitignored_and_hidden_files_are_skipped_unless_named() -> Result<()> {
    let env = Env::new()?;
    env.write(".gitignore", "target/\n*.log\n")?;
    env.write("target/debug/x.rs", "x")?;
    env.write("app.log", "x")?;
    env.write("main.rs", "x")?;
    env.write(".hidden/secret.rs", "x")?;
    env.write(".github/workflows/ci.yml", "x")?;
    assert_eq!(
        env.ok("glob", json!({"pattern": "**/*"})).await?,
        "main.rs\n"
    );
    assert_eq!(
        env.ok("glob", json!({"pattern": ".github/**/*.yml"}))
            .await?,
        ".github/workflows/ci.yml\n"
    );
    Ok(())
}

#[tokio::test]
async fn results_are_capped_at_100() -> Result<()> {
    let env = Env::new()?;
    for i in 0..130 {
        env.write(&format!("f{i:03}.txt"), "x")?;
        age(&env, &format!("f{i:03}.txt"), i)?;
    }
    let out = env.ok("glob", json!({"pattern": "*.txt"})).await?;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 101);
    assert_eq!(lines[0], "f129.txt");
    assert_eq!(lines[99], "f030.txt");
    assert_eq!(
        lines[100],
        "(30 more not shown; narrow the pattern or the path)"
    );
    Ok(())
}

#[tokio::test]
async fn no_match_bad_pattern_bad_path() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "x")?;
    assert_eq!(
        env.ok("glob", json!({"pattern": "*.rs"})).await?,
        "No files matched `*.rs` in ."
    );
    let msg = env.err("glob", json!({"pattern": "[a"})).await?;
    assert!(msg.starts_with("Invalid pattern `[a`"), "{msg}");
    let msg = env
        .err("glob", json!({"pattern": "*", "path": "nope"}))
        .await?;
    assert_eq!(msg, "Directory not found: nope.");
    let msg = env
        .err("glob", json!({"pattern": "*", "path": "a.txt"}))
        .await?;
    assert_eq!(msg, "a.txt is a file; path must be a directory.");
    let msg = env
        .err("glob", json!({"pattern": "*", "path": "/"}))
        .await?;
    assert!(msg.contains("outside the workspace"), "{msg}");
    Ok(())
}
