//! Pruning: an old tool result gives way to its first and last lines and a marker saying
//! what is gone, and where the whole output still is when it was saved to a file. No model
//! call; the model can read the file again, or run the call again.

use rein_llm::{Message, Part};

use super::ledger::is_long;
use super::record::PrunedResult;

/// Lines kept from the start and the end of a pruned result.
const HEAD_LINES: usize = 8;
const TAIL_LINES: usize = 4;
/// Characters kept at most from each end (one long line must not keep it all).
const HEAD_CHARS: usize = 600;
const TAIL_CHARS: usize = 300;

/// The pruned form of each long result of `message` (a tool message).
pub(crate) fn prune_results(message: &Message) -> Vec<PrunedResult> {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolResult(result) if is_long(&result.content) => Some(PrunedResult {
                call_id: result.call_id.clone(),
                content: pruned(&result.content),
            }),
            _ => None,
        })
        .collect()
}

/// `content` cut to its first and last lines, with a marker between.
pub(crate) fn pruned(content: &str) -> String {
    let lines: Vec<&str> = content.lines().collect();
    let total_chars = content.chars().count();
    let head = take_chars(
        lines.iter().take(HEAD_LINES).copied(),
        HEAD_CHARS,
        End::Start,
    );
    let tail_from = lines
        .len()
        .saturating_sub(TAIL_LINES)
        .max(HEAD_LINES.min(lines.len()));
    let tail = take_chars(lines[tail_from..].iter().copied(), TAIL_CHARS, End::End);
    let saved = rein_tools::saved_output_path(content);
    let how = match saved {
        Some(path) => format!(
            "The whole output is saved: read it with read_file, file_path=\"{path}\" if you \
             need it."
        ),
        None => "Run the call again if you need the rest.".to_owned(),
    };
    let mut out = head;
    out.push_str(&format!(
        "\n[rein pruned this older result to keep the conversation within the model's context \
         window: it had {} lines and {total_chars} characters, and only its first and last \
         lines are kept here. {how}]\n",
        lines.len()
    ));
    out.push_str(&tail);
    out
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum End {
    Start,
    End,
}

/// The lines joined, cut to `max` characters at the given end's far side.
fn take_chars<'a>(lines: impl Iterator<Item = &'a str>, max: usize, keep: End) -> String {
    let joined = lines.collect::<Vec<_>>().join("\n");
    let count = joined.chars().count();
    if count <= max {
        return joined;
    }
    match keep {
        End::Start => format!("{}…", joined.chars().take(max).collect::<String>()),
        End::End => format!("…{}", joined.chars().skip(count - max).collect::<String>()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pruned_result_keeps_its_ends_and_says_what_went() {
        let content: String = (1..=300).map(|i| format!("line {i}\n")).collect();
        let cut = pruned(&content);
        assert!(cut.starts_with("line 1\nline 2\n"), "{cut}");
        assert!(cut.ends_with("line 299\nline 300"), "{cut}");
        assert!(!cut.contains("line 150\n"));
        assert!(cut.contains("it had 300 lines"), "{cut}");
        assert!(cut.contains("Run the call again"), "{cut}");
        assert!(!is_long(&cut));
    }

    #[test]
    fn a_saved_output_is_named() {
        let content = format!(
            "{}[... 90000 characters cut (lines 100-9000). This whole result (9100 lines) is saved: \
             read the cut part with read_file, file_path=\"/home/a/.rein/tool-output/s/grep-1.txt\", \
             offset=100 ...]\n{}",
            "match\n".repeat(100),
            "tail\n".repeat(100)
        );
        let cut = pruned(&content);
        assert!(
            cut.contains(
                "read it with read_file, file_path=\"/home/a/.rein/tool-output/s/grep-1.txt\""
            ),
            "{cut}"
        );
    }

    #[test]
    fn one_long_line_is_cut_too() {
        let content = "x".repeat(50_000);
        let cut = pruned(&content);
        assert!(cut.chars().count() < 1500, "{}", cut.len());
    }
}
