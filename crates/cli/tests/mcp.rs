//! MCP servers end to end: the real binary, rein-testkit's mock model and the fake MCP
//! server (`rein-mcp-fake`, stdio; or in-process over streamable HTTP).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::{Value, json};

use crate::pty::Pty;
use crate::support::{
    Env, final_json, process_alive, run, signal, stderr, stdout, wait_for_file, wait_output,
};

/// The fake server, built beside `rein` by `cargo nextest run --workspace`.
pub(crate) fn fake() -> PathBuf {
    let rein = PathBuf::from(env!("CARGO_BIN_EXE_rein"));
    let fake = rein.with_file_name("rein-mcp-fake");
    assert!(
        fake.exists(),
        "{} is missing: build it with `cargo build -p rein-testkit --bin rein-mcp-fake` (the \
         workspace test run builds it)",
        fake.display()
    );
    fake
}

/// `config.toml` in rein's home with these `[mcp_servers]` entries (TOML, `FAKE` replaced
/// by the fake server's path).
pub(crate) fn configure(env: &Env, servers: &str) {
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let fake = fake().display().to_string();
    std::fs::write(
        env.rein_home.join("config.toml"),
        servers.replace("FAKE", &fake),
    )
    .unwrap();
}

pub(crate) fn call(id: &str, tool: &str, args: Value) -> MockToolCall {
    MockToolCall::new(id, tool, args.to_string())
}

/// The tool names offered in a request.
pub(crate) fn offered(request: &rein_testkit::CapturedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["function"]["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The content of the tool result answering `id` in a request.
pub(crate) fn result_of(request: &rein_testkit::CapturedRequest, id: &str) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {id}: {}", request.body))
        .to_owned()
}

pub(crate) fn warnings(report: &Value) -> String {
    report["warnings"].to_string()
}

#[test]
fn the_model_calls_an_mcp_tool_and_uses_its_result() {
    let env = Env::new();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("c1", "mcp__fake__echo", json!({"text": "hi"}))))
            .reply(Turn::text("The server said hi.")),
    );
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "ask the server", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["result"], "The server said hi.");
    let requests = server.requests();
    let tools = offered(&requests[0]);
    for name in [
        "read_file",
        "mcp__fake__echo",
        "mcp__fake__note",
        "mcp__fake__do_it",
        "mcp__fake__do_it_2",
    ] {
        assert!(tools.iter().any(|t| t == name), "{name} not in {tools:?}");
    }
    // The schema passes through, cleaned of what providers reject.
    let echo = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "mcp__fake__echo")
        .unwrap();
    assert_eq!(
        echo["function"]["parameters"],
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})
    );
    assert_eq!(result_of(&requests[1], "c1"), "echo: hi");
    assert!(env.rein_home.join("mcp-logs/fake.log").exists());
}

