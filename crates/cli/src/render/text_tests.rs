//! The text renderer, fed events built here (no tool runs): snapshots of what a person sees.

use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rein_core::agent::{AgentEvent, EventSink};
use rein_core::face::Display;
use serde_json::json;

use super::TextProgress;
use crate::render::Style;

/// What the model got: a renderer that reads payloads never shows it.
const MODEL_TEXT: &str = "MODEL-FACING TEXT";

/// A writer whose bytes the test reads afterwards.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn rendered_in(style: Style, events: Vec<AgentEvent>) -> String {
    let out = Captured::default();
    let progress = TextProgress::with_output(out.clone(), style);
    for event in events {
        progress.emit(event);
    }
    String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
}

/// Plain output, checked never to show the model's text.
fn rendered(events: Vec<AgentEvent>) -> String {
    let out = rendered_in(Style::plain(), events);
    assert!(!out.contains(MODEL_TEXT), "{out}");
    out
}

fn call(id: &str, name: &str, arguments: serde_json::Value) -> AgentEvent {
    AgentEvent::ToolCallStarted {
        id: id.into(),
        name: name.into(),
        arguments,
    }
}

fn result(id: &str, name: &str, display: Display) -> AgentEvent {
    AgentEvent::ToolResult {
        id: id.into(),
        name: name.into(),
        summary: MODEL_TEXT.into(),
        content: MODEL_TEXT.into(),
        is_error: false,
        duration: Duration::from_millis(20),
        display,
        changes: Vec::new(),
    }
}

fn failure(id: &str, name: &str, display: Display) -> AgentEvent {
    let mut event = result(id, name, display);
    if let AgentEvent::ToolResult { is_error, .. } = &mut event {
        *is_error = true;
    }
    event
}

/// A failure whose message is the model's text (no better payload).
fn message_failure(id: &str, name: &str, message: &str) -> AgentEvent {
    AgentEvent::ToolResult {
        id: id.into(),
        name: name.into(),
        summary: message.into(),
        content: message.into(),
        is_error: true,
        duration: Duration::from_millis(1),
        display: Display::Text,
        changes: Vec::new(),
    }
}

fn narration(text: &str, tool_calls: usize) -> Vec<AgentEvent> {
    vec![
        AgentEvent::TextDelta { text: text.into() },
        AgentEvent::ResponseFinished {
            round: 1,
            text: text.into(),
            tool_calls,
        },
    ]
}

fn read(path: &str, first_line: u64, lines_shown: u64, total_lines: Option<u64>) -> Display {
    Display::FileRead {
        path: path.into(),
        first_line,
        lines_shown,
        total_lines,
        truncated: total_lines != Some(lines_shown),
    }
}

fn command(command: &str, exit_code: Option<i32>, duration: Duration, tail: &str) -> Display {
    Display::Command {
        command: command.into(),
        exit_code,
        duration,
        timed_out: false,
        output_tail: tail.into(),
        output_lines: tail.lines().count() as u64,
        output: String::new(),
        saved_to: None,
        sandbox_refusal: None,
        hosts_refused: Vec::new(),
    }
}

#[test]
fn an_empty_file() {
    insta::assert_snapshot!(rendered(vec![
        call("r1", "read_file", json!({"file_path": "empty.txt"})),
        result("r1", "read_file", read("empty.txt", 0, 0, Some(0))),
    ]));
}

#[test]
fn a_window_of_a_long_file() {
    insta::assert_snapshot!(rendered(vec![
        call("r1", "read_file", json!({"file_path": "src/big.rs"})),
        result("r1", "read_file", read("src/big.rs", 1, 2000, Some(5000))),
        call(
            "r2",
            "read_file",
            json!({"file_path": "src/big.rs", "offset": 4001}),
        ),
        result(
            "r2",
            "read_file",
            read("src/big.rs", 4001, 1000, Some(5000))
        ),
        call("r3", "read_file", json!({"file_path": "Cargo.toml"})),
        result("r3", "read_file", read("Cargo.toml", 1, 120, Some(120))),
    ]));
}

