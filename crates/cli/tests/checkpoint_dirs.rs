//! A rewind takes back the directories a turn created, once they are empty: never one that
//! existed before the turn, never one someone put a file in since.

use serde_json::json;

use crate::checkpoints::stepping_mock;
use crate::pty::Pty;
use crate::support::{Env, run, stderr, stdout};

#[test]
fn rewind_removes_the_empty_directories_the_turn_created_and_keeps_the_others() {
    let env = Env::new();
    env.write("src/main.rs", "fn main() {}\n");
    std::fs::create_dir_all(env.work.join("kept")).unwrap();
    let server = stepping_mock(vec![
        (
            "write_file",
            json!({ "file_path": "a/b/c.txt", "content": "new\n" }),
        ),
        (
            "write_file",
            json!({ "file_path": "kept/new.txt", "content": "new\n" }),
        ),
        (
            "write_file",
            json!({ "file_path": "x/y/z.txt", "content": "new\n" }),
        ),
        ("bash", json!({ "command": "mkdir -p made/empty" })),
    ]);
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "make things", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    for made in ["a/b/c.txt", "kept/new.txt", "x/y/z.txt", "made/empty"] {
        assert!(env.work.join(made).exists(), "the turn did not make {made}");
    }
    // Someone's own file in a directory the turn created: that directory stays.
    env.write("x/mine.txt", "mine\n");

    let out = run(env.rein().args(["rewind", "--to", "1", "--code"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stdout(&out);
    let removed: Vec<&str> = said
        .lines()
        .filter_map(|l| l.strip_prefix("removed "))
        .collect();
    assert_eq!(
        removed,
        [
            "x/y/ (an empty directory the turn created)",
            "made/empty/ (an empty directory the turn created)",
            "made/ (an empty directory the turn created)",
            "a/b/ (an empty directory the turn created)",
            "a/ (an empty directory the turn created)",
        ],
        "{said}"
    );

    for gone in ["a", "made", "x/y", "kept/new.txt"] {
        assert!(!env.work.join(gone).exists(), "{gone} is still there");
    }
    assert!(
        env.work.join("kept").is_dir(),
        "kept existed before the turn"
    );
    assert_eq!(env.read("x/mine.txt"), "mine\n");
    assert_eq!(env.read("src/main.rs"), "fn main() {}\n");
}

/// In the REPL, /undo names the directories it will remove if empty, then says which it
/// removed; a turn that only made a directory is undone too.
#[test]
fn undo_in_the_repl_names_and_removes_the_directories_the_turn_created() {
    let env = Env::new();
    let server = stepping_mock(vec![(
        "bash",
        json!({ "command": "mkdir -p build/cache/x" }),
    )]);
    let mut pty = Pty::start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "yolo"],
        120,
    );
    pty.wait_ready();
    pty.send("make a directory\r");
    pty.wait_for("done");
    assert!(env.work.join("build/cache/x").is_dir());
    pty.send("/undo\r");
    pty.wait_for("undo? [y/N]");
    let shown = pty.transcript();
    assert!(
        shown.contains("remove build/cache/x/ if it is left empty (the turn created it)"),
        "{shown}"
    );
    pty.send("y\r");
    pty.wait_for("removed build/ (an empty directory the turn created)");
    assert!(!env.work.join("build").exists());
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}
