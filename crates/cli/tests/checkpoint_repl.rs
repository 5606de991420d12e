//! `/undo` in the REPL (a PTY): the diff shown, the question asked, the four changes of a
//! turn taken back exactly; a file changed by hand is named and kept when the person says
//! so; and the picker of `rein -r` without an id.

use rein_testkit::{MockServer, Script, Turn};
use serde_json::json;

use crate::checkpoints::{
    assert_four_changes_done, files, four_change_mock, four_change_workspace, stepping_mock,
};
use crate::pty::Pty;
use crate::support::{Env, run, stderr};

#[test]
fn undo_in_the_repl_shows_the_diff_asks_and_restores_all_four_changes() {
    let env = Env::new();
    four_change_workspace(&env);
    let before = files(&env.work);
    let server = four_change_mock();
    let mut pty = Pty::start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "yolo"],
        120,
    );
    pty.wait_ready();
    pty.send("change things\r");
    pty.wait_for("done");
    assert_four_changes_done(&env);
    pty.send("/undo\r");
    pty.wait_for("undo? [y/N]");
    let shown = pty.transcript();
    assert!(shown.contains("-hello rein"), "{shown}");
    assert!(shown.contains("+hello world"), "{shown}");
    assert!(shown.contains("+to be removed"), "{shown}");
    // Each diff comes under the file it is about and what will happen to it.
    for heading in [
        "restore edit.txt",
        "delete new.txt",
        "recreate old.txt",
        "recreate a.txt",
        "delete b.txt",
    ] {
        assert!(shown.contains(heading), "{heading} in {shown}");
    }
    assert_four_changes_done(&env);
    pty.send("y\r");
    pty.wait_for("restored edit.txt");
    assert_eq!(files(&env.work), before, "bytes and modes restored");
    pty.send("/undo\r");
    pty.wait_for("nothing to undo");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn undo_names_a_file_changed_by_hand_and_keeps_it_when_asked_to() {
    let env = Env::new();
    env.write("notes.txt", "original\n");
    let server = stepping_mock(vec![(
        "bash",
        json!({"command": "echo rein >> notes.txt && echo new > other.txt"}),
    )]);
    let mut pty = Pty::start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "yolo"],
        120,
    );
    pty.wait_ready();
    pty.send("touch notes\r");
    pty.wait_for("done");
    // The usage line comes once the turn has recorded what it wrote; a change before that
    // would count as the turn's own.
    pty.wait_for("↑ ");
    std::fs::write(env.work.join("notes.txt"), "typed by hand\n").unwrap();
    pty.send("/undo\r");
    pty.wait_for("changed since rein last wrote it: notes.txt");
    pty.wait_for("or cancel [N]?");
    pty.send("k\r");
    pty.wait_for("deleted other.txt");
    assert_eq!(env.read("notes.txt"), "typed by hand\n");
    assert!(!env.work.join("other.txt").exists());
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn r_without_an_id_opens_a_picker_on_a_terminal() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("Answer of the first."))
            .reply(Turn::text("Answer of the second."))
            .reply(Turn::text("Back in the first.")),
    );
    for prompt in ["first session prompt", "second session prompt"] {
        let out = run(env.rein_openai(&server).args(["-p", prompt]));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let mut pty = Pty::start(&env, &server.openai_base_url(), &["-r"], 120);
    pty.wait_for("resume which session? [1-2, Enter: none]");
    let shown = pty.transcript();
    assert!(shown.contains("first session prompt"), "{shown}");
    // Newest first: the first session is number 2.
    pty.send("2\r");
    pty.wait_for("Last exchange:");
    pty.wait_for("Answer of the first.");
    pty.wait_ready();
    pty.send("and now?\r");
    pty.wait_for("Back in the first.");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}
