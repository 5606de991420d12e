//! The interactive REPL, driven in a pseudo-terminal against the mock model.

use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::{Value, json};

use crate::pty::{Pty, SCREEN_WAIT};
use crate::support::{Env, process_alive, wait_for_file};

/// The text of the last user message of request `n` (from 0).
fn user_text(server: &MockServer, n: usize) -> String {
    let requests = server.requests();
    let messages = requests[n].body["messages"].as_array().unwrap().clone();
    let user = messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    match &user["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        other => other.to_string(),
    }
}

fn wait_requests(server: &MockServer, n: usize) {
    server.wait_for_requests(n, SCREEN_WAIT).unwrap();
}

fn bash(id: &str, command: &str) -> MockToolCall {
    MockToolCall::new(id, "bash", json!({ "command": command }).to_string())
}

#[test]
fn a_two_turn_conversation_then_exit_with_a_resume_hint() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("# Hello\n\nI am **rein**.").chunks([
                "# Hel",
                "lo\n\nI am **re",
                "in**.",
            ]))
            .reply(Turn::text("Second answer.")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("session ");
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("first question\r");
    pty.wait_for("I am rein.");
    pty.wait_for("↑ ");
    pty.send("second question\r");
    pty.wait_for("Second answer.");
    pty.wait_for_count("↑ ", 2);
    pty.send("/exit\r");
    pty.wait_for("Resume this session with: rein -r ");
    assert_eq!(pty.wait_exit(), 0);
    assert_eq!(user_text(&server, 1), "second question");
    let history = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .len();
    assert!(
        history >= 4,
        "the second request carries the first exchange"
    );
    // The answer was rendered: no Markdown marks on screen.
    assert!(
        !pty.transcript().contains("**rein**"),
        "{}",
        pty.transcript()
    );
}

#[test]
fn every_slash_command_answers_without_calling_the_model() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("An answer.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("hi\r");
    pty.wait_for("An answer.");
    let before = server.request_count();
    for (command, shows) in [
        ("/help", "Commands:"),
        ("/model", "model: gpt-4o (openai)"),
        ("/tokens", "out in this session"),
        ("/cost", "so far in this session"),
        ("/context", "Context window:"),
        ("/compact", "nothing to compact yet"),
        ("/diff", "no files changed in this session"),
        ("/sessions", "continue one with /resume ID"),
        ("/permissions", "mode: default"),
        ("/todos", "no todo list yet"),
        ("/nope", "Unknown command: /nope (try /help)"),
        ("/resume", "resume which session? [1-1, Enter: none]"),
        ("", "no session chosen"),
        ("/permissions plan", "permission mode: plan"),
        (
            "/model gpt-4o mini",
            "gpt-4o mini is not a model name: a name has no spaces (/model NAME)",
        ),
        ("/model gpt-4o-mini", "switching to gpt-4o-mini"),
    ] {
        pty.send(&format!("{command}\r"));
        pty.wait_for(shows);
    }
    // The switch says what now answers, and its window.
    pty.wait_for("now on gpt-4o-mini (openai) · context window ");
    pty.send("/model\r");
    pty.wait_for("model: gpt-4o-mini");
    pty.send("/permissions\r");
    pty.wait_for("mode: plan ·");
    // /context may ask the server for the window; nothing else reached the model.
    let model_calls = server
        .requests()
        .iter()
        .filter(|r| r.path.ends_with("/chat/completions"))
        .count();
    assert_eq!(
        model_calls, 1,
        "slash commands are never sent ({before} before)"
    );
    pty.send("/todos\r");
    pty.wait_for_count("no todo list yet", 2);
    pty.send("/clear\r");
    pty.wait_for("new session 20");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
    // The second session never asked anything: it is not kept, and not offered to resume.
    assert_eq!(env.session_files().len(), 1);
}

