//! Checkpoints, rewinds, forks and finding sessions, through the real binary: a turn that
//! edits with edit_file and creates, deletes and moves files with bash is taken back
//! exactly (bytes and modes), in a git repository (whose `.git` stays byte-identical) and
//! outside one.

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, run, stderr, stdout};

/// A model that, for each prompt, makes `steps` calls one per round, then says "done".
pub(crate) fn stepping_mock(steps: Vec<(&'static str, Value)>) -> MockServer {
    MockServer::start(
        Script::new()
            .reply(Reply::dynamic(move |request| {
                let messages = request.body["messages"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let since_prompt = messages
                    .iter()
                    .rev()
                    .take_while(|m| m["role"] != "user")
                    .filter(|m| m["role"] == "tool")
                    .count();
                match steps.get(since_prompt) {
                    Some((name, args)) => Turn::new()
                        .tool_call(MockToolCall::new(
                            format!("call-{}-{since_prompt}", request.index),
                            *name,
                            args.to_string(),
                        ))
                        .into(),
                    None => Turn::text("done").into(),
                }
            }))
            .repeating(),
    )
}

fn bash(command: &str) -> (&'static str, Value) {
    ("bash", json!({ "command": command }))
}

/// Every file under `dir` (`.git` apart) with its bytes and mode.
pub(crate) fn files(dir: &Path) -> BTreeMap<String, (Vec<u8>, u32)> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let path = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            if path.is_dir() {
                stack.push(path);
            } else {
                let mode = entry.metadata().unwrap().permissions().mode() & 0o7777;
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, (std::fs::read(&path).unwrap(), mode));
            }
        }
    }
    out
}

/// Every file of a `.git` directory, bytes and all.
fn git_dir(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path.strip_prefix(dir).unwrap().display().to_string();
                out.insert(rel, std::fs::read(&path).unwrap());
            }
        }
    }
    out
}

fn set_mode(path: &Path, mode: u32) {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
}

/// The workspace the four-change turn starts from.
pub(crate) fn four_change_workspace(env: &Env) {
    set_mode(&env.write("edit.txt", "hello world\nsecond line\n"), 0o640);
    set_mode(&env.write("old.txt", "to be removed\n"), 0o755);
    set_mode(&env.write("a.txt", "moved content\n"), 0o600);
}

/// A model whose turn edits, creates, deletes and moves.
pub(crate) fn four_change_mock() -> MockServer {
    stepping_mock(vec![
        ("read_file", json!({"file_path": "edit.txt"})),
        (
            "edit_file",
            json!({"file_path": "edit.txt", "old_string": "hello world", "new_string": "hello rein"}),
        ),
        bash("echo x > new.txt"),
        bash("rm old.txt"),
        bash("mv a.txt b.txt"),
    ])
}

pub(crate) fn assert_four_changes_done(env: &Env) {
    assert_eq!(env.read("edit.txt"), "hello rein\nsecond line\n");
    assert_eq!(env.read("new.txt"), "x\n");
    assert!(!env.work.join("old.txt").exists());
    assert!(!env.work.join("a.txt").exists());
    assert_eq!(env.read("b.txt"), "moved content\n");
}

