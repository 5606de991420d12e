//! The live renderer's tests.

use std::sync::Arc;
use std::time::Duration;

use super::*;

#[derive(Clone, Default)]
struct Buffer(Arc<Mutex<Vec<u8>>>);

impl Write for Buffer {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn live(width: usize, spinner: bool) -> (Live, Buffer) {
    let buffer = Buffer::default();
    let live = Live::new(
        buffer.clone(),
        LiveOptions {
            style: Style::plain(),
            width,
            spinner,
            show_reasoning: true,
            interactive: true,
        },
    );
    (live, buffer)
}

fn text(buffer: &Buffer) -> String {
    String::from_utf8(buffer.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn the_answer_streams_line_by_line_with_tool_lines_between() {
    let (live, out) = live(80, false);
    live.emit(AgentEvent::TextDelta {
        text: "I will **read** it.\nNow".into(),
    });
    assert_eq!(text(&out), "I will read it.\n");
    live.emit(AgentEvent::ResponseFinished {
        round: 1,
        text: String::new(),
        tool_calls: 1,
    });
    live.emit(AgentEvent::ToolCallStarted {
        id: "c1".into(),
        name: "bash".into(),
        arguments: serde_json::json!({"command": "cargo test"}),
    });
    live.emit(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "bash".into(),
        summary: String::new(),
        content: String::new(),
        is_error: false,
        duration: Duration::from_millis(10),
        display: Display::Command {
            command: "cargo test".into(),
            exit_code: Some(0),
            duration: Duration::from_millis(10),
            timed_out: false,
            output_tail: "ok".into(),
            output_lines: 1,
            output: String::new(),
            sandbox_refusal: None,
            hosts_refused: Vec::new(),
            saved_to: None,
        },
        changes: Vec::new(),
    });
    insta::assert_snapshot!(text(&out));
}

/// A turn with a long command, a failed one and an edit, as the REPL shows it.
fn tool_turn(width: usize) -> String {
    let (live, out) = live(width, false);
    let command = "cargo test --workspace --all-features -- --nocapture --test-threads=1 2>&1 | tee target/test-output.log";
    live.emit(AgentEvent::ToolCallStarted {
        id: "c1".into(),
        name: "bash".into(),
        arguments: serde_json::json!({ "command": command }),
    });
    live.emit(AgentEvent::ToolResult {
        id: "c1".into(),
        name: "bash".into(),
        summary: String::new(),
        content: String::new(),
        is_error: true,
        duration: Duration::from_millis(3200),
        display: Display::Command {
            command: command.into(),
            exit_code: Some(101),
            duration: Duration::from_millis(3200),
            timed_out: false,
            output_tail: "running 12 tests\ntest parse::works ... ok\ntest parse::fails_on_a_very_long_input_that_goes_past_the_edge_of_any_reasonable_terminal ... FAILED\nfailures:\n    parse::fails\ntest result: FAILED. 11 passed; 1 failed".into(),
            output_lines: 6,
            output: String::new(),
            sandbox_refusal: None,
            hosts_refused: Vec::new(),
            saved_to: None,
        },
        changes: Vec::new(),
    });
    live.emit(AgentEvent::ToolCallStarted {
        id: "c2".into(),
        name: "edit_file".into(),
        arguments: serde_json::json!({ "file_path": "src/parse.rs" }),
    });
    live.emit(AgentEvent::ToolResult {
        id: "c2".into(),
        name: "edit_file".into(),
        summary: String::new(),
        content: String::new(),
        is_error: false,
        duration: Duration::from_millis(4),
        display: Display::FileEdit {
            path: "src/parse.rs".into(),
            diff: "--- src/parse.rs\n+++ src/parse.rs\n@@ -10,3 +10,3 @@\n fn parse(input: &str) -> Result<Ast, Error> {\n-    let tokens = lex(input).expect(\"the lexer never fails on input that came from a file we just read\");\n+    let tokens = lex(input).map_err(|e| Error::Lex { offset: e.offset, message: e.to_string() })?;\n     build(tokens)\n".into(),
            added: 1,
            removed: 1,
            created: false,
        },
        changes: Vec::new(),
    });
    text(&out)
}

#[test]
fn tool_lines_and_diffs_at_80_and_120_columns() {
    insta::assert_snapshot!("tools_80", tool_turn(80));
    insta::assert_snapshot!("tools_120", tool_turn(120));
}

#[test]
fn the_spinner_is_replaced_in_place_and_cleared_before_text() {
    let (live, out) = live(80, true);
    live.begin("thinking");
    live.tick();
    live.emit(AgentEvent::TextDelta {
        text: "hello\n".into(),
    });
    live.end();
    let written = text(&out);
    assert!(
        !written.contains("\n⠋"),
        "the spinner never scrolls: {written:?}"
    );
    assert!(written.contains("\r\x1b[Khello\n"), "{written:?}");
    assert!(
        written.ends_with("\r\x1b[K"),
        "cleared at the end: {written:?}"
    );
}

#[test]
fn long_tool_lines_fit_the_width() {
    let (live, out) = live(30, false);
    live.emit(AgentEvent::ToolCallStarted {
        id: "c1".into(),
        name: "bash".into(),
        arguments: serde_json::json!({"command": "x".repeat(80)}),
    });
    for line in text(&out).lines() {
        assert!(super::super::width::visible_width(line) <= 30, "{line}");
    }
}
