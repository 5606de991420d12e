//! What local servers do that hosted APIs do not: llama-cpp-python's empty reply to a
//! prompt too long, Ollama's silent cut at its loaded window.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use rein_testkit::{CapturedRequest, MockOptions, MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, final_json, openai_history_is_valid, run, stderr};

fn is_summary_request(body: &Value) -> bool {
    body["tools"].as_array().is_none_or(Vec::is_empty)
        && body["messages"]
            .as_array()
            .and_then(|m| m.last())
            .and_then(|m| m["content"].as_str())
            .is_some_and(|t| t.contains("asks you for a summary"))
}

fn results_in(body: &Value) -> usize {
    body["messages"]
        .as_array()
        .map_or(0, |m| m.iter().filter(|m| m["role"] == "tool").count())
}

/// llama-cpp-python's answer to a prompt over its window: streamed, 200 and nothing;
/// unstreamed, the real error.
fn overflow(request: &CapturedRequest) -> Reply {
    if request.wants_stream() {
        Reply::http(200, "").header("content-type", "text/event-stream")
    } else {
        let body = json!({"error": {
            "message": "Requested tokens (9000) exceed context window of 8192",
            "type": "invalid_request_error",
            "param": "messages",
            "code": "context_length_exceeded",
        }});
        Reply::http(400, body.to_string())
    }
}

#[test]
fn an_empty_streamed_reply_is_asked_again_unstreamed_and_compaction_finishes_the_task() {
    let requests = overflow_then_compaction(0);
    let unstreamed: Vec<_> = requests.iter().filter(|r| !r.wants_stream()).collect();
    assert_eq!(unstreamed.len(), 1);
}

/// Seen with a real llama-cpp-python: the unstreamed ask came on a connection the server
/// had just broken. Its retry must ask unstreamed again, not stream into the same silence.
#[test]
fn a_failed_unstreamed_ask_is_retried_unstreamed() {
    let requests = overflow_then_compaction(1);
    let unstreamed: Vec<_> = requests.iter().filter(|r| !r.wants_stream()).collect();
    assert_eq!(unstreamed.len(), 2);
}

/// Reads four files, then overflows: streamed requests get llama-cpp-python's empty reply,
/// the first `failing` unstreamed ones a 500, the next the real error; the compaction that
/// follows lets the task finish. Returns the requests the server saw.
fn overflow_then_compaction(failing: usize) -> Vec<CapturedRequest> {
    const READS: usize = 4;
    let env = Env::new();
    for i in 1..=READS {
        env.write(&format!("part_{i}.txt"), &format!("part {i}\n").repeat(50));
    }
    let compacted = Arc::new(AtomicBool::new(false));
    let overflows = Arc::new(AtomicUsize::new(0));
    let reply = {
        let compacted = compacted.clone();
        let overflows = overflows.clone();
        Reply::dynamic(move |request: &CapturedRequest| {
            let body = &request.body;
            if is_summary_request(body) {
                compacted.store(true, Ordering::SeqCst);
                return Turn::text("## Goal\nRead every part.\n## Progress\nAll parts read.")
                    .into();
            }
            if compacted.load(Ordering::SeqCst) {
                return Turn::text("Read them all.").into();
            }
            let done = results_in(body);
            if done == READS {
                let seen = overflows.fetch_add(1, Ordering::SeqCst);
                // The first overflow is the streamed one.
                if !request.wants_stream() && seen <= failing {
                    return Reply::server_error();
                }
                return overflow(request);
            }
            Turn::new()
                .tool_call(MockToolCall::new(
                    format!("read-{}", done + 1),
                    "read_file",
                    json!({"file_path": format!("part_{}.txt", done + 1)}).to_string(),
                ))
                .into()
        })
    };
    let server = MockServer::start(Script::new().reply(reply).repeating());
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "read all the parts", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["result"], "Read them all.");
    assert!(report["compactions"].as_u64().unwrap() >= 1, "{report}");
    // One streamed request answered with nothing, then unstreamed ones until one learned
    // why: no streamed retry loop.
    assert_eq!(overflows.load(Ordering::SeqCst), 2 + failing);
    let requests = server.requests();
    let streamed_overflows = requests
        .iter()
        .filter(|r| r.wants_stream() && results_in(&r.body) == READS)
        .count();
    assert_eq!(streamed_overflows, 1);
    for unstreamed in requests.iter().filter(|r| !r.wants_stream()) {
        assert_eq!(
            unstreamed.body["messages"],
            requests[READS].body["messages"]
        );
    }
    assert!(
        !stderr(&out).contains("closed the connection"),
        "{}",
        stderr(&out)
    );
    for request in &requests {
        openai_history_is_valid(&request.body).unwrap();
    }
    requests
}