fn git(env: &Env, args: &[&str]) {
    let out = std::process::Command::new("git")
        .args(["-c", "user.email=t@example.com", "-c", "user.name=t"])
        .args(args)
        .current_dir(&env.work)
        .env("HOME", &env.home)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn rewind_to_restores_the_four_changes(in_git: bool) {
    let env = Env::new();
    four_change_workspace(&env);
    if in_git {
        git(&env, &["init", "-q"]);
        git(&env, &["add", "-A"]);
        git(&env, &["commit", "-qm", "start"]);
    }
    let before = files(&env.work);
    let git_before = in_git.then(|| git_dir(&env.work.join(".git")));
    let server = four_change_mock();
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "change things", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_four_changes_done(&env);

    let out = run(env
        .rein()
        .args(["rewind", "--list", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(listed["turns"][0]["turn"], 1);
    assert_eq!(listed["turns"][0]["prompt"], "change things");
    assert_eq!(
        listed["turns"][0]["files"],
        json!(["a.txt", "b.txt", "edit.txt", "new.txt", "old.txt"])
    );

    let out = run(env
        .rein()
        .args(["rewind", "--to", "1", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(report["restored"].as_array().unwrap().len(), 5, "{report}");
    assert_eq!(report["conversation"], true);
    assert_eq!(files(&env.work), before, "bytes and modes restored exactly");
    if let Some(git_before) = git_before {
        assert_eq!(
            git_dir(&env.work.join(".git")),
            git_before,
            ".git untouched"
        );
    }

    // The conversation went back too: the next request holds only the new prompt.
    let next = MockServer::start(Script::new().reply(Turn::text("fresh")));
    let out = run(env.rein_openai(&next).args(["-c", "-p", "again"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let users: Vec<Value> = next.requests()[0].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] != "system")
        .cloned()
        .collect();
    assert_eq!(users.len(), 1, "{users:?}");
    assert_eq!(users[0]["content"], "again");
}

#[test]
fn rewind_to_restores_edit_create_delete_and_move_outside_git() {
    rewind_to_restores_the_four_changes(false);
}

#[test]
fn rewind_in_a_git_repository_leaves_dot_git_byte_identical() {
    rewind_to_restores_the_four_changes(true);
}

/// Runs one prompt with the stepping mock (resuming the newest session when `resume`).
fn turn(env: &Env, server: &MockServer, prompt: &str, resume: bool) {
    let mut cmd = env.rein_openai(server);
    if resume {
        cmd.arg("-c");
    }
    let out = run(cmd.args(["-p", prompt, "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
}

fn contents_sent(server: &MockServer) -> Vec<String> {
    let requests = server.requests();
    requests.last().unwrap().body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[test]
fn a_second_turn_rewinds_to_the_first_point_code_only_then_conversation_only() {
    let env = Env::new();
    let first = stepping_mock(vec![bash("echo one > one.txt")]);
    turn(&env, &first, "first", false);
    let second = stepping_mock(vec![bash("echo changed > one.txt && echo two > two.txt")]);
    turn(&env, &second, "second", true);
    assert_eq!(env.read("one.txt"), "changed\n");

    let out = run(env.rein().args(["rewind", "--to", "2", "--code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("restored one.txt"),
        "{}",
        stdout(&out)
    );
    assert!(stdout(&out).contains("deleted two.txt"), "{}", stdout(&out));
    assert_eq!(env.read("one.txt"), "one\n");
    assert!(!env.work.join("two.txt").exists());
    // Code only: the conversation still has both turns.
    let strict = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    turn(&env, &strict, "third", true);
    assert_eq!(contents_sent(&strict), ["first", "second", "third"]);

    // Conversation only, back to before the second turn: files untouched.
    std::fs::write(env.work.join("keep.txt"), "mine").unwrap();
    let out = run(env.rein().args(["rewind", "--to", "2", "--conversation"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(env.read("one.txt"), "one\n");
    turn(&env, &strict, "fourth", true);
    assert_eq!(contents_sent(&strict), ["first", "fourth"]);
    let out = run(env.rein().args(["rewind", "--list"]));
    let listed = stdout(&out);
    assert!(
        listed.contains("\"first\"") && listed.contains("\"fourth\""),
        "{listed}"
    );
    assert!(!listed.contains("\"second\""), "{listed}");
}

#[test]
fn a_file_changed_by_hand_makes_a_headless_rewind_refuse_and_change_nothing() {
    let env = Env::new();
    env.write("notes.txt", "original\n");
    let server = stepping_mock(vec![bash("echo rein >> notes.txt && echo new > other.txt")]);
    turn(&env, &server, "touch notes", false);
    std::fs::write(env.work.join("notes.txt"), "typed by hand\n").unwrap();
    let before = files(&env.work);

    let out = run(env.rein().args(["rewind", "--to", "1"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("notes.txt"), "{}", stderr(&out));
    assert!(!stderr(&out).contains("other.txt"), "{}", stderr(&out));
    assert_eq!(files(&env.work), before, "nothing changed");
}

#[test]
fn ignored_trees_and_oversized_files_are_not_saved_and_the_rewind_says_so() {
    let env = Env::new();
    env.write(".gitignore", "build/\n");
    env.write("build/keep.o", "object");
    // Over the 10 MiB default limit.
    std::fs::write(env.work.join("big.bin"), vec![7u8; 10 * 1024 * 1024 + 1]).unwrap();
    env.write("small.txt", "small\n");
    let server = stepping_mock(vec![bash(
        "echo more >> big.bin && echo out > build/out.o && echo changed > small.txt",
    )]);
    turn(&env, &server, "build", false);

    let out = run(env.rein().args(["rewind", "--to", "1", "--code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("restored small.txt"), "{said}");
    assert!(
        said.contains("not restored: big.bin (larger than"),
        "{said}"
    );
    assert!(said.contains("not restored: build"), "{said}");
    assert_eq!(env.read("small.txt"), "small\n");
    // What could not be restored is left as the turn made it.
    assert_eq!(env.read("build/out.o"), "out\n");
    assert!(std::fs::metadata(env.work.join("big.bin")).unwrap().len() > 10 * 1024 * 1024 + 1);
    // Never copied into the store.
    let stored: u64 = walk_size(&env.rein_home.join("checkpoints/objects"));
    assert!(stored < 1024 * 1024, "the store holds {stored} bytes");
}

fn walk_size(dir: &Path) -> u64 {
    let mut total = 0;
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let meta = entry.metadata().unwrap();
        total += if meta.is_dir() {
            walk_size(&entry.path())
        } else {
            meta.len()
        };
    }
    total
}

fn session_id(env: &Env, server: &MockServer, prompt: &str, extra: &[&str]) -> String {
    let out =
        run(env
            .rein_openai(server)
            .args(extra)
            .args(["-p", prompt, "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    crate::support::final_json(&out)["session_id"]
        .as_str()
        .unwrap()
        .to_owned()
}

#[test]
fn a_fork_starts_from_the_parents_history_and_leaves_it_untouched() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let parent = session_id(&env, &server, "shared start", &[]);
    let parent_file = env
        .rein_home
        .join("sessions")
        .join(format!("{parent}.jsonl"));
    let parent_bytes = std::fs::read(&parent_file).unwrap();

    let child = session_id(&env, &server, "in the fork", &["-r", &parent, "--fork"]);
    assert_ne!(child, parent);
    assert_eq!(
        std::fs::read(&parent_file).unwrap(),
        parent_bytes,
        "parent unchanged"
    );
    let child_file = env
        .rein_home
        .join("sessions")
        .join(format!("{child}.jsonl"));
    let header: Value = serde_json::from_str(
        std::fs::read_to_string(&child_file)
            .unwrap()
            .lines()
            .next()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(header["parent"], parent.as_str());
    assert_eq!(contents_sent(&server), ["shared start", "in the fork"]);

    // Both go on independently.
    let _ = session_id(&env, &server, "parent again", &["-r", &parent]);
    assert_eq!(contents_sent(&server), ["shared start", "parent again"]);
    let _ = session_id(&env, &server, "fork again", &["-r", &child]);
    assert_eq!(
        contents_sent(&server),
        ["shared start", "in the fork", "fork again"]
    );
}

#[test]
fn sessions_lists_this_directorys_sessions_and_r_without_an_id_lists_them_off_a_terminal() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let first = session_id(&env, &server, "the first prompt", &[]);
    let second = session_id(&env, &server, "another one", &[]);
    // A session of another directory is not listed without --all.
    let elsewhere = env.home.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    let out = run(env
        .rein_openai(&server)
        .current_dir(&elsewhere)
        .args(["-p", "far away"]));
    assert!(out.status.success(), "{}", stderr(&out));

    let out = run(env.rein().args(["sessions", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let listed: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let sessions = listed["sessions"].as_array().unwrap();
    assert_eq!(sessions.len(), 2, "{listed}");
    assert_eq!(sessions[0]["id"], second.as_str());
    assert_eq!(sessions[1]["id"], first.as_str());
    assert_eq!(sessions[1]["first_prompt"], "the first prompt");
    assert_eq!(sessions[1]["turns"], 1);
    assert_eq!(sessions[1]["model"], "gpt-4o");
    assert!(sessions[1]["cost_usd"].is_number(), "{listed}");

    let out = run(env.rein().args(["sessions", "--all"]));
    assert_eq!(stdout(&out).lines().count(), 3, "{}", stdout(&out));

    let out = run(env.rein().arg("-r"));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains(&first) && text.contains("the first prompt"),
        "{text}"
    );
    assert!(!text.contains("far away"), "{text}");
}

#[test]
fn checkpoint_max_file_bytes_from_the_config_bounds_what_is_saved() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "checkpoint_max_file_bytes = 100\n",
    )
    .unwrap();
    env.write("big.txt", &"x".repeat(200));
    env.write("small.txt", "small\n");
    let server = stepping_mock(vec![bash("echo y >> big.txt && echo y >> small.txt")]);
    turn(&env, &server, "grow", false);
    let out = run(env.rein().args(["rewind", "--to", "1", "--code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    assert!(said.contains("restored small.txt"), "{said}");
    assert!(
        said.contains("not restored: big.txt (larger than checkpoint_max_file_bytes (100 bytes))"),
        "{said}"
    );
    assert_eq!(env.read("small.txt"), "small\n");
}
