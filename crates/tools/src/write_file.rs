//! write_file: creates a file or replaces its whole content, atomically, keeping the replaced
//! file's permissions, line endings, byte-order mark and final-newline state.

use std::fs::{File, Metadata, Permissions};
use std::path::PathBuf;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::atomic::write_atomic;
use crate::beneath::{Confined, ParentDir, Target, describe};
use crate::diff::whole_diff;
use crate::display::diff_counts;
use crate::paths::{display_path, resolve};
use crate::stamp::{
    current_stamp, full_hash_applies, read_whole, require_fresh_read, stamp_of_bytes,
};
use crate::text_style::TextStyle;
use crate::{
    ContentId, Display, FileChange, Preview, Tool, ToolContext, ToolError, ToolKind, ToolOutput,
};

/// Bytes read from a replaced file to learn its style when it is too big to read whole.
const STYLE_SAMPLE_BYTES: usize = 64 * 1024;

/// Arguments of write_file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// File path.
    pub file_path: String,
    /// Full file content.
    pub content: String,
}

/// The write_file tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct WriteFile;

#[async_trait]
impl Tool for WriteFile {
    type Args = WriteFileArgs;

    fn name(&self) -> &'static str {
        "write_file"
    }

    fn description(&self) -> &'static str {
        "Create or overwrite a file (read it first)."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn run(&self, args: WriteFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        crate::blocking::run(move || plan_write(&args, &ctx)?.apply(&ctx)).await
    }

    async fn preview(&self, args: &WriteFileArgs, ctx: &ToolContext) -> Option<Preview> {
        let args = args.clone();
        let ctx = ctx.clone();
        // A write that would fail shows its arguments; running it says why it fails.
        crate::blocking::run(move || Ok(plan_write(&args, &ctx).ok().map(WritePlan::preview)))
            .await
            .ok()
            .flatten()
    }
}

/// A write worked out in full, nothing written yet.
struct WritePlan {
    path: PathBuf,
    display: String,
    parent: Option<ParentDir>,
    confined: Confined,
    permissions: Option<Permissions>,
    /// What the file held: `None` when it does not exist, and its hash only (`Err`) when
    /// it is too big to compare.
    old: Option<Result<Vec<u8>, ContentId>>,
    new: Vec<u8>,
    /// The style of the old file the new content was given.
    notes: Vec<&'static str>,
}

impl WritePlan {
    fn diff(&self) -> String {
        let new = String::from_utf8_lossy(&self.new);
        match &self.old {
            None => whole_diff(&self.display, "", &new),
            Some(Ok(old)) => whole_diff(&self.display, &String::from_utf8_lossy(old), &new),
            Some(Err(_)) => String::new(),
        }
    }

    fn preview(self) -> Preview {
        Preview::Diff {
            diff: self.diff(),
            created: self.old.is_none(),
            path: self.display,
        }
    }

    fn apply(self, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let display = &self.display;
        let io_err =
            |err: std::io::Error| ToolError::Model(format!("Cannot write {display}: {err}."));
        let created;
        let dir = match &self.parent {
            Some(dir) => dir,
            None => {
                created = self.confined.create_parent().map_err(io_err)?;
                &created
            }
        };
        let mtime = match &ctx.config().client_files {
            Some(client) => {
                let text = String::from_utf8(self.new.clone()).map_err(|e| {
                    ToolError::Internal(format!("the content for {display} is not UTF-8: {e}"))
                })?;
                client.write(&self.path, &text).map_err(io_err)?;
                None
            }
            None => write_atomic(dir, &self.new, self.permissions.clone()).map_err(io_err)?,
        };
        ctx.record_read(self.path.clone(), stamp_of_bytes(&self.new, mtime));
        ctx.record_change(self.path.clone());
        let lines = line_count(&self.new);
        let kept = if self.notes.is_empty() {
            String::new()
        } else {
            format!(" (kept the file's {})", self.notes.join(", "))
        };
        let noun = if lines == 1 { "line" } else { "lines" };
        let diff = self.diff();
        let (added, removed) = match &self.old {
            Some(Err(_)) => (lines, 0),
            _ => diff_counts(&diff),
        };
        let before = self.old.as_ref().map(|old| match old {
            Ok(bytes) => ContentId::of(bytes),
            Err(id) => id.clone(),
        });
        Ok(
            ToolOutput::success(format!("Wrote {lines} {noun} to {display}{kept}"))
                .with_display(Display::FileEdit {
                    path: self.display.clone(),
                    diff,
                    added,
                    removed,
                    created: self.old.is_none(),
                })
                .with_change(FileChange {
                    path: self.path,
                    before,
                    after: ContentId::of(&self.new),
                }),
        )
    }
}

