//! read_file: numbered lines of a text file, a window at a time, recording the read.

mod scan;

use std::io::Read;
use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;

pub(crate) use scan::count_newlines;
use scan::{Scan, Stop, Window};

use crate::beneath::{Confined, Target, describe};
use crate::paths::{display_path, resolve};
use crate::stamp::{full_hash_applies, sampled_stamp};
use crate::{Display, Tool, ToolContext, ToolError, ToolKind, ToolOutput};

/// Lines shown when the model gives no limit.
pub const READ_DEFAULT_LIMIT_LINES: u64 = 2000;
/// Lines longer than this are cut with a marker.
pub const READ_MAX_LINE_CHARS: usize = 2000;
/// A NUL byte in this many leading bytes marks a file as binary.
pub const BINARY_SNIFF_BYTES: usize = 8 * 1024;
/// Room kept in the output budget for the footer and notices.
const FOOTER_RESERVE_CHARS: usize = 400;
/// A text file up to this size whose bytes are all in the page cache is read on the async
/// thread.
const INLINE_MAX_BYTES: u64 = 64 * 1024;

/// Arguments of read_file.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File path.
    pub file_path: String,
    /// First line (from 1).
    pub offset: Option<u64>,
    /// Max lines (default 2000).
    pub limit: Option<u64>,
}

/// The read_file tool.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadFile;

#[async_trait]
impl Tool for ReadFile {
    type Args = ReadFileArgs;

    fn name(&self) -> &'static str {
        "read_file"
    }

    fn description(&self) -> &'static str {
        "Read a text file; lines come numbered `N<TAB>text`. Page with offset/limit."
    }

    fn kind(&self) -> ToolKind {
        ToolKind::ReadOnly
    }

    async fn run(&self, args: ReadFileArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        // A small text file already in the page cache is read right here: handing it to a
        // blocking thread and back costs two thread wake-ups, more than the read itself.
        // Its bytes are never waited for here (a file not wholly cached goes to the blocking
        // threads); its path's lookup is, as the permission check's already was.
        if let Some(read) = read_file(&args, ctx, Io::CachedOnly).transpose() {
            return read;
        }
        let ctx = ctx.clone();
        crate::blocking::run(move || {
            read_file(&args, &ctx, Io::Wait)?
                .ok_or_else(|| ToolError::Internal("read_file read nothing".to_owned()))
        })
        .await
    }
}

/// How a read may touch the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Io {
    /// Wait for it (on a blocking thread).
    Wait,
    /// Not at all: a file that is not a small text file whose bytes are all cached yet is
    /// left for [`Io::Wait`] (`Ok(None)`).
    CachedOnly,
}

