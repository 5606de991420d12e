//! Workspace confinement: every path a file tool touches is resolved the way the kernel would
//! (relative to the current directory, `~` expanded, symlinks followed) and must then lie under
//! the workspace root or an extra allowed directory (the offload directory included).
//!
//! This is the check. The file tools then open what was checked without following any link
//! again (`beneath.rs`), so a link swapped in after the check cannot lead outside.

use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

use crate::{ToolContext, ToolError};

/// Symlink chains longer than this are refused (the kernel's own limit is 40).
const MAX_SYMLINK_DEPTH: u32 = 40;

/// Resolves `raw` (as the model wrote it) to a canonical path inside the workspace or an
/// allowed directory. The file itself need not exist: the nearest existing ancestor is
/// canonicalised and the rest appended, so a new file in a symlinked directory is judged by
/// where it would really be written.
pub fn resolve(ctx: &ToolContext, raw: &str) -> Result<PathBuf, ToolError> {
    let resolved = resolve_anywhere(ctx, raw)?;
    check_allowed(ctx, raw, &resolved)?;
    Ok(resolved)
}

/// [`resolve`] without the confinement check: where `raw` really points, wherever that is
/// (for the permission check, which asks before a file outside the workspace is touched).
pub fn resolve_anywhere(ctx: &ToolContext, raw: &str) -> Result<PathBuf, ToolError> {
    if raw.is_empty() {
        return Err(ToolError::model(
            "The path is empty; give a file path such as src/main.rs.",
        ));
    }
    let expanded = expand_home(ctx, raw)?;
    let absolute = if expanded.is_absolute() {
        expanded
    } else {
        ctx.cwd().join(expanded)
    };
    canonicalize_lenient(&absolute, 0).map_err(|err| match err {
        LenientError::DotDotInMissingPart => ToolError::Model(format!(
            "`{raw}` goes up with `..` below a directory that does not exist; write the path without `..`."
        )),
        LenientError::SymlinkLoop => {
            ToolError::Model(format!("`{raw}` is a chain of symbolic links that does not end (a loop?)."))
        }
        LenientError::Io(err) => ToolError::Model(format!("Cannot resolve `{raw}`: {err}.")),
    })
}

/// Whether a resolved path lies in the workspace or another directory file tools may touch
/// without a permission of their own (the offload directory, configured extras).
pub fn is_allowed(ctx: &ToolContext, resolved: &Path) -> bool {
    allowed_dirs(ctx)
        .iter()
        .any(|dir| resolved.starts_with(dir))
}

/// How to show `path` to the model: relative to the current directory when inside it, so the
/// model can pass it straight back; absolute otherwise.
pub fn display_path(ctx: &ToolContext, path: &Path) -> String {
    let cwd = ctx.cwd();
    let cwd = std::fs::canonicalize(&cwd).unwrap_or(cwd);
    display_relative(&cwd, path)
}

/// `path` relative to `base` when inside it (`.` for `base` itself), absolute otherwise.
pub(crate) fn display_relative(base: &Path, path: &Path) -> String {
    match path.strip_prefix(base) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_owned(),
        Ok(rel) => rel.to_string_lossy().into_owned(),
        Err(_) => path.to_string_lossy().into_owned(),
    }
}

fn expand_home(ctx: &ToolContext, raw: &str) -> Result<PathBuf, ToolError> {
    let rest = match raw.strip_prefix('~') {
        Some("") => "",
        Some(rest) if rest.starts_with('/') => rest.trim_start_matches('/'),
        // `~user/...` is not expanded: it is an ordinary relative name.
        Some(_) | None => return Ok(PathBuf::from(raw)),
    };
    match &ctx.config().home_dir {
        Some(home) => Ok(home.join(rest)),
        None => Err(ToolError::Model(format!(
            "`{raw}` starts with `~` but no home directory is known here; give the full path."
        ))),
    }
}

enum LenientError {
    DotDotInMissingPart,
    SymlinkLoop,
    Io(io::Error),
}

