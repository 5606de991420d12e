//! The REPL's first start: where the OS sandbox is enforced, rein offers the auto permission
//! mode once, records the answer in its config, and starts in that mode from then on.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::pty::Pty;
use crate::support::{Env, sandbox_enforced};

const QUESTION: &str = "Make auto the REPL's default?";

fn config(env: &Env) -> String {
    std::fs::read_to_string(env.rein_home.join("config.toml")).unwrap_or_default()
}

#[test]
fn yes_makes_auto_the_repl_default_and_it_is_asked_once() {
    let env = Env::new();
    if !sandbox_enforced(&env, "yes_makes_auto_the_repl_default_and_it_is_asked_once") {
        return;
    }
    // Something the person had configured stays as it was.
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(env.rein_home.join("config.toml"), "max_rounds = 40").unwrap();
    let outside = env.home.join("outside.txt");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({ "command": "echo made > made.txt" }).to_string(),
            )))
            .reply(Turn::text("Made it."))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b2",
                "bash",
                json!({ "command": format!("echo out > {}", outside.display()) }).to_string(),
            )))
            .reply(Turn::text("Wrote outside.")),
    );
    let mut pty = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for(QUESTION);
    assert!(
        pty.transcript()
            .contains("inside this workspace run without asking, sandboxed: the rest"),
        "{}",
        pty.transcript()
    );
    pty.send("y\r");
    pty.wait_for("The REPL now starts in auto");
    pty.wait_for("permissions: auto");
    pty.wait_ready();
    // Inside the workspace a command runs without a question.
    pty.send("make a file\r");
    pty.wait_for("Made it.");
    assert_eq!(env.read("made.txt"), "made\n");
    assert!(
        !pty.transcript().contains("Allow"),
        "auto asked about a command inside the workspace:\n{}",
        pty.transcript()
    );
    // Leaving the workspace asks once, and the person's yes lets it out of the sandbox.
    pty.send("write outside\r");
    pty.wait_for("needs your approval");
    pty.wait_for("Esc no");
    pty.send("y");
    pty.wait_for("Wrote outside.");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "out\n");
    let said = pty
        .transcript()
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    assert!(
        said.contains("so if you allow it, it runs outside the sandbox"),
        "the question does not say the command leaves the sandbox:\n{said}"
    );
    assert_eq!(
        said.matches("needs your approval").count(),
        1,
        "asked more than once:\n{said}"
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
    let recorded = config(&env);
    assert!(
        recorded.starts_with("max_rounds = 40\n")
            && recorded.contains("[repl]\npermission_mode = \"auto\""),
        "{recorded}"
    );

    // The next start asks nothing and is in auto.
    let mut again = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    again.wait_for("permissions: auto");
    again.wait_ready();
    again.send("/exit\r");
    assert_eq!(again.wait_exit(), 0);
    assert!(!again.transcript().contains(QUESTION));
    // A flag still wins over the recorded mode.
    let mut flagged = Pty::first_start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "plan"],
        120,
    );
    flagged.wait_for("permissions: plan");
    flagged.send("/exit\r");
    assert_eq!(flagged.wait_exit(), 0);
}

#[test]
fn no_keeps_the_default_mode_and_is_not_asked_again() {
    let env = Env::new();
    if !sandbox_enforced(&env, "no_keeps_the_default_mode_and_is_not_asked_again") {
        return;
    }
    let server = MockServer::start(Script::new());
    let mut pty = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for(QUESTION);
    pty.send("\r");
    pty.wait_for("The REPL keeps the default mode");
    pty.wait_for("permissions: default");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
    assert!(
        config(&env).contains("permission_mode = \"default\""),
        "{}",
        config(&env)
    );
    let mut again = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    again.wait_for("permissions: default");
    again.wait_ready();
    again.send("/exit\r");
    assert_eq!(again.wait_exit(), 0);
    assert!(!again.transcript().contains(QUESTION));
}

#[test]
fn without_a_sandbox_auto_is_not_offered_and_a_recorded_auto_refuses_to_start() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "[sandbox]\nlandlock = false\n",
    )
    .unwrap();
    let server = MockServer::start(Script::new());
    let mut pty = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
    assert!(!pty.transcript().contains(QUESTION));
    assert!(!config(&env).contains("[repl]"));

    // Auto recorded on a machine with a sandbox, used where there is none: it says why.
    std::fs::write(
        env.rein_home.join("config.toml"),
        "[sandbox]\nlandlock = false\n\n[repl]\npermission_mode = \"auto\"\n",
    )
    .unwrap();
    let mut refused = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    refused.wait_for("the auto permission mode needs the OS sandbox");
    assert_eq!(refused.wait_exit(), 2);
}

#[test]
fn a_project_cannot_choose_a_mode_that_asks_less() {
    let env = Env::new();
    env.write(".rein/config.toml", "[repl]\npermission_mode = \"yolo\"\n");
    env.trust();
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("permissions: default");
    pty.wait_for("a project may only choose a mode that asks");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn no_answer_is_not_recorded_and_a_table_of_the_persons_own_is_left_alone() {
    let env = Env::new();
    if !sandbox_enforced(
        &env,
        "no_answer_is_not_recorded_and_a_table_of_the_persons_own_is_left_alone",
    ) {
        return;
    }
    let server = MockServer::start(Script::new());
    // Ctrl+D at the question: nothing recorded, asked again next time.
    let mut pty = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for(QUESTION);
    pty.send("\u{4}");
    pty.wait_for("permissions: default");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
    assert!(!config(&env).contains("[repl]"), "{}", config(&env));
    let mut again = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    again.wait_for(QUESTION);
    again.send("n\r");
    again.wait_for("permissions: default");
    again.send("/exit\r");
    assert_eq!(again.wait_exit(), 0);

    // An empty [repl] table of the person's own: no question, and the file is untouched.
    let own = "[repl]\n# to decide later\n";
    std::fs::write(env.rein_home.join("config.toml"), own).unwrap();
    let mut own_table = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    own_table.wait_for("permissions: default");
    own_table.wait_ready();
    own_table.send("/exit\r");
    assert_eq!(own_table.wait_exit(), 0);
    assert!(!own_table.transcript().contains(QUESTION));
    assert_eq!(config(&env), own);
}

#[test]
fn a_config_that_is_a_link_is_written_through_the_link() {
    let env = Env::new();
    if !sandbox_enforced(&env, "a_config_that_is_a_link_is_written_through_the_link") {
        return;
    }
    let dotfiles = env.home.join("dotfiles");
    std::fs::create_dir_all(&dotfiles).unwrap();
    std::fs::write(dotfiles.join("rein.toml"), "max_rounds = 40\n").unwrap();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let link = env.rein_home.join("config.toml");
    std::os::unix::fs::symlink(dotfiles.join("rein.toml"), &link).unwrap();
    let server = MockServer::start(Script::new());
    let mut pty = Pty::first_start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for(QUESTION);
    pty.send("y\r");
    pty.wait_for("permissions: auto");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    let target = std::fs::read_to_string(dotfiles.join("rein.toml")).unwrap();
    assert!(target.contains("permission_mode = \"auto\""), "{target}");
}