#[test]
fn an_edit_shows_its_diff() {
    let diff = "--- main.py\n+++ main.py\n@@ -1,5 +1,6 @@\n-from utils import greet\n+from utils import greet, shout\n \n \n def main():\n     print(greet(\"rein\"))\n+    print(shout(\"the import works\"))\n@@ -40,3 +41,3 @@\n if __name__ == \"__main__\":\n-    main()\n+    raise SystemExit(main())\n";
    insta::assert_snapshot!(rendered(vec![
        call(
            "e1",
            "edit_file",
            json!({"file_path": "main.py", "old_string": "x", "new_string": "y"}),
        ),
        result(
            "e1",
            "edit_file",
            Display::FileEdit {
                path: "main.py".into(),
                diff: diff.into(),
                added: 3,
                removed: 2,
                created: false,
            },
        ),
    ]));
}

#[test]
fn a_write_that_created_a_file() {
    let diff =
        "--- notes/todo.md\n+++ notes/todo.md\n@@ -0,0 +1,3 @@\n+# To do\n+\n+- fix the import\n";
    insta::assert_snapshot!(rendered(vec![
        call(
            "w1",
            "write_file",
            json!({"file_path": "notes/todo.md", "content": "# To do\n\n- fix the import\n"}),
        ),
        result(
            "w1",
            "write_file",
            Display::FileEdit {
                path: "notes/todo.md".into(),
                diff: diff.into(),
                added: 3,
                removed: 0,
                created: true,
            },
        ),
    ]));
}

#[test]
fn a_failed_command_shows_its_exit_code_and_output_tail() {
    let tail = "failures:\n    parse::tests::empty_input\n\ntest result: FAILED. 41 passed; 1 failed; 0 ignored\nerror: test failed, to rerun pass `--lib`\n";
    insta::assert_snapshot!(rendered(vec![
        call("b1", "bash", json!({"command": "cargo test"})),
        failure(
            "b1",
            "bash",
            command("cargo test", Some(101), Duration::from_millis(12_400), tail),
        ),
    ]));
}

#[test]
fn a_timed_out_command() {
    insta::assert_snapshot!(rendered(vec![
        call("b1", "bash", json!({"command": "npm run dev", "timeout": 120})),
        failure(
            "b1",
            "bash",
            Display::Command {
                command: "npm run dev".into(),
                exit_code: None,
                duration: Duration::from_millis(120_030),
                timed_out: true,
                output_tail: "> vite\n\n  VITE v5.0.0  ready in 312 ms\n  ➜  Local:   http://localhost:5173/\n".into(),
                output_lines: 4,
                output: String::new(),
                saved_to: None,
                sandbox_refusal: None,
                hosts_refused: Vec::new(),
            },
        ),
    ]));
}

#[test]
fn a_command_whose_output_was_saved_to_a_file() {
    insta::assert_snapshot!(rendered(vec![
        call("b1", "bash", json!({"command": "seq 1 1000000"})),
        result(
            "b1",
            "bash",
            Display::Command {
                command: "seq 1 1000000".into(),
                exit_code: Some(0),
                duration: Duration::from_millis(1_340),
                timed_out: false,
                output_tail: "999996\n999997\n999998\n999999\n1000000\n".into(),
                output_lines: 1_000_000,
                output: String::new(),
                saved_to: Some("/home/me/.rein/tool-output/bash-7f3a9c.txt".into()),
                sandbox_refusal: None,
                hosts_refused: Vec::new(),
            },
        ),
    ]));
}

#[test]
fn commands_that_worked_with_and_without_output() {
    insta::assert_snapshot!(rendered(vec![
        call("b1", "bash", json!({"command": "python3 main.py"})),
        result(
            "b1",
            "bash",
            command(
                "python3 main.py",
                Some(0),
                Duration::from_millis(80),
                "Hello, rein!\nTHE IMPORT WORKS!\n",
            ),
        ),
        call("b2", "bash", json!({"command": "mkdir -p build\ncd build"})),
        result(
            "b2",
            "bash",
            command("mkdir -p build", Some(0), Duration::from_millis(5), ""),
        ),
    ]));
}

