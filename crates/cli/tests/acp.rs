//! `rein acp` driven by a real ACP client: `tests/acp-npm/driver.mjs`, written on the
//! protocol's npm SDK (`@agentclientprotocol/sdk`, pinned in `tests/acp-npm/package-lock.json`,
//! installed by the first test that needs it with `npm ci`). Without node the tests are
//! skipped with a message, unless `REIN_REQUIRE_NODE=1` (CI), where that fails them.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, npm_packages, process_alive, wait_output};

const MAIN_PY: &str = include_str!("../demo/project/main.py");
const UTILS_PY: &str = include_str!("../demo/project/utils.py");

/// The driver script, with the SDK installed beside it; `None` (said) without node.
fn acp_client() -> Option<PathBuf> {
    // The driver is copied at every run: it changes with the tests, not with the lock.
    let dir = npm_packages(
        "acp-npm",
        &["node_modules/@agentclientprotocol/sdk/package.json"],
        &["driver.mjs"],
        "ACP client tests",
    )?;
    Some(dir.join("driver.mjs"))
}

/// Runs the driver with `plan` (rein's path, environment and directory filled in) and
/// returns its report.
fn drive(driver: &Path, env: &Env, server: &MockServer, mut plan: Value) -> Value {
    plan["rein"] = json!(env!("CARGO_BIN_EXE_rein"));
    plan["cwd"] = json!(env.work);
    plan["env"] = json!({
        "PATH": std::env::var("PATH").unwrap_or_default(),
        "HOME": env.home,
        "REIN_HOME": env.rein_home,
        "TMPDIR": env.home.parent().unwrap(),
        "REIN_API_KEY": "sk-test",
        "REIN_BASE_URL": server.openai_base_url(),
        "REIN_MODEL": "gpt-4o",
    });
    let child = Command::new("node")
        .arg(driver)
        .arg(plan.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_output(child, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "the ACP client failed: {}\nstdout: {stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn call(id: &str, name: &str, args: Value) -> MockToolCall {
    MockToolCall::new(id, name, args.to_string()).split_every(9)
}

fn project(env: &Env) {
    env.write("main.py", MAIN_PY);
    env.write("utils.py", UTILS_PY);
}

const FIXED: &str = "from utils import greet, shout";

fn fix_script() -> Script {
    Script::new()
        .reply(
            Turn::text("Reading main.py.")
                .tool_call(call("c1", "read_file", json!({"file_path": "main.py"}))),
        )
        .reply(Turn::new().tool_call(call(
            "c2",
            "edit_file",
            json!({"file_path": "main.py", "old_string": "from helpers import greet, shout", "new_string": FIXED}),
        )))
        .reply(Turn::text("Fixed the import.").chunks(["Fixed ", "the import."]))
}

/// The updates of one kind, in order.
fn updates<'a>(report: &'a Value, kind: &str) -> Vec<&'a Value> {
    report["updates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| &u["update"])
        .filter(|u| u["sessionUpdate"] == kind)
        .collect()
}

/// The agent's message, put together from its chunks.
fn message(report: &Value, kind: &str) -> String {
    updates(report, kind)
        .iter()
        .filter_map(|u| u["content"]["text"].as_str())
        .collect()
}

#[test]
fn fix_import_with_a_permission_answered() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    project(&env);
    let server = MockServer::start(fix_script());
    let report = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "prompt", "prompt": "fix the broken import in main.py", "answers": ["allow"]}),
    );
    assert_eq!(report["initialize"]["protocolVersion"], 1);
    assert_eq!(
        report["initialize"]["agentCapabilities"]["loadSession"],
        true
    );
    assert_eq!(report["stops"][0]["stopReason"], "end_turn", "{report}");
    assert!(message(&report, "agent_message_chunk").contains("Fixed the import."));
    // The edit asked, with the call it is about.
    let asked = &report["permissions"][0];
    assert_eq!(asked["toolCall"]["toolCallId"], "c2", "{asked}");
    let options: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(options, ["allow_once", "allow_always", "reject_once"]);
    // The tool calls: announced with kind and location, completed with the edit's diff.
    let calls = updates(&report, "tool_call");
    let edit = calls.iter().find(|c| c["toolCallId"] == "c2").unwrap();
    assert_eq!(edit["kind"], "edit");
    let main_py = env.work.join("main.py");
    assert_eq!(edit["locations"][0]["path"], json!(main_py));
    let done = updates(&report, "tool_call_update");
    let edited = done
        .iter()
        .find(|u| u["toolCallId"] == "c2" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("no completed edit: {report}"));
    let diff = &edited["content"][0];
    assert_eq!(diff["type"], "diff", "{edited}");
    assert_eq!(diff["path"], json!(main_py));
    assert!(
        diff["oldText"]
            .as_str()
            .unwrap()
            .contains("from helpers import")
    );
    assert!(diff["newText"].as_str().unwrap().contains(FIXED));
    assert!(
        done.iter()
            .any(|u| u["toolCallId"] == "c1" && u["status"] == "completed")
    );
    assert!(env.read("main.py").contains(FIXED));
    // Usage reached the client after the turn; the slash commands when the session opened.
    assert!(!updates(&report, "usage_update").is_empty(), "{report}");
    let commands = updates(&report, "available_commands_update");
    assert!(
        commands[0]["availableCommands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["name"] == "compact")
    );
    assert_eq!(
        report["exit"]["code"], 0,
        "rein acp ends cleanly when the client closes"
    );
}