#[test]
fn a_tool_not_marked_read_only_is_denied_headless_and_allowed_by_a_rule() {
    let env = Env::new();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    let script = || {
        Script::new()
            .reply(Turn::new().tool_call(call("n1", "mcp__fake__note", json!({"text": "x"}))))
            .reply(Turn::text("done"))
    };
    let server = MockServer::start(script());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "note", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(
        report["permission_denials"][0]["tool"], "mcp__fake__note",
        "{report}"
    );
    assert!(result_of(&server.requests()[1], "n1").contains("did not run"));

    let server = MockServer::start(script());
    let out = run(env.rein_openai(&server).args([
        "-p",
        "note",
        "--output-format",
        "json",
        "--allow",
        "mcp__fake__*",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(final_json(&out)["permission_denials"], json!([]));
    assert_eq!(result_of(&server.requests()[1], "n1"), "noted: x");
}

#[test]
fn structured_and_error_results_reach_the_model() {
    let env = Env::new();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(call("s1", "mcp__fake__structured", json!({})))
                    .tool_call(call("f1", "mcp__fake__fail", json!({}))),
            )
            .reply(Turn::text("ok")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "stream-json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let second = &server.requests()[1];
    let structured: Value = serde_json::from_str(&result_of(second, "s1")).unwrap();
    assert_eq!(structured, json!({"sum": 42, "items": ["a", "b"]}));
    assert_eq!(result_of(second, "f1"), "the fake tool failed on purpose");
    let failed = stdout(&out)
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|e| e["type"] == "tool_result" && e["id"] == "f1")
        .unwrap_or_else(|| panic!("no tool_result event: {}", stdout(&out)));
    assert_eq!(failed["is_error"], true, "{failed}");
}

#[test]
fn a_slow_server_does_not_hold_up_the_first_request_and_joins_later() {
    let env = Env::new();
    configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\n\
         [mcp_servers.slow]\ncommand = \"FAKE\"\nargs = [\"--start-delay-ms\", \"2500\"]\nstartup_timeout = 0.2\n\
         [mcp_servers.stuck]\ncommand = \"FAKE\"\nargs = [\"--start-delay-ms\", \"600000\"]\nstartup_timeout = 0.2\n",
    );
    let server = MockServer::start(
        Script::new()
            // The first answer takes long enough for `slow` to be ready afterwards.
            .reply(
                Turn::new()
                    .tool_call(call("e1", "mcp__fake__echo", json!({"text": "a"})))
                    .response_delay(Duration::from_secs(4)),
            )
            .reply(Turn::text("done")),
    );
    let started = Instant::now();
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // `stuck` never answers: rein went on without it, and it did not keep rein alive.
    assert!(started.elapsed() < Duration::from_secs(60));
    let report = final_json(&out);
    let warned = warnings(&report);
    assert!(
        warned.contains("timed out at start")
            && warned.contains("slow")
            && warned.contains("stuck"),
        "{warned}"
    );
    let requests = server.requests();
    // The first request waited at most `startup_timeout` (0.2 s) for `slow` and `stuck`,
    // not for `slow`'s 2.5 s start: 2 s leaves rein's own start-up room on a loaded machine.
    let waited = requests[0].received_at.duration_since(started);
    assert!(
        waited < Duration::from_secs(2),
        "the first request went {waited:?} after rein started"
    );
    let first = offered(&requests[0]);
    assert!(first.iter().any(|t| t == "mcp__fake__echo"), "{first:?}");
    assert!(
        !first.iter().any(|t| t.starts_with("mcp__slow__")),
        "{first:?}"
    );
    let second = offered(&requests[1]);
    assert!(
        second.iter().any(|t| t == "mcp__slow__echo"),
        "slow joined later: {second:?}"
    );
    assert!(
        !second.iter().any(|t| t.starts_with("mcp__stuck__")),
        "{second:?}"
    );
}

#[test]
fn a_server_that_dies_is_restarted_once_then_its_tools_report_a_clear_error() {
    let env = Env::new();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("k1", "mcp__fake__crash", json!({}))))
            .reply(Turn::new().tool_call(call("e1", "mcp__fake__echo", json!({"text": "back"}))))
            .reply(Turn::new().tool_call(call("k2", "mcp__fake__crash", json!({}))))
            .reply(Turn::new().tool_call(call("e2", "mcp__fake__echo", json!({"text": "again"}))))
            .reply(Turn::text("the server is gone")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "go",
        "--output-format",
        "json",
        "--allow",
        "mcp__fake__*",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(final_json(&out)["result"], "the server is gone");
    let requests = server.requests();
    let first_crash = result_of(&requests[1], "k1");
    assert!(
        first_crash.contains("stopped during this call") && first_crash.contains("start it again"),
        "{first_crash}"
    );
    assert_eq!(result_of(&requests[2], "e1"), "echo: back");
    let second_crash = result_of(&requests[3], "k2");
    assert!(second_crash.contains("restarted already"), "{second_crash}");
    let gone = result_of(&requests[4], "e2");
    assert!(
        gone.contains("MCP server `fake` is not available"),
        "{gone}"
    );
    let log = std::fs::read_to_string(env.rein_home.join("mcp-logs/fake.log")).unwrap();
    assert_eq!(log.matches("--- rein starts").count(), 2, "{log}");
}

#[test]
fn a_hung_call_times_out_and_the_server_is_told() {
    let env = Env::new();
    configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\ncall_timeout = 1\n",
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("h1", "mcp__fake__sleep", json!({"ms": 600000}))))
            .reply(Turn::new().tool_call(call(
                "e1",
                "mcp__fake__echo",
                json!({"text": "still here"}),
            )))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let timed_out = result_of(&requests[1], "h1");
    assert!(
        timed_out.contains("did not answer this call within 1 s"),
        "{timed_out}"
    );
    assert_eq!(result_of(&requests[2], "e1"), "echo: still here");
    // Told while rein runs on: the call itself stops on the server.
    wait_for_log(&env, "fake", "fake: cancellation received");
    wait_for_log(&env, "fake", "fake: sleep cancelled");
}

#[test]
fn a_changed_tool_list_is_picked_up_between_rounds() {
    let env = Env::new();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("c1", "mcp__fake__change_tools", json!({}))))
            .reply(Turn::new().tool_call(call("l1", "mcp__fake__late_tool", json!({}))))
            .reply(Turn::text("done")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "go",
        "--output-format",
        "json",
        "--allow",
        "mcp__fake__*",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    assert!(
        !offered(&requests[0])
            .iter()
            .any(|t| t == "mcp__fake__late_tool")
    );
    assert!(
        offered(&requests[1])
            .iter()
            .any(|t| t == "mcp__fake__late_tool")
    );
    assert_eq!(result_of(&requests[2], "l1"), "late tool ran");
}

