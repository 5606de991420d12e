//! The REPL, round two (issue 24), the rest: prefix rules for "yes for the session", pastes
//! collapsed, a running command's output live, tables fitted to the window. Driven through
//! the real binary in a pseudo-terminal.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::pty::Pty;
use crate::support::Env;

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
