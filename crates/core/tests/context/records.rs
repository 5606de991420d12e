//! Compactions in the session file: a line of their own, replayed on load; a crash at any
//! point of a compaction loses nothing; a record that does not fit is skipped, not trusted.

use std::io::Write;

use rein_core::config::ProviderKind;
use rein_core::context::{CompactionLayer, CompactionRecord, PrunedResult};
use rein_core::session::{LoadWarning, NewSession, SessionEvent, SessionStore};
use rein_llm::{Message, Part, Role, ToolArguments, ToolCall, ToolResult, Usage};
use tempfile::TempDir;

fn text(role: Role, text: &str) -> Message {
    Message {
        role,
        parts: vec![Part::Text { text: text.into() }],
    }
}

fn call(id: &str) -> [Message; 2] {
    [
        Message {
            role: Role::Assistant,
            parts: vec![Part::ToolCall(ToolCall {
                id: id.into(),
                name: "bash".into(),
                arguments: ToolArguments::Json {
                    value: serde_json::json!({"command": "ls"}),
                },
            })],
        },
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id: id.into(),
                content: format!("the whole output of {id}"),
                is_error: false,
                images: Vec::new(),
            })],
        },
    ]
}

/// A session of ten messages, the first six summarised, the result of `c4` cut; returns the
/// store, the id, and the file's length before the compaction line.
fn compacted_session(tmp: &TempDir) -> (SessionStore, String, u64, Vec<Message>) {
    let store = SessionStore::new(tmp.path());
    let mut session = store
        .create(NewSession {
            model: "m",
            provider: ProviderKind::OpenAi,
            cwd: tmp.path(),
            parent: None,
        })
        .unwrap();
    let mut messages = vec![text(Role::User, "first request")];
    for id in ["c1", "c2", "c3", "c4"] {
        messages.extend(call(id));
    }
    messages.push(text(Role::Assistant, "done"));
    for message in &messages {
        session.append_message(message).unwrap();
    }
    session
        .append_event(&SessionEvent::Usage {
            model: "m".into(),
            provider: None,
            usage: Usage {
                prompt_tokens: 5000,
                ..Usage::default()
            },
        })
        .unwrap();
    let before = std::fs::metadata(session.path()).unwrap().len();
    let record = CompactionRecord {
        layer: CompactionLayer::Summary,
        replaced: 5,
        with: vec![text(
            Role::User,
            "[rein: context summary] it was all about c1 and c2",
        )],
        pruned: vec![PrunedResult {
            call_id: "c4".into(),
            content: "cut".into(),
        }],
        tokens_before: 5000,
        tokens_after: 900,
        usage: Some(Usage {
            prompt_tokens: 3000,
            completion_tokens: 200,
            ..Usage::default()
        }),
    };
    session
        .append_event(&SessionEvent::Compaction(record.clone()))
        .unwrap();
    let mut context = messages.clone();
    record.apply(&mut context).unwrap();
    let id = session.id().to_owned();
    (store, id, before, context)
}

#[test]
fn a_compaction_line_is_replayed_and_the_whole_conversation_kept() {
    let tmp = TempDir::new().unwrap();
    let (store, id, _, context) = compacted_session(&tmp);
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.messages, context);
    assert_eq!(loaded.messages.len(), 10 - 5 + 1);
    assert_eq!(loaded.compactions, 1);
    assert_eq!(loaded.anchor, None, "the count was of the context before");
    // The summary call's tokens count with the session's.
    assert_eq!(loaded.total_usage().prompt_tokens, 8000);
    let whole = store.load_whole(&id).unwrap();
    assert_eq!(whole.messages.len(), 10);
    assert!(
        serde_json::to_string(&whole.messages)
            .unwrap()
            .contains("the whole output of c4")
    );
}

#[test]
fn a_crash_while_writing_the_compaction_leaves_the_context_whole() {
    let tmp = TempDir::new().unwrap();
    let (store, id, before, _) = compacted_session(&tmp);
    let path = tmp.path().join("sessions").join(format!("{id}.jsonl"));
    let bytes = std::fs::read(&path).unwrap();
    // Cut in the middle of the compaction's line: rein died writing it.
    let cut = before as usize + (bytes.len() - before as usize) / 2;
    std::fs::write(&path, &bytes[..cut]).unwrap();
    let (_session, loaded) = store.open(&id).unwrap();
    assert_eq!(loaded.messages.len(), 10, "nothing was replaced");
    assert_eq!(loaded.compactions, 0);
    assert_eq!(
        loaded.anchor.map(|a| (a.prompt_tokens, a.messages)),
        Some((5000, 10))
    );
    assert!(matches!(
        loaded.warnings.as_slice(),
        [LoadWarning::TruncatedLastLine { .. }]
    ));
}

#[test]
fn a_compaction_that_does_not_fit_is_skipped_with_a_warning() {
    let tmp = TempDir::new().unwrap();
    let (store, id, _, _) = compacted_session(&tmp);
    let path = tmp.path().join("sessions").join(format!("{id}.jsonl"));
    let bad = CompactionRecord {
        layer: CompactionLayer::Prune,
        replaced: 0,
        with: Vec::new(),
        pruned: vec![PrunedResult {
            call_id: "no-such-call".into(),
            content: "x".into(),
        }],
        tokens_before: 1,
        tokens_after: 1,
        usage: None,
    };
    let line = serde_json::json!({"type": "event", "kind": "compaction"});
    let mut line = line.as_object().unwrap().clone();
    for (key, value) in serde_json::to_value(&bad).unwrap().as_object().unwrap() {
        line.insert(key.clone(), value.clone());
    }
    let mut file = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    writeln!(file, "{}", serde_json::Value::Object(line)).unwrap();
    let loaded = store.load(&id).unwrap();
    assert_eq!(loaded.compactions, 1, "the first one still applies");
    assert_eq!(loaded.messages.len(), 6);
    assert_eq!(loaded.warnings.len(), 1, "{:?}", loaded.warnings);
    let warning = loaded.warnings[0].to_string();
    assert!(
        warning.contains("compaction 2") && warning.contains("no-such-call"),
        "{warning}"
    );
}
