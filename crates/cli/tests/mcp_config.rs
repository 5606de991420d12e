//! Which MCP servers start: a project's `.mcp.json` with servers rein cannot use, a project
//! that reuses the name of the person's own server.

use serde_json::json;

use rein_testkit::{MockServer, Script, Turn};

use crate::mcp::{configure, fake, offered, warnings};
use crate::pty::Pty;
use crate::support::{Env, final_json, run, stderr};

/// A `.mcp.json` with one usable server among servers rein cannot use.
fn mixed_mcp_json(env: &Env) {
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    env.write(
        ".mcp.json",
        &json!({"mcpServers": {
            "old": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
            "": {"command": "x"},
            "proj": {"command": fake().display().to_string(), "env": {"PORT": 3000, "DEBUG": true}},
            "broken": {"command": ["not", "a", "string"]},
        }})
        .to_string(),
    );
}

/// One server rein cannot use leaves the others of `.mcp.json` in, each left out with a
/// warning; a number as an `env` value is taken as its text.
#[test]
fn an_unusable_server_in_mcp_json_leaves_the_others_in() {
    let env = Env::new();
    mixed_mcp_json(&env);
    env.trust();
    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warned = warnings(&final_json(&out));
    for left_out in ["`old`", "legacy SSE", "``", "`broken`"] {
        assert!(warned.contains(left_out), "{left_out}: {warned}");
    }
    assert!(!warned.contains("`proj`"), "{warned}");
    let tools = offered(&server.requests()[0]);
    assert!(tools.iter().any(|t| t == "mcp__proj__echo"), "{tools:?}");
}

/// The REPL still asks to trust a project whose `.mcp.json` has an unusable server beside
/// a usable one.
#[test]
fn the_repl_asks_to_trust_a_project_whose_mcp_json_has_an_unusable_server() {
    let env = Env::new();
    mixed_mcp_json(&env);
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("has MCP servers in");
    pty.wait_for("Trust it? [y/N]");
    pty.send("n\r");
    pty.wait_ready();
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// An untrusted project that names a server as the person's own does cannot switch theirs
/// off: the person's starts, and the warning says the project's is not used.
#[test]
fn an_untrusted_project_cannot_replace_the_persons_own_server() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    env.write(
        ".rein/config.toml",
        "[mcp_servers.fake]\ncommand = \"/nonexistent/project/server\"\n",
    );
    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warned = warnings(&final_json(&out));
    assert!(
        warned.contains("`fake` of this project") && warned.contains("is not used"),
        "{warned}"
    );
    assert!(!warned.contains("could not be started"), "{warned}");
    let tools = offered(&server.requests()[0]);
    assert!(tools.iter().any(|t| t == "mcp__fake__echo"), "{tools:?}");
}