#[test]
fn an_http_server_is_reached_over_streamable_http() {
    let env = Env::new();
    let url = rein_testkit::mcp::serve_http().unwrap();
    configure(
        &env,
        &format!("[mcp_servers.web]\nurl = \"{url}\"\nheaders = {{ X-Test = \"yes\" }}\n"),
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call(
                "w1",
                "mcp__web__echo",
                json!({"text": "over http"}),
            )))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(result_of(&server.requests()[1], "w1"), "echo: over http");
}

#[test]
fn servers_are_stopped_with_their_process_groups_when_rein_exits() {
    let env = Env::new();
    let pids = env.home.join("pids");
    configure(
        &env,
        &format!(
            "[mcp_servers.fake]\ncommand = \"FAKE\"\nargs = [\"--pid-file\", \"{}\"]\n",
            pids.display()
        ),
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("e1", "mcp__fake__echo", json!({"text": "a"}))))
            .reply(Turn::text("done")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "go"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = wait_for_file(&pids, Duration::from_secs(10));
    let pids: Vec<u32> = text
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    assert_eq!(pids.len(), 2);
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| process_alive(p)) {
        assert!(
            Instant::now() < deadline,
            "still running after rein exited: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_project_server_starts_only_once_the_project_is_trusted() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    env.write(
        ".mcp.json",
        &json!({"mcpServers": {"proj": {"command": fake().display().to_string()}}}).to_string(),
    );
    let script = || Script::new().reply(Turn::text("done"));
    let server = MockServer::start(script());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warned = warnings(&final_json(&out));
    assert!(
        warned.contains("proj") && warned.contains("not trusted") && warned.contains("rein trust"),
        "{warned}"
    );
    assert!(
        !offered(&server.requests()[0])
            .iter()
            .any(|t| t.starts_with("mcp__proj__"))
    );

    assert!(run(env.rein().arg("trust")).status.success());
    let server = MockServer::start(script());
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        offered(&server.requests()[0])
            .iter()
            .any(|t| t == "mcp__proj__echo")
    );
}

#[test]
fn bad_configuration_is_reported_clearly() {
    let env = Env::new();
    configure(&env, "[mcp_servers.nothing]\nargs = [\"x\"]\n");
    let out = run(env.rein().args(["-p", "go"]).env("OPENAI_API_KEY", "k"));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("mcp_servers.nothing: give `command`"),
        "{}",
        stderr(&out)
    );

    // A variable that is not set, a server that exits at start, a program that does not
    // exist: warnings, and the run goes on.
    configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\n\
         [mcp_servers.needs]\ncommand = \"FAKE\"\nenv = { TOKEN = \"${REIN_TEST_UNSET_TOKEN}\" }\n\
         [mcp_servers.dies]\ncommand = \"FAKE\"\nargs = [\"--exit-at-start\"]\n\
         [mcp_servers.absent]\ncommand = \"/nonexistent/server\"\n",
    );
    let server = MockServer::start(Script::new().reply(Turn::text("done")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warned = warnings(&final_json(&out));
    assert!(warned.contains("REIN_TEST_UNSET_TOKEN"), "{warned}");
    assert!(
        warned.contains("`dies` could not be started")
            && warned.contains("exiting at start on purpose"),
        "{warned}"
    );
    assert!(warned.contains("`absent` could not be started"), "{warned}");
    assert!(
        offered(&server.requests()[0])
            .iter()
            .any(|t| t == "mcp__fake__echo")
    );
}

#[test]
fn mcp_list_shows_each_servers_state_tools_and_error() {
    let env = Env::new();
    configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\n\
         [mcp_servers.dies]\ncommand = \"FAKE\"\nargs = [\"--exit-at-start\"]\n\
         [mcp_servers.stuck]\ncommand = \"FAKE\"\nargs = [\"--start-delay-ms\", \"600000\"]\nstartup_timeout = 0.3\n",
    );
    let out = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&out);
    assert_eq!(
        out.status.code(),
        Some(1),
        "not every server is ready: {text}"
    );
    let line = |name: &str| {
        text.lines()
            .find(|l| l.starts_with(name))
            .unwrap_or_else(|| panic!("no line for {name}: {text}"))
            .to_owned()
    };
    assert!(
        line("fake").contains("ready") && line("fake").contains("9 tools"),
        "{text}"
    );
    assert!(
        line("dies").contains("failed") && line("dies").contains("exited"),
        "{text}"
    );
    assert!(
        line("stuck").contains("timed out")
            && !line("stuck").contains("  starting")
            && line("stuck").contains("within 0.3 s"),
        "{text}"
    );
    assert!(text.contains("mcp-logs/fake.log"), "{text}");
}