/// `fs::canonicalize` for paths whose tail may not exist yet. A dangling symlink on the way is
/// followed to where its target would be, so writing "through" it is judged correctly.
fn canonicalize_lenient(path: &Path, depth: u32) -> Result<PathBuf, LenientError> {
    if depth > MAX_SYMLINK_DEPTH {
        return Err(LenientError::SymlinkLoop);
    }
    let mut current = path.to_path_buf();
    let mut missing: Vec<OsString> = Vec::new();
    loop {
        match std::fs::canonicalize(&current) {
            Ok(base) => return Ok(append(base, &missing)),
            Err(err) if is_missing(&err) => {}
            Err(err) if err.raw_os_error() == Some(libc::ELOOP) => {
                return Err(LenientError::SymlinkLoop);
            }
            Err(err) => return Err(LenientError::Io(err)),
        }
        if let Ok(meta) = std::fs::symlink_metadata(&current)
            && meta.file_type().is_symlink()
        {
            let target = std::fs::read_link(&current).map_err(LenientError::Io)?;
            let target = match current.parent() {
                Some(parent) if target.is_relative() => parent.join(target),
                _ => target,
            };
            let base = canonicalize_lenient(&target, depth + 1)?;
            return Ok(append(base, &missing));
        }
        match current.components().next_back() {
            Some(Component::Normal(name)) => missing.push(name.to_owned()),
            Some(Component::CurDir) => {}
            Some(Component::ParentDir) => return Err(LenientError::DotDotInMissingPart),
            Some(Component::RootDir | Component::Prefix(_)) | None => {
                return Err(LenientError::Io(io::Error::new(
                    io::ErrorKind::NotFound,
                    "no existing ancestor",
                )));
            }
        }
        if !current.pop() {
            return Err(LenientError::Io(io::Error::new(
                io::ErrorKind::NotFound,
                "no existing ancestor",
            )));
        }
    }
}

fn is_missing(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
    )
}

fn append(mut base: PathBuf, missing: &[OsString]) -> PathBuf {
    for name in missing.iter().rev() {
        base.push(name);
    }
    base
}

/// The canonical directories file tools may touch: the workspace first, then the extras.
/// Resolved once per session, like the sandbox's: each resolution reads every link on the
/// way, and they were a fifth of a round's time when done for every check.
pub(crate) fn allowed_dirs(ctx: &ToolContext) -> Vec<PathBuf> {
    ctx.allowed_dirs(|| {
        let config = ctx.config();
        std::iter::once(&config.workspace_root)
            .chain(&config.extra_allowed_dirs)
            .chain(std::iter::once(&config.offload_dir))
            .map(|dir| canonicalize_lenient(dir, 0).unwrap_or_else(|_| dir.clone()))
            .collect()
    })
    .to_vec()
}

/// The directories a checked path is opened beneath: the allowed ones, and for a file
/// approved outside them, the nearest directory above it that exists.
pub(crate) fn open_roots(ctx: &ToolContext) -> Vec<PathBuf> {
    let mut roots = allowed_dirs(ctx);
    roots.extend(ctx.approved_path().and_then(nearest_existing_dir));
    roots
}

/// The nearest directory above `path` that exists: the root a file approved outside the
/// workspace is opened beneath, so no link swapped in later leads anywhere else.
fn nearest_existing_dir(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .map(Path::to_path_buf)
}

fn check_allowed(ctx: &ToolContext, raw: &str, resolved: &Path) -> Result<(), ToolError> {
    let allowed = allowed_dirs(ctx);
    if allowed.iter().any(|dir| resolved.starts_with(dir)) || ctx.approved_path() == Some(resolved)
    {
        return Ok(());
    }
    let workspace = allowed
        .first()
        .map_or_else(|| ctx.workspace_root().to_path_buf(), Clone::clone);
    let how = if Path::new(raw) == resolved {
        String::new()
    } else {
        format!(" (it resolves to {})", resolved.display())
    };
    Err(ToolError::Model(format!(
        "`{raw}` is outside the workspace {}{how}. File tools only work inside the workspace; \
         use a path under {}.",
        workspace.display(),
        workspace.display()
    )))
}
