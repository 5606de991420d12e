//! File tools through a front-end's buffers (`ToolConfig::client_files`): reads see the
//! buffer, edits and writes land in it, the disk is left alone, and confinement still holds.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use anyhow::Result;
use rein_tools::ClientFiles;
use serde_json::json;

use crate::support::Env;

/// Buffers in memory; a file without one reads from the disk, as editors do.
#[derive(Debug, Default)]
struct Buffers(Mutex<HashMap<PathBuf, String>>);

impl Buffers {
    fn held(&self) -> MutexGuard<'_, HashMap<PathBuf, String>> {
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl ClientFiles for Buffers {
    fn read(&self, path: &Path) -> std::io::Result<String> {
        match self.held().get(path) {
            Some(text) => Ok(text.clone()),
            None => std::fs::read_to_string(path),
        }
    }

    fn write(&self, path: &Path, content: &str) -> std::io::Result<()> {
        self.held().insert(path.to_owned(), content.to_owned());
        Ok(())
    }
}

fn with_buffers() -> Result<(Env, Arc<Buffers>)> {
    let buffers = Arc::new(Buffers::default());
    let shared = Arc::clone(&buffers);
    let env = Env::with_config(|config| config.client_files = Some(shared))?;
    Ok((env, buffers))
}

#[tokio::test]
async fn reads_and_edits_go_to_the_buffer_not_the_disk() -> Result<()> {
    let (env, buffers) = with_buffers()?;
    let path = env.write("a.py", "x = 1\n")?;
    buffers
        .held()
        .insert(path.canonicalize()?, "x = 1\ny = 2  # unsaved\n".to_owned());
    let seen = env.read_tool("a.py").await?;
    assert!(seen.contains("unsaved"), "{seen}");
    env.ok(
        "edit_file",
        json!({"file_path": "a.py", "old_string": "y = 2", "new_string": "y = 3"}),
    )
    .await?;
    assert_eq!(
        buffers.held()[&path.canonicalize()?],
        "x = 1\ny = 3  # unsaved\n"
    );
    assert_eq!(env.read("a.py")?, b"x = 1\n");
    env.ok(
        "write_file",
        json!({"file_path": "a.py", "content": "z = 0\n"}),
    )
    .await?;
    assert_eq!(buffers.held()[&path.canonicalize()?], "z = 0\n");
    assert_eq!(env.read("a.py")?, b"x = 1\n");
    Ok(())
}

#[tokio::test]
async fn confinement_holds_before_the_buffer_is_asked() -> Result<()> {
    let (env, buffers) = with_buffers()?;
    let refused = env
        .err("read_file", json!({"file_path": "/etc/passwd"}))
        .await?;
    assert!(!refused.is_empty());
    let refused = env
        .err(
            "write_file",
            json!({"file_path": "../outside.txt", "content": "x"}),
        )
        .await?;
    assert!(!refused.is_empty());
    assert!(
        buffers.held().is_empty(),
        "a refused call reached the buffers"
    );
    Ok(())
}