#[test]
fn a_rejected_permission_is_told_to_the_model() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    project(&env);
    let server = MockServer::start(fix_script());
    let report = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "prompt", "prompt": "fix the import", "answers": ["reject"]}),
    );
    assert_eq!(report["stops"][0]["stopReason"], "end_turn", "{report}");
    assert!(
        !env.read("main.py").contains(FIXED),
        "a rejected edit wrote"
    );
    let failed = updates(&report, "tool_call_update");
    assert!(
        failed
            .iter()
            .any(|u| u["toolCallId"] == "c2" && u["status"] == "failed"),
        "{report}"
    );
    let requests = server.requests();
    let told = requests[2].body_text();
    assert!(told.contains("rejected it in the editor"), "{told}");
}

/// In auto, a command the sandbox refused is put to the editor's person as its command
/// line, with only "allow once" and "reject": leaving the sandbox is never for the session,
/// and an option not offered ("allow always", sent anyway) is not a yes.
#[test]
fn leaving_the_sandbox_offers_allow_once_or_reject_only() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    if !crate::support::sandbox_enforced(
        &env,
        "leaving_the_sandbox_offers_allow_once_or_reject_only",
    ) {
        return;
    }
    let target = env.home.join("note.txt");
    let command = format!(
        "python3 -c \"open('{}', 'w').write('written')\"",
        target.display()
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("c1", "bash", json!({ "command": command }))))
            .reply(Turn::text("It stays inside.")),
    );
    let report = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "prompt", "prompt": "write the note", "mode": "auto",
               "answers": ["allow_session"]}),
    );
    assert_eq!(report["stops"][0]["stopReason"], "end_turn", "{report}");
    let asked = &report["permissions"][0];
    let kinds: Vec<&str> = asked["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["allow_once", "reject_once"], "{asked}");
    let shown = asked["toolCall"]["content"].to_string();
    assert!(
        shown.contains("outside the sandbox") && shown.contains("python3 -c"),
        "{asked}"
    );
    assert!(
        !target.exists(),
        "an option not offered ran it outside the sandbox"
    );
}

#[test]
fn cancel_stops_the_turn_and_its_command() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    let pid_file = env.work.join("pid");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call(
                "c1",
                "bash",
                json!({"command": "echo $$ > pid; exec sleep 120"}),
            )))
            .reply(Turn::text("Still here.")),
    );
    let report = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "cancel", "prompt": "wait a while", "pidFile": pid_file}),
    );
    assert_eq!(report["stops"][0]["stopReason"], "cancelled", "{report}");
    assert_eq!(report["stops"][1]["stopReason"], "end_turn", "{report}");
    assert!(message(&report, "agent_message_chunk").contains("Still here."));
    let pid: u32 = report["commandPid"].as_str().unwrap().parse().unwrap();
    assert!(
        !process_alive(pid),
        "the cancelled command {pid} still runs"
    );
    // The mode change was announced.
    assert!(
        updates(&report, "current_mode_update")
            .iter()
            .any(|u| u["currentModeId"] == "yolo")
    );
    // The history stayed valid: the second request answers the cancelled call.
    let second = &server.requests()[1].body;
    crate::support::openai_history_is_valid(second).unwrap();
}

