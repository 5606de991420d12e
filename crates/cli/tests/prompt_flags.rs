//! `--append-system-prompt`, `--system-prompt-file` and `--add-dir`.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, sandbox_enforced, stderr};

fn system_text(server: &MockServer) -> String {
    let body = &server.requests()[0].body;
    body["messages"][0]["content"]
        .as_str()
        .map(str::to_owned)
        .unwrap_or_else(|| body["messages"][0]["content"].to_string())
}

#[test]
fn the_system_prompt_flags_reach_the_request() {
    let env = Env::new();
    env.write("AGENTS.md", "Use tabs.\n");
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let out = run(env.rein_openai(&server).args([
        "--append-system-prompt",
        "Always answer in French.",
        "-p",
        "hi",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let system = system_text(&server);
    assert!(system.starts_with("You are rein"), "{system}");
    assert!(
        system.trim_end().ends_with("Always answer in French."),
        "{system}"
    );

    let file = env.write("prompt.md", "You are a pirate in {cwd}.\n");
    let server = MockServer::start(Script::new().reply(Turn::text("ok")).repeating());
    let out = run(env
        .rein_openai(&server)
        .arg("--system-prompt-file")
        .arg(&file)
        .args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let system = system_text(&server);
    assert!(
        system.starts_with(&format!("You are a pirate in {}.", env.work.display())),
        "{system}"
    );
    assert!(!system.contains("You are rein"), "{system}");
    assert!(
        system.contains("Use tabs."),
        "the project's instructions follow: {system}"
    );

    let out =
        run(env
            .rein_openai(&server)
            .args(["--system-prompt-file", "missing.md", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("missing.md"), "{}", stderr(&out));
    let out = run(env
        .rein_openai(&server)
        .args(["--add-dir", "no-such-dir", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a directory"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn add_dir_is_writable_under_the_sandbox_and_beside_it_is_refused() {
    let env = Env::new();
    if !sandbox_enforced(&env, "add_dir_is_writable_under_the_sandbox") {
        return;
    }
    let extra = env.home.join("extra");
    let beside = env.home.join("beside");
    std::fs::create_dir_all(&extra).unwrap();
    std::fs::create_dir_all(&beside).unwrap();
    let call = |id: &str, tool: &str, args: serde_json::Value| {
        Turn::new().tool_call(MockToolCall::new(id, tool, args.to_string()))
    };
    let server = MockServer::start(
        Script::new()
            .reply(call(
                "a",
                "bash",
                json!({ "command": format!("echo sandboxed > {}/a.txt", extra.display()) }),
            ))
            .reply(call(
                "b",
                "write_file",
                json!({ "file_path": extra.join("b.txt"), "content": "tool\n" }),
            ))
            .reply(call(
                "c",
                "bash",
                json!({ "command": format!("echo escaped > {}/c.txt", beside.display()) }),
            ))
            .reply(call(
                "d",
                "write_file",
                json!({ "file_path": beside.join("d.txt"), "content": "tool\n" }),
            ))
            .reply(Turn::text("Done.")),
    );
    let out = run(env.rein_openai(&server).arg("--add-dir").arg(&extra).args([
        "--permission-mode",
        "auto",
        "--output-format",
        "json",
        "-p",
        "write the files",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        std::fs::read_to_string(extra.join("a.txt")).unwrap(),
        "sandboxed\n"
    );
    assert_eq!(
        std::fs::read_to_string(extra.join("b.txt")).unwrap(),
        "tool\n"
    );
    assert!(
        !beside.join("c.txt").exists(),
        "a command wrote beside the added dir"
    );
    assert!(
        !beside.join("d.txt").exists(),
        "a tool wrote beside the added dir"
    );
    let report = final_json(&out);
    let denied = report["permission_denials"].as_array().unwrap();
    assert_eq!(denied.len(), 2, "{report}");
}
