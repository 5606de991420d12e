//! What a finished call shows under its line, read from its display payload (never from the
//! text the model got, but for plain-text results and error messages): one head line
//! (`120 lines`, `exit 1 · 3.2 s`, `+3 −1`) and, for a diff, a command's output or plain text,
//! a few lines beneath it. Everything foreign is neutralised before it is styled.

use std::time::Duration;

use rein_core::face::Display;

use super::Style;
use super::diff::diff_body;
use super::safe::one_line;

/// Lines of a diff shown under an edit.
const DIFF_SHOWN_LINES: usize = 12;
/// Lines of a command's output shown under its result (the payload holds its last few).
const TAIL_SHOWN_LINES: usize = 5;
/// Lines of a plain-text result shown under its first one.
const TEXT_SHOWN_LINES: usize = 4;
/// Characters of one line of foreign text shown; the rest is cut with `…`.
const LINE_SHOWN_CHARS: usize = 160;
/// A call that ran at least this long says how long.
const NOTABLE_DURATION: Duration = Duration::from_secs(1);

/// A finished call, as the renderer needs it.
#[derive(Debug)]
pub(super) struct Finished<'a> {
    /// What to show.
    pub(super) display: &'a Display,
    /// The text the model got: shown only for a plain-text result.
    pub(super) content: &'a str,
    /// The first line of `content`: an error's message.
    pub(super) summary: &'a str,
    /// Whether the call failed.
    pub(super) is_error: bool,
    /// How long it ran.
    pub(super) duration: Duration,
    /// Whether Ctrl+O shows a command's whole output here (the REPL).
    pub(super) pager: bool,
}

/// What a finished call shows.
#[derive(Debug)]
pub(super) struct Shown {
    /// One line, safe to print, not yet styled.
    pub(super) head: String,
    /// Whether the call failed (the head is shown as an error).
    pub(super) failed: bool,
    /// Lines under the head, safe and styled.
    pub(super) body: Vec<String>,
}

/// What `finished` shows.
pub(super) fn shown(s: Style, finished: &Finished<'_>) -> Shown {
    if finished.is_error && !explains_failure(finished.display) {
        return Shown {
            head: one_line(finished.summary, LINE_SHOWN_CHARS),
            failed: true,
            body: Vec::new(),
        };
    }
    let (mut head, body) = match finished.display {
        // The text is the tool's own: nothing of rein's is added to it.
        Display::Text => {
            let (head, body) = text(s, finished.content);
            return Shown {
                head,
                failed: false,
                body,
            };
        }
        Display::FileRead {
            first_line,
            lines_shown,
            total_lines,
            truncated,
            ..
        } => (
            file_read(*first_line, *lines_shown, *total_lines, *truncated),
            Vec::new(),
        ),
        Display::FileEdit {
            diff,
            added,
            removed,
            created,
            ..
        } => (
            file_edit(*added, *removed, *created),
            diff_body(s, diff, DIFF_SHOWN_LINES),
        ),
        Display::Command {
            exit_code,
            duration,
            timed_out,
            output_tail,
            output_lines,
            saved_to,
            ..
        } => {
            let mut body = output_tail_body(s, output_tail, *output_lines, finished.pager);
            if let Some(path) = saved_to {
                body.push(s.dim(&format!(
                    "whole output saved to {}",
                    one_line(path, usize::MAX)
                )));
            }
            return Shown {
                head: command_head(*exit_code, *duration, *timed_out, output_tail),
                failed: finished.is_error,
                body,
            };
        }
        Display::Search { matches, files } => (search(*matches, *files), Vec::new()),
        Display::Listing { count, truncated } => (listing(*count, *truncated), Vec::new()),
        Display::WebPage {
            status,
            content_type,
            bytes,
            truncated,
            ..
        } => (
            web_page(*status, content_type, *bytes, *truncated),
            Vec::new(),
        ),
        Display::Image {
            media_type,
            width,
            height,
            resized_from,
            ..
        } => (
            image(media_type, *width, *height, *resized_from),
            Vec::new(),
        ),
    };
    if finished.duration >= NOTABLE_DURATION {
        head.push_str(&format!(" · {}", human_duration(finished.duration)));
    }
    Shown {
        head,
        failed: finished.is_error,
        body,
    }
}

