//! write_file: creation, the read-before-replace rule, atomicity and what a replace keeps.

use std::os::unix::fs::PermissionsExt;

use anyhow::Result;
use serde_json::json;

use crate::support::{Env, files_containing};

#[tokio::test]
async fn creates_files_and_parent_directories() -> Result<()> {
    let env = Env::new()?;
    let out = env
        .ok(
            "write_file",
            json!({"file_path": "a/b/c.txt", "content": "one\ntwo\nthree"}),
        )
        .await?;
    assert_eq!(out, "Wrote 3 lines to a/b/c.txt");
    assert_eq!(env.read("a/b/c.txt")?, b"one\ntwo\nthree");
    assert_eq!(env.ctx.changed_files(), [env.root.join("a/b/c.txt")]);
    let out = env
        .ok(
            "write_file",
            json!({"file_path": "one.txt", "content": "only\n"}),
        )
        .await?;
    assert_eq!(out, "Wrote 1 line to one.txt");
    Ok(())
}

#[tokio::test]
async fn replacing_requires_a_read_and_no_change_since() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "original\n")?;
    let msg = env
        .err("write_file", json!({"file_path": "a.txt", "content": "x"}))
        .await?;
    assert_eq!(
        msg,
        "a.txt has not been read in this session. Read it with read_file first, so the change is based on its current content."
    );
    env.read_tool("a.txt").await?;
    env.write("a.txt", "changed by someone else\n")?;
    let msg = env
        .err("write_file", json!({"file_path": "a.txt", "content": "x"}))
        .await?;
    assert_eq!(
        msg,
        "a.txt has changed on disk since you read it. Read it again with read_file, then retry with the current content."
    );
    assert_eq!(env.read("a.txt")?, b"changed by someone else\n");
    env.read_tool("a.txt").await?;
    env.ok(
        "write_file",
        json!({"file_path": "a.txt", "content": "mine\n"}),
    )
    .await?;
    // The write refreshes the record: a second write needs no new read.
    env.ok(
        "write_file",
        json!({"file_path": "a.txt", "content": "mine again\n"}),
    )
    .await?;
    assert_eq!(env.read("a.txt")?, b"mine again\n");
    Ok(())
}

#[tokio::test]
async fn touching_a_file_without_changing_it_does_not_count_as_a_change() -> Result<()> {
    let env = Env::new()?;
    let path = env.write("a.txt", "same\n")?;
    env.read_tool("a.txt").await?;
    let file = std::fs::File::options().write(true).open(&path)?;
    file.set_modified(std::time::SystemTime::now() + std::time::Duration::from_secs(5))?;
    env.ok(
        "write_file",
        json!({"file_path": "a.txt", "content": "new\n"}),
    )
    .await?;
    Ok(())
}

#[tokio::test]
async fn a_replaced_file_keeps_permissions_line_endings_bom_and_final_newline() -> Result<()> {
    let env = Env::new()?;
    let path = env.write("run.sh", "\u{feff}#!/bin/sh\r\necho hi\r\n")?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o750))?;
    env.read_tool("run.sh").await?;
    let out = env
        .ok(
            "write_file",
            json!({"file_path": "run.sh", "content": "#!/bin/sh\necho bye"}),
        )
        .await?;
    assert_eq!(
        out,
        "Wrote 2 lines to run.sh (kept the file's CRLF line endings, final newline, byte-order mark)"
    );
    assert_eq!(
        env.read("run.sh")?,
        "\u{feff}#!/bin/sh\r\necho bye\r\n".as_bytes()
    );
    assert_eq!(
        std::fs::metadata(&path)?.permissions().mode() & 0o777,
        0o750
    );

    env.write("nofinal.txt", "a\nb")?;
    env.read_tool("nofinal.txt").await?;
    env.ok(
        "write_file",
        json!({"file_path": "nofinal.txt", "content": "c\nd\n"}),
    )
    .await?;
    assert_eq!(env.read("nofinal.txt")?, b"c\nd");
    Ok(())
}

#[tokio::test]
async fn the_write_is_atomic_and_leaves_no_temporary_file() -> Result<()> {
    let env = Env::new()?;
    env.write("a.txt", "old\n")?;
    env.read_tool("a.txt").await?;
    env.ok(
        "write_file",
        json!({"file_path": "a.txt", "content": "new\n"}),
    )
    .await?;
    assert!(files_containing(&env.root, ".tmp")?.is_empty());
    assert_eq!(files_containing(&env.root, "a.txt")?, ["a.txt"]);
    Ok(())
}

#[tokio::test]
async fn refusals() -> Result<()> {
    let env = Env::new()?;
    std::fs::create_dir(env.root.join("dir"))?;
    let msg = env
        .err("write_file", json!({"file_path": "dir", "content": "x"}))
        .await?;
    assert_eq!(msg, "dir is a directory; give the path of a file.");
    let path = env.write("ro.txt", "locked\n")?;
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444))?;
    env.read_tool("ro.txt").await?;
    let msg = env
        .err("write_file", json!({"file_path": "ro.txt", "content": "x"}))
        .await?;
    assert!(msg.contains("read-only"), "{msg}");
    assert_eq!(env.read("ro.txt")?, b"locked\n");
    Ok(())
}