fn read_file(
    args: &ReadFileArgs,
    ctx: &ToolContext,
    io: Io,
) -> Result<Option<ToolOutput>, ToolError> {
    if io == Io::CachedOnly && ctx.config().client_files.is_some() {
        return Ok(None);
    }
    if args.limit == Some(0) {
        return Err(ToolError::model("limit must be at least 1."));
    }
    let path = resolve(ctx, &args.file_path)?;
    let display = display_path(ctx, &path);
    let io_err = |err: std::io::Error| ToolError::Model(format!("Cannot read {display}: {err}."));
    let target = Confined::new(ctx, &path)
        .and_then(|confined| confined.target())
        .map_err(io_err)?;
    let (mut file, meta) = match target {
        Target::File(file, meta) => (file, meta),
        // The message lists the directory's names: a listing for a blocking thread.
        Target::Missing if io == Io::CachedOnly => return Ok(None),
        Target::Missing => return Err(not_found(&path, &display)),
        Target::Directory => {
            return Err(ToolError::Model(format!(
                "{display} is a directory. List its files with glob (pattern \"*\", path \"{display}\")."
            )));
        }
        Target::Other(kind) => {
            return Err(ToolError::Model(format!(
                "{display} is {}, not a regular file; read_file reads files only.",
                describe(kind)
            )));
        }
    };
    // The whole file, when it may be read here: all of it from the page cache, read once.
    let cached = match io {
        Io::Wait => None,
        Io::CachedOnly => match cached_whole(&file, &meta) {
            Some(bytes) => Some(bytes),
            None => return Ok(None),
        },
    };
    if let Some(client) = &ctx.config().client_files {
        // The front-end's buffer (unsaved changes included) rather than the disk's bytes.
        let text = client.read(&path).map_err(io_err)?;
        return read_buffer(args, ctx, &path, &display, text.as_bytes()).map(Some);
    }
    let mut head = Vec::with_capacity(BINARY_SNIFF_BYTES);
    match &cached {
        Some(bytes) => head.extend_from_slice(&bytes[..bytes.len().min(BINARY_SNIFF_BYTES)]),
        None => {
            (&mut file)
                .take(BINARY_SNIFF_BYTES as u64)
                .read_to_end(&mut head)
                .map_err(io_err)?;
        }
    }
    if let Some(format) = crate::image::sniff(&head) {
        if io == Io::CachedOnly {
            // Decoding and scaling a picture is work for a blocking thread.
            return Ok(None);
        }
        return read_image(&mut file, head, format, meta.len(), &display, ctx).map(Some);
    }
    if memchr::memchr(0, &head).is_some() {
        return Err(ToolError::Model(format!(
            "{display} is a binary file ({}); read_file shows text only.",
            human_size(meta.len())
        )));
    }
    let window = window(args, ctx, full_hash_applies(meta.len()));
    let cancel = ctx.cancel_token();
    let scanned = match &cached {
        Some(bytes) => scan::scan(bytes.as_slice(), Some(meta.len()), window, cancel),
        None => scan::scan(
            head.as_slice().chain(&file),
            Some(meta.len()),
            window,
            cancel,
        ),
    };
    let scan = scanned.map_err(|err| {
        if cancel.is_cancelled() {
            ToolError::Cancelled {
                partial: format!("(reading {display} was cancelled)"),
            }
        } else {
            io_err(err)
        }
    })?;

    // The stamp covers what the model saw as of this read.
    let stamp = if full_hash_applies(meta.len()) && scan.total_lines.is_some() {
        scan.hasher.finish(meta.modified().ok())
    } else {
        sampled_stamp(&file, &meta).map_err(io_err)?
    };
    ctx.record_read(path.clone(), stamp);
    render(&scan, window, meta.len(), &display).map(Some)
}

/// All of a small `file` when every byte of it is in the page cache, read without waiting
/// for a disk; `None` for anything else.
///
/// One byte more than the size is asked for, and exactly the size must come back: the end
/// of the file was reached. So a file that grew since its size was taken, or a pseudo-file
/// whose size says nothing (`/proc`, some FUSE mounts report 0), is not read here; and a
/// filesystem whose reads cannot promise not to wait (tmpfs and overlayfs on Linux 6.18)
/// refuses outright, once for its device.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn cached_whole(file: &std::fs::File, meta: &std::fs::Metadata) -> Option<Vec<u8>> {
    use std::os::unix::fs::MetadataExt;
    use std::sync::Mutex;

    /// Devices whose files refused a read that may not wait.
    static NO_NOWAIT: Mutex<Vec<u64>> = Mutex::new(Vec::new());
    let len = meta.len();
    if len > INLINE_MAX_BYTES {
        return None;
    }
    let refused = |devices: &Vec<u64>| devices.contains(&meta.dev());
    if refused(&NO_NOWAIT.lock().unwrap_or_else(|e| e.into_inner())) {
        return None;
    }
    let size = usize::try_from(len).ok()?;
    let mut bytes = vec![0; size + 1];
    let read = rustix::io::preadv2(
        file,
        &mut [std::io::IoSliceMut::new(&mut bytes)],
        0,
        rustix::io::ReadWriteFlags::NOWAIT,
    );
    match read {
        Ok(n) if n == size => {
            bytes.truncate(size);
            Some(bytes)
        }
        Err(rustix::io::Errno::OPNOTSUPP) => {
            let mut devices = NO_NOWAIT.lock().unwrap_or_else(|e| e.into_inner());
            if !refused(&devices) {
                devices.push(meta.dev());
            }
            None
        }
        Ok(_) | Err(_) => None,
    }
}

