//! Sub-agents through the real binary against the mock: the parent gets only the
//! conclusion, a task's file is verified from the parent, recursion is refused, the round
//! limit holds, several run at once (at most four), and Ctrl+C stops them all.

use std::process::Stdio;
use std::time::{Duration, Instant};

use rein_testkit::{CapturedRequest, MockServer, MockToolCall, MockUsage, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{
    Env, final_json, process_alive, run, signal, stderr, stdout, wait_for_file, wait_output,
};

/// The session's own file (sub-agents' transcripts sit in a directory beside it).
fn session_file(env: &Env) -> std::path::PathBuf {
    env.session_files()
        .into_iter()
        .find(|p| p.is_file())
        .unwrap()
}

fn messages(request: &CapturedRequest) -> &Vec<Value> {
    request.body["messages"].as_array().unwrap()
}

/// Whether a request comes from a sub-agent (its system prompt says so).
fn is_sub(request: &CapturedRequest) -> bool {
    messages(request)[0]["content"]
        .as_str()
        .is_some_and(|s| s.contains("# You are a sub-agent"))
}

/// The sub-agent's task: its first user message.
fn task_of(request: &CapturedRequest) -> String {
    messages(request)
        .iter()
        .find(|m| m["role"] == "user")
        .and_then(|m| m["content"].as_str())
        .unwrap_or_default()
        .to_owned()
}

fn tool_names(request: &CapturedRequest) -> Vec<String> {
    request.body["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .map(|t| t["function"]["name"].as_str().unwrap().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn result_for(request: &CapturedRequest, id: &str) -> Option<String> {
    messages(request)
        .iter()
        .find(|m| m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .map(str::to_owned)
}

fn agent_call(id: &str, task: &str, agent_type: Option<&str>) -> MockToolCall {
    let mut args = json!({ "task": task });
    if let Some(t) = agent_type {
        args["agent_type"] = json!(t);
    }
    MockToolCall::new(id, "agent", args.to_string())
}

/// Rounds the sub-agent has had: its assistant messages so far.
fn sub_round(request: &CapturedRequest) -> usize {
    messages(request)
        .iter()
        .filter(|m| m["role"] == "assistant")
        .count()
}

#[test]
fn the_parent_gets_only_the_conclusion_of_a_subtask() {
    let env = Env::new();
    env.write(
        "pyproject.toml",
        "[project]\nname = \"demo\"\n\n[tool.pytest.ini_options]\naddopts = \"-q --marker-unique-7\"\n",
    );
    env.write("tests/test_app.py", "def test_ok():\n    assert True\n");
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                if is_sub(request) {
                    return match sub_round(request) {
                        0 => Turn::new()
                            .tool_call(MockToolCall::new(
                                "s1",
                                "grep",
                                json!({"pattern": "pytest|addopts", "output_mode": "content"})
                                    .to_string(),
                            ))
                            .usage(MockUsage::new(100, 10))
                            .into(),
                        _ => Turn::text("The project uses pytest (pyproject.toml:4).")
                            .usage(MockUsage::new(100, 10))
                            .into(),
                    };
                }
                match result_for(request, "task1") {
                    None => Turn::new()
                        .tool_call(agent_call(
                            "task1",
                            "Find what testing framework this project uses.",
                            Some("explore"),
                        ))
                        .usage(MockUsage::new(50, 5))
                        .into(),
                    Some(_) => Turn::text("It uses pytest.")
                        .usage(MockUsage::new(50, 5))
                        .into(),
                }
            }))
            .repeating(),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "use a subtask to find what testing framework this project uses",
        "--output-format",
        "stream-json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let parent: Vec<&CapturedRequest> = requests.iter().filter(|r| !is_sub(r)).collect();
    let sub: Vec<&CapturedRequest> = requests.iter().filter(|r| is_sub(r)).collect();
    assert_eq!((parent.len(), sub.len()), (2, 2));
    // The sub-agent started clean, with the task, and read-only tools without `agent`.
    assert_eq!(messages(sub[0]).len(), 2);
    assert_eq!(
        task_of(sub[0]),
        "Find what testing framework this project uses."
    );
    let tools = tool_names(sub[0]);
    assert!(tools.contains(&"grep".to_owned()), "{tools:?}");
    for absent in ["agent", "bash", "write_file", "edit_file"] {
        assert!(!tools.contains(&absent.to_owned()), "{absent} in {tools:?}");
    }
    // Its search stayed with it: the parent saw the conclusion only.
    assert!(
        result_for(sub[1], "s1")
            .unwrap()
            .contains("marker-unique-7")
    );
    let told = result_for(parent[1], "task1").unwrap();
    assert_eq!(told, "The project uses pytest (pyproject.toml:4).");
    assert!(!parent[1].body.to_string().contains("marker-unique-7"));
    // The parent's tool lists the agent types.
    let agent_tool = parent[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "agent")
        .unwrap()
        .clone();
    assert!(
        agent_tool["function"]["description"]
            .as_str()
            .unwrap()
            .contains("- explore:")
    );

    // Its events are nested under the call; its usage counted and shown apart.
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let nested: Vec<&Value> = events
        .iter()
        .filter(|e| e["parent_call_id"] == "task1")
        .collect();
    assert!(
        nested
            .iter()
            .any(|e| e["type"] == "tool_call_started" && e["name"] == "grep")
    );
    assert!(nested.iter().all(|e| e["agent"] == "explore"));
    let report = final_json(&out);
    assert_eq!(report["subagent_usage"]["prompt_tokens"], 200, "{report}");
    assert_eq!(report["usage"]["prompt_tokens"], 300, "{report}");
    // Its transcript sits in the session's directory; the session records its usage.
    let session = &session_file(&env);
    let dir = session.with_extension("");
    let transcripts: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().collect();
    assert_eq!(transcripts.len(), 1);
    let transcript = std::fs::read_to_string(transcripts[0].path()).unwrap();
    assert!(transcript.contains("marker-unique-7"));
    let record = std::fs::read_to_string(session).unwrap();
    assert!(record.contains("\"kind\":\"subagent_usage\""));
}