/// Waits until the server's log holds `text`.
pub(crate) fn wait_for_log(env: &Env, server: &str, text: &str) {
    let log = env.rein_home.join(format!("mcp-logs/{server}.log"));
    let deadline = Instant::now() + Duration::from_secs(30);
    while !std::fs::read_to_string(&log)
        .unwrap_or_default()
        .contains(text)
    {
        assert!(
            Instant::now() < deadline,
            "{} never said {text:?}; it holds:\n{}",
            log.display(),
            std::fs::read_to_string(&log).unwrap_or_default()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn ctrl_c_cancels_a_running_call_and_rein_exits_130() {
    let env = Env::new();
    configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("h1", "mcp__fake__sleep", json!({"ms": 600000}))))
            .reply(Turn::text("not reached")),
    );
    let child = env
        .rein_openai(&server)
        .args(["-p", "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_log(&env, "fake", "fake: sleeping");
    signal(child.id(), "INT");
    let out = wait_output(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    // rein sends notifications/cancelled and exits at once; under load the server is
    // sometimes stopped before it reads it, so only the timeout test (where rein runs on)
    // checks the notice arrives.
}

/// The REPL's `/mcp` shows what `rein mcp list` does; switching the model keeps the servers
/// running, and leaving stops them.
#[test]
fn slash_mcp_in_the_repl_shows_each_servers_state_tools_error_and_log() {
    let env = Env::new();
    let pids = env.home.join("pids");
    configure(
        &env,
        &format!(
            "[mcp_servers.fake]\ncommand = \"FAKE\"\nargs = [\"--pid-file\", \"{}\"]\n\
             [mcp_servers.dies]\ncommand = \"FAKE\"\nargs = [\"--exit-at-start\"]\n",
            pids.display()
        ),
    );
    let server = MockServer::start(Script::new().reply(Turn::text("Hello there.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_ready();
    // The first request waits for the servers: after it, each one has settled.
    pty.send("hi\r");
    pty.wait_for("Hello there.");
    assert!(
        offered(&server.requests()[0])
            .iter()
            .any(|t| t == "mcp__fake__echo"),
        "the REPL offers the MCP tools"
    );
    pty.send("/mcp\r");
    // The start-up warning names dies.log too (whole, now that long lines wrap): /mcp's
    // own lines are the second mention, and fake.log's only one.
    pty.wait_for_count("mcp-logs/dies.log", 2);
    pty.wait_for("mcp-logs/fake.log");
    let shown = pty.transcript();
    let line = |name: &str| {
        shown
            .lines()
            .rfind(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("no line for {name}:\n{shown}"))
            .to_owned()
    };
    assert!(
        line("fake").contains("ready") && line("fake").contains("9 tools"),
        "{shown}"
    );
    assert!(
        line("dies").contains("failed") && line("dies").contains("error:"),
        "{shown}"
    );
    assert!(shown.contains("mcp-logs/fake.log"), "{shown}");

    // Another model, the same servers: the process the REPL started is still the one.
    let started = wait_for_file(&pids, Duration::from_secs(10));
    let pids: Vec<u32> = started
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect();
    pty.send("/model gpt-4o-mini\r");
    pty.wait_for("switching to gpt-4o-mini");
    pty.send("/mcp\r");
    pty.wait_for_count("9 tools", 2);
    assert!(pids.iter().all(|&p| process_alive(p)), "{pids:?}");
    assert_eq!(
        std::fs::read_to_string(env.home.join("pids")).unwrap(),
        started,
        "not restarted"
    );

    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| process_alive(p)) {
        assert!(
            Instant::now() < deadline,
            "still running after the REPL ended: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `/mcp` with no server configured says how to configure one.
#[test]
fn slash_mcp_without_servers_says_how_to_add_one() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("unused")));
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_ready();
    pty.send("/mcp\r");
    pty.wait_for("No MCP servers to start here");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// The REPL asks once to trust a project whose `.mcp.json` names servers; trusted, they
/// start in that same session.
#[test]
fn the_repl_asks_to_trust_a_project_with_mcp_servers_then_starts_them() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    env.write(
        ".mcp.json",
        &format!(
            r#"{{"mcpServers": {{"proj": {{"command": "{}"}}}}}}"#,
            fake().display()
        ),
    );
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_for("has MCP servers in");
    pty.wait_for("Trust it? [y/N]");
    pty.send("y\r");
    pty.wait_for("Trusted: its MCP servers will run.");
    pty.wait_ready();
    // Started in the background: `/mcp` shows it ready once it is.
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut asked = 0;
    while !pty.transcript().contains("9 tools") {
        assert!(
            Instant::now() < deadline,
            "never ready: {}",
            pty.transcript()
        );
        pty.send("/mcp\r");
        asked += 1;
        pty.wait_for_count("mcp-logs/proj.log", asked);
    }
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}