/// Elsewhere no read can promise not to wait.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn cached_whole(_file: &std::fs::File, _meta: &std::fs::Metadata) -> Option<Vec<u8>> {
    None
}

/// A picture: given to the model when it takes images, else the text answer.
fn read_image(
    file: &mut std::fs::File,
    mut bytes: Vec<u8>,
    format: image::ImageFormat,
    len: u64,
    display: &str,
    ctx: &ToolContext,
) -> Result<ToolOutput, ToolError> {
    let name = crate::image::format_name(format);
    if !ctx.config().vision {
        return Err(ToolError::Model(format!(
            "{display} is a binary file ({name} image, {}); read_file shows text only, and the \
             model in use does not take images.",
            human_size(len)
        )));
    }
    if len > crate::image::MAX_IMAGE_FILE_BYTES {
        return Err(ToolError::Model(format!(
            "{display} is a {name} image of {}, too big to give the model (rein reads images \
             of up to {}).",
            human_size(len),
            human_size(crate::image::MAX_IMAGE_FILE_BYTES)
        )));
    }
    file.read_to_end(&mut bytes)
        .map_err(|err| ToolError::Model(format!("Cannot read {display}: {err}.")))?;
    let image = crate::image::prepare(&bytes, format).map_err(|why| {
        ToolError::Model(format!("{display} cannot be shown to the model: {why}."))
    })?;
    let scaled = match image.resized_from {
        Some((w, h)) => format!(", scaled down from {w}×{h} to fit the model's limits"),
        None => String::new(),
    };
    let text = format!(
        "{display}: a {name} image, {}×{} pixels{scaled}. The image is attached.",
        image.width, image.height
    );
    let shown = Display::Image {
        path: display.to_owned(),
        media_type: image.media_type.to_owned(),
        width: image.width,
        height: image.height,
        bytes: image.bytes,
        resized_from: image.resized_from,
    };
    Ok(ToolOutput::success(text)
        .with_display(shown)
        .with_image(image))
}

/// The lines `args` asks for, within the output budget; `read_to_end` when the whole file
/// is read for its stamp.
fn window(args: &ReadFileArgs, ctx: &ToolContext, read_to_end: bool) -> Window {
    Window {
        first_line: args.offset.unwrap_or(1).max(1),
        limit: args.limit.unwrap_or(READ_DEFAULT_LIMIT_LINES),
        budget_chars: ctx
            .config()
            .output_budget_chars
            .saturating_sub(FOOTER_RESERVE_CHARS)
            .max(1),
        max_line_chars: READ_MAX_LINE_CHARS,
        read_to_end,
    }
}

/// read_file over a front-end's buffer: the same window and footer, stamped by content.
fn read_buffer(
    args: &ReadFileArgs,
    ctx: &ToolContext,
    path: &Path,
    display: &str,
    bytes: &[u8],
) -> Result<ToolOutput, ToolError> {
    let window = window(args, ctx, true);
    let scan = scan::scan(bytes, Some(bytes.len() as u64), window, ctx.cancel_token())
        .map_err(|err| ToolError::Model(format!("Cannot read {display}: {err}.")))?;
    ctx.record_read(path.to_owned(), crate::stamp::stamp_of_bytes(bytes, None));
    render(&scan, window, bytes.len() as u64, display)
}

