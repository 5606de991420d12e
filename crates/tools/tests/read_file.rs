//! read_file: numbering, windows, refusals and the record of the read.

use anyhow::Result;
use serde_json::json;

use crate::support::Env;

fn numbered(range: std::ops::RangeInclusive<usize>, width: usize) -> String {
    range.map(|i| format!("{i:>width$}\tline {i}\n")).collect()
}

fn lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

#[tokio::test]
async fn lines_are_numbered_from_one_and_aligned() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", lines(12))?;
    assert_eq!(env.read_tool("a.txt").await?, numbered(1..=12, 2));
    Ok(())
}

#[tokio::test]
async fn a_window_ends_with_how_to_continue() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", lines(50))?;
    let out = env
        .ok(
            "read_file",
            json!({"file_path": "a.txt", "offset": 10, "limit": 5}),
        )
        .await?;
    assert_eq!(
        out,
        format!(
            "{}(50 lines total, showing 10-14; continue with offset=15)\n",
            numbered(10..=14, 2)
        )
    );
    // The last window has no footer.
    let out = env
        .ok("read_file", json!({"file_path": "a.txt", "offset": 48}))
        .await?;
    assert_eq!(out, numbered(48..=50, 2));
    Ok(())
}

#[tokio::test]
async fn the_default_limit_is_2000_lines() -> Result<()> {
    let env = Env::new()?;
    // Short lines, so the output budget is not what stops the window.
    let text: String = (1..=2500).map(|i| format!("{}\n", i % 10)).collect();
    env.write("a.txt", text)?;
    let out = env.read_tool("a.txt").await?;
    assert_eq!(out.lines().count(), 2001);
    assert!(
        out.ends_with("(2500 lines total, showing 1-2000; continue with offset=2001)\n"),
        "{}",
        &out[out.len() - 100..]
    );
    Ok(())
}

#[tokio::test]
async fn long_lines_are_cut_with_a_marker() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", format!("{}\nshort\n", "x".repeat(5000)))?;
    let out = env.read_tool("a.txt").await?;
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        format!("1\t{} [... line cut at 2000 characters]", "x".repeat(2000))
    );
    assert!(out.contains("2\tshort"));
    Ok(())
}

#[tokio::test]
async fn empty_missing_directory_binary() -> Result<()> {
    let env = Env::new()?;
    env.write("empty.txt", "")?;
    assert_eq!(env.read_tool("empty.txt").await?, "(empty file)");

    env.write("src/main.rs", "fn main() {}\n")?;
    let msg = env
        .err("read_file", json!({"file_path": "src/mian.rs"}))
        .await?;
    assert_eq!(msg, "File not found: src/mian.rs.");
    let msg = env
        .err("read_file", json!({"file_path": "src/main.py"}))
        .await?;
    assert_eq!(
        msg,
        "File not found: src/main.py. In the same directory: main.rs."
    );
    let msg = env
        .err("read_file", json!({"file_path": "nodir/x.rs"}))
        .await?;
    assert!(msg.contains("its directory does not exist either"), "{msg}");

    let msg = env.err("read_file", json!({"file_path": "src"})).await?;
    assert_eq!(
        msg,
        "src is a directory. List its files with glob (pattern \"*\", path \"src\")."
    );

    let mut png = vec![0x89, b'P', b'N', b'G', 0, 0, 0, 13];
    png.extend(std::iter::repeat_n(7u8, 2000));
    env.write("logo.png", &png)?;
    let msg = env
        .err("read_file", json!({"file_path": "logo.png"}))
        .await?;
    assert_eq!(
        msg,
        "logo.png is a binary file (PNG image, 2.0 KB); read_file shows text only, and the \
         model in use does not take images."
    );
    Ok(())
}

#[tokio::test]
async fn invalid_utf8_is_shown_lossily_with_a_notice() -> Result<()> {
    let env = Env::new()?;
    env.write("latin1.txt", b"caf\xe9\nok\n")?;
    let out = env.read_tool("latin1.txt").await?;
    assert_eq!(
        out,
        "1\tcaf\u{fffd}\n2\tok\n(this file is not valid UTF-8: invalid bytes are shown as \u{fffd})\n"
    );
    Ok(())
}

#[tokio::test]
async fn crlf_and_bom_are_not_shown() -> Result<()> {
    let env = Env::new()?;
    env.write("win.txt", "\u{feff}one\r\ntwo\r\n")?;
    assert_eq!(env.read_tool("win.txt").await?, "1\tone\n2\ttwo\n");
    Ok(())
}

#[tokio::test]
async fn bad_windows_are_explained() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", lines(3))?;
    let msg = env
        .err("read_file", json!({"file_path": "a.txt", "offset": 9}))
        .await?;
    assert_eq!(
        msg,
        "offset 9 is past the end of the file, which has 3 lines."
    );
    let msg = env
        .err("read_file", json!({"file_path": "a.txt", "limit": 0}))
        .await?;
    assert_eq!(msg, "limit must be at least 1.");
    // offset 0 is taken as the start.
    assert_eq!(
        env.ok(
            "read_file",
            json!({"file_path": "a.txt", "offset": 0, "limit": 1})
        )
        .await?
        .lines()
        .next(),
        Some("1\tline 1")
    );
    Ok(())
}

#[tokio::test]
async fn output_stays_within_the_budget_and_says_where_to_continue() -> Result<()> {
    let env = Env::with_config(|c| c.output_budget_chars = 5000)?;
    let text: String = (1..=100)
        .map(|i| format!("{i:03} {}\n", "y".repeat(196)))
        .collect();
    env.write("wide.txt", text)?;
    let out = env.read_tool("wide.txt").await?;
    assert!(out.chars().count() <= 5000, "{}", out.len());
    let footer = out.lines().last().unwrap();
    let shown = out.lines().count() - 1;
    assert_eq!(
        footer,
        format!(
            "(100 lines total, showing 1-{shown}; output size limit reached; continue with offset={})",
            shown + 1
        )
    );
    // Nothing was offloaded: read_file keeps to the budget itself.
    assert!(!env.offload.exists());
    Ok(())
}

#[tokio::test]
async fn a_partial_read_counts_as_a_read() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", lines(10))?;
    env.ok(
        "read_file",
        json!({"file_path": "a.txt", "offset": 3, "limit": 1}),
    )
    .await?;
    env.ok(
        "edit_file",
        json!({"file_path": "a.txt", "old_string": "line 9\n", "new_string": "nine\n"}),
    )
    .await?;
    assert!(String::from_utf8(env.read("a.txt")?)?.contains("nine\nline 10\n"));
    Ok(())
}
