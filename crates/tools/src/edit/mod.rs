//! edit_file: replaces one piece of a file (or every occurrence), found by the ladder in
//! [`engine`], keeping the file's byte-order mark, line endings, final newline and permissions,
//! and answering with a unified diff that first says how old_string was found.
//!
//! The ladder forgives the mistakes models really make when quoting a file (line endings,
//! whitespace at line ends, indentation, typographic quotes, dashes and no-break spaces,
//! blank-line runs, a last line cut short, read_file line numbers, diff markers, one level of
//! JSON escaping too many) under four rules:
//!
//! 1. **Exact first, one place only.** Byte for byte first; a looser way of finding the text
//!    is used only when every stricter one finds nothing, and only when it finds exactly one
//!    place. A looser twin never makes a unique exact match ambiguous. With `replace_all`,
//!    every place found at the rung that found any.
//! 2. **Restated text keeps the file's bytes.** Where new_string repeats a line (or a run of
//!    blank lines) of old_string unchanged, the file keeps its own bytes there (its quotes,
//!    no-break spaces, blank-line count). Only lines the model changed are written as given,
//!    re-indented to the file's style and with the file's line endings.
//! 3. **Both strings decode the same way.** If old_string matches only after undoing one level
//!    of JSON escaping, or after stripping unified-diff markers or read_file's `N<TAB>`
//!    prefixes, new_string is decoded the same way, only when that decoding is consistent
//!    across the whole of it; otherwise the edit is refused.
//! 4. **Structure and data are not layout.** Indentation may shift as a whole and its unit may
//!    differ (tabs, 2 or 4 spaces), but whether a line is inside or after a block may not: the
//!    relative indentation of the quoted lines must match the file's. Whitespace inside a line
//!    (a string literal's spaces, alignment) is content and is never collapsed.

mod blocks;
mod closest;
mod decode;
mod engine;
mod indent;
mod lines;
mod lookalike;
mod place;
mod report;
mod restate;
mod substring;

use std::fs::Permissions;
use std::path::PathBuf;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

pub(crate) use engine::Change;
use engine::{Replace, apply_edit};
use report::{refusal, summary};

use crate::atomic::write_atomic;
use crate::beneath::{Confined, ParentDir, Target, describe};
use crate::diff::{unified_diff, whole_diff};
use crate::display::diff_counts;
use crate::paths::{display_path, resolve};
use crate::read_file::{BINARY_SNIFF_BYTES, human_size};
use crate::stamp::{read_whole, require_fresh_read, stamp_of_bytes};
use crate::text_style::BOM;
use crate::write_file::line_count;
use crate::{
    ContentId, Display, FileChange, Preview, Tool, ToolContext, ToolError, ToolKind, ToolOutput,
};

/// Files above this size are not edited in memory; the model is pointed elsewhere.
pub const EDIT_MAX_BYTES: u64 = 256 * 1024 * 1024;

/// Arguments of edit_file.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// File path.
    pub file_path: String,
    /// Text to replace (empty: create the file).
    pub old_string: String,
    /// Replacement.
    pub new_string: String,
    /// Replace every occurrence.
    #[serde(default)]
    pub replace_all: bool,
}

/// The edit_file tool; how it finds old_string follows the four rules of this module's
/// documentation.
#[derive(Debug, Clone, Copy, Default)]
pub struct EditFile;

#[async_trait]
impl Tool for EditFile {
    type Args = EditFileArgs;

    fn name(&self) -> &'static str {
        "edit_file"
    }

    fn description(&self) -> &'static str {
        "Replace old_string with new_string in a file (read it first). old_string must be \
         unique unless replace_all; copy it exactly."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::Edit
    }

    async fn run(&self, args: EditFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let ctx = ctx.clone();
        crate::blocking::run(move || plan_edit(&args, &ctx)?.apply(&ctx)).await
    }

    async fn preview(&self, args: &EditFileArgs, ctx: &ToolContext) -> Option<Preview> {
        let args = args.clone();
        let ctx = ctx.clone();
        // An edit that would fail shows its arguments; running it says why it fails.
        crate::blocking::run(move || Ok(plan_edit(&args, &ctx).ok().map(|plan| plan.preview())))
            .await
            .ok()
            .flatten()
    }

    async fn doomed(&self, args: &EditFileArgs, ctx: &ToolContext) -> Option<String> {
        let args = args.clone();
        let ctx = ctx.clone();
        // Only the model's mistakes (never read, old_string not found…) are certain; an I/O
        // error may pass, so the call is put to the person as usual.
        crate::blocking::run(move || {
            Ok(match plan_edit(&args, &ctx) {
                Err(ToolError::Model(message)) => Some(message),
                _ => None,
            })
        })
        .await
        .ok()
        .flatten()
    }
}

/// An edit worked out in full, nothing written yet: the preview shows it, running applies it.
struct EditPlan {
    path: PathBuf,
    display: String,
    /// The directory to write in; `None` when it must be created first.
    parent: Option<ParentDir>,
    confined: Confined,
    permissions: Option<Permissions>,
    /// The old content (`None`: the file is created).
    old: Option<Vec<u8>>,
    new: Vec<u8>,
    diff: String,
    /// What the model is told on success.
    message: String,
}

impl EditPlan {
    fn preview(self) -> Preview {
        Preview::Diff {
            path: self.display,
            diff: self.diff,
            created: self.old.is_none(),
        }
    }