#[test]
fn resume_by_id_inside_the_repl_shows_the_last_exchange() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("The first session's answer."))
            .reply(Turn::text("Fresh.")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("remember the number 7\r");
    pty.wait_for("The first session's answer.");
    pty.send("/clear\r");
    pty.wait_for("new session 20");
    let first = env
        .session_files()
        .into_iter()
        .find(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .contains("remember the number 7")
        })
        .unwrap()
        .file_stem()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    pty.send(&format!("/resume {first}\r"));
    pty.wait_for("Last exchange:");
    pty.wait_for_count("The first session's answer.", 2);
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
    drop(pty);

    // `rein -c` opens the REPL on it too.
    let mut pty = Pty::start(&env, &server.openai_base_url(), &["-c"], 100);
    pty.wait_for("Last exchange:");
    pty.wait_for("remember the number 7");
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn approvals_answered_each_way() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", "touch yes.txt")))
            .reply(Turn::text("did yes"))
            .reply(Turn::new().tool_call(bash("c2", "touch no.txt")))
            .reply(Turn::text("did no"))
            .reply(Turn::new().tool_call(bash("c3", "touch why.txt")))
            .reply(Turn::text("did why"))
            .reply(Turn::new().tool_call(bash("c4", "touch esc.txt")))
            .reply(Turn::text("did esc"))
            .reply(Turn::new().tool_call(bash("c5", "touch always.txt")))
            .reply(Turn::text("did always"))
            .reply(Turn::new().tool_call(bash("c6", "touch always.txt")))
            .reply(Turn::text("did again"))
            .reply(Turn::new().tool_call(bash("c7", "touch always.txt")))
            .reply(Turn::text("did after the switch")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();

    pty.send("one\r");
    pty.wait_for("bash needs your approval");
    pty.wait_for("touch yes.txt");
    pty.wait_for("Esc no ›");
    pty.send("y");
    pty.wait_for("did yes");
    assert!(env.work.join("yes.txt").exists());

    pty.send("two\r");
    pty.wait_for_count("Esc no ›", 2);
    pty.send("n");
    pty.wait_for("did no");
    assert!(!env.work.join("no.txt").exists());

    pty.send("three\r");
    pty.wait_for_count("Esc no ›", 3);
    pty.send("r");
    pty.wait_for("why not?");
    pty.send("use the fixture instead\r");
    pty.wait_for("did why");
    assert!(!env.work.join("why.txt").exists());
    let result = server.requests()[5].body.to_string();
    assert!(result.contains("use the fixture instead"), "{result}");

    pty.send("four\r");
    pty.wait_for_count("Esc no ›", 4);
    pty.send("\x1b");
    pty.wait_for("did esc");
    assert!(!env.work.join("esc.txt").exists());

    pty.send("five\r");
    pty.wait_for_count("Esc no ›", 5);
    pty.send("a");
    pty.wait_for("did always");
    pty.send("six\r");
    pty.wait_for("did again");
    // Allowed for the session: not asked again, even with another model.
    pty.send("/model gpt-4o-mini\r");
    pty.wait_for("switching to gpt-4o-mini");
    pty.send("seven\r");
    pty.wait_for("did after the switch");
    assert_eq!(pty.transcript().matches("Esc no ›").count(), 5);
    pty.send("/permissions\r");
    pty.wait_for("allowed for this session:");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn ctrl_c_mid_stream_returns_to_the_prompt() {
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
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("talk\r");
    pty.wait_for("partial answer");
    pty.send("\x03");
    pty.wait_for("interrupted");
    pty.send("go on\r");
    pty.wait_for("after the stop");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn ctrl_c_mid_command_kills_it_and_returns_to_the_prompt() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(bash("c1", "echo $$ > pid.txt; sleep 60")))
            .reply(Turn::text("back again")),
    );
    let mut pty = Pty::start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "yolo"],
        100,
    );
    pty.wait_for("permissions: yolo");
    pty.send("run it\r");
    let pid: u32 = wait_for_file(&env.work.join("pid.txt"), SCREEN_WAIT)
        .trim()
        .parse()
        .unwrap();
    pty.send("\x03");
    pty.wait_for("interrupted");
    let deadline = Instant::now() + Duration::from_secs(10);
    while process_alive(pid) {
        assert!(Instant::now() < deadline, "the command {pid} still runs");
        std::thread::sleep(Duration::from_millis(20));
    }
    pty.send("again\r");
    pty.wait_for("back again");
    // The history stays valid: the interrupted call has its result.
    let body = server.requests()[1].body.clone();
    crate::support::openai_history_is_valid(&body).unwrap();
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn ctrl_c_at_an_empty_prompt_warns_then_exits() {
    let env = Env::new();
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("\x03");
    pty.wait_for("press Ctrl+C again to leave");
    pty.send("\x03");
    assert_eq!(pty.wait_exit(), 0);
    assert_eq!(server.request_count(), 0);
}