fn render(
    scan: &Scan,
    window: Window,
    file_len: u64,
    display: &str,
) -> Result<ToolOutput, ToolError> {
    if scan.total_lines == Some(0) {
        return Ok(
            ToolOutput::success("(empty file)").with_display(Display::FileRead {
                path: display.to_owned(),
                first_line: 0,
                lines_shown: 0,
                total_lines: Some(0),
                truncated: false,
            }),
        );
    }
    let Some(last) = scan.lines.last() else {
        let total = scan.total_lines.unwrap_or(0);
        return Err(ToolError::Model(format!(
            "offset {} is past the end of the file, which has {total} lines.",
            window.first_line
        )));
    };
    let width = last.number.to_string().len();
    let mut out = String::new();
    for line in &scan.lines {
        out.push_str(&format!("{:>width$}\t{}", line.number, line.text));
        if line.cut {
            out.push_str(&format!(
                " [... line cut at {READ_MAX_LINE_CHARS} characters]"
            ));
        }
        out.push('\n');
    }
    let first = scan.lines.first().map_or(window.first_line, |l| l.number);
    let next = last.number + 1;
    let why = match scan.stop {
        Stop::EndOfFile => None,
        Stop::Limit => Some(""),
        Stop::Budget => Some("; output size limit reached"),
    };
    if let Some(why) = why {
        match scan.total_lines {
            Some(total) => out.push_str(&format!(
                "({total} lines total, showing {first}-{}{why}; continue with offset={next})\n",
                last.number
            )),
            None => out.push_str(&format!(
                "(showing lines {first}-{} of a {} file{why}; more lines follow; continue with offset={next})\n",
                last.number,
                human_size(file_len)
            )),
        }
    }
    if scan.lossy {
        out.push_str("(this file is not valid UTF-8: invalid bytes are shown as \u{fffd})\n");
    }
    let shown = Display::FileRead {
        path: display.to_owned(),
        first_line: first,
        lines_shown: scan.lines.len() as u64,
        total_lines: scan.total_lines,
        truncated: why.is_some() || scan.lines.iter().any(|l| l.cut),
    };
    Ok(ToolOutput::success(out).with_display(shown))
}

fn not_found(path: &Path, display: &str) -> ToolError {
    let Some(parent) = path.parent() else {
        return ToolError::Model(format!("File not found: {display}."));
    };
    if !parent.is_dir() {
        return ToolError::Model(format!(
            "File not found: {display} (its directory does not exist either)."
        ));
    }
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let stem = name.split('.').next().unwrap_or_default().to_owned();
    let mut similar: Vec<String> = std::fs::read_dir(parent)
        .into_iter()
        .flatten()
        .take(10_000)
        .filter_map(Result::ok)
        .map(|entry| entry.file_name().to_string_lossy().into_owned())
        .filter(|candidate| {
            let lower = candidate.to_lowercase();
            lower == name || (!stem.is_empty() && lower.split('.').next() == Some(stem.as_str()))
        })
        .collect();
    similar.sort();
    similar.truncate(5);
    if similar.is_empty() {
        ToolError::Model(format!("File not found: {display}."))
    } else {
        ToolError::Model(format!(
            "File not found: {display}. In the same directory: {}.",
            similar.join(", ")
        ))
    }
}