/// Works the write out: every check, the content in the old file's style, without writing.
fn plan_write(args: &WriteFileArgs, ctx: &ToolContext) -> Result<WritePlan, ToolError> {
    let path = resolve(ctx, &args.file_path)?;
    let display = display_path(ctx, &path);
    let io_err = |err: std::io::Error| ToolError::Model(format!("Cannot write {display}: {err}."));
    let confined = Confined::new(ctx, &path).map_err(io_err)?;
    let (parent, target) = confined.locate().map_err(io_err)?;
    let (new, notes, permissions, old) = match target {
        Target::Directory => {
            return Err(ToolError::Model(format!(
                "{display} is a directory; give the path of a file."
            )));
        }
        Target::Other(kind) => {
            return Err(ToolError::Model(format!(
                "{display} is {}, not a regular file; write_file only writes files.",
                describe(kind)
            )));
        }
        Target::File(_, meta) if meta.permissions().readonly() => {
            return Err(ToolError::Model(format!(
                "{display} is read-only; rein does not overwrite read-only files."
            )));
        }
        Target::File(_, meta) if ctx.config().client_files.is_some() => {
            // The front-end's buffer is what is replaced (stamped without a time, as read).
            let old = ctx
                .config()
                .client_files
                .as_ref()
                .map(|client| client.read(&path))
                .transpose()
                .map_err(io_err)?
                .unwrap_or_default()
                .into_bytes();
            require_fresh_read(ctx, &path, &display, stamp_of_bytes(&old, None))?;
            let (text, notes) = TextStyle::detect(&old).apply_to_whole(&args.content);
            (
                text.into_bytes(),
                notes,
                Some(meta.permissions()),
                Some(Ok(old)),
            )
        }
        Target::File(file, meta) if full_hash_applies(meta.len()) => {
            // One read serves the freshness check, the style and the diff.
            let old = read_whole(&file).map_err(io_err)?;
            require_fresh_read(
                ctx,
                &path,
                &display,
                stamp_of_bytes(&old, meta.modified().ok()),
            )?;
            let (text, notes) = TextStyle::detect(&old).apply_to_whole(&args.content);
            (
                text.into_bytes(),
                notes,
                Some(meta.permissions()),
                Some(Ok(old)),
            )
        }
        Target::File(file, meta) => {
            let current = current_stamp(&file, &meta).map_err(io_err)?;
            require_fresh_read(ctx, &path, &display, current)?;
            let style = TextStyle::detect(&style_sample(&file, &meta).map_err(io_err)?);
            let (text, notes) = style.apply_to_whole(&args.content);
            // Too big to hash whole at every write: the sampled stamp identifies it.
            let id = ContentId::sampled(current.content_hash);
            (
                text.into_bytes(),
                notes,
                Some(meta.permissions()),
                Some(Err(id)),
            )
        }
        Target::Missing => (args.content.clone().into_bytes(), Vec::new(), None, None),
    };
    Ok(WritePlan {
        path,
        display,
        parent,
        confined,
        permissions,
        old,
        new,
        notes,
    })
}

/// The whole file when small, else its first and last bytes (enough to see the BOM, the line
/// endings and the final newline).
fn style_sample(file: &File, meta: &Metadata) -> std::io::Result<Vec<u8>> {
    use std::os::unix::fs::FileExt;
    let len = meta.len();
    if len <= (2 * STYLE_SAMPLE_BYTES) as u64 {
        return read_whole(file);
    }
    let mut sample = vec![0; 2 * STYLE_SAMPLE_BYTES];
    let (head, tail) = sample.split_at_mut(STYLE_SAMPLE_BYTES);
    file.read_exact_at(head, 0)?;
    file.read_exact_at(tail, len - STYLE_SAMPLE_BYTES as u64)?;
    Ok(sample)
}

/// Lines as read_file counts them: a last line without a newline still counts.
pub(crate) fn line_count(bytes: &[u8]) -> u64 {
    let newlines = crate::read_file::count_newlines(bytes);
    newlines + u64::from(bytes.last().is_some_and(|&b| b != b'\n'))
}