#[test]
fn searches_and_listings() {
    insta::assert_snapshot!(rendered(vec![
        call("g1", "grep", json!({"pattern": "TODO", "path": "src"})),
        result(
            "g1",
            "grep",
            Display::Search {
                matches: 0,
                files: 0,
            },
        ),
        call("g2", "grep", json!({"pattern": "fn main"})),
        result(
            "g2",
            "grep",
            Display::Search {
                matches: 12,
                files: 3,
            },
        ),
        call("l1", "glob", json!({"pattern": "**/*.rs"})),
        result(
            "l1",
            "glob",
            Display::Listing {
                count: 40,
                truncated: false,
            },
        ),
        call(
            "l2",
            "glob",
            json!({"pattern": "**/*", "path": "node_modules"})
        ),
        result(
            "l2",
            "glob",
            Display::Listing {
                count: 18_204,
                truncated: true,
            },
        ),
    ]));
}

#[test]
fn a_refused_call_says_so_once() {
    // As core words them: a short reason for the person, a longer message for the model.
    let reason = "edits need approval in the default mode, and no one can be asked in this run; \
                  run rein with `--permission-mode accept-edits` (edits inside the workspace) or \
                  `--permission-mode yolo`";
    let message = "rein did not run this call: edits need approval in the default mode, and this \
                   run has no one to ask (a one-shot or headless run). Do not retry it.";
    let out = rendered(vec![
        call(
            "e1",
            "edit_file",
            json!({"file_path": "main.py", "old_string": "a", "new_string": "b"}),
        ),
        AgentEvent::PermissionDenied {
            id: "e1".into(),
            name: "edit_file".into(),
            arguments: json!({"file_path": "main.py"}),
            reason: reason.into(),
        },
        message_failure("e1", "edit_file", message),
    ]);
    assert_eq!(out.matches("no one can be asked").count(), 1, "{out}");
    assert!(
        !out.contains("Do not retry"),
        "the model's words are not shown: {out}"
    );
    insta::assert_snapshot!(out);
}

#[test]
fn an_approval_asked_is_shown() {
    insta::assert_snapshot!(rendered(vec![
        call("b1", "bash", json!({"command": "make install"})),
        AgentEvent::ApprovalRequested {
            id: "b1".into(),
            name: "bash".into(),
            reason: "commands need approval".into(),
        },
        result(
            "b1",
            "bash",
            command(
                "make install",
                Some(0),
                Duration::from_millis(700),
                "done\n"
            ),
        ),
    ]));
}

#[test]
fn errors_and_plain_text_results_show_their_message() {
    insta::assert_snapshot!(rendered(vec![
        call("r1", "read_file", json!({"file_path": "mian.py"})),
        message_failure(
            "r1",
            "read_file",
            "File not found: mian.py. Did you mean main.py?",
        ),
        call("m1", "mcp__github__list_issues", json!({"repo": "rein"})),
        AgentEvent::ToolResult {
            id: "m1".into(),
            name: "mcp__github__list_issues".into(),
            summary: "#12 Structured tool results (+6 lines)".into(),
            content: "#12 Structured tool results\n#11 Sandbox on macOS\n#10 REPL\n#9 Hooks\n#8 Skills\n#7 MCP\n#6 Sessions\n".into(),
            is_error: false,
            duration: Duration::from_millis(2_500),
            display: Display::Text,
            changes: Vec::new(),
        },
    ]));
}

/// Everything around the calls: narration, results of a batch coming after all its calls'
/// lines, a retry, a warning, the waiting notice.
#[test]
fn a_whole_run() {
    let mut events = narration("Let me look at the two files first.", 2);
    events.extend([
        call("r1", "read_file", json!({"file_path": "a.txt"})),
        call("r2", "read_file", json!({"file_path": "b.txt"})),
        result("r1", "read_file", read("a.txt", 1, 2, Some(2))),
        result("r2", "read_file", read("b.txt", 1, 3, Some(3))),
        AgentEvent::Waiting {
            elapsed: Duration::from_secs(10),
        },
        AgentEvent::TextDelta {
            text: "Half an answer".into(),
        },
        AgentEvent::Retry {
            attempt: 1,
            wait: Duration::from_millis(1000),
            reason: "the server said 503 (overloaded)".into(),
        },
        AgentEvent::Warning {
            message: "the session file is not being saved: disk full".into(),
        },
    ]);
    events.extend(narration("Both are short. Running the tests.", 1));
    events.extend([
        call("b1", "bash", json!({"command": "make test"})),
        result(
            "b1",
            "bash",
            command("make test", Some(0), Duration::from_millis(3_200), "ok\n"),
        ),
    ]);
    // The final answer goes to stdout, not here.
    events.extend(narration("All done.", 0));
    events.push(AgentEvent::TurnFinished {
        stop_reason: rein_core::agent::TurnStop::EndTurn,
    });
    let out = rendered(events);
    assert!(
        !out.contains("All done") && !out.contains("Half an answer"),
        "{out}"
    );
    insta::assert_snapshot!(out);
}

