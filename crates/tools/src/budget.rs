//! The output budget every tool result passes: a result above the budget is saved whole to a
//! file in the offload directory, and the model gets its head and tail (errors are usually at
//! the end), the path, and how to read the rest. Nothing is dropped silently.

use std::io::Write;
use std::path::PathBuf;

use crate::ToolConfig;
use crate::offload;
use crate::read_file::READ_MAX_LINE_CHARS;

/// Room kept in the budget for the notice between the head and the tail.
pub(crate) const NOTICE_RESERVE_CHARS: usize = 600;

/// Keeps `content` within the configured budget, offloading the whole of it when it is over.
/// `tool` names the offload file.
pub fn apply_output_budget(content: String, config: &ToolConfig, tool: &str) -> String {
    let budget = config.output_budget_chars;
    if fits(&content, budget) {
        return content;
    }
    let saved = save_offload(&content, config, tool);
    let cut = Cut::of_text(&content, budget.saturating_sub(NOTICE_RESERVE_CHARS) / 2);
    let notice = offload_notice(&cut, &saved);
    cut.assemble(&notice)
}

/// How an offload notice tells the model to read the saved output back: the budget's notice
/// and the bash tool's both write `read_file, file_path="PATH"`.
const READ_BACK: &str = "read_file, file_path=\"";

/// The file where a tool result's whole output was saved, as its offload notice names it
/// (the budget's, or the bash tool's): so that a result cut again later, to save context,
/// can still point the model at the whole. `None` when the result names no such file.
pub fn saved_output_path(content: &str) -> Option<&str> {
    content
        .lines()
        .rev()
        .filter(|line| line.starts_with("[... ") && line.ends_with(" ...]"))
        .find_map(|line| {
            let start = line.find(READ_BACK)? + READ_BACK.len();
            let rest = &line[start..];
            let path = &rest[..rest.find('"')?];
            (!path.is_empty()).then_some(path)
        })
}

/// Whether `text` has at most `budget` characters.
pub(crate) fn fits(text: &str, budget: usize) -> bool {
    // Bytes bound characters from above: the common case costs no counting.
    text.len() <= budget || text.chars().count() <= budget
}

/// Where a whole result was saved.
struct Saved {
    path: PathBuf,
    /// Set when the result was bigger than the cap: how much of it the file holds.
    capped_at: Option<u64>,
}

fn save_offload(content: &str, config: &ToolConfig, tool: &str) -> Result<Saved, String> {
    let cap = usize::try_from(config.offload_max_bytes).unwrap_or(usize::MAX);
    let (kept, capped_at) = if content.len() > cap {
        let end = (0..=cap)
            .rev()
            .find(|&i| content.is_char_boundary(i))
            .unwrap_or(0);
        (&content[..end], Some(config.offload_max_bytes))
    } else {
        (content, None)
    };
    let dir = &config.offload_dir;
    let fail =
        |err: std::io::Error| format!("saving the full output to {} failed: {err}", dir.display());
    let (path, mut file) = offload::create(dir, tool).map_err(fail)?;
    let mut write = || -> std::io::Result<()> {
        file.write_all(kept.as_bytes())?;
        if let Some(cap) = capped_at {
            let more = (content.len() - kept.len()) as u64;
            file.write_all(offload::cap_note(cap, more).as_bytes())?;
        }
        Ok(())
    };
    match write() {
        Ok(()) => Ok(Saved { path, capped_at }),
        Err(err) => {
            // A part-written file would pass for the whole: remove it.
            let _ = std::fs::remove_file(&path);
            Err(fail(err))
        }
    }
}

fn offload_notice(cut: &Cut<'_>, saved: &Result<Saved, String>) -> String {
    let Cut {
        first_line,
        last_line,
        total_lines,
        ..
    } = *cut;
    let omitted_chars = cut.omitted.chars().count();
    let saved = match saved {
        Ok(saved) => saved,
        Err(why) => {
            return format!(
                "[... {omitted_chars} characters cut (lines {first_line}-{last_line}); {why}, so \
                 they cannot be read back ...]"
            );
        }
    };
    let path = saved.path.display();
    let what = match saved.capped_at {
        None => format!("This whole result ({total_lines} lines) is saved"),
        Some(cap) => format!(
            "This result ({total_lines} lines) is saved up to rein's {} limit, where the file \
             says so",
            offload::size(cap)
        ),
    };
    // read_file cuts long lines, so a cut part made of long lines (minified JSON, one-line
    // logs) needs another way in.
    let long_lines = cut
        .omitted
        .lines()
        .any(|line| line.len() > READ_MAX_LINE_CHARS);
    format!(
        "[... {omitted_chars} characters cut (lines {first_line}-{last_line}). {what}: read the cut \
         part with read_file, file_path=\"{path}\", offset={first_line}{} ...]",
        if long_lines {
            long_lines_hint()
        } else {
            String::new()
        }
    )
}

