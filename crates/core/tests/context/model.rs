//! A mock model with a real window: it counts each request with o200k_base, refuses one that
//! does not fit (as vLLM does: the prompt and `max_tokens` together), reports the count as
//! usage, answers summary requests with a summary that follows the template, and otherwise
//! plays a scripted coding session: tasks of ten rounds, nine tool calls and an answer; or
//! reads big command outputs one after the other.

use std::sync::{Arc, Mutex};

use rein_testkit::{MockOptions, MockServer, MockToolCall, MockUsage, Reply, Script, Turn};
use serde_json::{Value, json};
use tiktoken_rs::CoreBPE;

/// Rounds of each task: nine tool calls, then the answer.
pub(crate) const ROUNDS_PER_TASK: usize = 10;

/// What the mock saw of one request.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub(crate) body: Value,
    /// Its size by o200k_base.
    pub(crate) tokens: usize,
    pub(crate) summary: bool,
    pub(crate) refused: bool,
}

/// How the mock behaves.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Behaviour {
    /// The window it really has.
    pub(crate) window: usize,
    /// What it says at `GET /props` (llama.cpp), if anything.
    pub(crate) says_window: Option<u64>,
    /// Refuse summary requests (a summariser that fails).
    pub(crate) fail_summaries: bool,
    /// Whether a refusal names the window (as OpenAI and vLLM do).
    pub(crate) names_limit: bool,
    /// Refuse every this many-th request of the session as too long, whatever its size (a
    /// flaky gateway), naming no limit.
    pub(crate) refuse_every: Option<usize>,
    /// What it does.
    pub(crate) play: Play,
}

/// What the scripted model does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Play {
    /// Tasks of ten rounds (see `next_move`).
    Tasks,
    /// `calls` bash calls, the n-th printing `out_n.txt` (see [`write_outputs`]), then an
    /// answer ([`OUTPUTS_DONE`]).
    Outputs { calls: usize },
}

/// The answer after the outputs were read.
pub(crate) const OUTPUTS_DONE: &str = "All outputs read.";

impl Behaviour {
    pub(crate) fn window(window: usize) -> Self {
        Behaviour {
            window,
            says_window: Some(window as u64),
            fail_summaries: false,
            names_limit: true,
            refuse_every: None,
            play: Play::Tasks,
        }
    }
}

/// The mock and what it saw.
pub(crate) struct SmallModel {
    pub(crate) server: MockServer,
    seen: Arc<Mutex<Vec<Seen>>>,
}

impl SmallModel {
    pub(crate) fn start(behaviour: Behaviour) -> Self {
        let seen: Arc<Mutex<Vec<Seen>>> = Arc::default();
        let bpe = Arc::new(tiktoken_rs::o200k_base().unwrap());
        let log = Arc::clone(&seen);
        let reply = Reply::dynamic(move |request| answer(&bpe, behaviour, &request.body, &log));
        let mut options = MockOptions::new();
        if let Some(tokens) = behaviour.says_window {
            options = options.context_window(tokens);
        }
        let server =
            MockServer::try_start_with(Script::new().reply(reply).repeating(), options).unwrap();
        SmallModel { server, seen }
    }

    pub(crate) fn seen(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The model's requests (not the summaries') that were answered.
    pub(crate) fn work_requests(&self) -> Vec<Seen> {
        self.seen()
            .into_iter()
            .filter(|s| !s.summary && !s.refused)
            .collect()
    }
}

fn answer(bpe: &CoreBPE, behaviour: Behaviour, body: &Value, log: &Mutex<Vec<Seen>>) -> Reply {
    let tokens = count(bpe, body);
    let summary = is_summary_request(body);
    let max_tokens = body["max_tokens"].as_u64().unwrap_or(0) as usize;
    let mut log = log.lock().unwrap();
    let flaky = behaviour
        .refuse_every
        .is_some_and(|n| !summary && (log.len() + 1).is_multiple_of(n));
    let too_long = tokens + max_tokens > behaviour.window;
    let refused = too_long || flaky;
    log.push(Seen {
        body: body.clone(),
        tokens,
        summary,
        refused,
    });
    drop(log);
    if refused {
        let message = if behaviour.names_limit && !flaky {
            format!(
                "This model's maximum context length is {} tokens. However, you requested {} \
                 tokens ({tokens} in the messages, {max_tokens} in the completion).",
                behaviour.window,
                tokens + max_tokens
            )
        } else {
            "The request is too long for this model.".to_owned()
        };
        let error = json!({"error": {"message": message, "type": "invalid_request_error", "code": "context_length_exceeded"}});
        return Reply::http(400, error.to_string());
    }
    let usage = MockUsage::new(tokens as u64, 40);
    if summary {
        if behaviour.fail_summaries {
            let error = json!({"error": {"message": "summaries are broken today", "type": "invalid_request_error"}});
            return Reply::http(400, error.to_string());
        }
        return Turn::text(write_summary(body)).usage(usage).into();
    }
    let turn = match behaviour.play {
        Play::Tasks => next_move(body),
        Play::Outputs { calls } => next_output(body, calls),
    };
    Reply::Turn(turn.usage(usage))
}

