//! MCP servers' prompts as slash commands `/mcp__server__prompt`, against the fake MCP
//! server: headless (`-p`), in the REPL (/help, Tab, a turn), and what sends nothing.

use rein_testkit::{MockServer, Script, Turn};
use serde_json::json;

use crate::mcp::{call, configure};
use crate::pty::Pty;
use crate::support::{Env, final_json, run, stderr};

/// The last user message of the first request, as text.
fn sent(server: &MockServer) -> String {
    let body = &server.requests()[0].body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match user["content"].as_str() {
        Some(text) => text.to_owned(),
        None => user["content"].to_string(),
    }
}

fn with_fake(env: &Env) {
    configure(env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
}

#[test]
fn a_prompt_runs_headless_with_its_arguments_in_order_or_by_name() {
    let env = Env::new();
    with_fake(&env);
    for (typed, expected) in [
        (
            "/mcp__fake__greet Ada pirate",
            "Say hello to Ada in a pirate style.",
        ),
        (
            "/mcp__fake__greet style=formal Grace",
            "Say hello to Grace in a formal style.",
        ),
        (
            "/mcp__fake__greet Linus",
            "Say hello to Linus in a plain style.",
        ),
        // One argument: the last takes the rest of the line, as typed.
        (
            "/mcp__fake__review fn main() { \"x\" }",
            "Review this code:\nfn main() { \"x\" }",
        ),
    ] {
        let server = MockServer::start(Script::new().reply(Turn::text("Done.")));
        let out = run(env
            .rein_openai(&server)
            .args(["-p", typed, "--output-format", "json"]));
        assert!(out.status.success(), "{typed}: {}", stderr(&out));
        assert_eq!(sent(&server), expected, "{typed}");
        assert_eq!(final_json(&out)["result"], "Done.");
    }
}

#[test]
fn a_multi_message_prompt_keeps_the_assistant_turn_marked_and_the_resource_inlined() {
    let env = Env::new();
    with_fake(&env);
    let server = MockServer::start(Script::new().reply(Turn::text("12.")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "/mcp__fake__conversation"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        sent(&server),
        "What is 2 + 2?\n\n<assistant-message>\n2 + 2 is 4.\n</assistant-message>\n\n\
         [resource fake://notes/7]\nnote 7: multiply by three\n\nNow apply the note."
    );
}

#[test]
fn a_missing_argument_a_failing_prompt_or_a_down_server_sends_nothing() {
    let env = Env::new();
    configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\n\
         [mcp_servers.down]\ncommand = \"FAKE\"\nargs = [\"--exit-at-start\"]\n",
    );
    let server = MockServer::start(Script::new().reply(Turn::text("never")).repeating());
    let cases = [
        (
            "/mcp__fake__greet",
            2,
            "/mcp__fake__greet needs the argument `name` (who to greet)",
        ),
        (
            "/mcp__fake__greet",
            2,
            "usage: /mcp__fake__greet <name> [style]",
        ),
        ("/mcp__fake__fails", 1, "the fake prompt failed on purpose"),
        (
            "/mcp__fake__gret Ada",
            2,
            "unknown command /mcp__fake__gret; did you mean /mcp__fake__greet?",
        ),
        (
            "/mcp__down__greet Ada",
            1,
            "MCP server `down` is not available (failed: ",
        ),
    ];
    for (typed, code, said) in cases {
        let out = run(env.rein_openai(&server).args(["-p", typed]));
        assert_eq!(out.status.code(), Some(code), "{typed}: {}", stderr(&out));
        assert!(stderr(&out).contains(said), "{typed}: {}", stderr(&out));
    }
    assert!(server.requests().is_empty(), "nothing reached the model");
    assert!(
        env.session_files().is_empty(),
        "no session is kept for what was never sent: {:?}",
        env.session_files()
    );
}

#[test]
fn prompts_are_listed_completed_and_sent_in_the_repl_and_follow_list_changes() {
    let env = Env::new();
    with_fake(&env);
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("c1", "mcp__fake__change_tools", json!({}))))
            .reply(Turn::text("Added a prompt."))
            .reply(Turn::text("Greeted."))
            .reply(Turn::text("Late one done.")),
    );
    let mut pty = Pty::start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "yolo"],
        120,
    );
    pty.wait_ready();
    // The first turn waits for the server; it also makes the server add a prompt.
    pty.send("add a prompt\r");
    pty.wait_for("Added a prompt.");
    pty.send("/help\r");
    pty.wait_for("MCP prompts:");
    pty.wait_for("/mcp__fake__greet <name> [style]");
    pty.wait_for("Greets someone by name");
    pty.wait_for("/mcp__fake__late_prompt");
    // A missing argument is named, and the line comes back to be completed.
    pty.send("/mcp__fake__greet\r");
    pty.wait_for("needs the argument `name`");
    assert_eq!(server.requests().len(), 2, "nothing sent");
    // Tab completes the name, with a space: it takes arguments.
    pty.send("\x15/mcp__fake__gr\t");
    pty.wait_for_screen("/mcp__fake__greet ");
    pty.send("Ada\r");
    pty.wait_for("Greeted.");
    let body = server.last_request().unwrap().body.to_string();
    assert!(
        body.contains("Say hello to Ada in a plain style."),
        "{body}"
    );
    pty.send("/mcp__fake__late_prompt\r");
    pty.wait_for("Late one done.");
    let body = server.last_request().unwrap().body.to_string();
    assert!(body.contains("The late prompt's text."), "{body}");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn a_prompts_image_goes_to_a_model_that_sees_and_is_described_to_one_that_does_not() {
    let env = Env::new();
    with_fake(&env);
    for (model, sees) in [("gpt-4o", true), ("deepseek-chat", false)] {
        let server = MockServer::start(Script::new().reply(Turn::text("A dot.")));
        let out = run(env
            .rein_openai(&server)
            .env("REIN_MODEL", model)
            .args(["-p", "/mcp__fake__picture"]));
        assert!(out.status.success(), "{model}: {}", stderr(&out));
        let body = server.requests()[0].body.to_string();
        let text = sent(&server);
        assert!(text.contains("Describe this picture."), "{model}: {text}");
        if sees {
            assert!(body.contains("image_url"), "{model}: {body}");
            assert!(text.contains("[image: image/png, 1×1, attached]"), "{text}");
        } else {
            assert!(!body.contains("image_url"), "{model}: {body}");
            assert!(text.contains("[image: image/png,"), "{text}");
            assert!(text.contains("not shown]"), "{text}");
        }
    }
}

