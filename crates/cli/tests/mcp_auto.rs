//! The auto permission mode and MCP tools: the OS sandbox holds rein's commands, not an MCP
//! server's tools, so those ask in auto (and are refused headless) unless their server runs
//! in the sandbox itself.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::mcp::fake;
use crate::support::{Env, final_json, run, sandbox_enforced, stderr};

fn note_once(env: &Env, server_config: &str) -> (serde_json::Value, MockServer) {
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        format!(
            "[mcp_servers.fake]\ncommand = \"{}\"\n{server_config}",
            fake().display()
        ),
    )
    .unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "n1",
                "mcp__fake__note",
                json!({"text": "x"}).to_string(),
            )))
            .reply(Turn::text("done")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "note",
        "--output-format",
        "json",
        "--permission-mode",
        "auto",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    (final_json(&out), server)
}

#[test]
fn auto_refuses_an_unsandboxed_servers_tool_headless_and_runs_a_sandboxed_ones() {
    let env = Env::new();
    if !sandbox_enforced(
        &env,
        "auto_refuses_an_unsandboxed_servers_tool_headless_and_runs_a_sandboxed_ones",
    ) {
        return;
    }
    let (report, _) = note_once(&env, "");
    let denial = &report["permission_denials"][0];
    assert_eq!(denial["tool"], "mcp__fake__note", "{report}");
    let reason = denial["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("outside the OS sandbox") && reason.contains("--allow 'mcp__fake__note'"),
        "{reason}"
    );

    let (report, server) = note_once(&env, "sandbox = true\n");
    assert_eq!(report["permission_denials"], json!([]), "{report}");
    let requests = server.requests();
    let result = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == "n1")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned();
    assert_eq!(result, "noted: x");
}