/// The next output to read, or the answer: the last message is the result of `out{n}`.
fn next_output(body: &Value, calls: usize) -> Turn {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    let next = last["tool_call_id"]
        .as_str()
        .and_then(|id| id.strip_prefix("out"))
        .and_then(|n| n.parse::<usize>().ok())
        .map_or(1, |n| n + 1);
    if next > calls {
        return Turn::text(OUTPUTS_DONE);
    }
    let arguments = json!({"command": format!("cat out_{next}.txt")}).to_string();
    Turn::text(format!("Reading output {next}.")).tool_call(MockToolCall::new(
        format!("out{next}"),
        "bash",
        arguments,
    ))
}

/// `calls` files of about `bytes` bytes each in `dir`, `out_1.txt` on: a build's log, with
/// paths, timings and hashes, as a command prints it.
pub(crate) fn write_outputs(dir: &std::path::Path, calls: usize, bytes: usize) {
    for n in 1..=calls {
        let mut text = String::new();
        let mut i = 0;
        while text.len() < bytes {
            text.push_str(&format!(
                "[{n:02}:{i:04}] compiled src/module_{}/file_{i}.rs in {} ms, object {:016x}\n",
                i % 17,
                (i * 37) % 1000,
                (i as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ n as u64
            ));
            i += 1;
        }
        std::fs::write(dir.join(format!("out_{n}.txt")), text).unwrap();
    }
}

/// A request's size by o200k_base: the texts, the calls and the tool descriptions, with the
/// few tokens each message costs besides.
pub(crate) fn count(bpe: &CoreBPE, body: &Value) -> usize {
    let mut tokens = 0;
    for message in body["messages"].as_array().into_iter().flatten() {
        tokens += 4;
        match &message["content"] {
            Value::String(text) => tokens += bpe.encode_ordinary(text).len(),
            Value::Array(parts) => {
                for part in parts {
                    if let Some(text) = part["text"].as_str() {
                        tokens += bpe.encode_ordinary(text).len();
                    }
                }
            }
            _ => {}
        }
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            let function = &call["function"];
            tokens += 8 + bpe
                .encode_ordinary(function["name"].as_str().unwrap_or_default())
                .len();
            tokens += bpe
                .encode_ordinary(function["arguments"].as_str().unwrap_or_default())
                .len();
        }
    }
    for tool in body["tools"].as_array().into_iter().flatten() {
        tokens += 10 + bpe.encode_ordinary(&tool.to_string()).len();
    }
    tokens
}

/// A request asking for a summary: no tools, one user message saying so.
pub(crate) fn is_summary_request(body: &Value) -> bool {
    let tools = body["tools"].as_array().is_none_or(Vec::is_empty);
    tools && last_user_text(body).contains("asks you for a summary")
}

pub(crate) fn last_user_text(body: &Value) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .rev()
        .find(|m| m["role"] == "user")
        .map(content_text)
        .unwrap_or_default()
}

