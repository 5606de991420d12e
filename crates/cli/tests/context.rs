//! Context management through the real binary: a long task in a small window compacts and
//! says so in every output format, and killing rein at any point of it, compaction
//! included, loses nothing.

use std::process::Stdio;
use std::time::Duration;

use rein_testkit::{CapturedRequest, MockOptions, MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{
    Env, final_json, openai_history_is_valid, run, signal, stderr, stdout, strict_mock, wait_output,
};

/// Files the task reads, one a round.
const FILES: usize = 10;

fn write_files(env: &Env) {
    for i in 1..=FILES {
        let text: String = (0..60)
            .map(|line| format!("file {i} line {line}: some text the model reads\n"))
            .collect();
        env.write(&format!("part_{i}.txt"), &text);
    }
}

fn is_summary_request(body: &Value) -> bool {
    let tools = body["tools"].as_array().is_none_or(Vec::is_empty);
    let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
    tools
        && last.is_some_and(|m| {
            m["content"]
                .as_str()
                .is_some_and(|t| t.contains("asks you for a summary"))
        })
}

/// A model with an 8192-token window that reads the files one a round, then answers;
/// summary requests get a summary (or, with `stall_summaries`, never an answer).
fn reader(stall_summaries: bool) -> MockServer {
    let reply = Reply::dynamic(move |request: &CapturedRequest| {
        let body = &request.body;
        if is_summary_request(body) {
            if stall_summaries {
                return Reply::silent();
            }
            return Turn::text("## Goal\nRead every part.\n## Requests\n> read all the parts")
                .into();
        }
        let last = body["messages"].as_array().and_then(|m| m.last()).cloned();
        let done = last
            .as_ref()
            .and_then(|m| m["tool_call_id"].as_str())
            .and_then(|id| id.strip_prefix("read-"))
            .and_then(|n| n.parse::<usize>().ok())
            .unwrap_or(0);
        if done == FILES {
            return Turn::text("Read them all.").into();
        }
        let next = done + 1;
        Turn::new()
            .tool_call(MockToolCall::new(
                format!("read-{next}"),
                "read_file",
                json!({"file_path": format!("part_{next}.txt")}).to_string(),
            ))
            .into()
    });
    MockServer::try_start_with(
        Script::new().reply(reply).repeating(),
        MockOptions::new().context_window(8192),
    )
    .unwrap()
}

#[test]
fn a_long_task_in_a_small_window_compacts_and_every_format_says_so() {
    let env = Env::new();
    write_files(&env);
    let server = reader(false);
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read all the parts",
        "--output-format",
        "stream-json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let compactions: Vec<&Value> = lines.iter().filter(|l| l["type"] == "compaction").collect();
    assert!(!compactions.is_empty(), "{lines:#?}");
    for event in &compactions {
        for field in [
            "layer",
            "tokens_before",
            "tokens_after",
            "usable_window",
            "kept_messages",
            "pinned",
        ] {
            assert!(event.get(field).is_some(), "{field} in {event}");
        }
        assert!(event["tokens_after"].as_u64() < event["tokens_before"].as_u64());
    }
    // Pruning, and cutting long results at the emergency, ask no model: only summaries are
    // announced.
    let summaries = compactions
        .iter()
        .filter(|c| c.get("summary_by").is_some())
        .count();
    let started = lines
        .iter()
        .filter(|l| l["type"] == "compaction_started")
        .count();
    assert_eq!(started, summaries, "each summary is announced");
    let report = final_json(&out);
    assert_eq!(report["result"], "Read them all.");
    assert_eq!(report["compactions"], compactions.len());
    for request in server.requests() {
        openai_history_is_valid(&request.body).unwrap();
    }

    // The text output says it on stderr, and JSON counts it.
    let env = Env::new();
    write_files(&env);
    let server = reader(false);
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "read all the parts", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(final_json(&out)["compactions"].as_u64().unwrap() > 0);
    let env = Env::new();
    write_files(&env);
    let server = reader(false);
    let out = run(env.rein_openai(&server).args(["-p", "read all the parts"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("⟳ context: "), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "Read them all.");
}

#[test]
fn killed_at_any_point_even_mid_compaction_a_session_resumes_with_nothing_lost() {
    // Killed after each of the first requests, and while the summary is being written.
    let mut kill_points: Vec<Option<usize>> = (1..=4).map(Some).collect();
    kill_points.push(None);
    for kill_after in kill_points {
        let env = Env::new();
        write_files(&env);
        let server = reader(kill_after.is_none());
        let mut child = env
            .rein_openai(&server)
            .args(["-p", "read all the parts"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + Duration::from_secs(60);
        loop {
            let requests = server.requests();
            let reached = match kill_after {
                Some(n) => requests.len() > n,
                None => requests.iter().any(|r| is_summary_request(&r.body)),
            };
            if reached {
                break;
            }
            assert!(
                child.try_wait().unwrap().is_none(),
                "rein ended before the kill point {kill_after:?}"
            );
            assert!(std::time::Instant::now() < deadline, "{kill_after:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
        signal(child.id(), "KILL");
        let _ = wait_output(child, Duration::from_secs(10));

        let session = env.session_files().pop().expect("a session file");
        let file = std::fs::read_to_string(&session).unwrap();
        if kill_after.is_none() {
            let summaries = file
                .lines()
                .map(|l| serde_json::from_str::<Value>(l).unwrap())
                .filter(|l| l["kind"] == "compaction" && l["layer"] != "prune")
                .count();
            assert_eq!(summaries, 0, "a summary never written was recorded");
        }
        let strict = strict_mock("resumed fine");
        let out = run(env.rein_openai(&strict).args(["-c", "-p", "go on"]));
        assert!(
            out.status.success(),
            "kill point {kill_after:?}: {}",
            stderr(&out)
        );
        assert_eq!(stdout(&out).trim(), "resumed fine");
        let sent = &strict.requests()[0].body;
        openai_history_is_valid(sent).unwrap();
        // Everything read before the kill is in the resumed request, summarised or whole.
        let text = sent.to_string();
        assert!(text.contains("read all the parts"), "{kill_after:?}");
        // (A line cut by the kill was never a record.)
        let results: Vec<String> = file
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .filter(|l| l["role"] == "tool")
            .map(|l| {
                l["parts"][0]["call_id"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned()
            })
            .collect();
        assert!(
            kill_after.is_none_or(|n| results.len() + 1 >= n),
            "{results:?}"
        );
        for id in &results {
            assert!(
                text.contains(id.as_str()) || text.contains("[rein: context summary]"),
                "kill point {kill_after:?}: {id} lost"
            );
        }
    }
}
