//! The message that stands for summarised turns: the summary, then, word for word, the
//! person's requests (up to a budget), their current request when it was summarised, and
//! the pinned state (the todo list). One user message of several parts, each part marked so
//! the next compaction can carry the quoted requests forward unchanged.

use rein_llm::{Message, Part, Role};

/// How a summary message begins.
pub(crate) const SUMMARY_MARKER: &str = "[rein: context summary]";
/// How a quoted earlier request begins (then its number, and a line break).
const REQUEST_MARKER: &str = "[rein: the person's request";
/// How the quoted current request begins.
const CURRENT_MARKER: &str = "[rein: the person's current request, word for word]";
/// How pinned state begins.
const PINNED_MARKER: &str = "[rein: kept across compactions:";

/// Whether `message` is a summary rein wrote.
pub(crate) fn is_summary(message: &Message) -> bool {
    message.role == Role::User
        && matches!(message.parts.first(), Some(Part::Text { text }) if text.starts_with(SUMMARY_MARKER))
}

/// What a summary message holds.
#[derive(Debug)]
pub(crate) struct SummaryParts<'a> {
    /// The summary (the model's, or rein's own).
    pub(crate) summary: &'a str,
    /// How many messages of the whole conversation it stands for.
    pub(crate) summarised: usize,
    /// The person's earlier requests, oldest first.
    pub(crate) requests: &'a [String],
    /// How many earlier requests did not fit the budget (the summary quotes them).
    pub(crate) requests_left_out: usize,
    /// The person's current request, when it was among the summarised messages.
    pub(crate) current: Option<&'a str>,
    /// Pinned state: its name and content.
    pub(crate) pinned: &'a [(String, String)],
}

/// The summary message.
pub(crate) fn summary_message(parts: &SummaryParts<'_>) -> Message {
    let mut head = format!(
        "{SUMMARY_MARKER} The conversation so far was compacted to fit the model's context \
         window: this summary stands for its first {} messages (the session file keeps them \
         whole). Go on from where it leaves off.",
        parts.summarised
    );
    if parts.requests_left_out > 0 {
        head.push_str(&format!(
            " {} of the person's earliest requests are not repeated below for lack of room; \
             the summary quotes them.",
            parts.requests_left_out
        ));
    }
    head.push_str("\n\n");
    head.push_str(parts.summary.trim());
    let mut out = vec![Part::Text { text: head }];
    let first = parts.requests_left_out + 1;
    for (i, request) in parts.requests.iter().enumerate() {
        out.push(Part::Text {
            text: format!("{REQUEST_MARKER} {}, word for word]\n{request}", first + i),
        });
    }
    if let Some(current) = parts.current {
        out.push(Part::Text {
            text: format!("{CURRENT_MARKER}\n{current}"),
        });
    }
    for (name, content) in parts.pinned {
        out.push(Part::Text {
            text: format!("{PINNED_MARKER} {name}]\n{content}"),
        });
    }
    Message {
        role: Role::User,
        parts: out,
    }
}

/// The requests a summary message quotes (its current one too: it is an earlier one now),
/// oldest first, and how many it left out.
pub(crate) fn quoted_requests(message: &Message) -> (Vec<String>, usize) {
    let quoted = message
        .parts
        .iter()
        .filter_map(|part| match part {
            Part::Text { text }
                if text.starts_with(REQUEST_MARKER) || text.starts_with(CURRENT_MARKER) =>
            {
                text.split_once('\n').map(|(_, request)| request.to_owned())
            }
            _ => None,
        })
        .collect();
    let left_out = match message.parts.first() {
        Some(Part::Text { text }) => left_out_count(text),
        _ => 0,
    };
    (quoted, left_out)
}

/// How many messages of the whole conversation a summary message stands for.
pub(crate) fn summarised_count(message: &Message) -> usize {
    match message.parts.first() {
        Some(Part::Text { text }) => text
            .split("\n\n")
            .next()
            .unwrap_or_default()
            .split_once("stands for its first ")
            .and_then(|(_, rest)| rest.split(' ').next()?.parse().ok())
            .unwrap_or(1),
        _ => 1,
    }
}

/// The number of requests a summary's first part says it left out.
fn left_out_count(head: &str) -> usize {
    let first_paragraph = head.split("\n\n").next().unwrap_or_default();
    first_paragraph
        .split_once(" of the person's earliest requests are not repeated")
        .and_then(|(before, _)| before.rsplit(' ').next()?.parse().ok())
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_requests_come_back_word_for_word() {
        let requests = vec![
            "fix the import\nin main.py".to_owned(),
            "[rein: the person's request] is not a marker when typed".to_owned(),
        ];
        let pinned = vec![("todo list".to_owned(), "- [ ] write tests".to_owned())];
        let message = summary_message(&SummaryParts {
            summary: "## Goal\nFix things.",
            summarised: 12,
            requests: &requests,
            requests_left_out: 3,
            current: Some("now add a test"),
            pinned: &pinned,
        });
        assert!(is_summary(&message));
        assert_eq!(summarised_count(&message), 12);
        let (quoted, left_out) = quoted_requests(&message);
        assert_eq!(left_out, 3);
        assert_eq!(
            quoted,
            [requests[0].as_str(), requests[1].as_str(), "now add a test"]
        );
        let Part::Text { text } = &message.parts[1] else {
            panic!("not text")
        };
        assert!(text.starts_with("[rein: the person's request 4, word for word]\n"));
        let Part::Text { text } = message.parts.last().unwrap() else {
            panic!("not text")
        };
        assert_eq!(
            text,
            "[rein: kept across compactions: todo list]\n- [ ] write tests"
        );
    }

    #[test]
    fn a_person_cannot_pass_for_a_summary_by_accident() {
        let typed = Message {
            role: Role::User,
            parts: vec![Part::Text {
                text: "please summarise".into(),
            }],
        };
        assert!(!is_summary(&typed));
    }
}