#[test]
fn a_task_creates_a_file_the_parent_then_verifies() {
    crate::support::require_python3();
    let env = Env::new();
    let module = "import re\n\ndef slugify(text):\n    return re.sub(r'[^a-z0-9]+', '-', text.lower()).strip('-')\n";
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(move |request| {
                if is_sub(request) {
                    return match sub_round(request) {
                        0 => Turn::new()
                            .tool_call(MockToolCall::new(
                                "w1",
                                "write_file",
                                json!({"file_path": "string_tools.py", "content": module}).to_string(),
                            ))
                            .into(),
                        _ => Turn::text("Created string_tools.py with slugify.").into(),
                    };
                }
                if result_for(request, "verify").is_some() {
                    return Turn::text("slugify works.").into();
                }
                if result_for(request, "task").is_some() {
                    return Turn::new()
                        .tool_call(MockToolCall::new(
                            "verify",
                            "bash",
                            json!({"command": "python3 -c \"from string_tools import slugify; print(slugify('Hello, World!'))\""}).to_string(),
                        ))
                        .into();
                }
                Turn::new()
                    .tool_call(agent_call(
                        "task",
                        "Create string_tools.py with a slugify function.",
                        None,
                    ))
                    .into()
            }))
            .repeating(),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "use a task to create string_tools.py with a slugify function, then verify it from the parent",
        "--permission-mode",
        "yolo",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(env.read("string_tools.py"), module);
    let last = server.last_request().unwrap();
    assert_eq!(
        result_for(&last, "task").unwrap(),
        "Created string_tools.py with slugify."
    );
    let verified = result_for(&last, "verify").unwrap();
    assert!(verified.contains("hello-world"), "{verified}");
    // The sub-agent's change counts as the run's.
    let report = final_json(&out);
    assert!(
        report["files_changed"]
            .to_string()
            .contains("string_tools.py"),
        "{report}"
    );
}

