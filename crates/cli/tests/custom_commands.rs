//! Custom slash commands (`.claude/commands/*.md`, `.rein/commands/`, `$REIN_HOME/commands`)
//! used headless as `-p "/name args"`.

use std::process::Command;

use rein_testkit::{MockServer, Script, Turn};

use crate::support::{Env, final_json, run, stderr};

fn last_user_text(server: &MockServer) -> String {
    let body = &server.requests()[0].body;
    let messages = body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match user["content"].as_str() {
        Some(text) => text.to_owned(),
        None => user["content"].to_string(),
    }
}

fn git_repo(env: &Env) {
    let git = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&env.work)
            .env("HOME", &env.home)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
    };
    git(&["init", "-q"]);
}

#[test]
fn a_command_with_front_matter_arguments_files_and_commands_runs_headless() {
    let env = Env::new();
    git_repo(&env);
    env.write("notes.txt", "remember the milk\n");
    env.write(
        ".claude/commands/review.md",
        "---\ndescription: Review a change\nargument-hint: [file] [focus]\n\
         allowed-tools: Bash(touch:*)\nmodel: command-model\n---\n\
         Review $1 with focus on $2 (all: $ARGUMENTS).\nStatus:\n!`git status --short`\n\
         Marker: !`touch made-by-command`\nSee @notes.txt for context.\n",
    );
    let server = MockServer::start(Script::new().reply(Turn::text("Reviewed.")).repeating());
    let out = run(env.rein_openai(&server).args([
        "-p",
        "/review src/a.rs speed",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let sent = last_user_text(&server);
    assert!(
        sent.contains("Review src/a.rs with focus on speed (all: src/a.rs speed)."),
        "{sent}"
    );
    assert!(sent.contains("?? notes.txt"), "git status output: {sent}");
    assert!(sent.contains("See notes.txt for context."), "{sent}");
    assert!(
        sent.contains("<attached file=\"notes.txt\">") && sent.contains("remember the milk"),
        "{sent}"
    );
    assert!(
        env.work.join("made-by-command").exists(),
        "allowed-tools let the command's own command run"
    );
    // The command's model, since the command line named none.
    assert_eq!(server.requests()[0].body["model"], "command-model");
    assert_eq!(final_json(&out)["result"], "Reviewed.");
}

#[test]
fn a_commands_shell_line_runs_only_where_the_rules_allow() {
    let env = Env::new();
    git_repo(&env);
    // From the person's own commands, in a subdirectory: /tools:mark.
    let dir = env.rein_home.join("commands/tools");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("mark.md"),
        "Mark: !`touch should-not-exist`\nDone?\n",
    )
    .unwrap();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "/tools:mark", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.work.join("should-not-exist").exists());
    let report = final_json(&out);
    assert_eq!(
        report["permission_denials"].as_array().unwrap().len(),
        1,
        "{report}"
    );
    assert!(
        report["warnings"]
            .to_string()
            .contains("touch should-not-exist"),
        "{report}"
    );
    // A deny rule holds against a command's allowed-tools.
    env.write(
        ".rein/commands/force.md",
        "---\nallowed-tools: Bash(touch:*)\n---\n!`touch denied-file`\n",
    );
    let out =
        run(env
            .rein_openai(&server)
            .args(["--deny", "Bash(touch denied-file)", "-p", "/force"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.work.join("denied-file").exists());
}

#[test]
fn an_unknown_command_headless_exits_2_with_the_closest_name() {
    let env = Env::new();
    env.write(".claude/commands/review.md", "Review it.\n");
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let out = run(env.rein_openai(&server).args(["-p", "/reveiw x"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown command /reveiw; did you mean /review?"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty());
    // A path is a request, not a command.
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "/usr/bin/env is broken"]));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn custom_commands_are_listed_completed_and_sent_in_the_repl() {
    use crate::pty::Pty;
    let env = Env::new();
    env.write(
        ".claude/commands/review.md",
        "---\ndescription: Review a change carefully\nargument-hint: [file]\n---\nReview $ARGUMENTS now.\n",
    );
    let server = MockServer::start(Script::new().reply(Turn::text("Looked at it.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("/help\r");
    pty.wait_for("Custom commands:");
    pty.wait_for("/review [file]");
    pty.wait_for("Review a change carefully");
    // Tab completes the name (with a space: it takes arguments).
    pty.send("/revi\t");
    pty.wait_for_screen("/review ");
    pty.send("lib.rs\r");
    pty.wait_for("Looked at it.");
    let body = server.last_request().unwrap().body;
    assert!(body.to_string().contains("Review lib.rs now."), "{}", body);
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn init_studies_the_project_and_writes_agents_md_after_approval() {
    use crate::pty::Pty;
    use rein_testkit::MockToolCall;
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    let call = |id: &str, tool: &str, args: serde_json::Value| {
        Turn::new().tool_call(MockToolCall::new(id, tool, args.to_string()))
    };
    let server = MockServer::start(
        Script::new()
            .reply(call("g", "glob", serde_json::json!({ "pattern": "*" })))
            .reply(call(
                "w",
                "write_file",
                serde_json::json!({
                    "file_path": "AGENTS.md",
                    "content": "# demo\n\n## Build and test\n\n```\ncargo test\n```\n",
                }),
            ))
            .reply(Turn::text("Wrote AGENTS.md.")),
    );
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("permissions: default");
    pty.wait_ready();
    pty.send("/init\r");
    // The file is shown and asked about before it is written.
    pty.wait_for("write_file needs your approval");
    pty.wait_for("cargo test");
    assert!(!env.work.join("AGENTS.md").exists());
    pty.send("y");
    pty.wait_for("Wrote AGENTS.md.");
    assert!(env.read("AGENTS.md").contains("cargo test"));
    let first = server.requests()[0].body.to_string();
    assert!(
        first.contains("read-only tools only") && first.contains("Write the file"),
        "{first}"
    );
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn init_shows_agents_md_and_asks_even_in_yolo_mode_and_only_during_init() {
    use crate::pty::Pty;
    use rein_testkit::MockToolCall;
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    let write = |id: &str, content: &str| {
        Turn::new().tool_call(MockToolCall::new(
            id,
            "write_file",
            serde_json::json!({ "file_path": "AGENTS.md", "content": content }).to_string(),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(write("w1", "# demo\n\nRun `cargo nextest run`.\n"))
            .reply(Turn::text("Wrote AGENTS.md."))
            .reply(write("w2", "# demo\n\nRun `cargo test`.\n"))
            .reply(Turn::text("Changed it.")),
    );
    let mut pty = Pty::start(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "yolo"],
        120,
    );
    pty.wait_for("permissions: yolo");
    pty.wait_ready();
    pty.send("/init\r");
    // Shown and asked about, though yolo runs every edit without asking.
    pty.wait_for("write_file needs your approval");
    pty.wait_for("cargo nextest run");
    assert!(!env.work.join("AGENTS.md").exists());
    pty.send("y");
    pty.wait_for("Wrote AGENTS.md.");
    assert!(env.read("AGENTS.md").contains("cargo nextest run"));
    // After /init the mode's own rule holds again: the next write does not ask.
    pty.send("use cargo test instead\r");
    pty.wait_for("Changed it.");
    assert!(env.read("AGENTS.md").contains("cargo test"));
    assert_eq!(
        pty.transcript().matches("needs your approval").count(),
        1,
        "{}",
        pty.transcript()
    );
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
}

#[test]
fn init_headless_writes_only_where_edits_need_no_asking_and_says_so() {
    use rein_testkit::MockToolCall;
    let env = Env::new();
    env.write("Cargo.toml", "[package]\nname = \"demo\"\n");
    let server = MockServer::start(Script::new().reply(Turn::text("never")).repeating());
    let out = run(env.rein_openai(&server).args(["-p", "/init"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("cannot show it and ask first")
            && stderr(&out).contains("--permission-mode accept-edits"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty(), "refused before any request");
    // In the JSON formats the refusal still comes as the final object.
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "/init", "--output-format", "json"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["stop_reason"], "error", "{report}");
    assert!(
        report["error"]
            .to_string()
            .contains("cannot show it and ask first"),
        "{report}"
    );

    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "w",
                "write_file",
                serde_json::json!({ "file_path": "AGENTS.md", "content": "# demo\n" }).to_string(),
            )))
            .reply(Turn::text("Wrote AGENTS.md.")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "/init",
        "--permission-mode",
        "accept-edits",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(env.read("AGENTS.md"), "# demo\n");
    let report = final_json(&out);
    assert!(
        report["warnings"]
            .to_string()
            .contains("AGENTS.md is written without asking"),
        "{report}"
    );
    assert!(
        server.requests()[0]
            .body
            .to_string()
            .contains("read-only tools only"),
        "the /init request was sent"
    );
}
