//! A temporary workspace with a tool context and the built-in tools.

use std::path::{Path, PathBuf};

use anyhow::{Context as _, Result, bail};
use std::sync::Arc;

use rein_tools::{
    ToolConfig, ToolContext, ToolError, ToolOutput, ToolRegistry, apply_output_budget,
};
use serde_json::Value;

/// A workspace in a temporary directory, with an offload directory and a fake home beside it
/// (both outside the workspace).
pub(crate) struct Env {
    _dir: tempfile::TempDir,
    /// The workspace root (canonical).
    pub(crate) root: PathBuf,
    /// A directory outside the workspace.
    pub(crate) outside: PathBuf,
    /// The offload directory.
    pub(crate) offload: PathBuf,
    /// The home directory given to the tools.
    pub(crate) home: PathBuf,
    pub(crate) ctx: ToolContext,
    pub(crate) tools: ToolRegistry,
}

impl Env {
    pub(crate) fn new() -> Result<Env> {
        Env::with_config(|_| {})
    }

    pub(crate) fn with_config(adjust: impl FnOnce(&mut ToolConfig)) -> Result<Env> {
        let dir = tempfile::tempdir()?;
        let base = dir.path().canonicalize()?;
        let root = base.join("ws");
        let outside = base.join("outside");
        let home = base.join("home");
        let offload = base.join("offload");
        for d in [&root, &outside, &home] {
            std::fs::create_dir_all(d)?;
        }
        let mut config = ToolConfig::new(&root, &offload);
        config.home_dir = Some(home.clone());
        adjust(&mut config);
        Ok(Env {
            _dir: dir,
            root,
            outside,
            offload,
            home,
            ctx: ToolContext::new(config),
            tools: ToolRegistry::builtin(),
        })
    }

    /// Writes a file under the workspace (creating directories) and returns its path.
    pub(crate) fn write(&self, rel: &str, content: impl AsRef<[u8]>) -> Result<PathBuf> {
        let path = self.root.join(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::write(&path, content)?;
        Ok(path)
    }

    /// The bytes of a file under the workspace.
    pub(crate) fn read(&self, rel: &str) -> Result<Vec<u8>> {
        std::fs::read(self.root.join(rel)).with_context(|| format!("reading {rel}"))
    }

    /// Calls a tool as the agent's pipeline does: arguments checked (a mistake is an error
    /// result), run, and the output budget applied.
    pub(crate) async fn call(&self, tool: &str, args: Value) -> Result<ToolOutput> {
        let Some(found) = self.tools.get(tool) else {
            bail!("no tool named {tool}");
        };
        let prepared = match Arc::clone(found).prepare(&args) {
            Ok(prepared) => prepared,
            Err(message) => return Ok(ToolOutput::error(message)),
        };
        let mut output = match prepared.run(&self.ctx).await {
            Ok(output) => output,
            Err(ToolError::Model(message)) => ToolOutput::error(message),
            Err(e) => return Err(e.into()),
        };
        output.content = apply_output_budget(output.content, self.ctx.config(), tool);
        Ok(output)
    }

    /// Calls a tool that must succeed; returns its text.
    pub(crate) async fn ok(&self, tool: &str, args: Value) -> Result<String> {
        let out = self.call(tool, args).await?;
        if out.is_error {
            bail!("{tool} failed: {}", out.content);
        }
        Ok(out.content)
    }

    /// Calls a tool that must fail with an error result; returns its message.
    pub(crate) async fn err(&self, tool: &str, args: Value) -> Result<String> {
        let out = self.call(tool, args).await?;
        if !out.is_error {
            bail!("{tool} succeeded but should have failed: {}", out.content);
        }
        Ok(out.content)
    }

    /// read_file on a path, to record the read.
    pub(crate) async fn read_tool(&self, rel: &str) -> Result<String> {
        self.ok("read_file", serde_json::json!({ "file_path": rel }))
            .await
    }
}

/// Files in `dir` whose names contain `needle`.
pub(crate) fn files_containing(dir: &Path, needle: &str) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in std::fs::read_dir(dir)? {
        let name = entry?.file_name().to_string_lossy().into_owned();
        if name.contains(needle) {
            names.push(name);
        }
    }
    Ok(names)
}

/// Runs a tool with `ctx` and no output budget: a call that fails its argument check is a
/// [`ToolError::Model`] here.
pub(crate) async fn run_tool(
    tools: &ToolRegistry,
    name: &str,
    args: Value,
    ctx: &ToolContext,
) -> std::result::Result<ToolOutput, ToolError> {
    let tool = tools
        .get(name)
        .ok_or_else(|| ToolError::model(format!("no tool named {name}")))?;
    Arc::clone(tool)
        .prepare(&args)
        .map_err(ToolError::Model)?
        .run(ctx)
        .await
}
