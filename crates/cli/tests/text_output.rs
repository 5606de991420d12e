//! What `--output-format text` shows on stderr, through the real binary: results from their
//! payloads, and nothing a file or a command holds can drive the terminal.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, run, stderr, stdout};

fn call(id: &str, tool: &str, arguments: serde_json::Value) -> Turn {
    Turn::new().tool_call(MockToolCall::new(id, tool, arguments.to_string()))
}

#[test]
fn escape_sequences_in_paths_and_output_reach_stderr_harmless() {
    let env = Env::new();
    let name = "notes\u{1b}]0;pwned\u{7}\u{1b}[2J.txt";
    env.write(name, "");
    let server = MockServer::start(
        Script::new()
            .reply(call("r1", "read_file", json!({"file_path": name})))
            .reply(call(
                "b1",
                "bash",
                json!({"command": r"printf 'title \033]0;pwned\007\nclear \033[2J\n'; exit 3"}),
            ))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "look", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "done");
    assert!(
        !out.stderr.contains(&0x1b) && !out.stderr.contains(&0x07),
        "{:?}",
        stderr(&out)
    );
    let progress = stderr(&out);
    let lines: Vec<&str> = progress.lines().map(str::trim_end).collect();
    let expected = [
        "● read_file notes␛]0;pwned␇␛[2J.txt",
        "  ⎿ empty file",
        r"● bash printf 'title \033]0;pwned\007\nclear \033[2J\n'; exit 3",
        "  ✗ exit 3",
        "    │ title ␛]0;pwned␇",
        "    │ clear ␛[2J",
    ];
    assert_eq!(lines, expected, "{progress}");
}

#[test]
fn a_refused_call_is_shown_once() {
    let env = Env::new();
    env.write("main.py", "import helpers\n");
    // Read first: an edit of a file never read is not a refusal but a certain failure.
    let server = MockServer::start(
        Script::new()
            .reply(call("r1", "read_file", json!({"file_path": "main.py"})))
            .reply(call(
                "e1",
                "edit_file",
                json!({"file_path": "main.py", "old_string": "helpers", "new_string": "utils"}),
            ))
            .reply(Turn::text("I could not edit it.")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "fix it"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let progress = stderr(&out);
    let lines: Vec<&str> = progress
        .lines()
        .skip_while(|l| !l.starts_with("● edit_file"))
        .collect();
    assert_eq!(lines.len(), 2, "{progress}");
    assert_eq!(lines[0], "● edit_file main.py");
    assert!(
        lines[1].starts_with("  ✗ not allowed: ") && lines[1].contains("accept-edits"),
        "{progress}"
    );
}
