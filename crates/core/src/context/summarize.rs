//! Asking the model for a summary of older turns, and writing one without it when it cannot
//! be asked.
//!
//! The summary request must fit the window itself: the turns are written out as one plain
//! transcript (tool results cut to their ends, arguments shortened), newest kept first, within
//! a budget that leaves room for the answer. It carries no tools (a history with tool calls
//! but no tools is refused by some APIs, and a summary needs none), and its one user message
//! says it asks for a summary.

use std::collections::HashMap;

use rein_llm::{Message, Part, Request, Role, ToolArguments, ToolCall};

use super::estimate::text_tokens;
use super::summary::{is_summary, quoted_requests};

const SYSTEM_PROMPT: &str = include_str!("summarize_system.md");
const INSTRUCTIONS: &str = include_str!("summarize.md");

/// The headings a summary has, in order (the template in `summarize.md`).
pub const SUMMARY_SECTIONS: [&str; 9] = [
    "## Goal",
    "## Requests",
    "## Constraints and preferences",
    "## Done so far",
    "## Files",
    "## Decisions",
    "## Errors",
    "## Current state",
    "## Next step",
];

/// How much of one tool result the transcript shows: its start and its end.
const RESULT_HEAD_CHARS: usize = 800;
const RESULT_TAIL_CHARS: usize = 400;
/// How much of a call's arguments it shows.
const ARGUMENT_CHARS: usize = 400;
/// How much of one message's text it shows.
const TEXT_CHARS: usize = 6000;

/// The request for a summary of `head`, within `budget` tokens (the transcript, the
/// instructions and the system prompt together).
pub(crate) fn summary_request(
    model: &str,
    head: &[Message],
    focus: Option<&str>,
    budget: u64,
    max_tokens: u32,
) -> Request {
    let fixed = text_tokens(SYSTEM_PROMPT) + text_tokens(INSTRUCTIONS) + 64;
    let (conversation, left_out) = transcript(head, budget.saturating_sub(fixed));
    let left_out = if left_out == 0 {
        String::new()
    } else {
        format!(
            " Its first {left_out} messages are left out here to fit; what an earlier summary \
             says of them is all there is."
        )
    };
    let focus = focus
        .map(str::trim)
        .filter(|f| !f.is_empty())
        .map(|f| format!(" Keep in most detail what bears on: {f}."))
        .unwrap_or_default();
    let text = INSTRUCTIONS
        .replace("{left_out}", &left_out)
        .replace("{focus}", &focus)
        .replace("{conversation}", &conversation);
    Request {
        model: model.to_owned(),
        system: SYSTEM_PROMPT.trim().to_owned(),
        messages: vec![Message {
            role: Role::User,
            parts: vec![Part::Text { text }],
        }],
        tools: Vec::new(),
        temperature: None,
        max_tokens: Some(max_tokens),
        cache_key: None,
    }
}

/// `head` written out, newest messages kept first within `budget` tokens (an earlier summary
/// at the start is kept whatever else goes, cut if it must be); returns the text and how many
/// messages were left out.
fn transcript(head: &[Message], budget: u64) -> (String, usize) {
    let names: HashMap<&str, &str> = head
        .iter()
        .flat_map(|m| &m.parts)
        .filter_map(|part| match part {
            Part::ToolCall(call) => Some((call.id.as_str(), call.name.as_str())),
            _ => None,
        })
        .collect();
    let (earlier, rest) = match head.split_first() {
        Some((first, rest)) if is_summary(first) => (Some(first), rest),
        _ => (None, head),
    };
    let mut left = budget;
    let earlier = earlier.map(|summary| {
        // Cut by tokens, not characters: a character is a quarter of a token in English and
        // about one in Chinese.
        let text = cut_to_tokens(&summary_text(summary), budget / 2);
        let block = format!("[earlier summary]\n{text}");
        left = left.saturating_sub(text_tokens(&block));
        block
    });
    let mut kept: Vec<String> = Vec::new();
    let mut left_out = 0;
    for (i, message) in rest.iter().enumerate().rev() {
        let block = render(message, &names);
        let cost = text_tokens(&block) + 1;
        if cost > left {
            left_out = i + 1;
            break;
        }
        left -= cost;
        kept.push(block);
    }
    kept.reverse();
    let mut out: Vec<String> = earlier.into_iter().collect();
    if left_out > 0 {
        out.push(format!("[... {left_out} messages left out ...]"));
    }
    out.extend(kept);
    (out.join("\n\n"), left_out)
}