/// The hint for a cut part with lines longer than read_file shows.
pub(crate) fn long_lines_hint() -> String {
    format!(
        "; some of its lines are longer than read_file shows ({READ_MAX_LINE_CHARS} characters), \
         so read those with bash, e.g. cut -c 2001-6000"
    )
}

/// The start and the end of a long text, and where the part between them lies.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cut<'a> {
    /// The start, ending at a line break where that keeps at least half of it.
    pub(crate) head: &'a str,
    /// The end, starting after a line break where that keeps at least half of it.
    pub(crate) tail: &'a str,
    /// The text left out, when it is at hand (empty when only the two ends were kept).
    pub(crate) omitted: &'a str,
    /// The line (from 1) where the part left out starts.
    pub(crate) first_line: u64,
    /// The line where it ends.
    pub(crate) last_line: u64,
    /// Lines in the whole text.
    pub(crate) total_lines: u64,
}

impl<'a> Cut<'a> {
    /// The first and last `keep` characters of `text`, moved to line breaks where sensible.
    pub(crate) fn of_text(text: &'a str, keep: usize) -> Cut<'a> {
        let head_end = line_boundary_before(text, char_offset(text, keep));
        let tail_start = line_boundary_after(text, char_offset_from_end(text, keep)).max(head_end);
        let head = &text[..head_end];
        let omitted = &text[head_end..tail_start];
        let first_line = newlines(head) + 1;
        Cut {
            head,
            tail: &text[tail_start..],
            omitted,
            first_line,
            last_line: first_line + newlines(omitted).saturating_sub(1),
            total_lines: text.lines().count() as u64,
        }
    }

    /// The first `keep` characters of `start` and the last `keep` of `end`, the two ends of a
    /// text whose middle was not kept. The text had `total_newlines` line breaks and ended with
    /// one if `ends_with_newline`.
    pub(crate) fn of_ends(
        start: &'a str,
        end: &'a str,
        keep: usize,
        total_newlines: u64,
        ends_with_newline: bool,
    ) -> Cut<'a> {
        let head = &start[..line_boundary_before(start, char_offset(start, keep))];
        let tail_start = line_boundary_after(end, char_offset_from_end(end, keep));
        let tail = &end[tail_start..];
        let tail_first_line = total_newlines.saturating_sub(newlines(tail)) + 1;
        let tail_starts_a_line = end[..tail_start].ends_with('\n');
        Cut {
            head,
            tail,
            omitted: "",
            first_line: newlines(head) + 1,
            last_line: tail_first_line - u64::from(tail_starts_a_line),
            total_lines: total_newlines + u64::from(!ends_with_newline),
        }
    }

    /// The head, the notice on a line of its own, and the tail.
    pub(crate) fn assemble(&self, notice: &str) -> String {
        let mut out = String::with_capacity(self.head.len() + notice.len() + self.tail.len() + 2);
        out.push_str(self.head);
        if !self.head.is_empty() && !self.head.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(notice);
        out.push('\n');
        out.push_str(self.tail);
        out
    }
}

fn newlines(s: &str) -> u64 {
    crate::read_file::count_newlines(s.as_bytes())
}

/// The byte offset of the `n`th character (or the end).
fn char_offset(s: &str, n: usize) -> usize {
    s.char_indices().nth(n).map_or(s.len(), |(i, _)| i)
}

/// The byte offset where the last `n` characters begin (or 0).
fn char_offset_from_end(s: &str, n: usize) -> usize {
    if n == 0 {
        return s.len();
    }
    s.char_indices().rev().nth(n - 1).map_or(0, |(i, _)| i)
}

/// Moves a cut back to just after a newline, unless that would lose more than half the head.
fn line_boundary_before(s: &str, at: usize) -> usize {
    match s[..at].rfind('\n') {
        Some(nl) if nl + 1 >= at / 2 => nl + 1,
        _ => at,
    }
}

