//! The REPL, round two (issue 24): each defect a day of real use found, driven through the
//! real binary in a pseudo-terminal.

use std::time::Duration;

use rein_testkit::{MockServer, MockToolCall, MockUsage, Script, Turn};
use serde_json::json;

use crate::pty::Pty;
use crate::support::{Env, require_python3, sandbox_enforced};

#[test]
fn the_demo_on_a_terminal_styles_its_title_instead_of_showing_escapes() {
    require_python3();
    let env = Env::new();
    let mut pty = Pty::first_start(&env, "http://127.0.0.1:9", &["--demo"], 100);
    pty.wait_for("rein demo");
    assert_eq!(pty.wait_exit(), 0, "{}", pty.transcript());
    let said = pty.transcript();
    assert!(!said.contains('␛'), "an escape shown as a symbol:\n{said}");
    assert!(said.contains("rein demo\n"), "{said}");
}

/// The screen's rows joined by single spaces: a word the terminal broke at its edge shows up
/// split in two.
fn rows_joined(pty: &Pty) -> String {
    joined(&pty.rows())
}

/// Rows joined by single spaces, runs of spaces made one.
fn joined(rows: &[String]) -> String {
    rows.iter()
        .flat_map(|row| row.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
}

fn bash(id: &str, command: &str) -> MockToolCall {
    MockToolCall::new(id, "bash", json!({ "command": command }).to_string())
}

#[test]
fn the_first_start_question_is_wrapped_and_answered_on_its_own_line() {
    let env = Env::new();
    if !sandbox_enforced(
        &env,
        "the_first_start_question_is_wrapped_and_answered_on_its_own_line",
    ) {
        return;
    }
    let server = MockServer::start(Script::new());
    let mut pty = Pty::first_start(&env, &server.openai_base_url(), &[], 60);
    pty.wait_for_screen("[y/N]");
    let joined = rows_joined(&pty);
    for whole in [
        "In the auto permission mode, edits and commands inside this workspace run without \
         asking, sandboxed: the rest of the machine stays read-only.",
        "Make auto the REPL's default? [y/N]",
    ] {
        assert!(
            joined.contains(whole),
            "broken mid-word at 60 columns:\n{}",
            pty.screen()
        );
    }
    let (row, _) = pty.cursor();
    let rows = pty.rows();
    assert!(
        rows[usize::from(row)].contains("[y/N]"),
        "the cursor is not on the question's line (row {row}):\n{}",
        pty.screen()
    );
    pty.send("n\r");
    pty.wait_for("permissions: default");
    assert!(
        pty.rows().iter().any(|r| r.contains("[y/N] n")),
        "the answer is not echoed after the question:\n{}",
        pty.screen()
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

const CODE_ANSWER: &str = "# Heading one\n\nThe fix:\n\n```rust\nfn main() {}\n```\n\nDone.";

#[test]
fn code_blocks_show_no_fences_and_headings_keep_emphasis_under_no_color() {
    for vars in [&[][..], &[("NO_COLOR", "1")][..]] {
        let env = Env::new();
        let server = MockServer::start(Script::new().reply(Turn::text(CODE_ANSWER)));
        let mut pty = Pty::start_with(&env, &server.openai_base_url(), &[], 80, vars);
        pty.wait_ready();
        pty.send("show code\r");
        pty.wait_for("Done.");
        pty.wait_for("↑ ");
        let said = pty.transcript();
        assert!(said.contains("fn main() {}"), "{said}");
        assert!(
            !said.contains("```"),
            "a code fence printed ({vars:?}):\n{said}"
        );
        assert_eq!(
            pty.emphasis_of("Heading one"),
            Some((true, true)),
            "the heading lost its emphasis ({vars:?}):\n{}",
            pty.screen()
        );
        pty.send("/exit\r");
        assert_eq!(pty.wait_exit(), 0);
    }
}

#[test]
fn esc_stops_a_turn_as_ctrl_c_does() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::text("partial answer\nmore")
                    .chunks(["partial answer\n", "more"])
                    .stall_after(2),
            )
            .reply(Turn::text("after the stop")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    pty.send("talk\r");
    pty.wait_for("partial answer");
    pty.send("\x1b");
    pty.wait_for("interrupted");
    pty.send("go on\r");
    pty.wait_for("after the stop");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn at_60_columns_the_usage_line_and_key_hints_break_between_parts() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", "touch one.txt")))
            .reply(Turn::text("done").usage(MockUsage::new(123_456, 2_345).cost(1.2345))),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 60);
    pty.wait_ready();
    pty.send("go\r");
    pty.wait_for("Esc no ›");
    pty.wait_for_screen("Esc no ›");
    let keys = joined(&pty.rows());
    assert!(
        keys.contains(
            "y yes · a yes for the session · l this line for the session · n no · r no, say \
             why · Esc no ›"
        ),
        "the key hints broke mid-word:\n{}",
        pty.screen()
    );
    for row in pty
        .rows()
        .iter()
        .filter(|r| r.contains(" yes") || r.contains("Esc"))
    {
        let row = row.trim_end();
        assert!(
            row.ends_with('·') || row.ends_with('›'),
            "the key hints broke inside a part: {row:?}\n{}",
            pty.screen()
        );
    }
    pty.send("y");
    pty.wait_for("done");
    pty.wait_for_screen("$1.23");
    let rows = pty.rows();
    let first = rows.iter().position(|r| r.contains("↑ ")).unwrap();
    let last = rows
        .iter()
        .position(|r| r.contains("$1.23"))
        .unwrap()
        .max(first);
    let usage: Vec<&str> = rows[first..]
        .iter()
        .map(|r| r.trim_end())
        .take_while(|r| !r.is_empty() && !r.starts_with('›'))
        .collect();
    assert!(
        usage.len() > 1 || last > first,
        "the usage line did not need wrapping: {usage:?}"
    );
    for row in &usage[..usage.len() - 1] {
        assert!(
            row.ends_with('·'),
            "the usage line broke mid-part: {usage:?}"
        );
    }
    // Nothing of it was lost.
    assert!(
        joined(&rows).contains("↑ 123k in · ↓ 2.3k out · $1.23"),
        "{}",
        pty.screen()
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn ctrl_c_at_an_approval_and_a_refusal_with_a_reason_are_shown_once_each() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", "touch why.txt")))
            .reply(Turn::text("did why"))
            .reply(Turn::new().tool_call(bash("c2", "touch stop.txt")))
            .reply(Turn::text("never")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    pty.send("one\r");
    pty.wait_for("Esc no ›");
    pty.send("r");
    pty.wait_for("why not?");
    pty.send("use the fixture instead\r");
    pty.wait_for("did why");
    pty.wait_for_count("↑ ", 1);
    let history = pty.history();
    let shown = history
        .iter()
        .filter(|row| row.contains("use the fixture instead"))
        .count();
    assert_eq!(
        shown,
        1,
        "the reason is shown {shown} times:\n{}",
        history.join("\n")
    );

    pty.send("two\r");
    pty.wait_for_count("Esc no ›", 2);
    pty.send("\x03");
    pty.wait_for("interrupted");
    pty.wait_for_count("↑ ", 2);
    pty.wait_ready();
    let history = pty.history();
    let keys_row = history
        .iter()
        .rev()
        .find(|row| row.contains("y yes"))
        .unwrap();
    assert!(
        !history
            .iter()
            .any(|row| row.contains("Esc no ›") && !row.trim_end().ends_with("Esc no ›")),
        "something was printed over the keys line: {keys_row:?}\n{}",
        history.join("\n")
    );
    assert!(!env.work.join("stop.txt").exists());
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn an_edits_duration_leaves_out_the_time_the_person_took_to_answer() {
    let env = Env::new();
    env.write("notes.txt", "old line\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r1",
                "read_file",
                json!({ "file_path": "notes.txt" }).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "e1",
                "edit_file",
                json!({ "file_path": "notes.txt", "old_string": "old line", "new_string": "new line" })
                    .to_string(),
            )))
            .reply(Turn::text("edited")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    pty.send("edit\r");
    pty.wait_for("Esc no ›");
    // The person thinks for a while before answering (not a synchronisation: the edit's
    // line must not count this time).
    std::thread::sleep(Duration::from_millis(2_500));
    pty.send("y");
    pty.wait_for("edited");
    assert_eq!(env.read("notes.txt"), "new line\n");
    let said = pty.transcript();
    let edit_lines: Vec<&str> = said
        .lines()
        .filter(|l| l.contains("notes.txt") && l.contains(" s"))
        .collect();
    assert!(
        !edit_lines
            .iter()
            .any(|l| l.contains("2.") || l.contains("3.")),
        "the edit's duration counts the person's thinking: {edit_lines:?}\n{said}"
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// An answer of 30 distinct lines, one chunk each, streamed slowly enough for the spinner to
/// be redrawn between them.
fn long_answer() -> (Vec<String>, Turn) {
    let lines: Vec<String> = (1..=30)
        .map(|n| format!("Line {n:02} of the answer: alpha bravo charlie delta echo foxtrot golf."))
        .collect();
    let text = lines.join("\n\n");
    let chunks: Vec<String> = lines.iter().map(|l| format!("{l}\n\n")).collect();
    let turn = Turn::text(text)
        .chunks(chunks)
        .chunk_delay(Duration::from_millis(60));
    (lines, turn)
}

/// The whole history holds each answer line exactly once (rows joined, so a line wrapped
/// between words still reads whole) and no spinner row.
fn assert_scrollback_whole(pty: &Pty, lines: &[String]) {
    let history = pty.history();
    let all = joined(&history);
    for line in lines {
        assert_eq!(
            all.matches(line.as_str()).count(),
            1,
            "{line:?} not shown exactly once:\n{}",
            history.join("\n")
        );
    }
    assert!(
        !history.iter().any(|row| row.contains("to stop")
            || row.contains("writing…")
            || row.contains("thinking…")),
        "a spinner row was left in the scrollback:\n{}",
        history.join("\n")
    );
}

#[test]
fn the_scrollback_holds_every_answer_line_once_at_60_and_200_columns() {
    for cols in [60, 200] {
        let env = Env::new();
        let (lines, turn) = long_answer();
        let server = MockServer::start(Script::new().reply(turn));
        let mut pty = Pty::start(&env, &server.openai_base_url(), &[], cols);
        pty.wait_ready();
        pty.send("talk\r");
        pty.wait_for("↑ ");
        pty.wait_for_count("› ", 2);
        assert_scrollback_whole(&pty, &lines);
        pty.send("/exit\r");
        assert_eq!(pty.wait_exit(), 0);
    }
}

#[test]
fn a_resize_mid_stream_wraps_at_the_new_width_and_leaves_no_spinner_rows() {
    let env = Env::new();
    let (lines, turn) = long_answer();
    let server = MockServer::start(Script::new().reply(turn));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 60);
    pty.wait_ready();
    pty.send("talk\r");
    pty.wait_for("Line 03");
    pty.resize(120);
    pty.wait_for("↑ ");
    pty.wait_for_count("› ", 2);
    assert_scrollback_whole(&pty, &lines);
    // The last lines came after the resize: laid out at 120 columns, each on one row.
    let history = pty.history();
    assert!(
        history.iter().any(|row| row.trim_end() == lines[29]),
        "the end of the answer is still wrapped at the old width:\n{}",
        history.join("\n")
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn narrowing_the_window_mid_turn_leaves_no_stale_spinner_rows() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("partial answer\nmore")
                .chunks(["partial answer\n", "more"])
                .stall_after(2),
        ),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    pty.send("talk\r");
    pty.wait_for("partial answer");
    pty.resize(30);
    // A dozen redraws of the spinner after the resize.
    let drawn = pty.transcript().matches(" tokens").count();
    pty.wait_for_count(" tokens", drawn + 12);
    pty.send("\x03");
    pty.wait_for("interrupted");
    pty.wait_for_count("› ", 2);
    let history = pty.history();
    assert!(
        !history.iter().any(|row| row.contains("thinking")
            || row.contains("tokens ·")
            || row.contains("to stop")),
        "stale spinner rows:\n{}",
        history.join("\n")
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn at_60_columns_the_saved_output_path_wraps_whole_instead_of_being_cut() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", "seq 1 200000; exit 3")))
            .reply(Turn::text("seen")),
    );
    let mut pty = Pty::start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "yolo"],
        60,
    );
    pty.wait_ready();
    pty.send("count\r");
    pty.wait_for("seen");
    pty.wait_for("↑ ");
    // Rows put end to end, each without its indentation: a wrapped path reads whole.
    let history = pty.history();
    let text: String = history.iter().map(|row| row.trim()).collect();
    let at = text
        .find("whole output saved to")
        .unwrap_or_else(|| panic!("no saved output named:\n{}", history.join("\n")));
    let path: String = text[at + "whole output saved to".len()..]
        .trim_start()
        .chars()
        .take_while(|c| !c.is_whitespace() && *c != '…')
        .collect();
    let path = path.split("seen").next().unwrap().trim_end_matches('.');
    assert!(
        std::path::Path::new(path).is_file(),
        "the path shown ({path:?}) is not the saved file:\n{}",
        history.join("\n")
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn an_edit_of_a_file_never_read_is_refused_before_asking() {
    let env = Env::new();
    env.write("notes.txt", "old line\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "e1",
                "edit_file",
                json!({ "file_path": "notes.txt", "old_string": "old line", "new_string": "new line" })
                    .to_string(),
            )))
            .reply(Turn::text("will read first")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    pty.send("edit\r");
    pty.wait_for("will read first");
    let said = pty.transcript();
    assert!(
        !said.contains("needs your approval"),
        "asked about a doomed edit:\n{said}"
    );
    assert!(said.contains("has not been read"), "{said}");
    assert_eq!(env.read("notes.txt"), "old line\n");
    let result = server.requests()[1].body.to_string();
    assert!(
        result.contains("has not been read in this session"),
        "{result}"
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}