/// After a refused prompt command the line comes back to edit: Enter on the corrected line
/// runs it, and once cleared a new command runs. Keys typed while it was being prepared are
/// kept apart from it: the lines run, the rest waits at the prompt, and nothing glued to the
/// refused line is sent to the model.
#[test]
fn a_refused_prompt_comes_back_to_edit_and_keys_typed_meanwhile_are_not_glued_to_it() {
    let env = Env::new();
    with_fake(&env);
    let server = MockServer::start(Script::new().reply(Turn::text("Answered.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_ready();
    // The first turn waits for the server, whose prompts are then known.
    pty.send("hi\r");
    pty.wait_for("Answered.");

    // Refused, refilled, corrected, sent.
    pty.send("/mcp__fake__greet\r");
    pty.wait_for("needs the argument `name`");
    wait_for_prompt_line(&pty, "› /mcp__fake__greet");
    pty.send(" Ada\r");
    pty.wait_for_count("Answered.", 2);
    let body = server.last_request().unwrap().body.to_string();
    assert!(
        body.contains("Say hello to Ada in a plain style."),
        "{body}"
    );

    // Refused, cleared, another command typed: that one runs.
    pty.send("/mcp__fake__greet\r");
    pty.wait_for_count("needs the argument `name`", 2);
    wait_for_prompt_line(&pty, "› /mcp__fake__greet");
    pty.send("\x15/todos\r");
    pty.wait_for("no todo list yet");

    // Typed ahead while the server is asked: a whole line and the start of another.
    let gate = env.home.join("gate");
    pty.send(&format!("/mcp__fake__fails_when {}\r", gate.display()));
    crate::mcp::wait_for_log(&env, "fake", "fake: prompt fails_when");
    pty.send("/todos\r/tod");
    pty.wait_for_screen("queued: /todos ⏎ /tod");
    std::fs::write(&gate, "").unwrap();
    pty.wait_for("the fake prompt failed on purpose");
    pty.wait_for_count("no todo list yet", 2);
    pty.wait_for("Up brings back the line that was not sent");
    wait_for_prompt_line(&pty, "› /tod");
    pty.send("os\r");
    pty.wait_for_count("no todo list yet", 3);
    assert_eq!(
        server.requests().len(),
        2,
        "nothing typed ahead went to the model"
    );
    // The refused line is one Up away.
    pty.send("\x1b[A");
    wait_for_prompt_line(&pty, "› /todos");
    pty.send("\x1b[A");
    wait_for_prompt_line(
        &pty,
        &format!("› /mcp__fake__fails_when {}", gate.display()),
    );
    pty.send("\x15/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// /help lists the MCP prompts with their descriptions in the column of every other
/// command's.
#[test]
fn help_lines_up_the_mcp_prompts_with_the_other_commands() {
    let env = Env::new();
    with_fake(&env);
    let server = MockServer::start(Script::new().reply(Turn::text("Answered.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 160);
    pty.wait_ready();
    pty.send("hi\r");
    pty.wait_for("Answered.");
    pty.send("/help\r");
    pty.wait_for("Greets someone by name");
    pty.wait_for("Ctrl+D");
    let shown = pty.transcript();
    let help = &shown[shown.rfind("Commands:").unwrap()..];
    let column = |usage: &str, about: &str| {
        let line = help
            .lines()
            .find(|l| l.starts_with(&format!("  {usage}")))
            .unwrap_or_else(|| panic!("no line for {usage}:\n{help}"));
        line.find(about)
            .unwrap_or_else(|| panic!("{about:?} not on {line:?}"))
    };
    let expected = column("/help", "this list");
    assert_eq!(
        column("/permissions [mode]", "the permission mode"),
        expected
    );
    assert_eq!(
        column("/mcp__fake__greet <name> [style]", "Greets someone by name"),
        expected,
        "{help}"
    );
    assert_eq!(
        column("/mcp__fake__conversation", "A conversation"),
        expected,
        "{help}"
    );
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// Waits until the prompt's line (the last row starting with the prompt) reads `line`.
fn wait_for_prompt_line(pty: &Pty, line: &str) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let rows = pty.rows();
        let shown = rows.iter().rev().find(|r| r.starts_with("› "));
        if shown.is_some_and(|r| r.trim_end() == line) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the prompt line never read {line:?}:\n{}",
            pty.screen()
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