#[test]
fn file_tools_go_through_the_editor_buffers() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    project(&env);
    // The editor holds an unsaved change the disk does not have.
    let main_py = env.work.join("main.py");
    let buffer = format!("# unsaved note\n{MAIN_PY}");
    let server = MockServer::start(fix_script());
    let report = drive(
        &driver,
        &env,
        &server,
        json!({
            "scenario": "prompt",
            "prompt": "fix the import",
            "answers": ["allow"],
            "buffers": { main_py.to_str().unwrap(): buffer },
        }),
    );
    assert_eq!(report["stops"][0]["stopReason"], "end_turn", "{report}");
    let key = main_py.to_str().unwrap();
    let edited = report["buffers"][key].as_str().unwrap();
    assert!(edited.starts_with("# unsaved note\n"), "{edited}");
    assert!(edited.contains(FIXED), "{edited}");
    assert_eq!(
        env.read("main.py"),
        MAIN_PY,
        "the disk was written behind the editor"
    );
    assert!(report["writes"].as_array().unwrap().contains(&json!(key)));
    // The model saw the buffer, not the disk.
    let seen = server.requests()[1].body_text();
    assert!(seen.contains("unsaved note"), "{seen}");
}

#[test]
fn session_load_replays_an_earlier_session() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("The answer is 42.")));
    let first = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "prompt", "prompt": "what is the answer?"}),
    );
    let id = first["sessions"][0]["sessionId"]
        .as_str()
        .unwrap()
        .to_owned();
    let server = MockServer::start(Script::new().reply(Turn::text("Still 42.")));
    let report = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "prompt", "loadSession": id, "prompt": "and now?"}),
    );
    assert_eq!(
        message(&report, "user_message_chunk"),
        "what is the answer?"
    );
    let said = message(&report, "agent_message_chunk");
    assert!(said.starts_with("The answer is 42."), "{said}");
    assert!(said.ends_with("Still 42."), "{said}");
    // The model got the earlier turn as context.
    let body = server.requests()[0].body_text();
    assert!(body.contains("The answer is 42."), "{body}");
}

#[test]
fn two_sessions_in_one_process() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    // Each answer repeats the prompt it answers: which session gets which is then plain.
    let echo = Reply::dynamic(|request| {
        let messages = request.body["messages"].as_array().unwrap();
        let last = messages.last().unwrap()["content"]
            .as_str()
            .unwrap_or_default();
        let words = if last.contains("first session") {
            "first session"
        } else {
            "second session"
        };
        Turn::text(format!("you said: {words}")).into()
    });
    let server = MockServer::start(Script::new().reply(echo).repeating());
    let report = drive(&driver, &env, &server, json!({"scenario": "two"}));
    let sessions = report["sessions"].as_array().unwrap();
    assert_ne!(sessions[0]["sessionId"], sessions[1]["sessionId"]);
    for (n, words) in [(0, "first session"), (1, "second session")] {
        let id = &sessions[n]["sessionId"];
        let said: String = report["updates"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|u| {
                &u["sessionId"] == id && u["update"]["sessionUpdate"] == "agent_message_chunk"
            })
            .filter_map(|u| u["update"]["content"]["text"].as_str())
            .collect();
        assert_eq!(said, format!("you said: {words}"), "{report}");
    }
    assert_eq!(report["stops"].as_array().unwrap().len(), 2);
}

#[test]
fn the_clients_mcp_servers_serve_the_session() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("c1", "mcp__fake__echo", json!({"text": "hi"}))))
            .reply(Turn::text("The server said hi.")),
    );
    let fake = crate::mcp::fake();
    let report = drive(
        &driver,
        &env,
        &server,
        json!({
            "scenario": "prompt",
            "prompt": "ask the server",
            "mode": "yolo",
            "mcpServers": [{"name": "fake", "command": fake, "args": [], "env": []}],
        }),
    );
    assert_eq!(report["stops"][0]["stopReason"], "end_turn", "{report}");
    let requests = server.requests();
    assert!(crate::mcp::offered(&requests[0]).contains(&"mcp__fake__echo".to_owned()));
    assert!(crate::mcp::result_of(&requests[1], "c1").contains("hi"));
}

