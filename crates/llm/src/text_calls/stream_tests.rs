use proptest::prelude::*;

use super::*;

/// Feeds `pieces` as text deltas and a finish; returns what came out.
fn run(pieces: &[&str]) -> Vec<StreamEvent> {
    let mut recogniser = Recogniser::default();
    let mut out = VecDeque::new();
    for piece in pieces {
        recogniser.push(
            StreamEvent::TextDelta {
                text: (*piece).to_owned(),
            },
            &mut out,
        );
    }
    recogniser.push(
        StreamEvent::Finish {
            stop_reason: StopReason::EndTurn,
        },
        &mut out,
    );
    out.into_iter().collect()
}

fn text_of(events: &[StreamEvent]) -> String {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::TextDelta { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn call_names(events: &[StreamEvent]) -> Vec<String> {
    events
        .iter()
        .filter_map(|e| match e {
            StreamEvent::ToolCallDelta { name, .. } => name.clone(),
            _ => None,
        })
        .collect()
}

#[test]
fn narration_streams_and_the_call_is_shown_as_one() {
    let mut recogniser = Recogniser::default();
    let mut out = VecDeque::new();
    recogniser.push(
        StreamEvent::TextDelta {
            text: "Let me look.\n<tool".into(),
        },
        &mut out,
    );
    // The narration is out before the call is finished; the markup is not.
    assert_eq!(
        text_of(&out.drain(..).collect::<Vec<_>>()),
        "Let me look.\n"
    );
    for piece in [
        "_call>\n{\"name\": \"read_file\", ",
        "\"arguments\": {\"file_path\": \"a\"}}\n</tool_call>",
    ] {
        recogniser.push(StreamEvent::TextDelta { text: piece.into() }, &mut out);
    }
    assert!(out.is_empty(), "{out:?}");
    recogniser.push(
        StreamEvent::Finish {
            stop_reason: StopReason::EndTurn,
        },
        &mut out,
    );
    let events: Vec<_> = out.into_iter().collect();
    assert_eq!(call_names(&events), vec!["read_file"]);
    assert_eq!(
        events.last(),
        Some(&StreamEvent::Finish {
            stop_reason: StopReason::ToolUse
        })
    );
}

#[test]
fn ordinary_text_is_not_held() {
    let mut recogniser = Recogniser::default();
    let mut out = VecDeque::new();
    recogniser.push(
        StreamEvent::TextDelta {
            text: "Hello, wor".into(),
        },
        &mut out,
    );
    assert_eq!(text_of(&out.drain(..).collect::<Vec<_>>()), "Hello, wor");
}

#[test]
fn an_explanation_with_a_json_block_stays_text() {
    let text = "```json\n{\"name\": \"read_file\", \"arguments\": {}}\n```\nThat is a call.";
    let events = run(&[&text[..10], &text[10..40], &text[40..]]);
    assert_eq!(text_of(&events), text);
    assert!(call_names(&events).is_empty());
}

#[test]
fn a_native_call_turns_recognition_off() {
    let mut recogniser = Recogniser::default();
    let mut out = VecDeque::new();
    recogniser.push(
        StreamEvent::TextDelta {
            text: "<tool".into(),
        },
        &mut out,
    );
    recogniser.push(
        StreamEvent::ToolCallDelta {
            index: 0,
            id: Some("c".into()),
            name: Some("glob".into()),
            arguments_fragment: "{}".into(),
        },
        &mut out,
    );
    recogniser.push(
        StreamEvent::Finish {
            stop_reason: StopReason::ToolUse,
        },
        &mut out,
    );
    let events: Vec<_> = out.into_iter().collect();
    assert_eq!(text_of(&events), "<tool");
    assert_eq!(call_names(&events), vec!["glob"]);
}

proptest! {
    /// However the text is cut into deltas, what comes out is the same: the text itself
    /// when it holds no call, the calls when it does.
    #[test]
    fn splitting_does_not_change_the_outcome(
        narration in "[a-zA-Z .,`{}\\[\\]\n]{0,60}",
        with_call in any::<bool>(),
        cuts in proptest::collection::vec(0usize..200, 0..8),
    ) {
        let call = "\n<tool_call>\n{\"name\": \"glob\", \"arguments\": {\"pattern\": \"*\"}}\n</tool_call>";
        let text = if with_call { format!("{narration}{call}") } else { narration.clone() };
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c.min(text.len())).filter(|&c| text.is_char_boundary(c)).collect();
        points.sort_unstable();
        points.dedup();
        let mut pieces = Vec::new();
        let mut last = 0;
        for point in points.into_iter().chain([text.len()]) {
            pieces.push(&text[last..point]);
            last = point;
        }
        let whole = run(&[&text]);
        let split = run(&pieces);
        prop_assert_eq!(text_of(&whole), text_of(&split));
        prop_assert_eq!(call_names(&whole), call_names(&split));
        if call_names(&whole).is_empty() {
            prop_assert_eq!(text_of(&whole), text);
        }
    }
}
