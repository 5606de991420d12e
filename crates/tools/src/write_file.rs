//! write_file: creates a file or replaces its whole content, atomically, keeping the replaced
//! file's permissions, line endings, byte-order mark and final-newline state.

use std::fs::{File, Metadata};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

use crate::atomic::write_atomic;
use crate::beneath::{Confined, Target, describe};
use crate::paths::{display_path, resolve};
use crate::stamp::{
    current_stamp, full_hash_applies, read_whole, require_fresh_read, stamp_of_bytes,
};
use crate::text_style::TextStyle;
use crate::{Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Bytes read from a replaced file to learn its style when it is too big to read whole.
const STYLE_SAMPLE_BYTES: usize = 64 * 1024;

/// Arguments of write_file.
#[derive(Debug, Deserialize, JsonSchema)]
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
        "Create or overwrite a file (read it first). Makes parent directories."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn run(&self, args: WriteFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        crate::blocking::run(move || write_file(&args, &ctx)).await
    }
}

fn write_file(args: &WriteFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
    let path = resolve(ctx, &args.file_path)?;
    let display = display_path(ctx, &path);
    let io_err = |err: std::io::Error| ToolError::Model(format!("Cannot write {display}: {err}."));
    let confined = Confined::new(ctx, &path).map_err(io_err)?;
    let (parent, target) = confined.locate().map_err(io_err)?;
    let (bytes, notes, permissions) = match target {
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
        Target::File(file, meta) if full_hash_applies(meta.len()) => {
            // One read serves both the freshness check and the style.
            let old = read_whole(&file).map_err(io_err)?;
            require_fresh_read(
                ctx,
                &path,
                &display,
                stamp_of_bytes(&old, meta.modified().ok()),
            )?;
            let (text, notes) = TextStyle::detect(&old).apply_to_whole(&args.content);
            (text.into_bytes(), notes, Some(meta.permissions()))
        }
        Target::File(file, meta) => {
            let current = current_stamp(&file, &meta).map_err(io_err)?;
            require_fresh_read(ctx, &path, &display, current)?;
            let style = TextStyle::detect(&style_sample(&file, &meta).map_err(io_err)?);
            let (text, notes) = style.apply_to_whole(&args.content);
            (text.into_bytes(), notes, Some(meta.permissions()))
        }
        Target::Missing => (args.content.clone().into_bytes(), Vec::new(), None),
    };
    let parent = match parent {
        Some(parent) => parent,
        None => confined.create_parent().map_err(io_err)?,
    };
    let mtime = write_atomic(&parent, &bytes, permissions).map_err(io_err)?;
    ctx.record_read(path.clone(), stamp_of_bytes(&bytes, mtime));
    ctx.record_change(path);
    let lines = line_count(&bytes);
    let kept = if notes.is_empty() {
        String::new()
    } else {
        format!(" (kept the file's {})", notes.join(", "))
    };
    let noun = if lines == 1 { "line" } else { "lines" };
    Ok(ToolOutput::success(format!(
        "Wrote {lines} {noun} to {display}{kept}"
    )))
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
