//! Path confinement under attack: a thread swaps a symbolic link between a workspace target and
//! an outside one while the file tools work through it. Whatever the timing, nothing outside
//! the workspace is read or written, and no temporary file is left behind.

use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Result, ensure};
use serde_json::json;

use crate::support::Env;

const ROUNDS: usize = 200;
const SECRET: &str = "SECRET-OUTSIDE-THE-WORKSPACE";

/// Swaps `link` between pointing at `inside` and at `outside` until dropped, the ways any
/// process can: removing the link and making a new one (so that for a moment there is none),
/// or renaming a new link over it.
struct Swapper {
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Swapper {
    fn start(link: PathBuf, inside: PathBuf, outside: PathBuf) -> Swapper {
        let stop = Arc::new(AtomicBool::new(false));
        let swaps = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, swaps) = (Arc::clone(&stop), Arc::clone(&swaps));
            std::thread::spawn(move || {
                let staged = link.with_extension("staged");
                let mut n = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let target = if n % 2 == 1 { &outside } else { &inside };
                    // Errors are part of the game: the tool may have put a real file or
                    // directory where the link was.
                    if n % 4 < 2 {
                        // In place: for a moment there is no link at all.
                        let _ = std::fs::remove_file(&link);
                        let _ = symlink(target, &link);
                    } else {
                        // Atomically: the link is always there, pointing one way or the other.
                        let _ = std::fs::remove_file(&staged);
                        let _ = symlink(target, &staged);
                        let _ = std::fs::rename(&staged, &link);
                    }
                    n += 1;
                    swaps.store(n, Ordering::Relaxed);
                }
            })
        };
        Swapper {
            stop,
            swaps,
            thread: Some(thread),
        }
    }

    fn swaps(&self) -> u64 {
        self.swaps.load(Ordering::Relaxed)
    }

    /// Waits until the link has been swapped again, so every round meets a new state.
    fn next_swap(&self) -> Result<()> {
        let seen = self.swaps();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.swaps() == seen {
            ensure!(Instant::now() < deadline, "the swapper stopped swapping");
            std::thread::yield_now();
        }
        Ok(())
    }
}

impl Drop for Swapper {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Every file under `dir` whose name marks it as one of rein's temporary files.
fn temp_files(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let entry = entry?;
            let path = entry.path();
            if entry.file_type()?.is_dir() {
                pending.push(path);
            } else if entry.file_name().to_string_lossy().contains(".rein-") {
                found.push(path);
            }
        }
    }
    Ok(found)
}

/// The names in `dir`, sorted.
fn names(dir: &Path) -> Result<Vec<String>> {
    let mut names: Vec<String> = std::fs::read_dir(dir)?
        .map(|e| e.map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect::<Result<_, _>>()?;
    names.sort();
    Ok(names)
}

/// Reads `file_path` ROUNDS times while `swapper` works; fails if one saw the secret.
async fn read_rounds(env: &Env, swapper: &Swapper, file_path: &str) -> Result<usize> {
    let mut read_inside = 0;
    for round in 0..ROUNDS {
        swapper.next_swap()?;
        let out = env
            .call("read_file", json!({ "file_path": file_path }))
            .await?;
        ensure!(
            !out.content.contains(SECRET),
            "{file_path}, round {round}: read the outside file: {}",
            out.content
        );
        read_inside += usize::from(!out.is_error && out.content.contains("inside"));
    }
    Ok(read_inside)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_through_a_swapped_link_never_see_outside() -> Result<()> {
    let env = Env::new()?;
    std::fs::write(env.outside.join("secret.txt"), format!("{SECRET}\n"))?;

    // The file itself is the link.
    let inside = env.write("inside.txt", "inside\n")?;
    let swapper = Swapper::start(
        env.root.join("link.txt"),
        inside,
        env.outside.join("secret.txt"),
    );
    let through_file = read_rounds(&env, &swapper, "link.txt").await?;
    drop(swapper);

    // A directory on the way is the link.
    env.write("real/secret.txt", "inside\n")?;
    let swapper = Swapper::start(
        env.root.join("dir"),
        env.root.join("real"),
        env.outside.clone(),
    );
    let through_dir = read_rounds(&env, &swapper, "dir/secret.txt").await?;
    drop(swapper);
    ensure!(
        through_file > 0 && through_dir > 0,
        "reads through the links never succeeded ({through_file}, {through_dir})"
    );
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn writes_through_a_swapped_directory_link_never_land_outside() -> Result<()> {
    let env = Env::new()?;
    let inside = env.root.join("real");
    std::fs::create_dir(&inside)?;
    std::fs::write(env.outside.join("secret.txt"), SECRET)?;
    let swapper = Swapper::start(env.root.join("dir"), inside.clone(), env.outside.clone());
    let mut written = 0;
    for round in 0..ROUNDS {
        swapper.next_swap()?;
        let (tool, args) = if round % 2 == 0 {
            let path = format!("dir/new-{round}.txt");
            ("write_file", json!({"file_path": path, "content": "x\n"}))
        } else {
            let path = format!("dir/new-{round}.txt");
            (
                "edit_file",
                json!({"file_path": path, "old_string": "", "new_string": "x\n"}),
            )
        };
        written += usize::from(!env.call(tool, args).await?.is_error);
    }
    drop(swapper);
    ensure!(written > 0, "no write went through the link");
    assert_eq!(
        names(&env.outside)?,
        ["secret.txt"],
        "a file landed outside"
    );
    assert_eq!(
        std::fs::read_to_string(env.outside.join("secret.txt"))?,
        SECRET
    );
    let base = env.root.parent().unwrap_or(&env.root);
    assert_eq!(temp_files(base)?, Vec::<PathBuf>::new());
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replacing_a_file_swapped_for_a_link_never_writes_outside() -> Result<()> {
    let env = Env::new()?;
    let outside = env.outside.join("secret.txt");
    std::fs::write(&outside, SECRET)?;
    let writes = AtomicU64::new(0);
    for round in 0..ROUNDS {
        // A workspace file the model has read; then something puts a link there.
        let target = env.write("target.txt", "mine\n")?;
        env.read_tool("target.txt").await?;
        let swapper = Swapper::start(
            target.clone(),
            target.with_extension("gone"),
            outside.clone(),
        );
        let out = env
            .call(
                "write_file",
                json!({"file_path": "target.txt", "content": format!("round {round}\n")}),
            )
            .await?;
        drop(swapper);
        writes.fetch_add(u64::from(!out.is_error), Ordering::Relaxed);
        ensure!(
            std::fs::read_to_string(&outside)? == SECRET,
            "round {round}: the outside file was written: {}",
            out.content
        );
        let _ = std::fs::remove_file(&target);
    }
    let base = env.root.parent().unwrap_or(&env.root);
    assert_eq!(temp_files(base)?, Vec::<PathBuf>::new());
    Ok(())
}
