//! The session store: round trips, ids, locking and finding sessions.

use std::fs::OpenOptions;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use rein_core::agent::TurnStop;
use rein_core::config::ProviderKind;
use rein_core::session::{
    INTERRUPTED_RESULT, NewSession, RecordedEvent, SessionError, SessionEvent, SessionStore,
};
use rein_llm::{Message, Part, Role, ToolArguments, ToolCall, ToolResult, Usage};
use tempfile::TempDir;

pub(crate) struct Home {
    _tmp: TempDir,
    pub(crate) store: SessionStore,
    pub(crate) cwd: PathBuf,
}

impl Home {
    pub(crate) fn new() -> Self {
        let tmp = tempfile::tempdir().unwrap();
        let store = SessionStore::new(tmp.path().join(".rein"));
        let cwd = tmp.path().join("project");
        Home {
            store,
            cwd,
            _tmp: tmp,
        }
    }

    pub(crate) fn create_in(&self, cwd: &Path) -> rein_core::session::Session {
        self.store
            .create(NewSession {
                model: "gpt-4o",
                provider: ProviderKind::OpenAi,
                cwd,
                parent: None,
            })
            .unwrap()
    }

    pub(crate) fn create(&self) -> rein_core::session::Session {
        self.create_in(&self.cwd)
    }
}

pub(crate) fn user(text: &str) -> Message {
    Message {
        role: Role::User,
        parts: vec![Part::Text { text: text.into() }],
    }
}

pub(crate) fn assistant(text: &str) -> Message {
    Message {
        role: Role::Assistant,
        parts: vec![Part::Text { text: text.into() }],
    }
}

pub(crate) fn calls(ids: &[&str]) -> Message {
    let parts = ids
        .iter()
        .map(|id| {
            Part::ToolCall(ToolCall {
                id: (*id).into(),
                name: "read_file".into(),
                arguments: ToolArguments::Json {
                    value: serde_json::json!({ "file_path": "a.rs" }),
                },
            })
        })
        .collect();
    Message {
        role: Role::Assistant,
        parts,
    }
}

pub(crate) fn result(id: &str, content: &str) -> ToolResult {
    ToolResult {
        call_id: id.into(),
        content: content.into(),
        is_error: false,
        images: Vec::new(),
    }
}

pub(crate) fn results(list: &[(&str, &str)]) -> Message {
    Message {
        role: Role::Tool,
        parts: list
            .iter()
            .map(|(id, content)| Part::ToolResult(result(id, content)))
            .collect(),
    }
}

pub(crate) fn interrupted(id: &str) -> Part {
    Part::ToolResult(ToolResult {
        call_id: id.into(),
        content: INTERRUPTED_RESULT.into(),
        is_error: true,
        images: Vec::new(),
    })
}

pub(crate) fn append_raw(path: &Path, bytes: &[u8]) {
    OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
}
#[test]
fn a_session_round_trips_messages_and_events() {
    let home = Home::new();
    let mut session = home.create();
    let id = session.id().to_owned();
    let usage = Usage {
        prompt_tokens: 900,
        completion_tokens: 40,
        ..Usage::default()
    };
    let history = vec![
        user("fix the import in main.py"),
        calls(&["call_1"]),
        results(&[("call_1", "import os\n")]),
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Reasoning {
                    text: "done".into(),
                    signature: Some("sig".into()),
                    redacted: None,
                },
                Part::Text {
                    text: "Fixed.\nLine two ✓".into(),
                },
            ],
        },
    ];
    session.append_message(&history[0]).unwrap();
    session.append_message(&history[1]).unwrap();
    // As if the model had been switched after the session started.
    session
        .append_event(&SessionEvent::Usage {
            model: "gpt-4o-mini".into(),
            // As written by versions that did not record the provider.
            provider: None,
            usage,
        })
        .unwrap();
    session.append_message(&history[2]).unwrap();
    session.append_message(&history[3]).unwrap();
    let finished = SessionEvent::TurnFinished {
        stop_reason: TurnStop::EndTurn,
    };
    session.append_event(&finished).unwrap();
    let path = session.path().to_path_buf();
    drop(session);

    let loaded = home.store.load(&id).unwrap();
    assert_eq!(loaded.messages, history);
    assert_eq!(
        loaded.events,
        [
            // Recorded between the call and its result, placed after the result.
            RecordedEvent {
                after_messages: 3,
                event: SessionEvent::Usage {
                    model: "gpt-4o-mini".into(),
                    provider: None,
                    usage
                }
            },
            RecordedEvent {
                after_messages: 4,
                event: finished
            },
        ]
    );
    assert!(loaded.warnings.is_empty(), "{:?}", loaded.warnings);
    assert_eq!(loaded.total_usage(), usage);
    // No provider recorded with the call: the header's.
    assert_eq!(loaded.model(), ("gpt-4o-mini", ProviderKind::OpenAi));
    assert_eq!(loaded.header.id, id);
    assert_eq!(loaded.header.model, "gpt-4o");
    assert_eq!(loaded.header.provider, ProviderKind::OpenAi);
    assert_eq!(loaded.header.cwd, home.cwd);
    assert_eq!(loaded.header.rein_version, env!("CARGO_PKG_VERSION"));

    // One JSON object per line, the header first.
    let text = std::fs::read_to_string(&path).unwrap();
    assert_eq!(text.lines().count(), 7);
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["type"], "header");
    assert_eq!(path, home.store.dir().join(format!("{id}.jsonl")));
}

