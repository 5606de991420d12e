//! Loading what a crash (or a newer rein) leaves: cut-off lines, tool calls without
//! results, unknown records, files without a header.

use rein_core::session::{LoadWarning, SessionError};
use rein_llm::{Message, Part, Role};

use crate::sessions::{Home, append_raw, assistant, calls, interrupted, result, results, user};

#[test]
fn a_truncated_last_line_is_dropped_and_removed_on_resume() {
    let home = Home::new();
    let mut session = home.create();
    let id = session.id().to_owned();
    session.append_message(&user("hello")).unwrap();
    session.append_message(&assistant("hi")).unwrap();
    let path = session.path().to_path_buf();
    drop(session);
    append_raw(
        &path,
        br#"{"type":"message","role":"assistant","parts":[{"type":"te"#,
    );

    let loaded = home.store.load(&id).unwrap();
    assert_eq!(loaded.messages, [user("hello"), assistant("hi")]);
    assert_eq!(
        loaded.warnings,
        [LoadWarning::TruncatedLastLine { line: 4 }]
    );

    let (mut session, resumed) = home.store.open(&id).unwrap();
    assert_eq!(resumed.messages, loaded.messages);
    session.append_message(&user("again")).unwrap();
    drop(session);

    let reloaded = home.store.load(&id).unwrap();
    assert_eq!(
        reloaded.messages,
        [user("hello"), assistant("hi"), user("again")]
    );
    assert!(reloaded.warnings.is_empty(), "{:?}", reloaded.warnings);
    assert!(std::fs::read_to_string(&path).unwrap().ends_with("\n"));
}

#[test]
fn tool_calls_without_results_at_the_end_get_interrupted_results() {
    let home = Home::new();
    let mut session = home.create();
    let id = session.id().to_owned();
    session
        .append_message(&user("look at a.rs and b.rs"))
        .unwrap();
    session.append_message(&calls(&["a", "b"])).unwrap();
    session
        .append_message(&results(&[("a", "fn a() {}")]))
        .unwrap();
    drop(session); // The crash: b never finished.

    let (session, loaded) = home.store.open(&id).unwrap();
    let expected = vec![
        user("look at a.rs and b.rs"),
        calls(&["a", "b"]),
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(result("a", "fn a() {}")), interrupted("b")],
        },
    ];
    assert_eq!(loaded.messages, expected);
    assert_eq!(
        loaded.warnings,
        [LoadWarning::InterruptedToolCalls {
            call_ids: vec!["b".into()]
        }]
    );
    drop(session);

    // The repair was recorded: the file alone now loads the same, without warnings.
    let again = home.store.load(&id).unwrap();
    assert_eq!(again.messages, expected);
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}

#[test]
fn tool_calls_without_results_in_the_middle_are_repaired_in_place() {
    let home = Home::new();
    let mut session = home.create();
    let id = session.id().to_owned();
    // A crash after the call, then a resume that (like an older rein) did not record the
    // repair, then more conversation.
    session.append_message(&user("run it")).unwrap();
    session.append_message(&calls(&["x"])).unwrap();
    session.append_message(&user("are you there?")).unwrap();
    session.append_message(&assistant("yes")).unwrap();
    drop(session);

    let expected = vec![
        user("run it"),
        calls(&["x"]),
        Message {
            role: Role::Tool,
            parts: vec![interrupted("x")],
        },
        user("are you there?"),
        assistant("yes"),
    ];
    assert_eq!(home.store.load(&id).unwrap().messages, expected);

    let (mut session, loaded) = home.store.open(&id).unwrap();
    assert_eq!(loaded.messages, expected);
    session.append_message(&user("thanks")).unwrap();
    drop(session);

    let mut longer = expected;
    longer.push(user("thanks"));
    let again = home.store.load(&id).unwrap();
    assert_eq!(again.messages, longer);
    assert!(again.warnings.is_empty(), "{:?}", again.warnings);
}
#[test]
fn unknown_event_kinds_and_line_types_are_skipped() {
    let home = Home::new();
    let mut session = home.create();
    let id = session.id().to_owned();
    session.append_message(&user("hi")).unwrap();
    let path = session.path().to_path_buf();
    drop(session);
    append_raw(
        &path,
        b"{\"type\":\"event\",\"kind\":\"from_the_future\",\"data\":[1,2]}\n",
    );
    append_raw(&path, b"{\"type\":\"bookmark\",\"name\":\"x\"}\n");
    append_raw(
        &path,
        b"{\"type\":\"event\",\"kind\":\"turn_finished\",\"stop_reason\":\"end_turn\"}\n",
    );
    append_raw(
        &path,
        b"{\"type\":\"message\",\"role\":\"assistant\",\"parts\":[]}\n",
    );

    let loaded = home.store.load(&id).unwrap();
    assert_eq!(
        loaded.messages,
        [
            user("hi"),
            Message {
                role: Role::Assistant,
                parts: vec![]
            }
        ]
    );
    assert_eq!(loaded.events.len(), 1);
    assert_eq!(
        loaded.warnings,
        [
            LoadWarning::UnknownEvent {
                line: 3,
                kind: "from_the_future".into()
            },
            LoadWarning::UnknownLine {
                line: 4,
                kind: "bookmark".into()
            },
        ]
    );
    assert!(loaded.warnings[0].to_string().contains("from_the_future"));
}

#[test]
fn a_file_without_a_header_is_reported_not_loaded() {
    let home = Home::new();
    let session = home.create();
    drop(session);
    std::fs::write(home.store.dir().join("empty.jsonl"), "").unwrap();
    std::fs::write(
        home.store.dir().join("headless.jsonl"),
        "{\"type\":\"message\",\"role\":\"user\",\"parts\":[]}\n",
    )
    .unwrap();
    for id in ["empty", "headless"] {
        let err = home.store.open(id).unwrap_err();
        assert!(matches!(err, SessionError::Corrupt { .. }), "{id}: {err}");
        assert!(
            err.to_string()
                .contains(&format!("{id}.jsonl is not a usable session file")),
            "{err}"
        );
    }
}

#[test]
fn a_line_with_bytes_that_are_not_utf8_keeps_its_message() {
    let home = Home::new();
    let session = home.create();
    let id = session.id().to_owned();
    let path = session.path().to_path_buf();
    drop(session);
    // The person's prompt, with one byte a disk or an editor mangled.
    let mut line =
        br#"{"type":"message","role":"user","parts":[{"type":"text","text":"fix caf"#.to_vec();
    line.push(0xE9);
    line.extend_from_slice(b" please\"}]}\n");
    append_raw(&path, &line);

    let loaded = home.store.load(&id).unwrap();
    assert_eq!(loaded.messages, [user("fix caf\u{FFFD} please")]);
    assert_eq!(loaded.warnings, [LoadWarning::InvalidUtf8 { line: 2 }]);
}