#[test]
fn history_is_recalled_across_two_runs() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("the remembered request\r");
    pty.wait_for("↑ ");
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
    drop(pty);
    let history = std::fs::read_to_string(env.rein_home.join("history")).unwrap();
    assert!(history.contains("the remembered request"), "{history}");

    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    // Up arrow.
    pty.send("\x1b[A");
    pty.wait_for_screen("› the remembered request");
    pty.send("\r");
    wait_requests(&server, 2);
    assert_eq!(user_text(&server, 1), "the remembered request");
    pty.wait_for_count("↑ ", 1);
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn a_paste_of_200_lines_arrives_as_one_message() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("got it")));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    let lines: Vec<String> = (1..=200).map(|i| format!("pasted line {i}")).collect();
    pty.send(&format!("\x1b[200~{}\x1b[201~", lines.join("\n")));
    // Shown as its placeholder, sent whole.
    pty.wait_for("[pasted 200 lines]");
    pty.send("\r");
    pty.wait_for("got it");
    assert_eq!(server.request_count(), 1);
    assert_eq!(user_text(&server, 0), lines.join("\n"));
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn an_at_file_is_attached_through_read_file() {
    let env = Env::new();
    env.write("notes.txt", "the secret sauce is tomato\n");
    let server = MockServer::start(Script::new().reply(Turn::text("read it")));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("summarise @notes.txt please\r");
    pty.wait_for("read it");
    pty.wait_for("read_file notes.txt");
    let sent = user_text(&server, 0);
    assert!(sent.starts_with("summarise @notes.txt please"), "{sent}");
    assert!(sent.contains("the secret sauce is tomato"), "{sent}");
    // Outside the workspace, read_file's rules ask first; a refusal sends nothing.
    pty.send("and @/etc/hostname\r");
    pty.wait_for("needs your approval");
    pty.send("n");
    pty.wait_for("not sent: @/etc/hostname could not be attached");
    assert_eq!(server.request_count(), 1);
    pty.send("\x15\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn a_bang_command_runs_and_its_output_goes_with_the_next_request() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("seen")));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("!echo from-the-shell\r");
    pty.wait_for("(the output goes with your next request)");
    assert_eq!(server.request_count(), 0);
    pty.send("what did it say\r");
    pty.wait_for("seen");
    let sent = user_text(&server, 0);
    assert!(
        sent.contains("from-the-shell") && sent.ends_with("what did it say"),
        "{sent}"
    );
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn type_ahead_during_a_turn_is_sent_after_it() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("slow answer").response_delay(Duration::from_millis(1500)))
            .reply(Turn::text("second answer")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("first\r");
    wait_requests(&server, 1);
    pty.send("typed ahead\r");
    pty.wait_for("second answer");
    assert_eq!(user_text(&server, 1), "typed ahead");
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn lines_typed_while_the_agent_is_rebuilt_are_kept() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("An answer.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    for (command, shows) in [
        ("/permissions plan", "permission mode: plan"),
        ("/permissions", "mode: plan"),
        ("/todos", "no todo list yet"),
    ] {
        pty.send(&format!("{command}\r"));
        pty.wait_for(shows);
    }
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// Lines that reach the prompt in one read (typed ahead while a command ran, sent by a
/// script) are each taken in turn: the line editor once kept only the first of them.
#[test]
fn lines_that_arrive_together_at_the_prompt_are_all_taken() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("An answer.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("/todos\r/cost\r/permissions\r");
    pty.wait_for("no todo list yet");
    pty.wait_for("nothing to count yet");
    pty.wait_for("mode: default ·");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn one_shot_text_mode_on_a_terminal_streams_and_sums_up() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new().reply(
            Turn::text("# Title\n\nThe **streamed** answer.")
                .chunks(["# Title\n\nThe **str", "eamed** answer."]),
        ),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &["-p", "hello"], 100);
    pty.wait_for("The streamed answer.");
    pty.wait_for("gpt-4o · 1 round · ↑ ");
    pty.wait_for("(continue: rein -r ");
    assert_eq!(pty.wait_exit(), 0);
    // stdout and stderr are the same terminal: the answer is shown once.
    assert_eq!(pty.transcript().matches("The streamed answer.").count(), 1);
    assert!(!pty.transcript().contains("**"));
}

#[test]
fn a_trailing_backslash_and_alt_enter_add_lines() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("three lines")));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("one \\\r");
    pty.send("two\x1b\r");
    pty.send("three\r");
    pty.wait_for("↑ ");
    assert_eq!(user_text(&server, 0), "one \ntwo\nthree");
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn sigterm_at_the_prompt_exits_143_and_leaves_no_private_directory() {
    let env = Env::new();
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    // The sandbox's private temporary directory, made under TMPDIR where it is enforced.
    let tmp = env.home.parent().unwrap().to_path_buf();
    let private = || {
        std::fs::read_dir(&tmp)
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                let name = e.file_name().to_string_lossy().into_owned();
                name.strip_prefix("rein-")
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
            })
            .count()
    };
    let made = private();
    crate::support::signal(pty.pid(), "TERM");
    assert_eq!(pty.wait_exit(), 143);
    assert_eq!(private(), 0, "{made} private directory left behind");
}

