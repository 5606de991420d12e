//! Against the MCP reference servers from npm (`@modelcontextprotocol/server-everything` and
//! `server-filesystem`, versions pinned in `tests/mcp-npm/package-lock.json`). The first test
//! to need them installs them with `npm ci` under the target directory; without node they
//! are skipped with a message saying so, unless `REIN_REQUIRE_NODE=1` (set by .ci/run, which
//! installs node), where a missing node fails them.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, final_json, npm_packages, run, stderr, stdout};

/// Where the servers are installed: `<target>/mcp-npm/node_modules/.bin`; `None` (with a
/// message) without node and npm.
fn reference_servers() -> Option<PathBuf> {
    let dir = npm_packages(
        "mcp-npm",
        &[
            "node_modules/.bin/mcp-server-everything",
            "node_modules/.bin/mcp-server-filesystem",
        ],
        &[],
        "MCP reference-server tests",
    )?;
    Some(dir.join("node_modules/.bin"))
}

fn configure(env: &Env, bin: &std::path::Path, extra: &str) {
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let config = format!(
        "[mcp_servers.everything]\ncommand = \"{}\"\nstartup_timeout = 30\n\
         [mcp_servers.files]\ncommand = \"{}\"\nargs = [\"{}\"]\nstartup_timeout = 30\n{extra}",
        bin.join("mcp-server-everything").display(),
        bin.join("mcp-server-filesystem").display(),
        env.work.display(),
    );
    std::fs::write(env.rein_home.join("config.toml"), config).unwrap();
}

fn call(id: &str, tool: &str, args: Value) -> MockToolCall {
    MockToolCall::new(id, tool, args.to_string())
}

fn result_of(request: &rein_testkit::CapturedRequest, id: &str) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {id}: {}", request.body))
        .to_owned()
}

#[test]
fn reference_servers_list_tools_and_answer_calls() {
    let Some(bin) = reference_servers() else {
        return;
    };
    let env = Env::new();
    env.write("hello.txt", "hello from the workspace\n");
    configure(&env, &bin, "");
    let outside = env.home.join("outside.txt");
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(call(
                        "e1",
                        "mcp__everything__echo",
                        json!({"message": "ping"}),
                    ))
                    .tool_call(call(
                        "s1",
                        "mcp__everything__get-structured-content",
                        json!({"location": "Chicago"}),
                    ))
                    .tool_call(call(
                        "r1",
                        "mcp__files__read_text_file",
                        json!({"path": env.work.join("hello.txt")}),
                    ))
                    .tool_call(call(
                        "x1",
                        "mcp__files__read_text_file",
                        json!({"path": outside}),
                    )),
            )
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "stream-json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let tools = requests[0].body["tools"].to_string();
    for name in [
        "mcp__everything__echo",
        "mcp__everything__get-sum",
        "mcp__files__list_directory",
    ] {
        assert!(tools.contains(name), "{name} not offered: {tools}");
    }
    assert!(!tools.contains("$schema"), "schemas are cleaned");
    let second = &requests[1];
    assert!(
        result_of(second, "e1").contains("ping"),
        "{}",
        result_of(second, "e1")
    );
    let structured: Value = serde_json::from_str(&result_of(second, "s1")).unwrap();
    assert!(structured["temperature"].is_number(), "{structured}");
    assert!(result_of(second, "r1").contains("hello from the workspace"));
    let refused = result_of(second, "x1");
    assert!(refused.contains("Access denied"), "{refused}");
    let is_error = |id: &str| {
        stdout(&out)
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .find(|e| e["type"] == "tool_result" && e["id"] == id)
            .map(|e| e["is_error"].clone())
    };
    assert_eq!(
        is_error("x1"),
        Some(json!(true)),
        "an isError result is an error"
    );
    assert_eq!(is_error("r1"), Some(json!(false)));
}

#[test]
fn a_reference_tool_not_read_only_asks_and_a_rule_allows_it() {
    let Some(bin) = reference_servers() else {
        return;
    };
    let env = Env::new();
    configure(&env, &bin, "");
    let script = || {
        Script::new()
            .reply(Turn::new().tool_call(call(
                "t1",
                "mcp__everything__toggle-simulated-logging",
                json!({}),
            )))
            .reply(Turn::text("done"))
    };
    let server = MockServer::start(script());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(
        report["permission_denials"][0]["tool"],
        "mcp__everything__toggle-simulated-logging"
    );

    let server = MockServer::start(script());
    let out = run(env.rein_openai(&server).args([
        "-p",
        "go",
        "--output-format",
        "json",
        "--allow",
        "mcp__everything__*",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(final_json(&out)["permission_denials"], json!([]));
    let result = result_of(&server.requests()[1], "t1");
    assert!(!result.contains("did not run"), "{result}");
}

#[test]
fn a_long_running_reference_call_is_cancelled_at_its_timeout() {
    let Some(bin) = reference_servers() else {
        return;
    };
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        format!(
            "[mcp_servers.everything]\ncommand = \"{}\"\nstartup_timeout = 30\ncall_timeout = 2\n",
            bin.join("mcp-server-everything").display()
        ),
    )
    .unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call(
                "l1",
                "mcp__everything__trigger-long-running-operation",
                json!({"duration": 600, "steps": 5}),
            )))
            .reply(Turn::text("done")),
    );
    let started = Instant::now();
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(started.elapsed() < Duration::from_secs(60));
    let result = result_of(&server.requests()[1], "l1");
    assert!(
        result.contains("did not answer this call within 2 s"),
        "{result}"
    );
}

