//! Workspace confinement: `..`, symlinks, `~`, and the directories allowed besides.

use std::os::unix::fs::symlink;

use anyhow::Result;
use serde_json::json;

use crate::support::Env;

#[tokio::test]
async fn relative_paths_follow_the_current_directory() -> Result<()> {
    let env = Env::new()?;
    env.write("sub/a.txt", "in sub\n")?;
    env.ctx.set_cwd(env.root.join("sub"));
    assert_eq!(env.read_tool("a.txt").await?, "1\tin sub\n");
    assert_eq!(env.read_tool("../sub/a.txt").await?, "1\tin sub\n");
    Ok(())
}

#[tokio::test]
async fn dot_dot_out_of_the_workspace_is_refused_with_the_way_back() -> Result<()> {
    let env = Env::new()?;
    std::fs::write(env.outside.join("secret.txt"), "s")?;
    let msg = env
        .err("read_file", json!({"file_path": "../outside/secret.txt"}))
        .await?;
    let ws = env.root.display();
    let target = env.outside.join("secret.txt");
    assert_eq!(
        msg,
        format!(
            "`../outside/secret.txt` is outside the workspace {ws} (it resolves to {}). File tools only work \
             inside the workspace; use a path under {ws}.",
            target.display()
        )
    );
    let msg = env
        .err(
            "write_file",
            json!({"file_path": "/etc/rein-test", "content": "x"}),
        )
        .await?;
    assert!(msg.contains("is outside the workspace"), "{msg}");
    assert!(!std::path::Path::new("/etc/rein-test").exists());
    Ok(())
}

#[tokio::test]
async fn a_symlink_inside_pointing_outside_is_outside() -> Result<()> {
    let env = Env::new()?;
    std::fs::write(env.outside.join("secret.txt"), "s")?;
    symlink(env.outside.join("secret.txt"), env.root.join("link.txt"))?;
    symlink(&env.outside, env.root.join("linkdir"))?;
    let msg = env
        .err("read_file", json!({"file_path": "link.txt"}))
        .await?;
    assert!(
        msg.contains("resolves to") && msg.contains("outside the workspace"),
        "{msg}"
    );
    // A new file under a symlinked directory would land outside too.
    let msg = env
        .err(
            "write_file",
            json!({"file_path": "linkdir/new.txt", "content": "x"}),
        )
        .await?;
    assert!(msg.contains("outside the workspace"), "{msg}");
    assert!(!env.outside.join("new.txt").exists());
    let msg = env
        .err(
            "edit_file",
            json!({"file_path": "linkdir/new2.txt", "old_string": "", "new_string": "x"}),
        )
        .await?;
    assert!(msg.contains("outside the workspace"), "{msg}");
    let msg = env
        .err("grep", json!({"pattern": "s", "path": "linkdir"}))
        .await?;
    assert!(msg.contains("outside the workspace"), "{msg}");
    Ok(())
}

#[tokio::test]
async fn a_dangling_symlink_is_judged_by_its_target() -> Result<()> {
    let env = Env::new()?;
    symlink(env.outside.join("not-yet.txt"), env.root.join("dangling"))?;
    let msg = env
        .err(
            "write_file",
            json!({"file_path": "dangling", "content": "x"}),
        )
        .await?;
    assert!(msg.contains("outside the workspace"), "{msg}");
    assert!(!env.outside.join("not-yet.txt").exists());
    Ok(())
}

#[tokio::test]
async fn a_symlink_within_the_workspace_is_written_through() -> Result<()> {
    let env = Env::new()?;
    env.write("real.txt", "old\n")?;
    symlink(env.root.join("real.txt"), env.root.join("alias.txt"))?;
    env.read_tool("alias.txt").await?;
    env.ok(
        "write_file",
        json!({"file_path": "alias.txt", "content": "new\n"}),
    )
    .await?;
    assert_eq!(env.read("real.txt")?, b"new\n");
    assert!(
        std::fs::symlink_metadata(env.root.join("alias.txt"))?
            .file_type()
            .is_symlink()
    );
    Ok(())
}

#[tokio::test]
async fn dot_dot_below_a_missing_directory_is_refused() -> Result<()> {
    let env = Env::new()?;
    let msg = env
        .err(
            "write_file",
            json!({"file_path": "nope/../../outside/x.txt", "content": "x"}),
        )
        .await?;
    assert!(
        msg.contains("does not exist") && msg.contains("without `..`"),
        "{msg}"
    );
    Ok(())
}

#[tokio::test]
async fn tilde_expands_to_the_configured_home() -> Result<()> {
    let env = Env::new()?;
    std::fs::write(env.home.join("notes.txt"), "n")?;
    // The home directory is outside the workspace here.
    let msg = env
        .err("read_file", json!({"file_path": "~/notes.txt"}))
        .await?;
    assert!(
        msg.contains(&format!("{}/notes.txt", env.home.display())),
        "{msg}"
    );

    let inside = Env::with_config(|c| c.home_dir = Some(c.workspace_root.clone()))?;
    inside.write("notes.txt", "n\n")?;
    assert_eq!(inside.read_tool("~/notes.txt").await?, "1\tn\n");

    let no_home = Env::with_config(|c| c.home_dir = None)?;
    let msg = no_home
        .err("read_file", json!({"file_path": "~/notes.txt"}))
        .await?;
    assert!(msg.contains("no home directory"), "{msg}");
    Ok(())
}

#[tokio::test]
async fn extra_allowed_directories_and_the_offload_directory_are_allowed() -> Result<()> {
    let env = Env::with_config(|c| {
        c.extra_allowed_dirs
            .push(c.workspace_root.join("../outside"));
    })?;
    std::fs::write(env.outside.join("ok.txt"), "fine\n")?;
    let path = env.outside.join("ok.txt");
    assert_eq!(env.read_tool(path.to_str().unwrap()).await?, "1\tfine\n");
    std::fs::create_dir_all(&env.offload)?;
    std::fs::write(env.offload.join("out.txt"), "saved\n")?;
    let path = env.offload.join("out.txt");
    assert_eq!(env.read_tool(path.to_str().unwrap()).await?, "1\tsaved\n");
    Ok(())
}

#[tokio::test]
async fn an_empty_path_is_refused() -> Result<()> {
    let env = Env::new()?;
    let msg = env.err("read_file", json!({"file_path": ""})).await?;
    assert!(msg.contains("The path is empty"), "{msg}");
    Ok(())
}
