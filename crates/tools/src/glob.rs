//! glob: files matching a pattern, newest first, over a gitignore-aware parallel walk.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use async_trait::async_trait;
use ignore::{DirEntry, ParallelVisitor, ParallelVisitorBuilder, WalkState};
use parking_lot::Mutex;
use schemars::JsonSchema;
use serde::Deserialize;
use tokio_util::sync::CancellationToken;

use crate::paths::{display_path, display_relative, resolve};
use crate::walk::{FilePattern, split_absolute_pattern, walker};
use crate::{Display, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Paths listed at most.
pub const GLOB_MAX_RESULTS: usize = 100;

/// Arguments of glob.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GlobArgs {
    /// E.g. `**/*.rs`; without `/` it matches names at any depth.
    pub pattern: String,
    /// Directory (default: current).
    pub path: Option<String>,
}

/// The glob tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct Glob;

#[async_trait]
impl Tool for Glob {
    type Args = GlobArgs;

    fn name(&self) -> &'static str {
        "glob"
    }

    fn description(&self) -> &'static str {
        "Find files by glob, newest first. Honours .gitignore."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn run(&self, args: GlobArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        crate::blocking::run(move || glob(&args, &ctx)).await
    }
}

fn glob(args: &GlobArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let (dir, pattern) = match split_absolute_pattern(&args.pattern) {
        Some((base, rest)) => (base.to_string_lossy().into_owned(), rest),
        None => (
            args.path.clone().unwrap_or_else(|| ".".to_owned()),
            args.pattern.clone(),
        ),
    };
    let root = search_dir(ctx, &dir)?;
    let pattern = FilePattern::new(&pattern, "pattern")?;
    let cwd = std::fs::canonicalize(ctx.cwd()).unwrap_or_else(|_| ctx.cwd());
    let found =
        find_files(&root, &pattern, ctx.cancel_token()).ok_or_else(|| ToolError::Cancelled {
            partial: "(glob was cancelled before it finished)".to_owned(),
        })?;
    if found.is_empty() {
        return Ok(ToolOutput::success(format!(
            "No files matched `{}` in {}",
            args.pattern,
            display_relative(&cwd, &root)
        ))
        .with_display(Display::Listing {
            count: 0,
            truncated: false,
        }));
    }
    let mut out = String::new();
    for (_, path) in found.iter().take(GLOB_MAX_RESULTS) {
        out.push_str(&display_relative(&cwd, path));
        out.push('\n');
    }
    if found.len() > GLOB_MAX_RESULTS {
        out.push_str(&format!(
            "({} more not shown; narrow the pattern or the path)\n",
            found.len() - GLOB_MAX_RESULTS
        ));
    }
    Ok(ToolOutput::success(out).with_display(Display::Listing {
        count: found.len() as u64,
        truncated: found.len() > GLOB_MAX_RESULTS,
    }))
}

/// The directory to search: resolved, confined, and a directory.
pub(crate) fn search_dir(ctx: &ToolContext, raw: &str) -> Result<PathBuf, ToolError> {
    let root = resolve(ctx, raw)?;
    match std::fs::metadata(&root) {
        Ok(meta) if meta.is_dir() => Ok(root),
        Ok(_) => Err(ToolError::Model(format!(
            "{} is a file; path must be a directory.",
            display_path(ctx, &root)
        ))),
        Err(_) => Err(ToolError::Model(format!(
            "Directory not found: {}.",
            display_path(ctx, &root)
        ))),
    }
}

/// Every matching file under `root` with its modification time, newest first (then by path);
/// `None` when cancelled.
pub(crate) fn find_files(
    root: &Path,
    pattern: &FilePattern,
    cancel: &CancellationToken,
) -> Option<Vec<(SystemTime, PathBuf)>> {
    let shared = Mutex::new(Vec::new());
    let mut builder = Collect {
        root,
        pattern,
        cancel,
        shared: &shared,
    };
    walker(root, pattern.mentions_hidden())
        .build_parallel()
        .visit(&mut builder);
    if cancel.is_cancelled() {
        return None;
    }
    let mut found = shared.into_inner();
    // Files unpacked together share an mtime, so ties are common: compare their paths as
    // bytes, several times faster than `Path`'s component-wise order.
    found.sort_unstable_by(|a, b| {
        b.0.cmp(&a.0).then_with(|| {
            a.1.as_os_str()
                .as_encoded_bytes()
                .cmp(b.1.as_os_str().as_encoded_bytes())
        })
    });
    Some(found)
}

struct Collect<'a> {
    root: &'a Path,
    pattern: &'a FilePattern,
    cancel: &'a CancellationToken,
    shared: &'a Mutex<Vec<(SystemTime, PathBuf)>>,
}

impl<'s> ParallelVisitorBuilder<'s> for Collect<'s> {
    fn build(&mut self) -> Box<dyn ParallelVisitor + 's> {
        Box::new(Visitor {
            root: self.root,
            pattern: self.pattern,
            cancel: self.cancel,
            shared: self.shared,
            local: Vec::new(),
        })
    }
}

/// One walker thread: collects locally, hands over once when the thread finishes.
struct Visitor<'a> {
    root: &'a Path,
    pattern: &'a FilePattern,
    cancel: &'a CancellationToken,
    shared: &'a Mutex<Vec<(SystemTime, PathBuf)>>,
    local: Vec<(SystemTime, PathBuf)>,
}

impl ParallelVisitor for Visitor<'_> {
    fn visit(&mut self, entry: Result<DirEntry, ignore::Error>) -> WalkState {
        if self.cancel.is_cancelled() {
            return WalkState::Quit;
        }
        let Ok(entry) = entry else {
            return WalkState::Continue;
        };
        if entry.file_type().is_some_and(|t| t.is_file())
            && self.pattern.is_match(self.root, entry.path())
        {
            let mtime = entry
                .metadata()
                .ok()
                .and_then(|m| m.modified().ok())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            self.local.push((mtime, entry.into_path()));
        }
        WalkState::Continue
    }
}

impl Drop for Visitor<'_> {
    fn drop(&mut self) {
        let mut shared = self.shared.lock();
        shared.append(&mut self.local);
    }
}