#[test]
fn a_20_kb_file_read_through_server_filesystem_arrives_whole_and_once() {
    let Some(bin) = reference_servers() else {
        return;
    };
    let env = Env::new();
    let text: String = (1..=450)
        .map(|n| format!("line {n:03}: the quick brown fox jumps over the dog\n"))
        .collect();
    assert!(text.len() > 20_000);
    env.write("big.txt", &text);
    configure(&env, &bin, "");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call(
                "r1",
                "mcp__files__read_text_file",
                json!({"path": env.work.join("big.txt")}),
            )))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let result = result_of(&server.requests()[1], "r1");
    for n in 1..=450 {
        let line = format!("line {n:03}: the quick brown fox");
        assert_eq!(result.matches(&line).count(), 1, "{line} not there once");
    }
}

/// server-everything's long-running operation with one progress report a second.
fn long_operation(
    duration: u64,
    steps: u64,
    call_timeout: u64,
    call_max_timeout: u64,
) -> (Env, MockServer, std::process::Output) {
    let bin = reference_servers().expect("checked by the caller");
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        format!(
            "[mcp_servers.everything]\ncommand = \"{}\"\nstartup_timeout = 30\n\
             call_timeout = {call_timeout}\ncall_max_timeout = {call_max_timeout}\n",
            bin.join("mcp-server-everything").display()
        ),
    )
    .unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call(
                "l1",
                "mcp__everything__trigger-long-running-operation",
                json!({"duration": duration, "steps": steps}),
            )))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "stream-json"]));
    (env, server, out)
}

#[test]
fn progress_reaches_stream_json_and_keeps_a_call_past_its_idle_timeout() {
    if reference_servers().is_none() {
        return;
    }
    // 5 s of work with a report each second, under a 2 s idle limit: it finishes.
    let (_env, server, out) = long_operation(5, 5, 2, 60);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = result_of(&server.requests()[1], "l1");
    assert!(!result.contains("did not answer"), "{result}");
    let progress: Vec<Value> = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "tool_progress" && e["id"] == "l1")
        .map(|e| e["progress"].clone())
        .collect();
    assert!(progress.len() >= 3, "{progress:?}");
    assert_eq!(progress[0]["kind"], "steps", "{progress:?}");
    assert_eq!(progress[0]["total"], json!(5.0), "{progress:?}");

    // The hard maximum holds however often it reports.
    let (_env, server, out) = long_operation(20, 20, 2, 4);
    assert!(out.status.success(), "{}", stderr(&out));
    let result = result_of(&server.requests()[1], "l1");
    assert!(
        result.contains("within 4 s (its `call_max_timeout`)"),
        "{result}"
    );
}

/// server-everything's `simulate-research-query` requires MCP tasks: rein does not offer it
/// (every plain call would fail) and `rein mcp list` says why; its other tools are offered.
#[test]
fn a_tool_that_requires_tasks_is_not_offered_and_mcp_list_says_why() {
    let Some(bin) = reference_servers() else {
        return;
    };
    let env = Env::new();
    configure(&env, &bin, "");
    let out = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    let note = text
        .lines()
        .find(|l| l.contains("simulate-research-query"))
        .unwrap_or_else(|| panic!("simulate-research-query not named: {text}"));
    assert!(
        note.contains("not offered") && note.contains("requires MCP tasks"),
        "{text}"
    );

    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let tools = server.requests()[0].body["tools"].to_string();
    assert!(tools.contains("mcp__everything__echo"), "{tools}");
    assert!(!tools.contains("simulate-research-query"), "{tools}");
}

/// The last user message of `request`, as text.
fn user_text(request: &rein_testkit::CapturedRequest) -> String {
    let messages = request.body["messages"].as_array().unwrap();
    let user = messages.iter().rev().find(|m| m["role"] == "user").unwrap();
    match user["content"].as_str() {
        Some(text) => text.to_owned(),
        None => user["content"].to_string(),
    }
}

#[test]
fn the_reference_servers_prompts_are_slash_commands() {
    let Some(bin) = reference_servers() else {
        return;
    };
    let env = Env::new();
    configure(&env, &bin, "");
    for (typed, expected) in [
        (
            "/mcp__everything__args-prompt city=Austin state=Texas",
            "What's weather in Austin, Texas?",
        ),
        (
            "/mcp__everything__args-prompt Paris",
            "What's weather in Paris?",
        ),
        (
            "/mcp__everything__simple-prompt",
            "This is a simple prompt without arguments.",
        ),
        (
            "/mcp__everything__resource-prompt Text 3",
            "Resource 3: This is a plaintext resource",
        ),
    ] {
        let server = MockServer::start(Script::new().reply(Turn::text("Answered.")));
        let out = run(env
            .rein_openai(&server)
            .args(["-p", typed, "--output-format", "json"]));
        assert!(out.status.success(), "{typed}: {}", stderr(&out));
        let sent = user_text(&server.requests()[0]);
        assert!(sent.contains(expected), "{typed}: {sent}");
        assert_eq!(final_json(&out)["result"], "Answered.");
    }
    // A prompt the server refuses, and a required argument left out: nothing is sent.
    let server = MockServer::start(Script::new().reply(Turn::text("never")).repeating());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "/mcp__everything__resource-prompt bogus 1"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Invalid resourceType"),
        "{}",
        stderr(&out)
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "/mcp__everything__args-prompt state=Texas"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("needs the argument `city` (Name of the city)"),
        "{}",
        stderr(&out)
    );
    assert!(server.requests().is_empty());
}
