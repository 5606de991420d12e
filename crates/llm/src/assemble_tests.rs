//! The assembler: retries, early reports, call ids and names, reasoning blocks.

use std::collections::HashSet;

use super::*;

fn delta(index: usize, id: Option<&str>, name: Option<&str>, args: &str) -> StreamEvent {
    StreamEvent::ToolCallDelta {
        index,
        id: id.map(str::to_owned),
        name: name.map(str::to_owned),
        arguments_fragment: args.to_owned(),
    }
}

fn finish(stop_reason: StopReason) -> StreamEvent {
    StreamEvent::Finish { stop_reason }
}

fn retry() -> StreamEvent {
    StreamEvent::Retry {
        attempt: 1,
        wait: std::time::Duration::ZERO,
        reason: "cut".into(),
    }
}

/// Pushes every event; returns the calls reported early and the final message's calls.
fn assemble(assembler: &mut Assembler, events: &[StreamEvent]) -> (Vec<ToolCall>, Vec<ToolCall>) {
    let early: Vec<ToolCall> = events.iter().flat_map(|e| assembler.push(e)).collect();
    let calls = assembler
        .finish()
        .unwrap()
        .message
        .parts
        .into_iter()
        .filter_map(|p| match p {
            Part::ToolCall(call) => Some(call),
            _ => None,
        })
        .collect();
    (early, calls)
}

fn ids(calls: &[ToolCall]) -> Vec<&str> {
    calls.iter().map(|c| c.id.as_str()).collect()
}

fn set(ids: &[&str]) -> HashSet<String> {
    ids.iter().map(|id| (*id).to_owned()).collect()
}

#[test]
fn a_retry_event_discards_the_partial_message() {
    let mut assembler = Assembler::new();
    assembler.push(&StreamEvent::TextDelta {
        text: "half".into(),
    });
    assembler.push(&delta(0, Some("a"), Some("x"), "{"));
    assembler.push(&retry());
    assembler.push(&StreamEvent::TextDelta {
        text: "whole".into(),
    });
    assembler.push(&finish(StopReason::EndTurn));
    let response = assembler.finish().unwrap();
    assert_eq!(
        response.message.parts,
        vec![Part::Text {
            text: "whole".into()
        }]
    );
}

#[test]
fn each_call_is_reported_once_and_a_missing_finish_is_an_error() {
    let mut assembler = Assembler::new();
    assert!(
        assembler
            .push(&delta(0, Some("a"), Some("x"), "{}"))
            .is_empty()
    );
    assert_eq!(
        assembler.push(&StreamEvent::ToolCallEnd { index: 0 }).len(),
        1
    );
    assert!(
        assembler
            .push(&StreamEvent::ToolCallEnd { index: 0 })
            .is_empty()
    );
    assert!(assembler.push(&finish(StopReason::ToolUse)).is_empty());
    assert!(Assembler::new().finish().is_err());
}

