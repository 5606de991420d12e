//! The output budget every tool result passes: a result above the budget is saved whole to a
//! file in the offload directory, and the model gets its head and tail (errors are usually at
//! the end), the path, and how to read the rest. Nothing is dropped silently.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use crate::ToolConfig;

static OFFLOAD_COUNTER: AtomicU64 = AtomicU64::new(0);

/// Keeps `content` within the configured budget, offloading the whole of it when it is over.
/// `tool` names the offload file.
pub fn apply_output_budget(content: String, config: &ToolConfig, tool: &str) -> String {
    let budget = config.output_budget_chars;
    // Bytes bound characters from above: the common case costs no counting.
    if content.len() <= budget || content.chars().count() <= budget {
        return content;
    }
    let saved = save_offload(&content, &config.offload_dir, tool);
    cut_with_notice(&content, budget, &saved)
}

fn save_offload(content: &str, dir: &Path, tool: &str) -> Result<PathBuf, String> {
    let millis = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let n = OFFLOAD_COUNTER.fetch_add(1, Ordering::Relaxed);
    let safe_tool: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    let path = dir.join(format!(
        "{safe_tool}-{millis}-{}-{n}.txt",
        std::process::id()
    ));
    std::fs::create_dir_all(dir)
        .and_then(|()| std::fs::write(&path, content))
        .map(|()| path)
        .map_err(|err| format!("saving the full output to {} failed: {err}", dir.display()))
}

fn cut_with_notice(content: &str, budget: usize, saved: &Result<PathBuf, String>) -> String {
    // Head and tail share most of the budget; the notice takes the rest.
    let keep = budget.saturating_sub(600) / 2;
    let head_end = line_boundary_before(content, char_offset(content, keep));
    let tail_start =
        line_boundary_after(content, char_offset_from_end(content, keep)).max(head_end);
    let head = &content[..head_end];
    let tail = &content[tail_start..];
    let omitted = &content[head_end..tail_start];
    let first_omitted_line = head.matches('\n').count() + 1;
    let last_omitted_line = first_omitted_line + omitted.matches('\n').count().saturating_sub(1);
    let total_lines = content.lines().count();
    let omitted_chars = omitted.chars().count();
    // read_file cuts long lines, so a cut part made of long lines (minified JSON, one-line
    // logs) needs another way in.
    let long_lines = omitted
        .lines()
        .any(|line| line.len() > crate::read_file::READ_MAX_LINE_CHARS);
    let notice = match saved {
        Ok(path) => format!(
            "[... {omitted_chars} characters cut (lines {first_omitted_line}-{last_omitted_line}). This whole \
             result ({total_lines} lines) is saved: read the cut part with read_file, file_path=\"{}\", \
             offset={first_omitted_line}{} ...]",
            path.display(),
            if long_lines {
                format!(
                    "; some of its lines are longer than read_file shows ({} characters), so \
                     read those with bash, e.g. cut -c 2001-6000",
                    crate::read_file::READ_MAX_LINE_CHARS
                )
            } else {
                String::new()
            }
        ),
        Err(why) => format!(
            "[... {omitted_chars} characters cut (lines {first_omitted_line}-{last_omitted_line}); {why}, so \
             they cannot be read back ...]"
        ),
    };
    let mut out = String::with_capacity(head.len() + notice.len() + tail.len() + 2);
    out.push_str(head);
    if !head.is_empty() && !head.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&notice);
    out.push('\n');
    out.push_str(tail);
    out
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
