//! Sub-agents get the parent's MCP tools, as their type allows: a general one all of them,
//! `explore` the read-only ones, a type with a `tools` list those it names.

use rein_testkit::{CapturedRequest, MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::json;

use crate::mcp::{call, configure, offered, result_of};
use crate::support::{Env, run, stderr};

fn messages(request: &CapturedRequest) -> &Vec<serde_json::Value> {
    request.body["messages"].as_array().unwrap()
}

/// The sub-agent's task, or `None` for the parent's requests.
fn sub_task(request: &CapturedRequest) -> Option<String> {
    let system = messages(request)[0]["content"].as_str()?;
    if !system.contains("# You are a sub-agent") {
        return None;
    }
    messages(request)
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .map(str::to_owned)
}

fn answered(request: &CapturedRequest, id: &str) -> bool {
    messages(request).iter().any(|m| m["tool_call_id"] == id)
}

fn agent(id: &str, task: &str, agent_type: &str) -> MockToolCall {
    MockToolCall::new(
        id,
        "agent",
        json!({"task": task, "agent_type": agent_type}).to_string(),
    )
}

#[test]
fn a_sub_agent_calls_the_parents_mcp_tools_as_its_type_allows() {
    let env = Env::new();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    std::fs::create_dir_all(env.rein_home.join("agents")).unwrap();
    std::fs::write(
        env.rein_home.join("agents/notes.md"),
        "---\nname: notes\ndescription: keeps notes\ntools: read_file, mcp__fake__note\n---\nKeep notes.\n",
    )
    .unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                match sub_task(request).as_deref() {
                    Some("echo it") if !answered(request, "s1") => Turn::new()
                        .tool_call(call(
                            "s1",
                            "mcp__fake__echo",
                            json!({"text": "from the sub-agent"}),
                        ))
                        .into(),
                    Some(_) => Turn::text("sub done").into(),
                    None if !answered(request, "t1") => Turn::new()
                        .tool_call(agent("t1", "echo it", "general"))
                        .into(),
                    None if !answered(request, "t2") => Turn::new()
                        .tool_call(agent("t2", "look around", "explore"))
                        .into(),
                    None if !answered(request, "t3") => Turn::new()
                        .tool_call(agent("t3", "take notes", "notes"))
                        .into(),
                    None => Turn::text("all done").into(),
                }
            }))
            .repeating(),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let first_of = |task: &str| {
        requests
            .iter()
            .find(|r| sub_task(r).as_deref() == Some(task))
            .unwrap_or_else(|| panic!("no sub-agent request for {task}"))
    };
    // The general sub-agent is offered every MCP tool and its call reaches the server.
    let general = offered(first_of("echo it"));
    for tool in ["mcp__fake__echo", "mcp__fake__note"] {
        assert!(general.iter().any(|t| t == tool), "{tool}: {general:?}");
    }
    let after_call = requests
        .iter()
        .find(|r| sub_task(r).as_deref() == Some("echo it") && answered(r, "s1"))
        .expect("the sub-agent's second round");
    assert_eq!(result_of(after_call, "s1"), "echo: from the sub-agent");
    // `explore` gets the read-only ones only.
    let explore = offered(first_of("look around"));
    assert!(
        explore.iter().any(|t| t == "mcp__fake__echo"),
        "{explore:?}"
    );
    assert!(
        !explore.iter().any(|t| t == "mcp__fake__note"),
        "{explore:?}"
    );
    // A type with a `tools` list gets the MCP tools it names, and no other.
    let notes = offered(first_of("take notes"));
    assert!(notes.iter().any(|t| t == "mcp__fake__note"), "{notes:?}");
    assert!(!notes.iter().any(|t| t == "mcp__fake__echo"), "{notes:?}");
}