#[test]
fn a_sub_agent_keeps_the_parent_permissions() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                if is_sub(request) {
                    return match sub_round(request) {
                        0 => Turn::new()
                            .tool_call(MockToolCall::new(
                                "w1",
                                "write_file",
                                json!({"file_path": "made.txt", "content": "x"}).to_string(),
                            ))
                            .into(),
                        _ => Turn::text("could not write").into(),
                    };
                }
                match result_for(request, "task") {
                    None => Turn::new()
                        .tool_call(agent_call("task", "write made.txt", None))
                        .into(),
                    Some(_) => Turn::text("done").into(),
                }
            }))
            .repeating(),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.work.join("made.txt").exists());
    let report = final_json(&out);
    assert_eq!(
        report["permission_denials"][0]["tool"], "write_file",
        "{report}"
    );
}

#[test]
fn recursion_is_refused_and_unknown_types_are_named() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                if is_sub(request) {
                    return match sub_round(request) {
                        0 => Turn::new()
                            .tool_call(agent_call("deeper", "again", None))
                            .into(),
                        _ => Turn::text("I could not delegate.").into(),
                    };
                }
                match (result_for(request, "bad"), result_for(request, "task")) {
                    (None, _) => Turn::new()
                        .tool_call(agent_call("bad", "x", Some("wizard")))
                        .into(),
                    (Some(_), None) => Turn::new()
                        .tool_call(agent_call("task", "delegate", None))
                        .into(),
                    (Some(_), Some(_)) => Turn::text("done").into(),
                }
            }))
            .repeating(),
    );
    let out = run(env.rein_openai(&server).args(["-p", "go"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let sub: Vec<&CapturedRequest> = requests.iter().filter(|r| is_sub(r)).collect();
    assert!(!tool_names(sub[0]).contains(&"agent".to_owned()));
    let refused = result_for(sub[1], "deeper").unwrap();
    assert!(
        refused.contains("Sub-agents cannot start sub-agents"),
        "{refused}"
    );
    let last = server.last_request().unwrap();
    let bad = result_for(&last, "bad").unwrap();
    assert!(
        bad.contains("no agent type `wizard`; the types are: general, explore"),
        "{bad}"
    );
}

#[test]
fn agent_types_come_from_markdown_files_and_their_round_limit_holds() {
    let env = Env::new();
    env.write(
        ".rein/agents/looper.md",
        "---\nname: looper\ndescription: Looks at files forever\ntools: Glob, Read\nmodel: gpt-4o-mini\nmax_rounds: 2\n---\nLook around.\n",
    );
    env.write(
        ".claude/agents/reviewer.md",
        "---\nname: reviewer\ndescription: Reviews code\nmodel: inherit\n---\nReview.\n",
    );
    env.write(".claude/agents/broken.md", "no front matter here\n");
    std::fs::create_dir_all(env.rein_home.join("agents")).unwrap();
    std::fs::write(
        env.rein_home.join("agents/helper.md"),
        "---\nname: helper\ndescription: Helps\n---\nHelp.\n",
    )
    .unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                if is_sub(request) {
                    let n = sub_round(request);
                    return Turn::new()
                        .tool_call(MockToolCall::new(
                            format!("g{n}"),
                            "glob",
                            json!({"pattern": format!("*{n}")}).to_string(),
                        ))
                        .into();
                }
                match result_for(request, "task") {
                    None => Turn::new()
                        .tool_call(agent_call("task", "look", Some("looper")))
                        .into(),
                    Some(_) => Turn::text("done").into(),
                }
            }))
            .repeating(),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let description = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "agent")
        .unwrap()["function"]["description"]
        .as_str()
        .unwrap()
        .to_owned();
    for listed in [
        "- looper: Looks at files forever",
        "- reviewer: Reviews code",
        "- helper: Helps",
    ] {
        assert!(description.contains(listed), "{description}");
    }
    let report = final_json(&out);
    assert!(
        report["warnings"].to_string().contains("broken.md"),
        "{report}"
    );
    let sub: Vec<&CapturedRequest> = requests.iter().filter(|r| is_sub(r)).collect();
    assert_eq!(sub.len(), 2, "two rounds, then the limit");
    assert!(sub.iter().all(|r| r.body["model"] == "gpt-4o-mini"));
    assert_eq!(requests[0].body["model"], "gpt-4o");
    let mut tools = tool_names(sub[0]);
    tools.sort();
    assert_eq!(tools, ["compact", "glob", "read_file", "todo_write"]);
    assert!(
        messages(sub[0])[0]["content"]
            .as_str()
            .unwrap()
            .ends_with("Look around.")
    );
    let told = result_for(&server.last_request().unwrap(), "task").unwrap();
    assert!(told.contains("reached its limit of 2 rounds"), "{told}");
    assert!(told.contains("glob ×2"), "{told}");
}