/// Whether the payload of a failed call says what went wrong better than its message.
fn explains_failure(display: &Display) -> bool {
    match display {
        // Exit code, timeout and the output's end.
        Display::Command { .. } => true,
        Display::Text
        | Display::FileRead { .. }
        | Display::FileEdit { .. }
        | Display::Search { .. }
        | Display::Listing { .. }
        | Display::WebPage { .. }
        | Display::Image { .. } => false,
    }
}

/// Plain text: its first line, then a few more.
fn text(s: Style, content: &str) -> (String, Vec<String>) {
    let lines: Vec<&str> = content.lines().collect();
    let Some(start) = lines.iter().position(|l| !l.trim().is_empty()) else {
        return ("no output".to_owned(), Vec::new());
    };
    let end = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(start, |last| last + 1);
    let head = one_line(lines[start], LINE_SHOWN_CHARS);
    let rest = &lines[start + 1..end.max(start + 1)];
    let mut body: Vec<String> = rest
        .iter()
        .take(TEXT_SHOWN_LINES)
        .map(|line| gutter(s, line))
        .collect();
    if rest.len() > TEXT_SHOWN_LINES {
        body.push(s.dim(&format!(
            "… {}",
            counted(
                (rest.len() - TEXT_SHOWN_LINES) as u64,
                "more line",
                "more lines"
            )
        )));
    }
    (head, body)
}

/// `120 lines`, `lines 1-2000 of 5000`, `empty file`.
fn file_read(first: u64, shown: u64, total: Option<u64>, truncated: bool) -> String {
    if shown == 0 {
        return "empty file".to_owned();
    }
    let last = first + shown - 1;
    let range = if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    };
    match total {
        Some(total) if first == 1 && total == shown => {
            let lines = counted(shown, "line", "lines");
            // Every line, but some too long to show whole.
            if truncated {
                format!("{lines} (long lines cut)")
            } else {
                lines
            }
        }
        Some(total) => format!("{range} of {total}"),
        // A file too big to count: rein read this far.
        None if truncated => format!("{range}; more follow"),
        None => range,
    }
}

/// `+3 −1`, `created · 12 lines`.
fn file_edit(added: u64, removed: u64, created: bool) -> String {
    if created {
        return match added {
            0 => "created, empty".to_owned(),
            _ => format!("created · {}", counted(added, "line", "lines")),
        };
    }
    if added == 0 && removed == 0 {
        return "no change".to_owned();
    }
    format!("+{added} −{removed}")
}

/// `exit 0`, `exit 1 · 3.2 s`, `timed out after 2 min`, with `no output` when there was none.
fn command_head(
    exit_code: Option<i32>,
    duration: Duration,
    timed_out: bool,
    output_tail: &str,
) -> String {
    let mut head = if timed_out {
        format!("timed out after {}", human_duration(duration))
    } else {
        let mut head = match exit_code {
            Some(code) => format!("exit {code}"),
            None => "killed by a signal".to_owned(),
        };
        if duration >= NOTABLE_DURATION {
            head.push_str(&format!(" · {}", human_duration(duration)));
        }
        head
    };
    if output_tail.trim().is_empty() {
        head.push_str(" · no output");
    }
    head
}

/// The end of a command's output (`output_tail`, of `total_lines` printed), with how many
/// lines are hidden above it (`pager`: and the key that shows them).
pub(super) fn output_tail_body(
    s: Style,
    output_tail: &str,
    total_lines: u64,
    pager: bool,
) -> Vec<String> {
    if output_tail.trim().is_empty() {
        return Vec::new();
    }
    let lines: Vec<&str> = output_tail.trim_end().lines().collect();
    let from = lines.len().saturating_sub(TAIL_SHOWN_LINES);
    let mut body = Vec::new();
    let hidden = total_lines.saturating_sub((lines.len() - from) as u64);
    if hidden > 0 {
        let mut line = format!("… {} above", counted(hidden, "line", "lines"));
        if pager {
            line.push_str(" · Ctrl+O shows all");
        }
        body.push(s.dim(&line));
    }
    body.extend(lines[from..].iter().map(|line| gutter(s, line)));
    body
}

