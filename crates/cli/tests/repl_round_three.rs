//! The REPL, round two (issue 24), the rest: prefix rules for "yes for the session", pastes
//! collapsed, a running command's output live, tables fitted to the window. Driven through
//! the real binary in a pseudo-terminal.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use std::time::{Duration, Instant};

use crate::pty::{Pty, SCREEN_WAIT};
use crate::support::Env;

/// Waits until the input line reads `typed` after the prompt: rustyline drew it, so keys go
/// to the input line (during a turn they are type-ahead).
fn wait_input(pty: &Pty, typed: &str) {
    let deadline = Instant::now() + SCREEN_WAIT;
    while !pty.transcript().ends_with(&format!("› {typed}")) {
        assert!(
            Instant::now() < deadline,
            "the input line never read {typed:?}:\n{}",
            pty.screen()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn bash(id: &str, command: &str) -> MockToolCall {
    MockToolCall::new(id, "bash", json!({ "command": command }).to_string())
}

#[test]
fn yes_for_the_session_offers_the_commands_prefix_and_the_exact_line() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", "touch one.txt")))
            .reply(Turn::text("did one"))
            .reply(Turn::new().tool_call(bash("c2", "touch two.txt")))
            .reply(Turn::text("did two"))
            .reply(Turn::new().tool_call(bash("c3", "mkdir -p d1")))
            .reply(Turn::text("did d1"))
            .reply(Turn::new().tool_call(bash("c4", "mkdir -p d2")))
            .reply(Turn::text("did d2"))
            .reply(Turn::new().tool_call(bash("c5", "bash -c 'touch three.txt'")))
            .reply(Turn::text("did three")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();

    // The prefix is offered and shown, the exact line as the narrow choice.
    pty.send("one\r");
    pty.wait_for("Esc no ›");
    let asked = pty.transcript();
    assert!(
        asked.contains("a: allow bash(touch:*) for the rest of the session"),
        "{asked}"
    );
    assert!(
        asked.contains("l: allow only this line, bash(touch one.txt), for the rest of the session"),
        "{asked}"
    );
    assert!(asked.contains("l this line for the session"), "{asked}");
    pty.send("a");
    pty.wait_for("did one");
    pty.wait_for("yes, bash(touch:*) for the rest of the session");
    // Another file under the approved prefix runs without asking.
    pty.send("two\r");
    pty.wait_for("did two");
    assert_eq!(pty.transcript().matches("Esc no ›").count(), 1);
    assert!(env.work.join("two.txt").exists());

    // The narrow choice covers that line only.
    pty.send("d1\r");
    pty.wait_for_count("Esc no ›", 2);
    assert!(pty.transcript().contains("a: allow bash(mkdir:*)"));
    pty.send("l");
    pty.wait_for("did d1");
    pty.send("d2\r");
    pty.wait_for_count("Esc no ›", 3);
    pty.send("y");
    pty.wait_for("did d2");

    // A shell running a string gets no prefix: only its exact line.
    pty.send("three\r");
    pty.wait_for_count("Esc no ›", 4);
    let last = pty.transcript();
    let question = &last[last.rfind("bash needs your approval").unwrap()..];
    assert!(
        question.contains("a: allow bash(bash -c 'touch three.txt') for the rest"),
        "{question}"
    );
    assert!(!question.contains("l: allow only"), "{question}");
    assert!(!question.contains(":*)"), "{question}");
    pty.send("n");
    pty.wait_for("did three");

    pty.send("/permissions\r");
    pty.wait_for("allowed for this session:");
    pty.wait_for("bash(mkdir -p d1)");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// A bracketed paste of `text`, as a terminal sends it.
fn paste(text: &str) -> String {
    format!("\x1b[200~{text}\x1b[201~")
}

#[test]
fn a_large_paste_shows_as_a_placeholder_and_is_sent_whole() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("read it all"))
            .reply(Turn::text("read it again")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    let pasted: String = (1..=2000).map(|i| format!("pasted line {i}\n")).collect();
    pty.send("look at this: ");
    pty.send(&paste(&pasted));
    pty.wait_for_screen("look at this: [pasted 2000 lines]");
    pty.send(" thanks\r");
    pty.wait_for("read it all");
    wait_input(&pty, "");
    // Sent whole, in place.
    let sent = server.requests()[0].body.to_string();
    let expected = format!("look at this: {pasted} thanks");
    assert!(
        sent.contains(&serde_json::to_string(&expected).unwrap()),
        "the paste was not sent whole"
    );
    // Shown as one line, in the input and the scrollback.
    assert!(
        !pty.transcript().contains("pasted line 2"),
        "the paste was shown"
    );
    assert!(
        pty.history().len() < 100,
        "the scrollback grew by the paste: {} rows",
        pty.history().len()
    );
    // Recalled from the history: the placeholder again, sent whole again.
    pty.send("\x1b[A");
    pty.wait_for_count("look at this: [pasted 2000 lines] thanks", 2);
    wait_input(&pty, "look at this: [pasted 2000 lines] thanks");
    pty.send("\r");
    pty.wait_for("read it again");
    wait_input(&pty, "");
    let again = server.requests()[1].body.to_string();
    assert_eq!(
        again.matches("pasted line 1999").count(),
        2,
        "the recalled input was not sent whole"
    );
    assert!(pty.history().len() < 100, "{} rows", pty.history().len());

    // A few lines are kept as they are.
    pty.send(&paste("one\ntwo"));
    wait_input(&pty, "one\ntwo");
    assert!(!pty.screen().contains("[pasted 2 lines]"));
    pty.send("\x03/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn editing_after_a_tall_paste_redraws_one_line_per_key() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    let pasted: String = (1..=100)
        .map(|i| format!("row {i} of the paste\n"))
        .collect();
    pty.send(&paste(&pasted));
    pty.wait_for_screen("[pasted 100 lines]");
    let before = pty.transcript().len();
    let mut typed = String::new();
    for key in "abcdefghij".chars() {
        pty.send(&key.to_string());
        typed.push(key);
        pty.wait_for_screen(&format!("[pasted 100 lines]{typed}"));
    }
    let drawn = pty.transcript().len() - before;
    assert!(
        drawn < 10 * 200,
        "{drawn} characters drawn for 10 keys (the whole input redrawn each time)"
    );
    pty.send("\x15/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// A command printing `lines` numbered lines, then waiting for the file `go` (the test's
/// signal), then printing `done`.
fn printing(lines: usize) -> String {
    format!(
        "for i in $(seq 1 {lines}); do echo \"output line $i\"; done; \
         while [ ! -e go ]; do sleep 0.05; done; echo done"
    )
}

#[test]
fn a_running_command_shows_its_tail_live_and_ctrl_o_shows_all_of_it() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", &printing(30))))
            .reply(Turn::text("it ran")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    pty.send("run it\r");
    pty.wait_for("Esc no ›");
    pty.send("y");
    // While it runs: its last lines, and how many are hidden above them.
    pty.wait_for_screen("│ output line 30");
    pty.wait_for_screen("… 25 lines above");
    let screen = pty.screen();
    assert!(screen.contains("│ output line 26"), "{screen}");
    assert!(!screen.contains("output line 25\n"), "{screen}");
    std::fs::write(env.work.join("go"), "").unwrap();
    pty.wait_for("it ran");
    // Once it ended: the tail and the count under its result, nothing left of the live view.
    let screen = pty.screen();
    assert!(
        screen.contains("… 26 lines above · Ctrl+O shows all"),
        "{screen}"
    );
    assert_eq!(
        pty.history()
            .iter()
            .filter(|row| row.contains("│ output line 30"))
            .count(),
        1,
        "stale rows of the live view:\n{}",
        pty.history().join("\n")
    );

    // Ctrl+O at the prompt: the whole output, then the prompt again with what was typed.
    wait_input(&pty, "");
    pty.send("half typed");
    wait_input(&pty, "half typed");
    pty.send("\x0f");
    pty.wait_for_screen("lines 1-31 of 31");
    let page = pty.screen();
    for i in [1, 15, 30] {
        assert!(page.contains(&format!("output line {i}\n")), "{page}");
    }
    assert!(page.contains("done"), "{page}");
    pty.send("q");
    pty.wait_for_screen("› half typed");
    assert!(!pty.screen().contains("lines 1-31"), "{}", pty.screen());
    pty.send("\x15/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn after_ctrl_c_a_command_shows_its_tail_and_the_hidden_count() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", &printing(20))))
            .reply(Turn::text("never")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    pty.send("run it\r");
    pty.wait_for("Esc no ›");
    pty.send("y");
    pty.wait_for_screen("│ output line 20");
    pty.send("\x03");
    pty.wait_for("interrupted");
    wait_input(&pty, "");
    let said = pty.transcript();
    let after = &said[said.rfind("the person interrupted this call").unwrap()..];
    assert!(
        after.contains("… 15 lines above · Ctrl+O shows all"),
        "{after}"
    );
    assert!(after.contains("│ output line 20"), "{after}");
    assert!(!after.contains("(+"), "{after}");
    pty.send("\x0f");
    pty.wait_for_screen("output line 1\n");
    pty.send("\x1b");
    wait_input(&pty, "");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// Rows joined by single spaces, runs of spaces made one: a line the renderer wrapped reads
/// whole again.
fn joined(rows: &[String]) -> String {
    rows.iter()
        .flat_map(|row| row.split_whitespace())
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn at_60_columns_a_wide_table_wraps_its_cells_and_cuts_nothing() {
    let env = Env::new();
    let table = "| file | what changed |\n|---|---|\n\
                 | src/render/markdown_table.rs | cells wrap onto more rows instead of being cut at the edge |\n\
                 | docs/repl.md | says so |\n\nDone.";
    let server = MockServer::start(Script::new().reply(Turn::text(table)));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 60);
    pty.wait_ready();
    pty.send("what changed?\r");
    pty.wait_for("Done.");
    wait_input(&pty, "");
    let history = pty.history();
    let start = history
        .iter()
        .position(|r| r.contains("what changed"))
        .unwrap();
    let rows = &history[start + 1..];
    assert!(
        !rows.iter().any(|r| r.contains('…')),
        "a cell was cut:\n{}",
        rows.join("\n")
    );
    let words = joined(rows);
    for word in [
        "src/render/markdown_table.rs",
        "cells",
        "instead",
        "edge",
        "docs/repl.md",
        "says",
    ] {
        assert!(words.contains(word), "{word} lost:\n{}", rows.join("\n"));
    }
    assert!(
        rows.iter()
            .filter(|r| r.contains('│'))
            .all(|r| r.trim_end().chars().count() <= 60)
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn at_60_columns_the_compaction_line_of_compact_wraps_whole() {
    let env = Env::new();
    let mut script = Script::new();
    for i in 1..=6 {
        script = script.reply(Turn::text(format!("answer number {i}")));
    }
    let server = MockServer::start(script.reply(Turn::text(
        "## Goal\nAnswer the questions.\n## Requests\n> all of them",
    )));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 60);
    pty.wait_ready();
    for i in 1..=6 {
        pty.send(&format!("question {i}\r"));
        pty.wait_for(&format!("answer number {i}"));
        pty.wait_for_count("↑ ", i);
    }
    pty.send("/compact\r");
    pty.wait_for("of the window");
    wait_input(&pty, "");
    let history = pty.history();
    let start = history.iter().rposition(|r| r.contains("⟳")).unwrap();
    let end = history
        .iter()
        .rposition(|r| r.contains("of the window"))
        .unwrap();
    let line = joined(&history[start..=end]);
    assert!(line.contains("kept word for word: the last"), "{line}");
    assert!(!line.contains('…'), "cut: {line}");
    assert!(
        history[start..=end]
            .iter()
            .all(|r| r.trim_end().chars().count() <= 60)
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn a_placeholder_recalled_from_an_earlier_session_is_not_sent_without_its_paste() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("history"),
        "#V2\nfix [pasted 2000 lines] please\n",
    )
    .unwrap();
    let server = MockServer::start(Script::new().reply(Turn::text("never")));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    wait_input(&pty, "");
    pty.send("\x1b[A");
    wait_input(&pty, "fix [pasted 2000 lines] please");
    pty.send("\r");
    pty.wait_for("rein no longer has its text: paste it again in its place");
    // Kept at the prompt to be mended; nothing was sent.
    wait_input(&pty, "fix [pasted 2000 lines] please");
    assert_eq!(server.request_count(), 0);
    pty.send("\x03/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}