#[test]
fn several_run_at_once_but_no_more_than_four() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                if is_sub(request) {
                    // Each sub-agent's first answer takes a while: the others start meanwhile.
                    return match sub_round(request) {
                        0 => Reply::from(Turn::new().tool_call(MockToolCall::new(
                            "g",
                            "glob",
                            json!({"pattern": "*"}).to_string(),
                        )))
                        .delay(Duration::from_millis(1500)),
                        _ => Turn::text(format!("done: {}", task_of(request))).into(),
                    };
                }
                if result_for(request, "a1").is_some() {
                    return Turn::text("all done").into();
                }
                let mut turn = Turn::new();
                for i in 1..=5 {
                    turn = turn.tool_call(agent_call(&format!("a{i}"), &format!("part {i}"), None));
                }
                turn.into()
            }))
            .repeating(),
    );
    let out = run(env.rein_openai(&server).args(["-p", "split it"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    // Sub-agent requests in arrival order: `first` for a sub-agent's first request.
    let order: Vec<bool> = requests
        .iter()
        .filter(|r| is_sub(r))
        .map(|r| sub_round(r) == 0)
        .collect();
    assert_eq!(order.len(), 10);
    assert_eq!(&order[..4], [true; 4], "four started together: {order:?}");
    let fifth = order
        .iter()
        .enumerate()
        .filter(|(_, f)| **f)
        .nth(4)
        .unwrap()
        .0;
    assert!(
        order[..fifth].contains(&false),
        "the fifth waited for a slot: {order:?}"
    );
    let last = server.last_request().unwrap();
    for i in 1..=5 {
        assert_eq!(
            result_for(&last, &format!("a{i}")).unwrap(),
            format!("done: part {i}")
        );
    }
}

#[test]
fn ctrl_c_stops_every_sub_agent() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                if is_sub(request) {
                    let task = task_of(request);
                    return Turn::new()
                        .tool_call(MockToolCall::new(
                            "hold",
                            "bash",
                            json!({"command": format!("echo $$ > {task}.pid; exec sleep 300")})
                                .to_string(),
                        ))
                        .into();
                }
                Turn::new()
                    .tool_call(agent_call("a1", "one", None))
                    .tool_call(agent_call("a2", "two", None))
                    .tool_call(agent_call("a3", "three", None))
                    .into()
            }))
            .repeating(),
    );
    let child = env
        .rein_openai(&server)
        .args(["-p", "go", "--permission-mode", "yolo"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pids: Vec<u32> = ["one", "two", "three"]
        .iter()
        .map(|t| {
            wait_for_file(&env.work.join(format!("{t}.pid")), Duration::from_secs(30))
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    signal(child.id(), "INT");
    let out = wait_output(child, Duration::from_secs(30));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let deadline = Instant::now() + Duration::from_secs(20);
    for pid in pids {
        while process_alive(pid) {
            assert!(
                Instant::now() < deadline,
                "a sub-agent's command ({pid}) still runs"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
    // The session stays valid: every call answered.
    let session = std::fs::read_to_string(session_file(&env)).unwrap();
    for id in ["a1", "a2", "a3"] {
        assert!(
            session.contains(&format!("\"call_id\":\"{id}\"")),
            "{id} unanswered"
        );
    }
}