/// An Ollama that has loaded the model with `loaded` tokens of context.
fn ollama(loaded: u64, script: Script) -> MockServer {
    let ps = json!({"models": [{
        "name": "qwen2.5-coder:latest",
        "model": "qwen2.5-coder:latest",
        "context_length": loaded,
    }]});
    let list = json!({"object": "list", "data": [
        {"id": "qwen2.5-coder:latest", "object": "model", "owned_by": "library"},
    ]});
    MockServer::try_start_with(
        script,
        MockOptions::new()
            .route("GET", "/v1/models", Reply::http(200, list.to_string()))
            .route("GET", "/api/ps", Reply::http(200, ps.to_string())),
    )
    .unwrap()
}

fn reads_then_answers(rounds: usize) -> Script {
    let mut script = Script::new();
    for i in 1..=rounds {
        script = script.reply(Turn::new().tool_call(MockToolCall::new(
            format!("c{i}"),
            "glob",
            r#"{"pattern":"*.txt"}"#,
        )));
    }
    script.reply(Turn::text("Done."))
}

#[test]
fn ollama_with_a_small_loaded_context_is_named_once_with_the_fix() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let server = ollama(2048, reads_then_answers(3));
    let out = run(env
        .rein_openai(&server)
        .env("REIN_MODEL", "qwen2.5-coder")
        .args(["-p", "list the text files", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["result"], "Done.");
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("OLLAMA_CONTEXT_LENGTH"))
        .collect();
    assert_eq!(warnings.len(), 1, "{report}");
    assert!(warnings[0].contains("2048"), "{}", warnings[0]);
    // Ollama lists the model as qwen2.5-coder:latest, the same model.
    assert!(
        !report["warnings"].to_string().contains("does not name"),
        "{report}"
    );
    assert!(warnings[0].contains("ollama_num_ctx"), "{}", warnings[0]);
    // No options sent unless configured.
    assert!(
        server
            .requests()
            .iter()
            .all(|r| r.body.get("options").is_none())
    );

    // Configured: sent as Ollama's own option, and the window it loads is then large enough.
    let env = Env::new();
    env.write("a.txt", "a\n");
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "ollama_num_ctx = 32768\n",
    )
    .unwrap();
    let server = ollama(32768, reads_then_answers(1));
    let out = run(env
        .rein_openai(&server)
        .env("REIN_MODEL", "qwen2.5-coder")
        .args(["-p", "list the text files", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert!(
        !report["warnings"]
            .to_string()
            .contains("OLLAMA_CONTEXT_LENGTH"),
        "{report}"
    );
    for request in server.requests() {
        assert_eq!(request.body["options"], json!({"num_ctx": 32768}));
    }
    assert_eq!(report["result"], "Done.");
}

/// SmolLM2 behind llama-cpp-python often stops at once: the run says so instead of ending
/// with an empty result and nothing else.
#[test]
fn an_empty_answer_is_reported_as_a_warning() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("")));
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "say something", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["result"], "");
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("without any text or tool call"),
        "{report}"
    );

    let server = MockServer::start(Script::new().reply(Turn::text("")));
    let out = run(env.rein_openai(&server).args(["-p", "say something"]));
    assert!(
        stderr(&out).contains("without any text or tool call"),
        "{}",
        stderr(&out)
    );
}