#[test]
fn a_project_with_hooks_asks_once_for_trust_and_its_hooks_then_run() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    env.write(
        ".rein/config.toml",
        "[[hooks.SessionStart]]\ncommand = \"echo hi > started-by-hook\"\n",
    );
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("Trust it? [y/N]");
    pty.send("y\r");
    pty.wait_for("Trusted: its hooks will run.");
    pty.wait_ready();
    wait_for_file(&env.work.join("started-by-hook"), SCREEN_WAIT);
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
    drop(pty);
    // Trusted now: not asked again.
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    assert!(!pty.transcript().contains("Trust it?"));
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn a_projects_endpoint_lines_ask_for_trust_and_again_once_changed() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    env.write(".env", "OPENAI_BASE_URL=https://collector.example/v1\n");
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("Trust it? [y/N]");
    assert!(
        pty.transcript().contains("endpoint settings"),
        "{}",
        pty.transcript()
    );
    pty.send("y\r");
    pty.wait_ready();
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
    drop(pty);
    // Trusted as it is: not asked again.
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_ready();
    assert!(!pty.transcript().contains("Trust it?"));
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
    drop(pty);
    // A command appends an endpoint line: asked again.
    let dotenv = env.read(".env");
    env.write(".env", &format!("{dotenv}SSL_CERT_FILE=planted.pem\n"));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 100);
    pty.wait_for("Trust it? [y/N]");
    assert!(pty.transcript().contains("changed since you trusted it"));
    pty.send("n\r");
    pty.wait_ready();
    pty.send("\x04");
    assert_eq!(pty.wait_exit(), 0);
}