/// Escape sequences in a path, arguments, narration and command output.
fn hostile_events() -> Vec<AgentEvent> {
    let path = "notes\u{1b}]0;pwned\u{7}\u{1b}[2J.txt";
    let mut events = narration("Reading \u{1b}[31mthis\u{1b}[0m now.", 2);
    events.extend([
        call("r1", "read_file", json!({"file_path": path})),
        result("r1", "read_file", read(path, 1, 3, Some(3))),
        call("b1", "bash", json!({"command": "cat log\u{1b}[2J"})),
        failure(
            "b1",
            "bash",
            command(
                "cat log\u{1b}[2J",
                Some(1),
                Duration::from_millis(10),
                "title \u{1b}]0;pwned\u{7}\nclear \u{1b}[2J\rhidden\n",
            ),
        ),
        call("e1", "edit_file", json!({"file_path": path})),
        result(
            "e1",
            "edit_file",
            Display::FileEdit {
                path: path.into(),
                diff: "@@ -1 +1 @@\n-a\u{1b}[2J\n+b\u{9b}31m\n".into(),
                added: 1,
                removed: 1,
                created: false,
            },
        ),
        message_failure("x1", "nope", "bad \u{1b}]0;pwned\u{7} tool"),
    ]);
    events
}

#[test]
fn escape_sequences_from_a_file_or_a_command_are_shown_harmlessly() {
    let out = rendered(hostile_events());
    assert!(!out.contains('\u{1b}') && !out.contains('\u{7}'), "{out:?}");
    assert!(!out.contains('\u{9b}') && !out.contains('\r'), "{out:?}");
    insta::assert_snapshot!(out);
}

#[test]
fn in_colour_the_only_escape_sequences_are_reins_own() {
    let out = rendered_in(Style::colored(), hostile_events());
    assert!(out.contains("\u{1b}[31m"), "colour is on: {out:?}");
    // Style's own codes: bold, dim, red, green, yellow, reset.
    let mut foreign = out.clone();
    for code in ["1", "2", "31", "32", "33", "0"] {
        foreign = foreign.replace(&format!("\u{1b}[{code}m"), "");
    }
    assert!(!foreign.contains('\u{1b}'), "foreign escapes in {out:?}");
    assert!(out.contains("␛]0;pwned␇"), "{out:?}");
}

#[test]
fn a_todo_list_and_a_sub_agent_s_calls_get_a_line_each() {
    use rein_core::agent::NestedEvent;
    use rein_core::tools::{TodoItem, TodoStatus};
    let item = |content: &str, status, active: Option<&str>| TodoItem {
        content: content.into(),
        status,
        active_form: active.map(Into::into),
    };
    let nested = |event| {
        AgentEvent::Nested(NestedEvent {
            parent_call_id: "a1".into(),
            agent: "explore".into(),
            event: Box::new(event),
        })
    };
    let out = rendered(vec![
        AgentEvent::Todos {
            todos: vec![
                item("write the parser", TodoStatus::Completed, None),
                item("test it", TodoStatus::InProgress, Some("Testing it")),
                item("ship", TodoStatus::Pending, None),
            ],
        },
        nested(call("g1", "grep", json!({"pattern": "pytest"}))),
        nested(AgentEvent::TextDelta {
            text: MODEL_TEXT.into(),
        }),
    ]);
    assert_eq!(
        out,
        "☐ todo: 1/3 done; now: Testing it\n  ↳ explore: grep pytest\n"
    );
}
