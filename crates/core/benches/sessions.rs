//! Session store speed: finding the newest session of a directory among hundreds (`-c`),
//! listing them, loading a long session, appending messages.

#![expect(
    clippy::unwrap_used,
    reason = "benchmark setup: any failure should stop the run"
)]

use std::path::{Path, PathBuf};

use divan::Bencher;
use rein_core::config::ProviderKind;
use rein_core::session::{NewSession, SessionStore};
use rein_llm::{Message, Part, Role, ToolArguments, ToolCall, ToolResult};

fn main() {
    divan::main();
}

const SESSIONS: usize = 500;
const DIRECTORIES: usize = 10;
const MESSAGES_PER_SESSION: usize = 40;

fn conversation(round: usize) -> [Message; 3] {
    let call_id = format!("call_{round}");
    [
        Message {
            role: Role::Assistant,
            parts: vec![
                Part::Text {
                    text: "Let me look at the file first.".into(),
                },
                Part::ToolCall(ToolCall {
                    id: call_id.clone(),
                    name: "read_file".into(),
                    arguments: ToolArguments::Json {
                        value: serde_json::json!({ "file_path": "src/main.rs", "limit": 200 }),
                    },
                }),
            ],
        },
        Message {
            role: Role::Tool,
            parts: vec![Part::ToolResult(ToolResult {
                call_id,
                content: "fn main() {\n    println!(\"hello\");\n}\n".repeat(20),
                is_error: false,
                images: Vec::new(),
            })],
        },
        Message {
            role: Role::User,
            parts: vec![Part::Text {
                text: "Now add error handling to the parser.".into(),
            }],
        },
    ]
}

fn dir(index: usize) -> PathBuf {
    PathBuf::from(format!("/home/ann/src/project-{index}"))
}

/// A store with `SESSIONS` sessions spread over `DIRECTORIES` directories, plus one
/// session in a directory of its own that is the oldest of all (the worst case for `-c`).
fn populated_store(root: &Path) -> SessionStore {
    let store = SessionStore::new(root);
    let mut lonely = store
        .create(NewSession {
            model: "gpt-4o",
            provider: ProviderKind::OpenAi,
            cwd: Path::new("/lonely"),
            parent: None,
        })
        .unwrap();
    lonely.append_message(&conversation(0)[2]).unwrap();
    let lonely_path = lonely.path().to_path_buf();
    drop(lonely);
    for index in 0..SESSIONS {
        let mut session = store
            .create(NewSession {
                model: "gpt-4o",
                provider: ProviderKind::OpenAi,
                cwd: &dir(index % DIRECTORIES),
                parent: None,
            })
            .unwrap();
        for round in 0..MESSAGES_PER_SESSION / 3 {
            for message in conversation(round) {
                session.append_message(&message).unwrap();
            }
        }
    }
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    std::fs::OpenOptions::new()
        .append(true)
        .open(lonely_path)
        .unwrap()
        .set_modified(old)
        .unwrap();
    store
}

#[divan::bench(sample_count = 20)]
fn newest_for_cwd_recent(bencher: Bencher) {
    let tmp = tempfile::tempdir().unwrap();
    let store = populated_store(tmp.path());
    bencher.bench_local(|| store.newest_for_cwd(&dir(3)).unwrap().unwrap());
}

#[divan::bench(sample_count = 20)]
fn newest_for_cwd_oldest_of_500(bencher: Bencher) {
    let tmp = tempfile::tempdir().unwrap();
    let store = populated_store(tmp.path());
    bencher.bench_local(|| store.newest_for_cwd(Path::new("/lonely")).unwrap().unwrap());
}

#[divan::bench(sample_count = 20)]
fn list_500(bencher: Bencher) {
    let tmp = tempfile::tempdir().unwrap();
    let store = populated_store(tmp.path());
    bencher.bench_local(|| store.list().unwrap().len());
}

#[divan::bench(sample_count = 20)]
fn load_3000_messages(bencher: Bencher) {
    let tmp = tempfile::tempdir().unwrap();
    let store = SessionStore::new(tmp.path());
    let mut session = store
        .create(NewSession {
            model: "gpt-4o",
            provider: ProviderKind::OpenAi,
            cwd: Path::new("/w"),
            parent: None,
        })
        .unwrap();
    for round in 0..1000 {
        for message in conversation(round) {
            session.append_message(&message).unwrap();
        }
    }
    let id = session.id().to_owned();
    drop(session);
    bencher.bench_local(|| store.load(&id).unwrap().messages.len());
}

#[divan::bench]
fn append_message(bencher: Bencher) {
    let tmp = tempfile::tempdir().unwrap();
    let store = SessionStore::new(tmp.path());
    let mut session = store
        .create(NewSession {
            model: "gpt-4o",
            provider: ProviderKind::OpenAi,
            cwd: Path::new("/w"),
            parent: None,
        })
        .unwrap();
    let [call, result, _] = conversation(1);
    bencher.bench_local(|| {
        session.append_message(&call).unwrap();
        session.append_message(&result).unwrap();
    });
}