/// A size for people: `812 B`, `12.3 KB`, `1.0 GB`.
pub(crate) fn human_size(bytes: u64) -> String {
    const UNITS: [&str; 4] = ["KB", "MB", "GB", "TB"];
    if bytes < 1000 {
        return format!("{bytes} B");
    }
    let mut value = bytes as f64 / 1000.0;
    let mut unit = 0;
    while value >= 1000.0 && unit + 1 < UNITS.len() {
        value /= 1000.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use tokio_util::sync::CancellationToken;

    use super::*;

    #[test]
    fn a_huge_file_gets_a_footer_without_a_total() {
        let window = Window {
            first_line: 1,
            limit: 2,
            budget_chars: 10_000,
            max_line_chars: READ_MAX_LINE_CHARS,
            read_to_end: false,
        };
        let scan = scan::scan(&b"a\nb\nc\n"[..], None, window, &CancellationToken::new()).unwrap();
        let out = render(&scan, window, 1_300_000_000, "big.log").unwrap();
        assert_eq!(
            out.content,
            "1\ta\n2\tb\n(showing lines 1-2 of a 1.3 GB file; more lines follow; continue with offset=3)\n"
        );
    }

    fn args(file_path: &str) -> ReadFileArgs {
        ReadFileArgs {
            file_path: file_path.to_owned(),
            offset: None,
            limit: None,
        }
    }

    /// Whether the filesystem holding `path` takes reads that may not wait (tmpfs and
    /// overlayfs refuse them on Linux 6.18: nothing is read on the async thread there).
    fn takes_nowait_reads(path: &Path) -> bool {
        let file = std::fs::File::open(path).unwrap();
        let read = rustix::io::preadv2(
            &file,
            &mut [std::io::IoSliceMut::new(&mut [0; 1])],
            0,
            rustix::io::ReadWriteFlags::NOWAIT,
        );
        read != Err(rustix::io::Errno::OPNOTSUPP)
    }

    /// A small text file whose bytes are cached is read on the spot, with the same answer as
    /// from a blocking thread; a larger file, a picture or a missing one (whose message
    /// lists the directory) is left for a blocking thread.
    #[test]
    fn only_small_cached_text_is_read_without_waiting() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let ctx = ToolContext::new(crate::ToolConfig::new(&root, root.join("offload")));
        std::fs::write(root.join("small.txt"), "one\ntwo\n").unwrap();
        std::fs::write(root.join("empty.txt"), "").unwrap();
        let waited = read_file(&args("small.txt"), &ctx, Io::Wait)
            .unwrap()
            .unwrap();
        assert_eq!(waited.content, "1\tone\n2\ttwo\n");
        if takes_nowait_reads(&root.join("small.txt")) {
            let inline = read_file(&args("small.txt"), &ctx, Io::CachedOnly)
                .unwrap()
                .expect("a small file just written is in the page cache");
            assert_eq!(inline.content, waited.content);
            let empty = read_file(&args("empty.txt"), &ctx, Io::CachedOnly).unwrap();
            let waited_empty = read_file(&args("empty.txt"), &ctx, Io::Wait).unwrap();
            assert_eq!(empty.unwrap().content, waited_empty.unwrap().content);
        }

        let big = "x".repeat(79) + "\n";
        std::fs::write(root.join("big.txt"), big.repeat(1000)).unwrap();
        let big_inline = read_file(&args("big.txt"), &ctx, Io::CachedOnly).unwrap();
        assert!(big_inline.is_none());
        assert!(
            read_file(&args("big.txt"), &ctx, Io::Wait)
                .unwrap()
                .is_some()
        );

        let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
        std::fs::write(root.join("p.png"), png).unwrap();
        let png_inline = read_file(&args("p.png"), &ctx, Io::CachedOnly).unwrap();
        assert!(png_inline.is_none());
        let missing = read_file(&args("missing.txt"), &ctx, Io::CachedOnly).unwrap();
        assert!(missing.is_none());
        // Mistakes in the arguments are answered on the spot.
        let zero = ReadFileArgs {
            limit: Some(0),
            ..args("small.txt")
        };
        let zero = read_file(&zero, &ctx, Io::CachedOnly);
        assert!(matches!(zero, Err(ToolError::Model(_))), "{zero:?}");
    }

    /// A file whose size says nothing of its content (`/proc`'s are 0 bytes long) or that
    /// has grown since its size was taken is never read on the async thread: only a read
    /// that reaches the end at the size does.
    #[test]
    fn a_file_longer_than_its_size_is_not_read_without_waiting() {
        let status = std::fs::File::open("/proc/self/status").unwrap();
        let meta = status.metadata().unwrap();
        assert_eq!(meta.len(), 0);
        assert!(cached_whole(&status, &meta).is_none());

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("growing.log");
        std::fs::write(&path, "first\n").unwrap();
        let file = std::fs::File::open(&path).unwrap();
        let before = file.metadata().unwrap();
        std::fs::write(&path, "first\nsecond\n").unwrap();
        assert!(cached_whole(&file, &before).is_none());
        if takes_nowait_reads(&path) {
            let now = file.metadata().unwrap();
            assert_eq!(cached_whole(&file, &now).unwrap(), b"first\nsecond\n");
        }
    }

    #[test]
    fn sizes_read_like_people_write_them() {
        assert_eq!(human_size(812), "812 B");
        assert_eq!(human_size(12_300), "12.3 KB");
        assert_eq!(human_size(1_000_000_000), "1.0 GB");
    }
}