/// Moves a cut forward to just after a newline, unless that would lose more than half the tail.
fn line_boundary_after(s: &str, at: usize) -> usize {
    let tail_len = s.len() - at;
    match s[at..].find('\n') {
        Some(nl) if nl < tail_len / 2 && at > 0 && !s[..at].ends_with('\n') => at + nl + 1,
        _ => at,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

    fn config(dir: &Path, budget: usize) -> ToolConfig {
        let mut config = ToolConfig::new(dir, dir.join("offload"));
        config.output_budget_chars = budget;
        config
    }

    #[test]
    fn small_output_passes_unchanged() {
        let dir = tempfile::tempdir().unwrap();
        let out = apply_output_budget("short".to_owned(), &config(dir.path(), 100), "t");
        assert_eq!(out, "short");
        assert!(!dir.path().join("offload").exists());
    }

    #[test]
    fn multibyte_output_within_budget_in_characters_passes() {
        let dir = tempfile::tempdir().unwrap();
        let text = "é".repeat(1000);
        let out = apply_output_budget(text.clone(), &config(dir.path(), 1000), "t");
        assert_eq!(out, text);
    }

    #[test]
    fn big_output_keeps_head_and_tail_and_saves_everything() {
        let dir = tempfile::tempdir().unwrap();
        let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let out = apply_output_budget(text.clone(), &config(dir.path(), 3000), "bash");
        assert!(out.chars().count() <= 3000, "{}", out.len());
        assert!(out.starts_with("line 1\nline 2\n"));
        assert!(out.ends_with("line 5000\n"));
        let saved: Vec<_> = std::fs::read_dir(dir.path().join("offload"))
            .unwrap()
            .collect();
        assert_eq!(saved.len(), 1);
        let path = saved[0].as_ref().unwrap().path();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), text);
        assert!(
            out.contains(&format!("file_path=\"{}\"", path.display())),
            "{out}"
        );
        // The notice names the first cut line, which follows the last line of the head.
        let head_lines = out.split("[...").next().unwrap().lines().count();
        assert!(out.contains(&format!("offset={}", head_lines + 1)), "{out}");
    }

    #[test]
    fn a_single_huge_line_is_cut_by_characters() {
        let dir = tempfile::tempdir().unwrap();
        let text = "x".repeat(100_000);
        let out = apply_output_budget(text, &config(dir.path(), 2000), "t");
        assert!(out.chars().count() <= 2000);
        assert!(out.contains("characters cut"));
    }

    #[test]
    fn unwritable_offload_dir_still_says_what_was_cut() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("offload");
        std::fs::write(&blocker, "a file where the directory should be").unwrap();
        let text = "y\n".repeat(10_000);
        let out = apply_output_budget(text, &config(dir.path(), 1000), "t");
        assert!(
            out.contains("characters cut") && out.contains("failed"),
            "{out}"
        );
    }
}

#[cfg(test)]
mod cap_tests {
    use super::*;

    #[test]
    fn a_result_bigger_than_the_cap_is_saved_up_to_it_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let mut config = ToolConfig::new(dir.path(), dir.path().join("offload"));
        config.output_budget_chars = 2000;
        config.offload_max_bytes = 10_000;
        let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
        let out = apply_output_budget(text.clone(), &config, "grep");
        assert!(
            out.contains("saved up to rein's 10000 bytes limit"),
            "{out}"
        );
        let path = std::fs::read_dir(dir.path().join("offload"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let saved = std::fs::read_to_string(path).unwrap();
        let (kept, note) = saved.split_at(10_000);
        assert_eq!(kept, &text[..10_000]);
        let more = text.len() - 10_000;
        assert_eq!(note, offload::cap_note(10_000, more as u64));
    }

    #[test]
    fn the_two_ends_of_a_text_give_the_right_line_numbers() {
        let text: String = (1..=100).map(|i| format!("line {i}\n")).collect();
        let whole = Cut::of_text(&text, 40);
        // Only the ends are at hand: the first 200 and the last 200 bytes.
        let ends = Cut::of_ends(&text[..200], &text[text.len() - 200..], 40, 100, true);
        assert_eq!(ends.head, whole.head);
        assert_eq!(ends.tail, whole.tail);
        assert_eq!(
            (ends.first_line, ends.last_line, ends.total_lines),
            (whole.first_line, whole.last_line, whole.total_lines)
        );
        assert_eq!((whole.first_line, whole.last_line), (6, 96));
    }
}