#[test]
fn whole_calls_that_all_say_index_0_stay_apart() {
    // Ollama streams each call whole, every one at index 0, told apart only by its id.
    let events = [
        delta(
            0,
            Some("call_a"),
            Some("read_file"),
            r#"{"file_path":"a.txt"}"#,
        ),
        delta(
            0,
            Some("call_b"),
            Some("read_file"),
            r#"{"file_path":"b.txt"}"#,
        ),
        delta(0, Some("call_c"), Some("glob"), r#"{"pattern":"*.rs"}"#),
        finish(StopReason::ToolUse),
    ];
    let (early, calls) = assemble(&mut Assembler::new(), &events);
    assert_eq!(ids(&early), ["call_a", "call_b", "call_c"]);
    assert_eq!(calls, early);
    let paths: Vec<&ToolArguments> = calls.iter().map(|c| &c.arguments).collect();
    assert_eq!(
        paths,
        [
            &ToolArguments::Json {
                value: serde_json::json!({"file_path": "a.txt"})
            },
            &ToolArguments::Json {
                value: serde_json::json!({"file_path": "b.txt"})
            },
            &ToolArguments::Json {
                value: serde_json::json!({"pattern": "*.rs"})
            },
        ]
    );
}

#[test]
fn fragments_without_an_id_continue_the_call_at_their_index() {
    let events = [
        delta(0, Some("call_a"), Some("bash"), r#"{"comm"#),
        delta(0, None, None, r#"and":"ls"}"#),
        // The id repeated with a fragment, as some servers do, is the same call.
        delta(0, Some("call_a"), None, ""),
        finish(StopReason::ToolUse),
    ];
    let (_, calls) = assemble(&mut Assembler::new(), &events);
    assert_eq!(ids(&calls), ["call_a"]);
    assert_eq!(
        calls[0].arguments,
        ToolArguments::Json {
            value: serde_json::json!({"command": "ls"})
        }
    );
}

#[test]
fn duplicate_ids_in_one_response_are_renamed_in_order() {
    let events = [
        delta(0, Some("call_1"), Some("glob"), "{}"),
        delta(1, Some("call_1"), Some("glob"), "{}"),
        delta(2, Some("call_1"), Some("glob"), "{}"),
        delta(3, Some("call_1_2"), Some("glob"), "{}"),
        finish(StopReason::ToolUse),
    ];
    let (early, calls) = assemble(&mut Assembler::new(), &events);
    assert_eq!(
        ids(&calls),
        ["call_1", "call_1_2", "call_1_3", "call_1_2_2"]
    );
    assert_eq!(early, calls, "an early report and the message agree");
}

#[test]
fn ids_used_earlier_in_the_conversation_are_not_reused() {
    let mut assembler = Assembler::with_taken_ids(set(&["call_1", "call_rein_0"]));
    let events = [
        delta(0, None, Some("glob"), "{}"),
        delta(1, Some("call_1"), Some("glob"), "{}"),
        delta(2, Some("call_9"), Some("glob"), "{}"),
        finish(StopReason::ToolUse),
    ];
    let (_, calls) = assemble(&mut assembler, &events);
    assert_eq!(ids(&calls), ["call_rein_0_2", "call_1_2", "call_9"]);
    assert_eq!(
        assembler.into_taken_ids(),
        set(&[
            "call_1",
            "call_rein_0",
            "call_rein_0_2",
            "call_1_2",
            "call_9"
        ])
    );
}

#[test]
fn a_retry_gives_back_only_the_ids_of_the_abandoned_attempt() {
    let mut assembler = Assembler::with_taken_ids(set(&["call_a"]));
    // The first attempt reports call_b early, then is cut.
    let reported = assembler.push(&delta(0, Some("call_b"), Some("glob"), "{}"));
    assert!(reported.is_empty());
    let reported = assembler.push(&StreamEvent::ToolCallEnd { index: 0 });
    assert_eq!(ids(&reported), ["call_b"]);
    assembler.push(&retry());
    assert_eq!(assembler.taken_ids(), &set(&["call_a"]));
    // The second attempt sends the same call again: it keeps its id.
    let events = [
        delta(0, Some("call_b"), Some("glob"), "{}"),
        delta(1, Some("call_a"), Some("glob"), "{}"),
        finish(StopReason::ToolUse),
    ];
    let (_, calls) = assemble(&mut assembler, &events);
    assert_eq!(ids(&calls), ["call_b", "call_a_2"]);
    assert_eq!(
        assembler.into_taken_ids(),
        set(&["call_a", "call_b", "call_a_2"])
    );
}

#[test]
fn a_call_without_a_name_gets_the_placeholder() {
    let events = [
        delta(0, Some("c1"), None, "{}"),
        delta(1, Some("c2"), Some("  "), "{}"),
        delta(2, Some(""), Some("glob"), "{}"),
        finish(StopReason::ToolUse),
    ];
    let (_, calls) = assemble(&mut Assembler::new(), &events);
    let named: Vec<(&str, &str)> = calls
        .iter()
        .map(|c| (c.id.as_str(), c.name.as_str()))
        .collect();
    assert_eq!(
        named,
        [
            ("c1", UNNAMED_TOOL),
            ("c2", UNNAMED_TOOL),
            // An empty id is no id.
            ("call_rein_2", "glob")
        ]
    );
}

#[test]
fn signed_and_redacted_reasoning_blocks_stay_apart() {
    let mut assembler = Assembler::new();
    for event in [
        StreamEvent::ReasoningDelta { text: "one".into() },
        StreamEvent::ReasoningSignature {
            signature: "s1".into(),
        },
        StreamEvent::ReasoningDelta { text: "two".into() },
        StreamEvent::ReasoningSignature {
            signature: "s2".into(),
        },
        StreamEvent::RedactedReasoning {
            data: "opaque".into(),
        },
        StreamEvent::ReasoningDelta {
            text: "three".into(),
        },
        finish(StopReason::EndTurn),
    ] {
        assembler.push(&event);
    }
    assert_eq!(
        assembler.finish().unwrap().message.parts,
        [
            Part::Reasoning {
                text: "one".into(),
                signature: Some("s1".into()),
                redacted: None,
            },
            Part::Reasoning {
                text: "two".into(),
                signature: Some("s2".into()),
                redacted: None,
            },
            Part::Reasoning {
                text: String::new(),
                signature: None,
                redacted: Some("opaque".into()),
            },
            Part::Reasoning {
                text: "three".into(),
                signature: None,
                redacted: None,
            },
        ]
    );
}