/// `0 matches`, `1 match in 1 file`, `12 matches in 3 files`.
fn search(matches: u64, files: u64) -> String {
    let found = counted(matches, "match", "matches");
    if matches == 0 {
        return found;
    }
    format!("{found} in {}", counted(files, "file", "files"))
}

/// `40 files`, `250 files (list cut)`.
fn listing(count: u64, truncated: bool) -> String {
    let files = counted(count, "file", "files");
    if truncated {
        format!("{files} (list cut)")
    } else {
        files
    }
}

fn web_page(status: u16, content_type: &str, bytes: u64, truncated: bool) -> String {
    let kind = content_type.split(';').next().unwrap_or_default().trim();
    let size = if bytes >= 1024 * 1024 {
        format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
    } else if bytes >= 1024 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{bytes} bytes")
    };
    let cut = if truncated { ", cut" } else { "" };
    format!("HTTP {status} · {kind} · {size}{cut}")
}

fn image(media_type: &str, width: u32, height: u32, resized_from: Option<(u32, u32)>) -> String {
    match resized_from {
        Some((w, h)) => format!("{media_type} {width}×{height} (scaled down from {w}×{h})"),
        None => format!("{media_type} {width}×{height}"),
    }
}

/// A line of foreign text under a result, behind a gutter.
fn gutter(s: Style, line: &str) -> String {
    let text = one_line(line, LINE_SHOWN_CHARS);
    if text.trim().is_empty() {
        s.dim("│")
    } else {
        format!("{} {text}", s.dim("│"))
    }
}

fn counted(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `0.4 s`, `42 s`, `2 min`, `3 min 5 s`.
pub(super) fn human_duration(duration: Duration) -> String {
    let secs = duration.as_secs();
    match secs {
        0..10 => format!("{:.1} s", duration.as_secs_f64()),
        10..60 => format!("{secs} s"),
        _ if secs.is_multiple_of(60) => format!("{} min", secs / 60),
        _ => format!("{} min {} s", secs / 60, secs % 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_reads_say_what_part_of_the_file_was_shown() {
        assert_eq!(file_read(0, 0, Some(0), false), "empty file");
        assert_eq!(file_read(1, 1, Some(1), false), "1 line");
        assert_eq!(file_read(1, 120, Some(120), false), "120 lines");
        assert_eq!(file_read(1, 2000, Some(5000), true), "lines 1-2000 of 5000");
        assert_eq!(
            file_read(4001, 1000, Some(5000), false),
            "lines 4001-5000 of 5000"
        );
        assert_eq!(file_read(7, 1, Some(9), false), "line 7 of 9");
        assert_eq!(file_read(1, 3, Some(3), true), "3 lines (long lines cut)");
        assert_eq!(file_read(1, 2000, None, true), "lines 1-2000; more follow");
    }

    #[test]
    fn counts_and_durations_read_naturally() {
        assert_eq!(search(0, 0), "0 matches");
        assert_eq!(search(1, 1), "1 match in 1 file");
        assert_eq!(search(12, 3), "12 matches in 3 files");
        assert_eq!(listing(1, false), "1 file");
        assert_eq!(listing(250, true), "250 files (list cut)");
        assert_eq!(file_edit(0, 0, false), "no change");
        assert_eq!(file_edit(0, 0, true), "created, empty");
        assert_eq!(human_duration(Duration::from_millis(1340)), "1.3 s");
        assert_eq!(human_duration(Duration::from_secs(42)), "42 s");
        assert_eq!(human_duration(Duration::from_millis(120_020)), "2 min");
        assert_eq!(human_duration(Duration::from_secs(185)), "3 min 5 s");
    }

    #[test]
    fn plain_text_shows_its_first_lines() {
        let s = Style::plain();
        assert_eq!(text(s, ""), ("no output".to_owned(), Vec::<String>::new()));
        assert_eq!(text(s, "\n\ndone\n\n"), ("done".to_owned(), Vec::new()));
        let (head, body) = text(s, "a\nb\n\nc\nd\ne\nf\n");
        assert_eq!(head, "a");
        assert_eq!(body, ["│ b", "│", "│ c", "│ d", "… 2 more lines"]);
    }
}