/// A summary message as the transcript shows it: its summary, and the requests it quotes.
fn summary_text(message: &Message) -> String {
    let mut text = match message.parts.first() {
        Some(Part::Text { text }) => text.split_once("\n\n").map_or("", |(_, s)| s).to_owned(),
        _ => String::new(),
    };
    let (requests, _) = quoted_requests(message);
    for request in requests {
        text.push_str("\n\n[person, earlier]\n");
        text.push_str(&request);
    }
    text
}

/// One message as the transcript shows it.
fn render(message: &Message, names: &HashMap<&str, &str>) -> String {
    let mut blocks = Vec::new();
    for part in &message.parts {
        match (message.role, part) {
            (Role::User, Part::Text { text }) => {
                blocks.push(format!("[person]\n{}", cut_text(text, TEXT_CHARS)));
            }
            (Role::Assistant, Part::Text { text }) => {
                blocks.push(format!("[assistant]\n{}", cut_text(text, TEXT_CHARS)));
            }
            (_, Part::ToolCall(call)) => blocks.push(format!(
                "[assistant calls {}] {}",
                call.name,
                cut_text(&arguments_text(call), ARGUMENT_CHARS)
            )),
            (_, Part::ToolResult(result)) => {
                let name = names.get(result.call_id.as_str()).unwrap_or(&"a tool");
                let what = if result.is_error {
                    format!("[error from {name}]")
                } else {
                    format!("[result of {name}]")
                };
                blocks.push(format!(
                    "{what}\n{}",
                    ends(&result.content, RESULT_HEAD_CHARS, RESULT_TAIL_CHARS)
                ));
            }
            (_, Part::Image(image)) => blocks.push(format!("[image, {}]", image.media_type)),
            // Reasoning is the model's scratch work; tool messages hold only results.
            (_, Part::Reasoning { .. }) | (Role::Tool, Part::Text { .. }) => {}
        }
    }
    blocks.join("\n")
}

fn arguments_text(call: &ToolCall) -> String {
    match &call.arguments {
        ToolArguments::Json { value } => value.to_string(),
        ToolArguments::Invalid { raw, .. } => raw.clone(),
    }
}

/// `text` within about `max_tokens` tokens (by the estimate): its start, with a note of how
/// much was left out.
fn cut_to_tokens(text: &str, max_tokens: u64) -> String {
    let tokens = text_tokens(text);
    if tokens <= max_tokens {
        return text.to_owned();
    }
    // As many characters as the text's own density says fit, then less until they do.
    let chars = text.chars().count() as u128;
    let mut keep = (chars * u128::from(max_tokens) / u128::from(tokens)) as usize;
    loop {
        let cut = cut_text(text, keep);
        if keep == 0 || text_tokens(&cut) <= max_tokens {
            return cut;
        }
        keep = keep * 9 / 10;
    }
}

/// `text`, cut to about `max` characters with a note of how much was left out.
fn cut_text(text: &str, max: usize) -> String {
    ends(text, max, 0)
}

/// The first `head` and last `tail` characters of `text`, and how many between were left out.
pub(crate) fn ends(text: &str, head: usize, tail: usize) -> String {
    let total = text.chars().count();
    if total <= head + tail + 40 {
        return text.to_owned();
    }
    let start: String = text.chars().take(head).collect();
    let end: String = text.chars().skip(total - tail).collect();
    format!(
        "{start} [... {} characters left out ...] {end}",
        total - head - tail
    )
}

