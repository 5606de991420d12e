//! A rewind takes back the directories a turn created, once they are empty: never one that
//! existed before the turn, never one someone put a file in since.

use serde_json::json;

use crate::checkpoints::stepping_mock;
use crate::support::{Env, run, stderr};

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
