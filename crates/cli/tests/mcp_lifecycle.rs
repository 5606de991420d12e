//! An MCP server's life in a session: stopped while still starting, seen dead, its log.

use std::time::{Duration, Instant};

use rein_testkit::{MockServer, Script, Turn};
use serde_json::json;

use crate::mcp::{call, configure, offered, result_of};
use crate::pty::Pty;
use crate::support::{Env, final_json, process_alive, run, signal, stderr, wait_for_file};

/// The pids a fake server wrote (its own, then its helper's).
fn read_pids(path: &std::path::Path) -> Vec<u32> {
    wait_for_file(path, Duration::from_secs(10))
        .split_whitespace()
        .map(|p| p.parse().unwrap())
        .collect()
}

/// Waits until none of `pids` runs.
fn wait_gone(pids: &[u32]) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while pids.iter().any(|&p| process_alive(p)) {
        assert!(
            Instant::now() < deadline,
            "still running after rein ended: {pids:?}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// SIGTERM at the REPL's prompt stops a server that is still starting (its process is
/// inside the handshake, not yet a live connection), with its whole group.
#[test]
fn sigterm_in_the_repl_stops_a_server_still_starting() {
    let env = Env::new();
    let pids = env.home.join("pids");
    configure(
        &env,
        &format!(
            "[mcp_servers.stuck]\ncommand = \"FAKE\"\n\
             args = [\"--start-delay-ms\", \"600000\", \"--pid-file\", \"{}\"]\n",
            pids.display()
        ),
    );
    let server = MockServer::start(Script::new());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 120);
    pty.wait_ready();
    let pids = read_pids(&pids);
    assert_eq!(pids.len(), 2);
    signal(pty.pid(), "TERM");
    assert_eq!(pty.wait_exit(), 143);
    wait_gone(&pids);
}

/// A server that died since it was ready shows as exited in `/mcp`, with what its log said
/// last, not as ready.
#[test]
fn slash_mcp_shows_a_server_that_died_as_exited() {
    let env = Env::new();
    let pids = env.home.join("pids");
    configure(
        &env,
        &format!(
            "[mcp_servers.fake]\ncommand = \"FAKE\"\nargs = [\"--pid-file\", \"{}\"]\n",
            pids.display()
        ),
    );
    let server = MockServer::start(Script::new().reply(Turn::text("Hello there.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 160);
    pty.wait_ready();
    pty.send("hi\r");
    pty.wait_for("Hello there.");
    assert!(
        offered(&server.requests()[0])
            .iter()
            .any(|t| t == "mcp__fake__echo")
    );
    let pids = read_pids(&pids);
    // The whole group: the helper holds the server's stdout open too.
    let killed = std::process::Command::new("kill")
        .args(["-KILL", "--", &format!("-{}", pids[0])])
        .status()
        .unwrap();
    assert!(killed.success());
    wait_gone(&pids);
    // rein asks the process itself, but reaping it may lag the kill by a moment on a loaded
    // machine: ask /mcp again until it says so, within a deadline.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let answered = pty.transcript().matches("log: ").count();
        pty.send("/mcp\r");
        pty.wait_for_count("log: ", answered + 1);
        let last = pty.transcript();
        if last
            .lines()
            .rfind(|l| l.starts_with("fake "))
            .is_some_and(|l| l.contains("exited"))
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "/mcp never showed the dead server as exited:\n{last}"
        );
    }
    let shown = pty.transcript();
    let line = shown
        .lines()
        .rfind(|l| l.starts_with("fake "))
        .unwrap_or_else(|| panic!("no line for fake:\n{shown}"));
    assert!(
        line.contains("exited")
            && !line.contains("ready")
            && line.contains("stopped (it exited, signal: 9"),
        "{shown}"
    );
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// Two servers whose names sanitise alike (`a.b`, `a_b`): a tool keeps the name it was first
/// given when the other server becomes ready later, and each server has its own log.
#[test]
fn tool_names_stay_put_when_a_colliding_server_joins_later() {
    let env = Env::new();
    configure(
        &env,
        "[mcp_servers.\"a.b\"]\ncommand = \"FAKE\"\nargs = [\"--start-delay-ms\", \"1500\"]\n\
         startup_timeout = 0.2\n\
         [mcp_servers.a_b]\ncommand = \"FAKE\"\n",
    );
    let server = MockServer::start(
        Script::new()
            // Long enough for `a.b` to be ready afterwards.
            .reply(
                Turn::new()
                    .tool_call(call("e1", "mcp__a_b__echo", json!({"text": "first"})))
                    .response_delay(Duration::from_secs(4)),
            )
            .reply(Turn::new().tool_call(call("e2", "mcp__a_b__echo", json!({"text": "second"}))))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(final_json(&out)["result"], "done");
    let requests = server.requests();
    let second = offered(&requests[1]);
    assert!(
        second.iter().any(|t| t == "mcp__a_b__echo_2"),
        "a.b joined under another name: {second:?}"
    );
    assert_eq!(result_of(&requests[2], "e2"), "echo: second");
    let logs: Vec<std::path::PathBuf> = std::fs::read_dir(env.rein_home.join("mcp-logs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(logs.len(), 2, "one log each: {logs:?}");
    let own = std::fs::read_to_string(env.rein_home.join("mcp-logs/a_b.log")).unwrap();
    assert!(
        own.contains("fake: echo first") && own.contains("fake: echo second"),
        "both calls went to a_b: {own}"
    );
    let other = logs.iter().find(|p| !p.ends_with("a_b.log")).unwrap();
    let other = std::fs::read_to_string(other).unwrap();
    assert!(!other.contains("fake: echo"), "{other}");
}

/// The same in a headless run: SIGTERM while the model answers stops the server that is
/// still starting.
#[test]
fn sigterm_in_a_headless_run_stops_a_server_still_starting() {
    let env = Env::new();
    let pids = env.home.join("pids");
    configure(
        &env,
        &format!(
            "[mcp_servers.stuck]\ncommand = \"FAKE\"\nstartup_timeout = 0.2\n\
             args = [\"--start-delay-ms\", \"600000\", \"--pid-file\", \"{}\"]\n",
            pids.display()
        ),
    );
    let server = MockServer::start(
        Script::new().reply(Turn::text("late").response_delay(Duration::from_secs(60))),
    );
    let child = env
        .rein_openai(&server)
        .args(["-p", "go"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let pids = read_pids(&pids);
    // Past the startup timeout: the request is under way and the server still starting.
    server
        .wait_for_requests(1, Duration::from_secs(30))
        .expect("a request reached the model");
    signal(child.id(), "TERM");
    let out = crate::support::wait_output(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    wait_gone(&pids);
}
