use futures::StreamExt;
use futures::executor::block_on;

use super::*;
use crate::{Assembler, Part, ToolArguments};

fn play(provider: &dyn Provider) -> Vec<Result<StreamEvent, LlmError>> {
    block_on(provider.stream(&Request::default()).collect())
}

const HAND_WRITTEN: &str = r#"
# the model reads a file, then answers
{"text":"Let me look.","tool_calls":[{"id":"call_1","name":"read_file","arguments":{"file_path":"main.py"}}]}

{"reasoning":"hm","text":"Fixed.","usage":{"prompt_tokens":900,"completion_tokens":40},"comment":"second turn"}
{"tool_calls":[{"name":"bash","arguments":"{\"command\": "}]}
"#;

#[test]
fn plays_hand_written_responses_in_order() {
    let provider = ReplayProvider::parse(HAND_WRITTEN, "demo").unwrap();
    assert_eq!(provider.remaining(), 3);

    let mut first = Assembler::new();
    let mut early = Vec::new();
    for event in play(&provider) {
        early.extend(first.push(&event.unwrap()));
    }
    assert_eq!(early.len(), 1);
    assert_eq!(early[0].name, "read_file");
    let first = first.finish().unwrap();
    assert_eq!(first.stop_reason, StopReason::ToolUse);
    assert_eq!(first.message.parts.len(), 2);

    let mut second = Assembler::new();
    for event in play(&provider) {
        second.push(&event.unwrap());
    }
    let second = second.finish().unwrap();
    assert_eq!(second.stop_reason, StopReason::EndTurn);
    assert_eq!(second.usage.unwrap().prompt_tokens, 900);
    assert!(matches!(&second.message.parts[0], Part::Reasoning { text, .. } if text == "hm"));

    let mut third = Assembler::new();
    for event in play(&provider) {
        third.push(&event.unwrap());
    }
    let third = third.finish().unwrap();
    match &third.message.parts[0] {
        Part::ToolCall(call) => {
            assert_eq!(call.id, "call_1");
            assert!(matches!(call.arguments, ToolArguments::Invalid { .. }));
        }
        other => panic!("{other:?}"),
    }
    assert_eq!(provider.remaining(), 0);
}

#[test]
fn playing_past_the_end_is_a_clear_error() {
    let provider = ReplayProvider::parse(r#"{"text":"only one"}"#, "one.jsonl").unwrap();
    assert!(play(&provider).iter().all(Result::is_ok));
    let events = play(&provider);
    assert_eq!(events.len(), 1);
    match &events[0] {
        Err(LlmError::Cassette(message)) => {
            assert!(message.contains("one.jsonl"), "{message}");
            assert!(message.contains("response 2"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn bad_lines_are_reported_with_their_number() {
    for (text, needle) in [
        ("{\"text\":\"a\"}\n{\"txt\":\"typo\"}", "unknown field"),
        ("{\"text\":\"a\"}\nnot json", "line 2"),
        ("{}", "needs"),
        (
            "{\"events\":[{\"type\":\"text_delta\",\"text\":\"a\"}]}",
            "finish",
        ),
        (
            "{\"events\":[{\"type\":\"finish\",\"stop_reason\":\"end_turn\"}],\"text\":\"x\"}",
            "not both",
        ),
    ] {
        let err = ReplayProvider::parse(text, "c.jsonl").unwrap_err();
        assert!(err.to_string().contains(needle), "{text}: {err}");
    }
}

#[test]
fn a_missing_cassette_names_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let err = ReplayProvider::from_path(&dir.path().join("gone.jsonl")).unwrap_err();
    assert!(err.to_string().contains("gone.jsonl"), "{err}");
}

/// A provider whose first attempt fails half-way and is retried.
struct Flaky;

impl Provider for Flaky {
    fn stream(&self, _request: &Request) -> EventStream {
        let events = vec![
            StreamEvent::TextDelta {
                text: "partial".into(),
            },
            StreamEvent::Retry {
                attempt: 1,
                wait: std::time::Duration::ZERO,
                reason: "cut".into(),
            },
            StreamEvent::TextDelta {
                text: "whole".into(),
            },
            StreamEvent::Finish {
                stop_reason: StopReason::EndTurn,
            },
        ];
        Box::pin(futures::stream::iter(events.into_iter().map(Ok)))
    }
}

#[test]
fn records_completed_responses_that_replay_identically() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rec.jsonl");
    let recorder = RecordingProvider::create(std::sync::Arc::new(Flaky), &path).unwrap();
    play(&recorder);
    // Written as soon as the response finished, before the recorder is dropped.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(!text.contains("partial"), "{text}");
    play(&recorder);
    drop(recorder);

    let replay = ReplayProvider::from_path(&path).unwrap();
    assert_eq!(replay.remaining(), 2);
    let events: Vec<StreamEvent> = play(&replay).into_iter().map(Result::unwrap).collect();
    assert_eq!(
        events,
        vec![
            StreamEvent::TextDelta {
                text: "whole".into()
            },
            StreamEvent::Finish {
                stop_reason: StopReason::EndTurn
            },
        ]
    );
}

#[test]
fn an_unwritable_cassette_is_an_error_up_front() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("no/such/dir/rec.jsonl");
    let err = RecordingProvider::create(std::sync::Arc::new(Flaky), &path).unwrap_err();
    assert!(matches!(err, CassetteError::Io { .. }));
}
