//! The output file of a background command: saved from its pipe on a thread of its own
//! (masked, capped), read back a piece at a time, its last lines for the notice.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::Path;

use super::{NOTICE_LINES, NOTICE_TAIL_BYTES};
use crate::offload;

/// Copies what comes through `pipe` to `file`, masked when a masker is given, up to
/// `cap_bytes`, then only counts it; at the end the file says how much was not saved. On a
/// thread of its own; the receiver hears when it is done.
pub(super) fn save_output(
    mut pipe: io::PipeReader,
    mut file: File,
    cap_bytes: u64,
    mut mask: Option<Box<dyn crate::mask::MaskStream>>,
) -> io::Result<tokio::sync::oneshot::Receiver<()>> {
    let (done, copied) = tokio::sync::oneshot::channel();
    let copy = move || {
        let mut buffer = vec![0u8; 64 * 1024];
        let mut masked = Vec::with_capacity(128 * 1024);
        let mut saved = 0u64;
        let mut more = 0u64;
        let mut writable = true;
        let mut save = |bytes: &[u8], writable: &mut bool| {
            let room = usize::try_from(cap_bytes.saturating_sub(saved)).unwrap_or(usize::MAX);
            let take = room.min(bytes.len());
            // A failed write (a full disk) keeps draining the pipe: the command must not block.
            if *writable && take > 0 {
                *writable = file.write_all(&bytes[..take]).is_ok();
            }
            saved += take as u64;
            more += (bytes.len() - take) as u64;
        };
        loop {
            let n = match pipe.read(&mut buffer) {
                Ok(0) => break,
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            match &mut mask {
                Some(mask) => {
                    masked.clear();
                    mask.push(&buffer[..n], &mut masked);
                    save(&masked, &mut writable);
                }
                None => save(&buffer[..n], &mut writable),
            }
        }
        if let Some(mask) = &mut mask {
            masked.clear();
            mask.finish(&mut masked);
            save(&masked, &mut writable);
        }
        if more > 0 && writable {
            let _ = file.write_all(offload::cap_note(cap_bytes, more).as_bytes());
        }
        let _ = done.send(());
    };
    std::thread::Builder::new()
        .name("rein-bg-output".to_owned())
        .spawn(copy)?;
    Ok(copied)
}

/// Reads at most `max_bytes` of `path` from `from`, cut back to a character boundary unless
/// the file ends there; the text, where the next read starts, and the file's size.
pub(super) fn read_from(
    path: &Path,
    from: u64,
    max_bytes: usize,
) -> io::Result<(String, u64, u64)> {
    let mut file = File::open(path)?;
    let size = file.metadata()?.len();
    let from = from.min(size);
    file.seek(SeekFrom::Start(from))?;
    let mut bytes = Vec::new();
    file.take(max_bytes as u64).read_to_end(&mut bytes)?;
    let whole = from + bytes.len() as u64 >= size;
    if !whole
        && let Err(error) = std::str::from_utf8(&bytes)
        && error.error_len().is_none()
    {
        bytes.truncate(error.valid_up_to());
    }
    let next = from + bytes.len() as u64;
    Ok((String::from_utf8_lossy(&bytes).into_owned(), next, size))
}

/// The output's last few lines.
pub(super) fn last_lines(path: &Path) -> String {
    let Ok(mut file) = File::open(path) else {
        return String::new();
    };
    let size = file.metadata().map_or(0, |m| m.len());
    let from = size.saturating_sub(NOTICE_TAIL_BYTES);
    let mut bytes = Vec::new();
    if file.seek(SeekFrom::Start(from)).is_err() || file.read_to_end(&mut bytes).is_err() {
        return String::new();
    }
    let text = String::from_utf8_lossy(&bytes);
    let lines: Vec<&str> = text.lines().collect();
    let skip = lines.len().saturating_sub(NOTICE_LINES);
    lines[skip..].join("\n")
}