#[test]
fn attached_files_reach_the_model() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("Seen.")));
    let linked = env.write("linked.py", "print('linked')\n");
    let report = drive(
        &driver,
        &env,
        &server,
        json!({
            "scenario": "prompt",
            "blocks": [
                {"type": "text", "text": "compare these"},
                {"type": "resource_link", "name": "linked.py", "uri": format!("file://{}", linked.display())},
                {"type": "resource", "resource": {"uri": "file:///elsewhere/attached.py", "text": "ATTACHED = 1\n"}},
            ],
        }),
    );
    assert_eq!(report["stops"][0]["stopReason"], "end_turn", "{report}");
    let sent = server.requests()[0].body_text();
    assert!(sent.contains("compare these"), "{sent}");
    assert!(sent.contains(&linked.display().to_string()), "{sent}");
    assert!(sent.contains("ATTACHED = 1"), "{sent}");
}

#[test]
fn the_todo_list_is_the_plan() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    let todos = json!({"todos": [
        {"content": "read the code", "status": "completed"},
        {"content": "fix the bug", "status": "in_progress", "active_form": "fixing the bug"},
        {"content": "run the tests", "status": "pending"},
    ]});
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("t1", "todo_write", todos)))
            .reply(Turn::text("Planned.")),
    );
    let report = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "prompt", "prompt": "plan it"}),
    );
    let plans = updates(&report, "plan");
    let entries: Vec<(&str, &str)> = plans[0]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("read the code", "completed"),
            ("fix the bug", "in_progress"),
            ("run the tests", "pending")
        ]
    );
}

/// A mode change rebuilds the agent; one that keeps the sandbox's policy (default to
/// accept-edits) keeps the sandbox: the commands see the same private `TMPDIR` before and
/// after. Entering auto (the network off) makes a new one, and the MCP server configured to
/// run in the sandbox starts again in it (its log marks each start).
#[test]
fn a_mode_change_keeps_the_sandbox_while_its_policy_is_the_same() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    if !crate::support::sandbox_enforced(
        &env,
        "a_mode_change_keeps_the_sandbox_while_its_policy_is_the_same",
    ) {
        return;
    }
    crate::mcp::configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\nsandbox = true\n",
    );
    let echo = |id: &str| {
        Turn::new().tool_call(call(
            id,
            "bash",
            json!({"command": "echo \"TMPDIR=$TMPDIR\""}),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(echo("default"))
            .reply(Turn::text("One."))
            .reply(echo("accept-edits"))
            .reply(Turn::text("Two."))
            .reply(echo("auto"))
            .reply(Turn::text("Three.")),
    );
    let report = drive(
        &driver,
        &env,
        &server,
        json!({
            "scenario": "modes",
            "prompt": "where is TMPDIR?",
            "modes": ["accept-edits", "auto"],
            "answers": ["allow", "allow", "allow"],
        }),
    );
    let stops: Vec<&Value> = report["stops"].as_array().unwrap().iter().collect();
    assert!(
        stops.len() == 3 && stops.iter().all(|s| s["stopReason"] == "end_turn"),
        "{report}"
    );
    let requests = server.requests();
    let tmpdir = |id: &str| {
        let result = requests
            .iter()
            .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
            .find(|m| m["tool_call_id"] == id)
            .and_then(|m| m["content"].as_str().map(str::to_owned))
            .unwrap_or_else(|| panic!("no result of {id}"));
        result
            .split("TMPDIR=")
            .nth(1)
            .and_then(|rest| rest.lines().next())
            .unwrap_or_else(|| panic!("no TMPDIR in {result}"))
            .to_owned()
    };
    let first = tmpdir("default");
    assert!(first.contains("rein-"), "not a private TMPDIR: {first}");
    assert_eq!(
        tmpdir("accept-edits"),
        first,
        "a new sandbox after accept-edits"
    );
    assert_ne!(
        tmpdir("auto"),
        first,
        "auto has the network off: another sandbox"
    );
    let log = std::fs::read_to_string(env.rein_home.join("mcp-logs/fake.log")).unwrap();
    assert_eq!(
        log.matches("--- rein starts").count(),
        2,
        "started, kept for accept-edits, started again for auto: {log}"
    );
}

#[test]
fn an_unknown_mode_is_refused_and_the_session_goes_on() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("Fine.")));
    let report = drive(
        &driver,
        &env,
        &server,
        json!({"scenario": "bad-mode", "prompt": "hello"}),
    );
    assert_eq!(report["errors"][0]["code"], -32602, "{report}");
    assert_eq!(report["stops"][0]["stopReason"], "end_turn");
}

