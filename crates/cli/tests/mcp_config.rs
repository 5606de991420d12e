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

/// An HTTP server that answers 401: the warning says how to give credentials, in words,
/// not in rmcp's type names.
#[test]
fn an_http_server_that_wants_credentials_says_how_to_give_them() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        use std::io::{Read, Write};
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let mut buf = [0u8; 8192];
            let _ = stream.read(&mut buf);
            let _ = stream.write_all(
                b"HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Bearer realm=\"mcp\"\r\n\
                  Content-Length: 0\r\nConnection: close\r\n\r\n",
            );
        }
    });
    let env = Env::new();
    configure(&env, &format!("[mcp_servers.web]\nurl = \"{url}\"\n"));
    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warned = warnings(&final_json(&out));
    assert!(
        warned.contains("`web` could not be started")
            && warned.contains("HTTP 401")
            && warned.contains("headers")
            && warned.contains("Authorization"),
        "{warned}"
    );
    assert!(
        !warned.contains("rmcp::") && !warned.contains("WorkerTransport"),
        "{warned}"
    );
}

/// An HTTP server with nothing listening: said in words, as for a model endpoint.
#[test]
fn an_http_server_that_is_not_running_is_named_as_such() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let env = Env::new();
    configure(
        &env,
        &format!("[mcp_servers.down]\nurl = \"http://127.0.0.1:{port}/mcp\"\n"),
    );
    let out = run(env.rein().args(["mcp", "list"]));
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        text.contains("connection refused, so no server is running there"),
        "{text}"
    );
    assert!(!text.contains("Client error"), "{text}");
}

/// A `cwd` that does not exist is named as such, with no pointer to a log the server never
/// wrote to.
#[test]
fn a_missing_working_directory_is_named() {
    let env = Env::new();
    configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\ncwd = \"/nonexistent/rein-test-dir\"\n",
    );
    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warned = warnings(&final_json(&out));
    assert!(
        warned.contains("working directory /nonexistent/rein-test-dir does not exist"),
        "{warned}"
    );
    assert!(!warned.contains("its stderr is in"), "{warned}");
}
