//! Many MCP tools: past the budget (128 tools or 48 KB of descriptions by default) they are
//! found through `tool_search` and callable from the next round; the first request stays
//! valid and small, and the tool list grows only at its end.

use rein_testkit::{CapturedRequest, MockServer, Script, Turn};
use serde_json::json;

use crate::mcp::{call, configure, offered, result_of};
use crate::support::{Env, final_json, run, stderr};

/// 9 tools of the fake's own and 191 numbered ones: 200 MCP tools.
const SERVERS: &str =
    "[mcp_servers.fake]\ncommand = \"FAKE\"\nargs = [\"--extra-tools\", \"191\"]\n";

/// Runs `rein -p go` with the 200 tools of [`SERVERS`] against `script`; the requests it sent.
fn run_with_many_tools(script: Script) -> (Vec<CapturedRequest>, std::process::Output) {
    let env = Env::new();
    configure(&env, SERVERS);
    let server = MockServer::start(script);
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    (server.requests(), out)
}

fn tools_of(request: &CapturedRequest) -> Vec<serde_json::Value> {
    request.body["tools"]
        .as_array()
        .cloned()
        .unwrap_or_default()
}

#[test]
fn two_hundred_mcp_tools_go_through_tool_search_with_a_valid_first_request() {
    // Without the budget (set out of reach): every tool in the first request.
    let env = Env::new();
    configure(
        &env,
        &format!("[tool_search]\nmax_tools = 100000\nmax_schema_kb = 100000\n{SERVERS}"),
    );
    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let all = &server.requests()[0];
    let mcp_listed = offered(all)
        .iter()
        .filter(|t| t.starts_with("mcp__"))
        .count();
    assert_eq!(mcp_listed, 200);
    let before = all.body.to_string().len();

    // With the default budget.
    let (requests, out) = run_with_many_tools(
        Script::new()
            .reply(Turn::new().tool_call(call("q1", "tool_search", json!({"query": "invoice 16"}))))
            .reply(Turn::new().tool_call(call("c1", "mcp__fake__tool_016", json!({"id": "A-1"}))))
            .reply(Turn::text("done")),
    );
    let first = &requests[0];
    let after = first.body.to_string().len();
    let names = offered(first);
    // Valid for OpenAI: at most 128 tools; the MCP tools are behind tool_search.
    assert!(names.len() <= 128, "{} tools", names.len());
    assert!(names.iter().any(|t| t == "tool_search"), "{names:?}");
    assert!(!names.iter().any(|t| t.starts_with("mcp__")), "{names:?}");
    let schemas: usize = tools_of(first).iter().map(|t| t.to_string().len()).sum();
    assert!(schemas <= 48 * 1024, "{schemas} bytes of tools");
    let search = result_of(&requests[1], "q1");
    assert!(search.contains("mcp__fake__tool_016"), "{search}");
    // The tool found is offered from the next round, after the tools offered before, which
    // are unchanged: the request's prefix stays as it was.
    let second = tools_of(&requests[1]);
    assert_eq!(second[..tools_of(first).len()], tools_of(first)[..]);
    assert!(
        second[tools_of(first).len()..]
            .iter()
            .any(|t| t["function"]["name"] == "mcp__fake__tool_016")
    );
    assert_eq!(
        requests[0].body["messages"][0],
        requests[1].body["messages"][0]
    );
    assert_eq!(result_of(&requests[2], "c1"), "tool_016 ran");
    let report = final_json(&out);
    assert!(report.to_string().contains("tool_search"), "{report}");
    // The sizes, for the record (the issue asks for them).
    eprintln!(
        "first request with 200 MCP tools: {before} bytes listed, {after} bytes with tool_search"
    );
    assert!(after * 4 < before, "{after} vs {before}");
}

#[test]
fn a_tool_asked_for_by_its_exact_name_comes_alone() {
    let (requests, _) = run_with_many_tools(
        Script::new()
            .reply(Turn::new().tool_call(call(
                "q1",
                "tool_search",
                json!({"query": "mcp__fake__tool_077"}),
            )))
            .reply(Turn::text("done")),
    );
    let added: Vec<String> = offered(&requests[1])
        .into_iter()
        .filter(|t| t.starts_with("mcp__"))
        .collect();
    assert_eq!(
        added,
        ["mcp__fake__tool_077"],
        "{}",
        result_of(&requests[1], "q1")
    );
}
