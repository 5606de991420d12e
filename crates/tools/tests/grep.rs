//! grep: output modes, filters, what is skipped, limits and errors.

use anyhow::Result;
use rein_tools::ToolError;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::support::{Env, run_tool};

fn sample() -> Result<Env> {
    let env = Env::new()?;
    env.write(
        "src/main.rs",
        "fn main() {\n    let answer = 42;\n    println!(\"{answer}\");\n}\n",
    )?;
    env.write("src/lib.rs", "pub fn Answer() -> u32 {\n    42\n}\n")?;
    env.write("notes.md", "The answer is 42.\n")?;
    Ok(env)
}

#[tokio::test]
async fn content_mode_lists_path_line_text_sorted_by_path() -> Result<()> {
    let env = sample()?;
    let out = env.ok("grep", json!({"pattern": "answer"})).await?;
    assert_eq!(
        out,
        "notes.md:1:The answer is 42.\nsrc/main.rs:2:    let answer = 42;\nsrc/main.rs:3:    println!(\"{answer}\");\n"
    );
    let out = env
        .ok(
            "grep",
            json!({"pattern": "answer", "ignore_case": true, "include": "*.rs"}),
        )
        .await?;
    assert_eq!(
        out,
        "src/lib.rs:1:pub fn Answer() -> u32 {\nsrc/main.rs:2:    let answer = 42;\nsrc/main.rs:3:    println!(\"{answer}\");\n"
    );
    Ok(())
}

#[tokio::test]
async fn files_and_count_modes() -> Result<()> {
    let env = sample()?;
    assert_eq!(
        env.ok("grep", json!({"pattern": "42", "output_mode": "files"}))
            .await?,
        "notes.md\nsrc/lib.rs\nsrc/main.rs\n"
    );
    assert_eq!(
        env.ok("grep", json!({"pattern": "answer", "output_mode": "count"}))
            .await?,
        "notes.md:1\nsrc/main.rs:2\n(total: 3 matching lines in 2 files)\n"
    );
    Ok(())
}

#[tokio::test]
async fn context_lines_use_dashes_and_separators() -> Result<()> {
    let env = Env::new()?;
    let text: String = (1..=20)
        .map(|i| {
            if i == 5 || i == 15 {
                "hit\n".to_owned()
            } else {
                format!("l{i}\n")
            }
        })
        .collect();
    env.write("a.txt", text)?;
    env.write("b.txt", "x\nhit\n")?;
    let out = env
        .ok("grep", json!({"pattern": "hit", "context": 1}))
        .await?;
    assert_eq!(
        out,
        "a.txt-4-l4\na.txt:5:hit\na.txt-6-l6\n--\na.txt-14-l14\na.txt:15:hit\na.txt-16-l16\n--\nb.txt-1-x\nb.txt:2:hit\n"
    );
    Ok(())
}

#[tokio::test]
async fn ignored_hidden_and_binary_files_are_skipped() -> Result<()> {
    let env = Env::new()?;
    env.write(".gitignore", "build/\n")?;
    env.write("build/out.txt", "needle\n")?;
    env.write(".secret/x.txt", "needle\n")?;
    env.write("bin.dat", b"needle\0\x01\x02")?;
    env.write("ok.txt", "needle\n")?;
    assert_eq!(
        env.ok("grep", json!({"pattern": "needle"})).await?,
        "ok.txt:1:needle\n"
    );
    // A single file can be searched directly.
    assert_eq!(
        env.ok("grep", json!({"pattern": "needle", "path": "ok.txt"}))
            .await?,
        "ok.txt:1:needle\n"
    );
    Ok(())
}

#[tokio::test]
async fn at_most_200_matches_then_the_total() -> Result<()> {
    let env = Env::new()?;
    let text: String = (1..=150).map(|i| format!("match {i}\n")).collect();
    env.write("a.txt", &text)?;
    env.write("b.txt", &text)?;
    env.write("c.txt", &text)?;
    let out = env.ok("grep", json!({"pattern": "match"})).await?;
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 201);
    assert_eq!(lines[0], "a.txt:1:match 1");
    assert_eq!(lines[199], "b.txt:50:match 50");
    assert_eq!(
        lines[200],
        "(showing 200 of 450 matching lines in 3 files; narrow the pattern, path or include, or use output_mode \"count\")"
    );
    Ok(())
}

#[tokio::test]
async fn long_matching_lines_are_cut() -> Result<()> {
    let env = Env::new()?;
    env.write("min.js", format!("var a=1;{}\n", "x".repeat(3000)))?;
    let out = env.ok("grep", json!({"pattern": "var a"})).await?;
    assert!(
        out.len() < 600 && out.ends_with(" [... line cut]\n"),
        "{}",
        out.len()
    );
    Ok(())
}

#[tokio::test]
async fn errors_are_clear() -> Result<()> {
    let env = sample()?;
    let msg = env.err("grep", json!({"pattern": "fn (main"})).await?;
    assert!(msg.starts_with("Invalid regex `fn (main`:"), "{msg}");
    assert!(msg.contains("unclosed group"), "{msg}");
    let msg = env
        .err("grep", json!({"pattern": "x", "path": "nope"}))
        .await?;
    assert_eq!(msg, "Path not found: nope.");
    let msg = env
        .err("grep", json!({"pattern": "x", "include": "[x"}))
        .await?;
    assert!(msg.starts_with("Invalid include glob `[x`"), "{msg}");
    assert_eq!(
        env.ok("grep", json!({"pattern": "zzz"})).await?,
        "No matches for `zzz` in ."
    );
    Ok(())
}

#[tokio::test]
async fn a_cancelled_search_stops() -> Result<()> {
    let env = sample()?;
    let cancel = CancellationToken::new();
    cancel.cancel();
    let ctx = env.ctx.with_cancel(cancel);
    match run_tool(&env.tools, "grep", json!({"pattern": "answer"}), &ctx).await {
        Err(ToolError::Cancelled { partial }) => assert!(partial.contains("cancelled")),
        other => panic!("expected cancellation, got {other:?}"),
    }
    match run_tool(&env.tools, "glob", json!({"pattern": "*"}), &ctx).await {
        Err(ToolError::Cancelled { .. }) => {}
        other => panic!("expected cancellation, got {other:?}"),
    }
    Ok(())
}
