//! Reading a session file back: its lines parsed, repaired (every call answered), a rewind
//! applied, the compactions replayed; and the header alone, for listings.

use super::*;

/// Parses a whole file: the loaded session, the length of its complete lines, and the
/// synthetic tool results the repair added.
pub(super) fn parse_file(
    bytes: &[u8],
    path: &Path,
    compactions: Compactions,
) -> Result<(LoadedSession, usize, Vec<rein_llm::ToolResult>), SessionError> {
    let corrupt = |reason: String| SessionError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    // Only lines ending in a newline are complete: rein writes each with its newline at once.
    let complete_len = bytes
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |last| last + 1);
    if complete_len == 0 {
        return Err(corrupt("the header line is incomplete".to_owned()));
    }
    let mut lines = bytes[..complete_len]
        .split(|&b| b == b'\n')
        .enumerate()
        .map(|(i, l)| (i + 1, l));
    let mut warnings = Vec::new();

    let header = match lines.next().map(|(number, line)| parse_line(line, number)) {
        Some(Parsed::Line(Line::Header(header)) | Parsed::Lossy(Line::Header(header), _)) => header,
        Some(Parsed::Line(_) | Parsed::Lossy(..)) => {
            return Err(corrupt("the first line is not a header".to_owned()));
        }
        Some(Parsed::Skipped(warning)) => return Err(corrupt(warning.to_string())),
        None => return Err(corrupt("the file is empty".to_owned())),
    };
    let mut entries = Vec::new();
    let mut line_count = 1;
    for (number, line) in lines {
        line_count = number;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let parsed = match parse_line(line, number) {
            Parsed::Lossy(line, warning) => {
                warnings.push(warning);
                Parsed::Line(line)
            }
            parsed => parsed,
        };
        match parsed {
            Parsed::Lossy(..) => {}
            Parsed::Line(Line::Message(message)) => entries.push((
                number,
                Entry::Message {
                    line: number,
                    message,
                },
            )),
            Parsed::Line(Line::Event(SessionEvent::Rewind { to_line, id })) => {
                rewind(&mut entries, to_line);
                entries.push((number, Entry::Event(SessionEvent::Rewind { to_line, id })));
            }
            Parsed::Line(Line::Event(event)) => entries.push((number, Entry::Event(event))),
            Parsed::Line(Line::Header(_)) => warnings.push(LoadWarning::MalformedLine {
                line: number,
                reason: "a second header".to_owned(),
            }),
            Parsed::Skipped(warning) => warnings.push(warning),
        }
    }
    if complete_len < bytes.len() {
        // `split` yields an empty piece after the final newline: the cut line is that one.
        warnings.push(LoadWarning::TruncatedLastLine { line: line_count });
    }
    let repaired = repair(entries.into_iter().map(|(_, entry)| entry).collect());
    warnings.extend(repaired.warnings);
    let replayed = match compactions {
        Compactions::Replay => replay(repaired.messages, &repaired.events),
        Compactions::Ignore => replay(repaired.messages, &[]),
    };
    warnings.extend(replayed.warnings);
    let loaded = LoadedSession {
        header,
        messages: replayed.messages,
        anchor: replayed.anchor,
        compactions: replayed.compactions,
        events: repaired.events,
        warnings,
    };
    Ok((loaded, complete_len, repaired.synthetic))
}

/// Drops what a rewind to `to_line` takes back: every message and event after that line,
/// but the tokens used (they were spent).
fn rewind(entries: &mut Vec<(usize, Entry)>, to_line: u64) {
    entries.retain(|(line, entry)| {
        u64::try_from(*line).is_ok_and(|line| line <= to_line)
            || matches!(
                entry,
                Entry::Event(SessionEvent::Usage { .. } | SessionEvent::SubagentUsage { .. })
            )
    });
}

/// The header of a session file, or `None` if it has none this rein can read.
pub(super) fn read_header(path: &Path) -> Option<SessionHeader> {
    let file = File::open(path).ok()?;
    let mut reader = BufReader::with_capacity(4096, file.take(MAX_HEADER_BYTES));
    let mut line = Vec::new();
    reader.read_until(b'\n', &mut line).ok()?;
    if line.pop() != Some(b'\n') {
        return None;
    }
    match parse_line(&line, 1) {
        Parsed::Line(Line::Header(header)) | Parsed::Lossy(Line::Header(header), _) => Some(header),
        Parsed::Line(Line::Message(_) | Line::Event(_))
        | Parsed::Lossy(Line::Message(_) | Line::Event(_), _)
        | Parsed::Skipped(_) => None,
    }
}
