//! Pruning: an old tool result gives way to its first and last lines and a marker saying
//! what is gone, and where the whole output still is when it was saved to a file. No model
//! call; the model can read the file again, or run the call again.
//!
//! And the cap on a new result ([`fit_result`]): the tool output budget counts characters,
//! whatever the window; a result is also held to a share of the usable window, in tokens, as
//! it enters the context.

use rein_llm::{Message, Part};
use rein_tools::ToolConfig;

use super::estimate::text_tokens;
use super::ledger::{PRUNE_MIN_CHARS, is_long};
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

/// The cut form of each long result of `message` (a tool message) that the context keeps
/// but must shrink now (the newest among them, which the model may not have read): the
/// whole saved first when it was not, so the marker names a file to read it from; as
/// pruning cuts it when it was (or when it cannot be saved). `tool` names each call's tool.
pub(crate) fn cut_kept_results<'a>(
    message: &Message,
    tool: impl Fn(&str) -> &'a str,
    config: &ToolConfig,
) -> Vec<PrunedResult> {
    message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::ToolResult(result) if is_long(&result.content) => {
                let content = match rein_tools::saved_output_path(&result.content) {
                    Some(_) => pruned(&result.content),
                    None => {
                        let budget = ToolConfig {
                            output_budget_chars: PRUNE_MIN_CHARS,
                            ..config.clone()
                        };
                        let cut = rein_tools::apply_output_budget(
                            result.content.clone(),
                            &budget,
                            tool(&result.call_id),
                        );
                        if rein_tools::saved_output_path(&cut).is_some() && !is_long(&cut) {
                            cut
                        } else {
                            pruned(&result.content)
                        }
                    }
                };
                Some(PrunedResult {
                    call_id: result.call_id.clone(),
                    content,
                })
            }
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

/// A new tool result within `cap` tokens: `None` when it fits; else its two ends and a
/// marker between them, within `cap`, the whole saved to a file the marker names (the file
/// the output budget or bash already saved it to, or a new one in `config`'s offload
/// directory, named after `tool`).
pub(crate) fn fit_result(
    content: &str,
    cap: u64,
    config: &ToolConfig,
    tool: &str,
) -> Option<String> {
    // A result too short to take `cap` tokens whatever its bytes fits, uncounted.
    if super::estimate::max_tokens_of_bytes(content.len()) <= cap {
        return None;
    }
    let tokens = text_tokens(content);
    if tokens <= cap {
        return None;
    }
    if rein_tools::saved_output_path(content).is_some() {
        return Some(cut_ends(content, cap));
    }
    // Saved whole once, as the output budget saves, with the characters that fit this text.
    let budget = ToolConfig {
        output_budget_chars: chars_within(content, tokens, cap),
        ..config.clone()
    };
    let cut = rein_tools::apply_output_budget(content.to_owned(), &budget, tool);
    if text_tokens(&cut) <= cap {
        return Some(cut);
    }
    // Its ends weigh more than the whole on average: cut again, naming the same file.
    Some(cut_ends(&cut, cap))
}

/// About how many characters of `content` (`tokens` long) take `cap` tokens, with a
/// twentieth to spare.
fn chars_within(content: &str, tokens: u64, cap: u64) -> usize {
    let chars = content.chars().count() as u128;
    (chars * u128::from(cap) * 19 / (u128::from(tokens.max(1)) * 20)) as usize
}

/// `content` cut to its first and last parts (at line breaks where sensible) and a marker
/// line between them, within `cap` tokens. The marker has the form of the output budget's
/// notice, so a later cut (pruning) still finds the saved file it names.
fn cut_ends(content: &str, cap: u64) -> String {
    let lines = content.lines().count();
    let total_chars = content.chars().count();
    let how = match rein_tools::saved_output_path(content) {
        Some(path) => format!(
            "The whole output is saved: read it with read_file, file_path=\"{path}\" if you \
             need it."
        ),
        None => "Run the call again if you need the rest.".to_owned(),
    };
    let marker = format!(
        "\n[... rein cut this result to fit the model's context window: it had {lines} lines \
         and {total_chars} characters, and only its first and last parts are kept here. {how} \
         ...]\n"
    );
    let room = cap.saturating_sub(text_tokens(&marker));
    let mut keep = chars_within(content, text_tokens(content), room);
    loop {
        let head_end = content
            .char_indices()
            .nth(keep * 2 / 3)
            .map_or(content.len(), |(i, _)| i);
        let head = &content[..head_end];
        let head = match head.rfind('\n') {
            Some(at) if at >= head.len() / 2 => &head[..at],
            _ => head,
        };
        let tail_chars = keep / 3;
        let tail = match tail_chars.checked_sub(1) {
            None => "",
            Some(last) => {
                let start = content
                    .char_indices()
                    .rev()
                    .nth(last)
                    .map_or(0, |(i, _)| i)
                    .max(head_end);
                snap_to_line(&content[start..])
            }
        };
        let out = format!("{head}{marker}{tail}");
        if text_tokens(&out) <= cap || keep == 0 {
            return out;
        }
        keep = keep * 3 / 4;
    }
}

/// `tail` from its first line break on, when that keeps at least half of it.
fn snap_to_line(tail: &str) -> &str {
    match tail.find('\n') {
        Some(at) if at < tail.len() / 2 => &tail[at + 1..],
        _ => tail,
    }
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

    fn config(dir: &std::path::Path) -> ToolConfig {
        ToolConfig::new(dir, dir.join("tool-output"))
    }

    #[test]
    fn a_new_result_within_its_share_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let content = "short output\n".repeat(50);
        assert_eq!(
            fit_result(&content, 1000, &config(dir.path()), "bash"),
            None
        );
    }

    #[test]
    fn a_new_result_over_its_share_keeps_its_ends_and_names_its_saved_file() {
        let dir = tempfile::tempdir().unwrap();
        let content: String = (1..=2000).map(|i| format!("output line {i}\n")).collect();
        let cut = fit_result(&content, 1600, &config(dir.path()), "bash").unwrap();
        assert!(text_tokens(&cut) <= 1600, "{}", text_tokens(&cut));
        assert!(cut.starts_with("output line 1\n"), "{cut}");
        assert!(cut.trim_end().ends_with("output line 2000"), "{cut}");
        let path = rein_tools::saved_output_path(&cut).expect("the saved file is named");
        assert_eq!(std::fs::read_to_string(path).unwrap(), content);
    }

    #[test]
    fn cjk_is_held_to_its_share_in_tokens_not_characters() {
        let dir = tempfile::tempdir().unwrap();
        // 6,000 characters, some 4,500 tokens: within a character budget, over the share.
        let content = "上下文窗口的管理很重要。\n".repeat(500);
        let cut = fit_result(&content, 1000, &config(dir.path()), "read_file").unwrap();
        assert!(text_tokens(&cut) <= 1000, "{}", text_tokens(&cut));
        assert!(rein_tools::saved_output_path(&cut).is_some(), "{cut}");
    }

    #[test]
    fn a_result_saved_already_names_that_file_and_can_be_pruned_later() {
        let dir = tempfile::tempdir().unwrap();
        let content = format!(
            "{}[... 90000 characters cut (lines 100-9000). This whole result (9100 lines) is saved: \
             read the cut part with read_file, file_path=\"/home/a/.rein/tool-output/s/bash-1.txt\", \
             offset=100 ...]\n{}",
            "match\n".repeat(2000),
            "tail\n".repeat(2000)
        );
        let cut = fit_result(&content, 500, &config(dir.path()), "bash").unwrap();
        assert!(text_tokens(&cut) <= 500, "{}", text_tokens(&cut));
        assert_eq!(
            rein_tools::saved_output_path(&cut),
            Some("/home/a/.rein/tool-output/s/bash-1.txt")
        );
        assert!(
            std::fs::read_dir(dir.path()).unwrap().next().is_none(),
            "nothing saved again"
        );
        // Pruned later, it still names the file.
        if is_long(&cut) {
            assert!(pruned(&cut).contains("bash-1.txt"));
        }
    }

    #[test]
    fn a_kept_result_cut_now_is_saved_first() {
        let dir = tempfile::tempdir().unwrap();
        let content: String = (1..=3000).map(|i| format!("row {i}\n")).collect();
        let message = Message {
            role: rein_llm::Role::Tool,
            parts: vec![Part::ToolResult(rein_llm::ToolResult {
                call_id: "c1".into(),
                content: content.clone(),
                is_error: false,
                images: Vec::new(),
            })],
        };
        let cut = cut_kept_results(&message, |_| "bash", &config(dir.path()));
        assert_eq!(cut.len(), 1);
        assert!(!is_long(&cut[0].content), "{}", cut[0].content);
        assert!(cut[0].content.starts_with("row 1\n"), "{}", cut[0].content);
        let path = rein_tools::saved_output_path(&cut[0].content).unwrap();
        assert_eq!(std::fs::read_to_string(path).unwrap(), content);
    }

    #[test]
    fn one_long_line_is_cut_too() {
        let content = "x".repeat(50_000);
        let cut = pruned(&content);
        assert!(cut.chars().count() < 1500, "{}", cut.len());
    }
}