    fn apply(self, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let verb = if self.old.is_some() { "edit" } else { "create" };
        let display = &self.display;
        let io_err =
            |err: std::io::Error| ToolError::Model(format!("Cannot {verb} {display}: {err}."));
        let parent = match self.parent {
            Some(parent) => parent,
            None => self.confined.create_parent().map_err(io_err)?,
        };
        let mtime = match &ctx.config().client_files {
            Some(client) => {
                let text = String::from_utf8(self.new.clone()).map_err(|e| {
                    ToolError::Internal(format!("the edit of {display} is not UTF-8: {e}"))
                })?;
                client.write(&self.path, &text).map_err(io_err)?;
                None
            }
            None => write_atomic(&parent, &self.new, self.permissions).map_err(io_err)?,
        };
        ctx.record_read(self.path.clone(), stamp_of_bytes(&self.new, mtime));
        ctx.record_change(self.path.clone());
        let (added, removed) = diff_counts(&self.diff);
        Ok(ToolOutput::success(self.message)
            .with_display(Display::FileEdit {
                path: self.display.clone(),
                diff: self.diff,
                added,
                removed,
                created: self.old.is_none(),
            })
            .with_change(FileChange {
                path: self.path,
                before: self.old.as_deref().map(ContentId::of),
                after: ContentId::of(&self.new),
            }))
    }
}

/// Works the edit out: every check, the new content and its diff, without writing.
fn plan_edit(args: &EditFileArgs, ctx: &ToolContext) -> Result<EditPlan, ToolError> {
    let path = resolve(ctx, &args.file_path)?;
    let display = display_path(ctx, &path);
    let io_err = |err: std::io::Error| ToolError::Model(format!("Cannot edit {display}: {err}."));
    let confined = Confined::new(ctx, &path).map_err(io_err)?;
    let (parent, target) = confined.locate().map_err(io_err)?;
    let (parent, file, meta) = match (parent, target) {
        (parent, Target::Missing) => {
            if args.old_string.is_empty() {
                let content = args.new_string.as_bytes().to_vec();
                let diff = whole_diff(&display, "", &args.new_string);
                let message = format!("Created {display} ({} lines)", line_count(&content));
                return Ok(EditPlan {
                    path,
                    display,
                    parent,
                    confined,
                    permissions: None,
                    old: None,
                    new: content,
                    diff,
                    message,
                });
            }
            return Err(ToolError::Model(format!(
                "File not found: {display}. To create a file, use write_file (or edit_file with an empty old_string)."
            )));
        }
        (_, Target::Directory) => {
            return Err(ToolError::Model(format!(
                "{display} is a directory; give the path of a file."
            )));
        }
        _ if args.old_string.is_empty() => {
            return Err(ToolError::Model(format!(
                "{display} already exists, so an empty old_string cannot create it. Give the text to \
                 replace as old_string, or use write_file to replace the whole file."
            )));
        }
        (Some(parent), Target::File(file, meta)) => (parent, file, meta),
        (_, Target::Other(kind)) => {
            return Err(ToolError::Model(format!(
                "{display} is {}, not a regular file; edit_file only edits files.",
                describe(kind)
            )));
        }
        (None, Target::File(..)) => {
            // A file always lies in a directory; this cannot be, but must not panic.
            return Err(ToolError::Internal(format!(
                "{display} was opened without its directory"
            )));
        }
    };
    if meta.permissions().readonly() {
        return Err(ToolError::Model(format!(
            "{display} is read-only; rein does not change read-only files."
        )));
    }
    if meta.len() > EDIT_MAX_BYTES {
        return Err(ToolError::Model(format!(
            "{display} is too large to edit here ({}); change it with a command in bash (e.g. sed).",
            human_size(meta.len())
        )));
    }
    let (bytes, mtime) = match &ctx.config().client_files {
        // The front-end's buffer is what is edited (its stamp has no time: read_file's neither).
        Some(client) => (client.read(&path).map_err(io_err)?.into_bytes(), None),
        None => (read_whole(&file).map_err(io_err)?, meta.modified().ok()),
    };
    require_fresh_read(ctx, &path, &display, stamp_of_bytes(&bytes, mtime))?;
    if memchr::memchr(0, &bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]).is_some() {
        return Err(ToolError::Model(format!(
            "{display} is a binary file; edit_file edits text only."
        )));
    }
    let (bom, body) = match bytes.strip_prefix(BOM.as_bytes()) {
        Some(body) => (true, body),
        None => (false, bytes.as_slice()),
    };
    let text = std::str::from_utf8(body).map_err(|err| {
        ToolError::Model(format!(
            "{display} is not valid UTF-8 (at byte {}), so edit_file cannot edit it safely; \
             rewrite it with write_file or change it with a command.",
            err.valid_up_to() + if bom { BOM.len() } else { 0 }
        ))
    })?;
    let replace = if args.replace_all {
        Replace::All
    } else {
        Replace::One
    };
    let edited = apply_edit(text, &args.old_string, &args.new_string, replace)
        .map_err(|r| refusal(r, &display))?;
    let diff = unified_diff(&display, text, &edited.text, &edited.changes);
    let mut message = summary(&edited, &display);
    message.push_str(&diff);
    let new = if bom {
        [BOM.as_bytes(), edited.text.as_bytes()].concat()
    } else {
        edited.text.into_bytes()
    };
    Ok(EditPlan {
        path,
        display,
        parent: Some(parent),
        confined,
        permissions: Some(meta.permissions()),
        old: Some(bytes),
        new,
        diff,
        message,
    })
}