/// A summary written without the model (it could not be asked, or gave nothing): the
/// person's requests, the files read and changed, the commands run and the errors seen, from
/// the messages themselves. `why` says why the model did not write it.
pub(crate) fn summary_without_model(head: &[Message], why: &str) -> String {
    let mut requests = Vec::new();
    let mut read = Vec::new();
    let mut changed = Vec::new();
    let mut commands = Vec::new();
    let mut errors = Vec::new();
    let mut names: HashMap<&str, &str> = HashMap::new();
    let mut last_answer = None;
    for message in head {
        if is_summary(message) {
            if let Some(Part::Text { text }) = message.parts.first() {
                requests.extend(quoted_requests(message).0);
                last_answer = text.split_once("\n\n").map(|(_, s)| s.to_owned());
            }
            continue;
        }
        for part in &message.parts {
            match (message.role, part) {
                (Role::User, Part::Text { text }) => {
                    requests.push(text.clone());
                    break;
                }
                (Role::Assistant, Part::Text { text }) => last_answer = Some(text.clone()),
                (_, Part::ToolCall(call)) => {
                    names.insert(&call.id, &call.name);
                    let value = match &call.arguments {
                        ToolArguments::Json { value } => value,
                        ToolArguments::Invalid { .. } => continue,
                    };
                    let field =
                        |key: &str| value.get(key).and_then(|v| v.as_str()).map(str::to_owned);
                    match call.name.as_str() {
                        "read_file" => read.extend(field("file_path")),
                        "write_file" | "edit_file" => changed.extend(field("file_path")),
                        "bash" => commands.extend(field("command")),
                        _ => {}
                    }
                }
                (_, Part::ToolResult(result)) if result.is_error => {
                    let name = names.get(result.call_id.as_str()).unwrap_or(&"a tool");
                    let first = result.content.lines().next().unwrap_or_default();
                    errors.push(format!("{name}: {}", cut_text(first, 200)));
                }
                _ => {}
            }
        }
    }
    let list = |items: Vec<String>, limit: usize| -> String {
        let mut unique: Vec<String> = Vec::new();
        for item in items.into_iter().rev() {
            if !unique.contains(&item) {
                unique.push(item);
            }
        }
        let more = unique.len().saturating_sub(limit);
        let mut shown: Vec<String> = unique.into_iter().take(limit).collect();
        shown.reverse();
        let mut text = if shown.is_empty() {
            "(none)".to_owned()
        } else {
            shown
                .iter()
                .map(|s| format!("- {}", cut_text(s, 300)))
                .collect::<Vec<_>>()
                .join("\n")
        };
        if more > 0 {
            text.push_str(&format!("\n- (and {more} earlier)"));
        }
        text
    };
    let quoted = if requests.is_empty() {
        "(none)".to_owned()
    } else {
        requests
            .iter()
            .map(|r| {
                cut_text(r, 1000)
                    .lines()
                    .map(|line| format!("> {line}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            })
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    format!(
        "(rein wrote this summary itself: {why}.)\n\n## Requests\n{quoted}\n\n## Files\nRead:\n{}\n\
         Changed:\n{}\n\n## Commands run\n{}\n\n## Errors\n{}\n\n## Current state\n{}",
        list(read, 30),
        list(changed, 30),
        list(commands, 15),
        list(errors, 10),
        last_answer.map_or_else(|| "(not known)".to_owned(), |a| cut_text(a.trim(), 1500)),
    )
}

#[cfg(test)]
mod tests {
    use rein_llm::ToolResult;

    use super::*;

    fn user(text: &str) -> Message {
        Message {
            role: Role::User,
            parts: vec![Part::Text { text: text.into() }],
        }
    }

    fn calls(id: &str, name: &str, args: serde_json::Value) -> Message {
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: id.into(),
                name: name.into(),
                arguments: ToolArguments::Json { value: args },
            })],
        }
    }

    fn result(id: &str, content: &str, is_error: bool) -> Message {
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: content.into(),
                is_error,
                images: Vec::new(),
            })],
        }
    }

    fn head() -> Vec<Message> {
        vec![
            user("make the parser strict"),
            calls(
                "1",
                "read_file",
                serde_json::json!({"file_path": "src/parse.rs"}),
            ),
            result("1", &"fn parse() {}\n".repeat(400), false),
            calls("2", "bash", serde_json::json!({"command": "cargo test"})),
            result("2", "error[E0425]: cannot find value `x`\nmore", true),
            calls(
                "3",
                "edit_file",
                serde_json::json!({"file_path": "src/parse.rs"}),
            ),
            result("3", "ok", false),
        ]
    }

    #[test]
    fn the_request_follows_the_template_fits_and_carries_no_tools() {
        let request = summary_request("m", &head(), Some("the parser"), 2000, 500);
        assert!(request.tools.is_empty());
        assert_eq!(request.messages.len(), 1);
        let Part::Text { text } = &request.messages[0].parts[0] else {
            panic!("not text")
        };
        assert!(text.contains("asks you for a summary"), "{text}");
        for section in SUMMARY_SECTIONS {
            assert!(text.contains(section), "{section}");
        }
        assert!(text.contains("[assistant calls read_file]"));
        assert!(text.contains("[error from bash]"));
        assert!(text.contains("bears on: the parser"));
        let cost = text_tokens(text) + text_tokens(&request.system);
        assert!(cost <= 2000, "{cost}");
        // A long result shows its ends only.
        assert!(text.contains("characters left out"), "{text}");
    }

    #[test]
    fn a_small_budget_keeps_the_newest_messages() {
        let request = summary_request("m", &head(), None, 900, 200);
        let Part::Text { text } = &request.messages[0].parts[0] else {
            panic!("not text")
        };
        assert!(text.contains("messages left out"), "{text}");
        assert!(text.contains("[assistant calls edit_file]"), "{text}");
        assert!(!text.contains("make the parser strict"), "{text}");
    }

    #[test]
    fn an_earlier_summary_in_chinese_is_cut_to_the_budget_in_tokens() {
        let summary = crate::context::summary_message(&crate::context::SummaryParts {
            summary: &"上下文窗口的管理很重要，压缩不能丢失任何请求。\n".repeat(400),
            summarised: 40,
            requests: &[],
            requests_left_out: 0,
            current: None,
            pinned: &[],
        });
        let mut messages = vec![summary];
        messages.extend(head());
        for budget in [500, 2000, 6000] {
            let (text, _) = transcript(&messages, budget);
            let earlier = text.split("\n\n[").next().unwrap();
            assert!(earlier.starts_with("[earlier summary]"), "{earlier}");
            let cost = text_tokens(earlier);
            assert!(
                cost <= budget / 2 + 8,
                "{cost} tokens for a budget of {budget}"
            );
            assert!(text_tokens(&text) <= budget + 8, "{}", text_tokens(&text));
        }
    }

    #[test]
    fn cutting_to_tokens_keeps_what_fits() {
        assert_eq!(cut_to_tokens("short", 10), "short");
        let english = "a plain sentence of prose. ".repeat(400);
        let cut = cut_to_tokens(&english, 300);
        assert!(
            text_tokens(&cut) <= 300 && text_tokens(&cut) > 250,
            "{}",
            text_tokens(&cut)
        );
        let chinese = "压缩不能丢失任何请求。".repeat(400);
        let cut = cut_to_tokens(&chinese, 300);
        assert!(
            text_tokens(&cut) <= 300 && text_tokens(&cut) > 250,
            "{}",
            text_tokens(&cut)
        );
    }

    #[test]
    fn without_the_model_the_summary_lists_requests_files_commands_and_errors() {
        let text = summary_without_model(&head(), "the model could not be reached");
        assert!(
            text.starts_with("(rein wrote this summary itself: the model could not be reached.)")
        );
        assert!(text.contains("> make the parser strict"), "{text}");
        assert!(text.contains("Read:\n- src/parse.rs"), "{text}");
        assert!(text.contains("Changed:\n- src/parse.rs"), "{text}");
        assert!(text.contains("- cargo test"), "{text}");
        assert!(text.contains("bash: error[E0425]"), "{text}");
    }
}
