//! In `auto`, a command the sandbox refused asks whether to run it again outside, once: the
//! question shows the command line as the person would read it and offers yes (once) or
//! no, nothing for the session, since leaving the sandbox is decided command by command.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::pty::Pty;
use crate::support::{Env, require_python3, sandbox_enforced};

/// rein in `auto` in a pty, its model running `command` twice and then saying `last`; the
/// person's `prompt` is sent and the first question is on the screen.
fn asked_twice(env: &Env, command: &str, prompt: &str, last: &str) -> (MockServer, Pty) {
    let call = |id: &str| {
        Turn::new().tool_call(MockToolCall::new(
            id,
            "bash",
            json!({ "command": command }).to_string(),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(call("c1"))
            .reply(call("c2"))
            .reply(Turn::text(last)),
    );
    let pty = Pty::start(
        env,
        &server.openai_base_url(),
        &["--permission-mode", "auto"],
        200,
    );
    pty.wait_ready();
    pty.send(&format!("{prompt}\r"));
    pty.wait_for("bash needs your approval");
    pty.wait_for("y yes, once · n no · r no, say why");
    (server, pty)
}

#[test]
fn leaving_the_sandbox_is_asked_with_the_command_line_and_only_once() {
    let test = "leaving_the_sandbox_is_asked_with_the_command_line_and_only_once";
    require_python3();
    let env = Env::new();
    if !sandbox_enforced(&env, test) {
        return;
    }
    // Outside the workspace, written by a program the parser cannot see into: only the
    // sandbox stops it.
    let target = env.home.join("note.txt");
    let command = format!(
        "python3 -c \"open('{}', 'a').write('written\\n')\"",
        target.display()
    );
    let (server, mut pty) = asked_twice(&env, &command, "write the note", "Both tried.");
    let asked = pty.transcript();
    let question = &asked[asked.find("bash needs your approval").unwrap()..];
    // The command line, as typed, not its arguments as JSON.
    assert!(question.contains(&command), "{question}");
    assert!(!question.contains("\"command\""), "{question}");
    assert!(!question.contains("for the session"), "{question}");
    assert!(
        !question.contains("for the rest of the session"),
        "{question}"
    );
    // "a" (yes for the session) is not offered, so it does not answer; "n" does.
    pty.send("a");
    pty.send("n");
    // The same command again is asked again: nothing was remembered.
    pty.wait_for_count("bash needs your approval", 2);
    assert!(!target.exists(), "a key not offered ran it outside");
    pty.wait_for_count("y yes, once", 2);
    pty.send("y");
    pty.wait_for("✓ yes, once");
    pty.wait_for("Both tried.");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "written\n");
    assert!(
        !pty.transcript().contains("for the rest of the session"),
        "{}",
        pty.transcript()
    );
    // After the plain no, the model was told the person declined, so it does not ask again.
    let told = server.requests()[1].body_text();
    assert!(
        told.contains("they declined to run it again outside the sandbox: do not ask them again"),
        "{told}"
    );
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// A write outside the workspace that rein foresees (a redirection it parses) is asked
/// about before it runs: if allowed it runs outside the sandbox, so the question is once
/// only as well, offering no "for the session"; the same line again asks again, and each
/// yes writes once.
#[test]
fn a_foreseen_write_outside_is_allowed_once_never_for_the_session() {
    let test = "a_foreseen_write_outside_is_allowed_once_never_for_the_session";
    let env = Env::new();
    if !sandbox_enforced(&env, test) {
        return;
    }
    let target = env.home.join("n.txt");
    let command = format!("echo one >> {}", target.display());
    let (_server, mut pty) = asked_twice(&env, &command, "append", "Both written.");
    let asked = pty.transcript();
    let question = &asked[asked.find("bash needs your approval").unwrap()..];
    assert!(question.contains("so if you allow it"), "{question}");
    assert!(!question.contains("for the session"), "{question}");
    assert!(!question.contains("a: allow"), "{question}");
    // "a" is not offered, so it does not answer; "y" does, for this call only.
    pty.send("a");
    pty.send("y");
    pty.wait_for("✓ yes, once");
    pty.wait_for_count("bash needs your approval", 2);
    pty.wait_for_count("y yes, once", 2);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\n");
    pty.send("y");
    pty.wait_for_count("✓ yes, once", 2);
    pty.wait_for("Both written.");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\none\n");
    let shown = pty.transcript();
    assert!(!shown.contains("for the rest of the session"), "{shown}");
    assert!(!shown.contains("Read-only file system"), "{shown}");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}
