//! A batch of read-only calls runs concurrently, and its results go back in call order.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, run, stderr, stdout};

/// A tree big enough that each grep over it takes a while.
fn corpus(env: &Env) {
    let line = "the quick brown fox jumps over the lazy dog while rein searches the corpus\n";
    let body = line.repeat(4_000);
    for i in 0..40 {
        env.write(
            &format!("corpus/dir{}/file{i}.txt", i % 5),
            &format!("{body}needle number {i}\n"),
        );
    }
}

#[test]
fn read_only_calls_overlap_and_answer_in_call_order() {
    let env = Env::new();
    corpus(&env);
    // The gap below is to hold the calls alone: the first checkpoint, which the calls wait
    // for, would otherwise copy the 12 MB corpus into it.
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "checkpoint_max_file_bytes = 1024\n",
    )
    .unwrap();
    let grep = |id: &str, pattern: &str| {
        MockToolCall::new(
            id,
            "grep",
            json!({"pattern": pattern, "path": "corpus", "output_mode": "count"}).to_string(),
        )
    };
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(grep("g1", "needle number 1\\b"))
                    .tool_call(grep("g2", "lazy (dog|cat)"))
                    .tool_call(grep("g3", "needle number 3[0-9]")),
            )
            .reply(Turn::text("searched")),
    );
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "search", "--output-format", "stream-json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let events: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();

    // Overlap: all three started before the first finished, and together they ran longer
    // than the whole gap between the model's response and the next request.
    let kinds: Vec<&str> = events
        .iter()
        .filter_map(|e| match e["type"].as_str() {
            Some(t @ ("tool_call_started" | "tool_result")) => Some(t),
            _ => None,
        })
        .collect();
    assert_eq!(
        kinds,
        [
            "tool_call_started",
            "tool_call_started",
            "tool_call_started",
            "tool_result",
            "tool_result",
            "tool_result"
        ]
    );
    let busy_ms: u64 = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["duration_ms"].as_u64().unwrap())
        .sum();
    let requests = server.requests();
    let gap = requests[1].received_at - requests[0].responded_at.unwrap();
    let gap_ms = u64::try_from(gap.as_millis()).unwrap();
    assert!(
        busy_ms > gap_ms + gap_ms / 4,
        "the calls overlapped: {busy_ms} ms of tool time in a {gap_ms} ms gap"
    );

    // Results in call order, in the request and in the events.
    let ids: Vec<&str> = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["tool_call_id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["g1", "g2", "g3"]);
    let result_ids: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "tool_result")
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(result_ids, ["g1", "g2", "g3"]);
}

#[test]
fn text_output_says_which_call_each_batched_result_answers() {
    let env = Env::new();
    env.write("a.txt", "one\ntwo\n");
    env.write("b.txt", "one\ntwo\nthree\n");
    let read = |id: &str, path: &str| {
        MockToolCall::new(id, "read_file", json!({"file_path": path}).to_string())
    };
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new()
                    .tool_call(read("r1", "a.txt"))
                    .tool_call(read("r2", "b.txt")),
            )
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r3",
                "read_file",
                json!({"file_path": "b.txt"}).to_string(),
            )))
            .reply(Turn::text("read both")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "read them"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "read both");
    let progress = stderr(&out);
    let lines: Vec<&str> = progress.lines().map(str::trim).collect();
    // Both calls start before either result, so each result names its file; a lone call's
    // result sits right under its own line and needs no label.
    let expected = [
        "● read_file a.txt",
        "● read_file b.txt",
        "⎿ a.txt: 2 lines",
        "⎿ b.txt: 3 lines",
        "● read_file b.txt",
        "⎿ 3 lines",
    ];
    assert_eq!(lines, expected, "{progress}");
}