/// A message's text, its parts joined.
pub(crate) fn content_text(message: &Value) -> String {
    match &message["content"] {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// Every text of a request (system prompt, messages, arguments), for "is it still there".
pub(crate) fn all_text(body: &Value) -> String {
    let mut out = String::new();
    for message in body["messages"].as_array().into_iter().flatten() {
        out.push_str(&content_text(message));
        out.push('\n');
        for call in message["tool_calls"].as_array().into_iter().flatten() {
            out.push_str(call["function"]["arguments"].as_str().unwrap_or_default());
            out.push('\n');
        }
    }
    out
}

/// A summary as a model following the template writes it: every request it can see quoted.
fn write_summary(body: &Value) -> String {
    let transcript = last_user_text(body);
    let mut requests = Vec::new();
    for marker in ["[person]\n", "[person, earlier]\n"] {
        for piece in transcript.split(marker).skip(1) {
            let request = piece
                .split("\n\n")
                .next()
                .unwrap_or_default()
                .split("\n</conversation>")
                .next()
                .unwrap_or_default()
                .trim();
            if request.starts_with("Task ") && !requests.contains(&request) {
                requests.push(request);
            }
        }
    }
    let quoted: Vec<String> = requests.iter().map(|r| format!("> {r}")).collect();
    format!(
        "## Goal\nFinish the person's tasks.\n## Requests\n{}\n## Constraints and preferences\n\
         Tabs for indentation.\n## Done so far\nRead and edited the files of each task.\n\
         ## Files\nsrc/lib_*.rs changed.\n## Decisions\nNone.\n## Errors\nNone.\n\
         ## Current state\nWorking.\n## Next step\nGo on.",
        quoted.join("\n")
    )
}

/// The task a request is about, and the round it is in: from the last message (a tool
/// result names its call, `tNrM`; a person's request starts `Task N:`).
pub(crate) fn position(body: &Value) -> (usize, usize) {
    let messages = body["messages"].as_array().cloned().unwrap_or_default();
    let last = messages.last().cloned().unwrap_or(Value::Null);
    if last["role"] == "tool" {
        let id = last["tool_call_id"].as_str().unwrap_or_default();
        let (task, round) = id
            .trim_start_matches('t')
            .split_once('r')
            .unwrap_or(("1", "1"));
        return (
            task.parse().unwrap_or(1),
            round.parse::<usize>().unwrap_or(1) + 1,
        );
    }
    let text = content_text(&last);
    let task = text
        .trim_start_matches("Task ")
        .split(':')
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1);
    (task, 1)
}

/// What the scripted model does next: a task's next round, or a greeting back.
fn next_move(body: &Value) -> Turn {
    let last = body["messages"]
        .as_array()
        .and_then(|m| m.last())
        .cloned()
        .unwrap_or(Value::Null);
    let text = content_text(&last);
    if last["role"] == "user" {
        if let Some(focus) = text.strip_prefix("Compact: ") {
            let arguments = json!({ "focus": focus }).to_string();
            return Turn::new().tool_call(MockToolCall::new("compact-1", "compact", arguments));
        }
        if !text.starts_with("Task ") {
            return Turn::text("Hello.");
        }
    }
    if last["tool_call_id"] == "compact-1" {
        return Turn::text("Compacted, as you asked.");
    }
    let (task, round) = position(body);
    let id = format!("t{task}r{round}");
    let (tool, arguments) = match round {
        1 => (
            "read_file",
            json!({"file_path": format!("notes_{task}.md")}),
        ),
        2 => ("bash", json!({"command": "seq 1 500"})),
        3 => ("grep", json!({"pattern": "fn ", "path": "src"})),
        4 => (
            "read_file",
            json!({"file_path": format!("src/lib_{task}.rs")}),
        ),
        5 => (
            "edit_file",
            json!({"file_path": format!("src/lib_{task}.rs"), "old_string": "fn helper_0(", "new_string": format!("fn parse_config_{task}(")}),
        ),
        6 => (
            "bash",
            json!({"command": format!("wc -l src/lib_{task}.rs")}),
        ),
        7 => (
            "read_file",
            json!({"file_path": format!("data_{task}.txt")}),
        ),
        8 => ("glob", json!({"pattern": "**/*.rs"})),
        9 => ("bash", json!({"command": format!("echo done-{task}")})),
        _ => return Turn::text(format!("Task {task} is done.")),
    };
    Turn::text(format!("Round {round} of task {task}.")).tool_call(MockToolCall::new(
        id,
        tool,
        arguments.to_string(),
    ))
}

/// The files the scripted session works on, in `dir`, for `tasks` tasks.
pub(crate) fn write_project(dir: &std::path::Path, tasks: usize) {
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("AGENTS.md"),
        "# Project rules\n\nAlways check the work with `make check-all` before finishing.\n",
    )
    .unwrap();
    for task in 1..=tasks {
        let notes: String = (0..40)
            .map(|i| format!("- note {i} of task {task}: the parser must stay strict.\n"))
            .collect();
        std::fs::write(dir.join(format!("notes_{task}.md")), notes).unwrap();
        let code: String = (0..30)
            .map(|i| format!("fn helper_{i}(input: &str) -> usize {{\n\tinput.len() + {i}\n}}\n"))
            .collect();
        std::fs::write(dir.join(format!("src/lib_{task}.rs")), code).unwrap();
        let data: String = (0..160)
            .map(|i| format!("record {i:04} of task {task}: value={}\n", i * 7))
            .collect();
        std::fs::write(dir.join(format!("data_{task}.txt")), data).unwrap();
    }
}

/// The person's request for task `n`.
pub(crate) fn task_prompt(n: usize) -> String {
    format!(
        "Task {n}: rename helper_0 in src/lib_{n}.rs to parse_config_{n}, keep tabs for \
         indentation, and tell me when it is done (request number {n})."
    )
}

/// Every tool call of a request has its result right after it (as the real APIs demand).
pub(crate) fn calls_answered(body: &Value) -> Result<(), String> {
    let messages = body["messages"].as_array().ok_or("no messages")?;
    for (i, message) in messages.iter().enumerate() {
        for (k, call) in message["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            let answer = messages.get(i + 1 + k).ok_or("a tool call has no result")?;
            if answer["role"] != "tool" || answer["tool_call_id"] != call["id"] {
                return Err(format!("call {} is not answered in order", call["id"]));
            }
        }
    }
    for (i, message) in messages.iter().enumerate() {
        if message["role"] == "tool" {
            let id = &message["tool_call_id"];
            let called = messages[..i].iter().rev().any(|m| {
                m["tool_calls"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| &c["id"] == id)
            });
            if !called {
                return Err(format!("result {id} answers no call"));
            }
        }
    }
    Ok(())
}
