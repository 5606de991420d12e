//! The todo list through the real binary: bad lists refused with the rule, the event in
//! stream-json, reminders (counted in requests to the mock), the session record and resume,
//! and compaction keeping it.

use rein_testkit::{CapturedRequest, MockOptions, MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, final_json, run, stderr, stdout};

fn todo_call(id: &str, todos: Value) -> MockToolCall {
    MockToolCall::new(id, "todo_write", json!({ "todos": todos }).to_string())
}

fn glob_call(id: &str) -> MockToolCall {
    MockToolCall::new(id, "glob", json!({ "pattern": "*.txt" }).to_string())
}

/// The content of the tool result answering `id` in a request.
fn result_for(request: &CapturedRequest, id: &str) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {id}"))
        .to_owned()
}

fn plan() -> Value {
    json!([
        {"content": "write the parser", "status": "in_progress", "active_form": "Writing the parser"},
        {"content": "test it", "status": "pending"}
    ])
}

#[test]
fn bad_lists_are_refused_with_the_rule_they_break() {
    let env = Env::new();
    let many: Vec<Value> = (0..21)
        .map(|i| json!({"content": format!("step {i}"), "status": "pending"}))
        .collect();
    let cases = [
        (json!(many), "at most 20 are allowed"),
        (
            json!([{"content": "a", "status": "in_progress"}, {"content": "b", "status": "in_progress"}]),
            "at most one item may be in_progress; items 1, 2 are",
        ),
        (
            json!([{"content": "a", "status": "pending"}, {"content": "  ", "status": "pending"}]),
            "item 2 has empty content",
        ),
        (
            json!([{"content": "a", "status": "doing"}]),
            "unknown variant `doing`",
        ),
        (json!([{"status": "pending"}]), "missing field `content`"),
    ];
    let mut script = Script::new();
    for (i, (todos, _)) in cases.iter().enumerate() {
        script = script.reply(Turn::new().tool_call(todo_call(&format!("t{i}"), todos.clone())));
    }
    let server = MockServer::start(script.reply(Turn::text("gave up")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "plan", "--output-format", "stream-json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let last = server.last_request().unwrap();
    for (i, (_, rule)) in cases.iter().enumerate() {
        let result = result_for(&last, &format!("t{i}"));
        assert!(result.contains(rule), "case {i}: {result}");
    }
    assert!(
        !stdout(&out).contains("\"type\":\"todos\""),
        "no list was accepted, so none was announced"
    );
}

#[test]
fn the_list_is_an_event_a_record_and_reminders_come_when_it_goes_stale() {
    let env = Env::new();
    env.write("a.txt", "a");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(todo_call("t1", plan())))
            .reply(Turn::new().tool_call(glob_call("g1")))
            .reply(Turn::new().tool_call(glob_call("g2")))
            .reply(Turn::new().tool_call(glob_call("g3")))
            .reply(Turn::new().tool_call(glob_call("g4")))
            .reply(Turn::text("done, I think"))
            .reply(Turn::text("really done")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "work", "--output-format", "stream-json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let todos: Vec<&Value> = events.iter().filter(|e| e["type"] == "todos").collect();
    assert_eq!(todos.len(), 1);
    assert_eq!(todos[0]["todos"], plan());

    let requests = server.requests();
    // Every reply served: the reminder at the end of the turn cost one request more.
    assert_eq!(requests.len(), 7);
    let told = result_for(&requests[1], "t1");
    assert!(told.contains("1. [>] write the parser"), "{told}");
    assert!(told.contains("2. [ ] test it"), "{told}");
    // Three rounds without an update (g1, g2, g3): the third's result carries the reminder.
    for (request, id) in [(2, "g1"), (3, "g2")] {
        assert!(!result_for(&requests[request], id).contains("<reminder>"));
    }
    let reminded = result_for(&requests[4], "g3");
    assert!(reminded.contains("<reminder>"), "{reminded}");
    assert!(reminded.contains("1. [>] write the parser"), "{reminded}");
    assert!(!result_for(&requests[5], "g4").contains("<reminder>"));
    // The turn tried to end with items open: one reminder, once.
    let last_user = |request: &CapturedRequest| {
        request.body["messages"]
            .as_array()
            .unwrap()
            .last()
            .cloned()
            .unwrap()
    };
    let nudge = last_user(&requests[6]);
    assert_eq!(nudge["role"], "user");
    assert!(
        nudge["content"]
            .as_str()
            .unwrap()
            .contains("still has open items")
    );
    assert_eq!(final_json(&out)["result"], "really done");

    // The session file keeps the list.
    let session = std::fs::read_to_string(&env.session_files()[0]).unwrap();
    let records: Vec<Value> = session
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .filter(|r: &Value| r["kind"] == "todos")
        .collect();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["todos"], plan());
}

#[test]
fn a_resumed_session_has_its_list_back() {
    let env = Env::new();
    let first = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(todo_call("t1", plan())))
            .reply(Turn::text("stopping here"))
            .reply(Turn::text("still stopping")),
    );
    let out = run(env.rein_openai(&first).args(["-p", "plan it"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // The resumed turn ends with the restored list open: the model is reminded of it.
    let second = MockServer::start(
        Script::new()
            .reply(Turn::text("hello again"))
            .reply(Turn::text("ok")),
    );
    let out = run(env.rein_openai(&second).args(["-c", "-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = second.requests();
    assert_eq!(requests.len(), 2);
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .cloned()
        .unwrap();
    let text = last["content"].as_str().unwrap();
    assert!(text.contains("1. [>] write the parser"), "{text}");
}

#[test]
fn compaction_keeps_the_list_word_for_word() {
    let env = Env::new();
    for i in 1..=10 {
        let text: String = (0..60)
            .map(|line| format!("file {i} line {line}: some text the model reads\n"))
            .collect();
        env.write(&format!("part_{i}.txt"), &text);
    }
    let reply = Reply::dynamic(|request: &CapturedRequest| {
        let body = &request.body;
        let messages = body["messages"].as_array().unwrap();
        if body["tools"].as_array().is_none_or(Vec::is_empty) {
            return Turn::text("## Goal\nRead every part.").into();
        }
        let last = messages.last().unwrap();
        let done = last["tool_call_id"]
            .as_str()
            .and_then(|id| id.strip_prefix("read-"))
            .and_then(|n| n.parse::<usize>().ok());
        match (last["role"].as_str(), done) {
            (Some("user"), _) if messages.len() == 2 => Turn::new()
                .tool_call(todo_call(
                    "plan",
                    json!([{"content": "read every part", "status": "in_progress"}]),
                ))
                .into(),
            (_, Some(10)) => Turn::new()
                .tool_call(todo_call(
                    "close",
                    json!([{"content": "read every part", "status": "completed"}]),
                ))
                .into(),
            (_, None) if last["tool_call_id"] == "close" => Turn::text("Read them all.").into(),
            (_, done) => {
                let next = done.unwrap_or(0) + 1;
                Turn::new()
                    .tool_call(MockToolCall::new(
                        format!("read-{next}"),
                        "read_file",
                        json!({"file_path": format!("part_{next}.txt")}).to_string(),
                    ))
                    .into()
            }
        }
    });
    let server = MockServer::try_start_with(
        Script::new().reply(reply).repeating(),
        MockOptions::new().context_window(8192),
    )
    .unwrap();
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "read all the parts", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(final_json(&out)["compactions"].as_u64().unwrap() > 0);
    let kept = server.requests().iter().any(|r| {
        r.body["messages"].as_array().unwrap().iter().any(|m| {
            m["content"].as_str().is_some_and(|t| {
                t.contains("kept across compactions: todo list]")
                    && t.contains("[>] read every part")
            })
        })
    });
    assert!(kept, "no request after a compaction carried the todo list");
}