/// A malformed line and an unknown method, written raw: each gets its error response and
/// rein keeps serving.
#[test]
fn malformed_lines_and_unknown_methods_are_answered() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let mut child = env
        .rein_openai(&server)
        .arg("acp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut ask = |line: &str| -> Value {
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
        // The answer, past the notifications (a new session's commands).
        loop {
            let answer: Value = serde_json::from_str(&lines.next().unwrap().unwrap()).unwrap();
            if answer.get("method").is_none() {
                return answer;
            }
        }
    };
    let init =
        ask(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}"#);
    assert_eq!(init["result"]["protocolVersion"], 1);
    let garbage = ask("{this is not json");
    assert_eq!(garbage["error"]["code"], -32700, "{garbage}");
    let unknown = ask(r#"{"jsonrpc":"2.0","id":2,"method":"session/teleport","params":{}}"#);
    assert_eq!(unknown["id"], 2);
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let created = ask(&format!(
        r#"{{"jsonrpc":"2.0","id":3,"method":"session/new","params":{{"cwd":{},"mcpServers":[]}}}}"#,
        json!(env.work)
    ));
    assert!(created["result"]["sessionId"].is_string(), "{created}");
    let relative = ask(
        r#"{"jsonrpc":"2.0","id":4,"method":"session/new","params":{"cwd":"project","mcpServers":[]}}"#,
    );
    assert_eq!(relative["error"]["code"], -32602, "{relative}");
    drop(stdin);
    let out = wait_output(child, Duration::from_secs(30));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn custom_commands_and_mcp_prompts_are_advertised_and_run() {
    let Some(driver) = acp_client() else { return };
    let env = Env::new();
    env.write(
        ".claude/commands/review.md",
        "---\ndescription: Review a file\nargument-hint: [file]\n---\nReview $ARGUMENTS now.\n",
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("Reviewed."))
            .reply(Turn::text("Greeted.")),
    );
    let fake = crate::mcp::fake();
    let report = drive(
        &driver,
        &env,
        &server,
        json!({
            "scenario": "commands",
            "waitFor": "mcp__fake__greet",
            "prompts": [
                "/review lib.rs",
                "/mcp__fake__greet Ada pirate",
                "/mcp__fake__greet",
            ],
            "mcpServers": [{"name": "fake", "command": fake, "args": [], "env": []}],
        }),
    );
    let advertised = updates(&report, "available_commands_update");
    let last = advertised.last().unwrap()["availableCommands"]
        .as_array()
        .unwrap();
    let named = |name: &str| last.iter().find(|c| c["name"] == name).cloned();
    assert!(named("compact").is_some(), "{report}");
    let review = named("review").unwrap();
    assert_eq!(review["description"], "Review a file");
    assert_eq!(review["input"]["hint"], "[file]");
    let greet = named("mcp__fake__greet").unwrap();
    assert_eq!(greet["description"], "Greets someone by name");
    assert_eq!(greet["input"]["hint"], "<name> [style]");
    let requests = server.requests();
    assert_eq!(requests.len(), 2, "the last prompt sent nothing: {report}");
    let user = |i: usize| {
        requests[i].body["messages"]
            .as_array()
            .unwrap()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .unwrap()["content"]
            .to_string()
    };
    assert!(user(0).contains("Review lib.rs now."), "{}", user(0));
    assert!(
        user(1).contains("Say hello to Ada in a pirate style."),
        "{}",
        user(1)
    );
    let said = message(&report, "agent_message_chunk");
    assert!(
        said.contains("needs the argument `name`"),
        "the missing argument is named: {said}"
    );
    assert!(report["stops"].as_array().unwrap().len() == 3, "{report}");
}