#[test]
fn new_ids_are_safe_sortable_and_unique() {
    let home = Home::new();
    let a = home.create().id().to_owned();
    let b = home.create().id().to_owned();
    assert_ne!(a, b);
    for id in [&a, &b] {
        assert!(
            id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{id}"
        );
        // UTC time first: YYYYMMDD-HHMMSS-suffix.
        assert_eq!(id.len(), "20250102-150405-k3x9qa".len(), "{id}");
    }
}

#[test]
fn unsafe_ids_are_rejected_before_touching_the_disk() {
    let home = Home::new();
    let _session = home.create();
    // A file one level up that a traversal would reach.
    std::fs::write(home.store.dir().parent().unwrap().join("x.jsonl"), "{}\n").unwrap();
    for bad in ["../x", "a/b", "", "..", "/etc/passwd"] {
        let err = home.store.open(bad).unwrap_err();
        assert!(
            matches!(err, SessionError::InvalidId { .. }),
            "{bad:?}: {err}"
        );
        assert!(
            err.to_string()
                .starts_with(&format!("invalid session id \"{bad}\"")),
            "{err}"
        );
        assert!(matches!(
            home.store.load(bad),
            Err(SessionError::InvalidId { .. })
        ));
    }
}

#[test]
fn a_missing_id_says_how_to_find_sessions() {
    let home = Home::new();
    let err = home.store.open("20200101-000000-nope").unwrap_err();
    assert!(matches!(err, SessionError::NotFound { .. }));
    let message = err.to_string();
    assert!(
        message.contains("no session \"20200101-000000-nope\""),
        "{message}"
    );
    // Only commands that exist are suggested.
    assert!(
        !message.contains("rein sessions") && message.contains("rein -c"),
        "{message}"
    );
    assert!(
        message.contains(&home.store.dir().display().to_string()),
        "{message}"
    );
}
#[test]
fn an_open_session_is_locked_until_dropped() {
    let home = Home::new();
    let session = home.create();
    let id = session.id().to_owned();

    let err = home.store.open(&id).unwrap_err();
    assert!(
        matches!(&err, SessionError::InUse { id: held } if *held == id),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        format!("session {id} is in use by another rein process")
    );
    drop(session);

    let (first, _) = home.store.open(&id).unwrap();
    assert!(matches!(
        home.store.open(&id),
        Err(SessionError::InUse { .. })
    ));
    // Reading without writing does not need the lock.
    assert!(home.store.load(&id).is_ok());
    drop(first);
    assert!(home.store.open(&id).is_ok());
}

#[test]
fn newest_for_cwd_picks_the_latest_session_of_that_directory() {
    let home = Home::new();
    let here = home.cwd.clone();
    let elsewhere = home.cwd.with_file_name("other");
    let set_age = |session: &rein_core::session::Session, seconds_ago: u64| {
        let file = OpenOptions::new()
            .append(true)
            .open(session.path())
            .unwrap();
        file.set_modified(SystemTime::now() - Duration::from_secs(seconds_ago))
            .unwrap();
    };
    let old_here = home.create_in(&here);
    set_age(&old_here, 300);
    let new_here = home.create_in(&here);
    set_age(&new_here, 200);
    let newest_elsewhere = home.create_in(&elsewhere);
    set_age(&newest_elsewhere, 100);
    // Clutter the store: a broken file and a file that is not a session.
    std::fs::write(home.store.dir().join("broken.jsonl"), "not json\n").unwrap();
    std::fs::write(home.store.dir().join("notes.txt"), "hello\n").unwrap();

    let found = home.store.newest_for_cwd(&here).unwrap().unwrap();
    assert_eq!(found.header.id, new_here.id());
    let found = home.store.newest_for_cwd(&elsewhere).unwrap().unwrap();
    assert_eq!(found.header.id, newest_elsewhere.id());
    assert!(
        home.store
            .newest_for_cwd(Path::new("/nowhere"))
            .unwrap()
            .is_none()
    );

    let listed: Vec<String> = home
        .store
        .list()
        .unwrap()
        .into_iter()
        .map(|s| s.header.id)
        .collect();
    assert_eq!(
        listed,
        [newest_elsewhere.id(), new_here.id(), old_here.id()]
    );
}

#[test]
fn an_empty_store_has_no_sessions() {
    let home = Home::new();
    assert!(home.store.list().unwrap().is_empty());
    assert!(home.store.newest_for_cwd(&home.cwd).unwrap().is_none());
}
