//! `--input-format stream-json`: a conversation over stdin, each user line a turn ending in
//! its `result`, questions answered over stdin, interrupts, bad lines, end of input.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, process_alive, wait_for_file, wait_output};

/// A running conversation: its stdin, and its stdout lines as they come.
pub(crate) struct Conversation {
    child: Option<Child>,
    stdin: Option<ChildStdin>,
    lines: mpsc::Receiver<Value>,
    /// The lines read so far.
    pub(crate) seen: Vec<Value>,
}

impl Conversation {
    pub(crate) fn start(env: &Env, server: &MockServer, extra: &[&str]) -> Self {
        let mut child = env
            .rein_openai(server)
            .args([
                "--input-format",
                "stream-json",
                "--output-format",
                "stream-json",
            ])
            .args(extra)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let line = line.unwrap();
                let value = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
                if send.send(value).is_err() {
                    return;
                }
            }
        });
        Conversation {
            stdin: child.stdin.take(),
            child: Some(child),
            lines,
            seen: Vec::new(),
        }
    }

    pub(crate) fn send(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{line}").unwrap();
        stdin.flush().unwrap();
    }

    pub(crate) fn say(&mut self, text: &str) {
        self.send(
            &json!({"type": "user", "message": {"role": "user", "content": text}}).to_string(),
        );
    }

    /// The next line of this `type` (the lines before it are kept in `seen`).
    pub(crate) fn next(&mut self, kind: &str) -> Value {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self
                .lines
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no {kind} line ({e}); saw: {:?}", self.seen));
            self.seen.push(line.clone());
            if line["type"] == kind {
                return line;
            }
        }
    }

    /// Closes stdin and waits for rein to end; its exit status and the lines left.
    pub(crate) fn finish(mut self) -> (std::process::Output, Vec<Value>) {
        drop(self.stdin.take());
        let out = wait_output(self.child.take().unwrap(), Duration::from_secs(60));
        // Every line rein wrote: the reader ends at the end of its stdout, which may come a
        // moment after the exit is seen.
        let rest: Vec<Value> = self.lines.iter().collect();
        (out, rest)
    }
}

fn results(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|l| l["type"] == "result").collect()
}

#[test]
fn three_turns_over_one_stdin() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("One."))
            .reply(Turn::text("Two."))
            .reply(Turn::text("Three.")),
    );
    let mut talk = Conversation::start(&env, &server, &[]);
    talk.say("first");
    talk.send(
        &json!({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": "second"}]}})
            .to_string(),
    );
    talk.say("third");
    let (out, rest) = talk.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(rest[0]["type"], "session");
    let results = results(&rest);
    let answers: Vec<&str> = results
        .iter()
        .map(|r| r["result"].as_str().unwrap())
        .collect();
    assert_eq!(answers, ["One.", "Two.", "Three."]);
    let session = &rest[0]["session_id"];
    assert!(results.iter().all(|r| &r["session_id"] == session));
    // One session: the third request carries the first two turns.
    let third = server.requests()[2].body_text();
    assert!(third.contains("first") && third.contains("One.") && third.contains("second"));
}

#[test]
fn permissions_are_answered_over_stdin() {
    let env = Env::new();
    let write = |id: &str, file: &str| {
        Turn::new().tool_call(MockToolCall::new(
            id,
            "write_file",
            json!({"file_path": file, "content": "hi\n"}).to_string(),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(write("w1", "allowed.txt"))
            .reply(Turn::text("Wrote it."))
            .reply(write("w2", "denied.txt"))
            .reply(Turn::text("Did not write it.")),
    );
    let mut talk = Conversation::start(&env, &server, &["--permission-prompt", "stdin"]);
    talk.say("write allowed.txt");
    let asked = talk.next("permission_request");
    assert_eq!(asked["id"], "w1");
    assert_eq!(asked["tool"], "write_file");
    assert_eq!(asked["arguments"]["file_path"], "allowed.txt");
    // The decisions it takes, by their names in a permission_response.
    assert_eq!(
        asked["answers"],
        json!(["allow", "allow_session", "deny"]),
        "{asked}"
    );
    // What `allow_session` would allow: any edit, as the REPL's `a` says.
    assert_eq!(asked["session_rule"], "write_file(**)", "{asked}");
    assert!(
        asked["reason"].as_str().is_some_and(|r| !r.is_empty()),
        "{asked}"
    );
    talk.send(r#"{"type":"permission_response","id":"w1","decision":"allow"}"#);
    assert_eq!(talk.next("result")["result"], "Wrote it.");
    assert_eq!(env.read("allowed.txt"), "hi\n");

    talk.say("write denied.txt");
    let asked = talk.next("permission_request");
    talk.send(
        &json!({"type": "permission_response", "id": asked["id"], "decision": "deny", "reason": "not that file"})
            .to_string(),
    );
    let result = talk.next("result");
    assert_eq!(result["result"], "Did not write it.");
    assert_eq!(
        result["permission_denials"][0]["tool"], "write_file",
        "{result}"
    );
    assert!(!env.work.join("denied.txt").exists());
    let (out, _) = talk.finish();
    assert!(out.status.success());
    let told = server.requests()[3].body_text();
    assert!(told.contains("not that file"), "{told}");
}

/// A command's question offers `allow_line` beside `allow_session`, as the REPL's `l` beside
/// its `a`: that exact line runs again without asking, another line of the same command is
/// asked about. Sent to a question that has no line to allow, it is one yes.
#[test]
fn allow_line_allows_that_command_line_for_the_session() {
    let env = Env::new();
    let call = |id: &str, tool: &str, arguments: serde_json::Value| {
        Turn::new().tool_call(MockToolCall::new(id, tool, arguments.to_string()))
    };
    let touch =
        |id: &str, file: &str| call(id, "bash", json!({"command": format!("touch {file}")}));
    let write = |id: &str, file: &str| {
        call(
            id,
            "write_file",
            json!({"file_path": file, "content": "hi\n"}),
        )
    };
    let server = MockServer::start(
        Script::new()
            .reply(touch("c1", "a.txt"))
            .reply(Turn::text("One."))
            .reply(touch("c2", "a.txt"))
            .reply(Turn::text("Two."))
            .reply(touch("c3", "b.txt"))
            .reply(Turn::text("Three."))
            .reply(write("w1", "x.txt"))
            .reply(Turn::text("Four."))
            .reply(write("w2", "y.txt"))
            .reply(Turn::text("Five.")),
    );
    let mut talk = Conversation::start(&env, &server, &["--permission-prompt", "stdin"]);
    talk.say("touch a.txt");
    let asked = talk.next("permission_request");
    assert_eq!(
        asked["answers"],
        json!(["allow", "allow_line", "allow_session", "deny"]),
        "{asked}"
    );
    assert_eq!(asked["session_rule"], "bash(touch:*)", "{asked}");
    assert_eq!(asked["line_rule"], "bash(touch a.txt)", "{asked}");
    talk.send(r#"{"type":"permission_response","id":"c1","decision":"allow_line"}"#);
    assert_eq!(talk.next("result")["result"], "One.");
    talk.say("again");
    assert_eq!(talk.next("result")["result"], "Two.", "asked again");
    talk.say("another file");
    let asked = talk.next("permission_request");
    assert_eq!(asked["id"], "c3", "{asked}");
    talk.send(r#"{"type":"permission_response","id":"c3","decision":"deny"}"#);
    assert_eq!(talk.next("result")["result"], "Three.");
    assert!(env.work.join("a.txt").exists());
    assert!(!env.work.join("b.txt").exists());

    // No line to allow: the answers do not offer it, and sent anyway it is one yes.
    talk.say("write x.txt");
    let asked = talk.next("permission_request");
    assert_eq!(
        asked["answers"],
        json!(["allow", "allow_session", "deny"]),
        "{asked}"
    );
    assert!(asked.get("line_rule").is_none(), "{asked}");
    talk.send(r#"{"type":"permission_response","id":"w1","decision":"allow_line"}"#);
    assert_eq!(talk.next("result")["result"], "Four.");
    assert_eq!(env.read("x.txt"), "hi\n");
    talk.say("write y.txt");
    let asked = talk.next("permission_request");
    assert_eq!(asked["id"], "w2", "not asked again: {asked}");
    talk.send(r#"{"type":"permission_response","id":"w2","decision":"deny"}"#);
    assert_eq!(talk.next("result")["result"], "Five.");
    assert!(!env.work.join("y.txt").exists());
    let (out, _) = talk.finish();
    assert!(out.status.success());
}

/// A question that takes one yes at a time (a command whose rule would show a secret: its
/// name is made of one) lists only `allow` and `deny`; an `allow_session` sent all the same
/// counts as one yes: the command runs once, and the next like it is asked about again.
#[test]
fn a_once_only_question_lists_its_answers_and_allow_session_is_one_yes() {
    use std::os::unix::fs::PermissionsExt;
    const SECRET: &str = "dt5up3rs3cr3tv4lue";
    let env = Env::new();
    env.write(".env", &format!("DEPLOY_TOKEN={SECRET}\n"));
    let script = format!("{SECRET}.sh");
    env.write(&script, "#!/bin/sh\necho ran >> ran.txt\n");
    std::fs::set_permissions(
        env.work.join(&script),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let run = |id: &str| {
        Turn::new().tool_call(MockToolCall::new(
            id,
            "bash",
            json!({"command": format!("./{script}")}).to_string(),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(run("b1"))
            .reply(Turn::text("Ran it."))
            .reply(run("b2"))
            .reply(Turn::text("Asked again.")),
    );
    let mut talk = Conversation::start(&env, &server, &["--permission-prompt", "stdin"]);
    talk.say("run it");
    let asked = talk.next("permission_request");
    assert_eq!(asked["answers"], json!(["allow", "deny"]), "{asked}");
    assert!(asked.get("session_rule").is_none(), "{asked}");
    talk.send(r#"{"type":"permission_response","id":"b1","decision":"allow_session"}"#);
    assert_eq!(talk.next("result")["result"], "Ran it.");
    assert_eq!(env.read("ran.txt"), "ran\n");
    talk.say("run it again");
    let asked = talk.next("permission_request");
    assert_eq!(asked["id"], "b2", "not asked again: {asked}");
    talk.send(r#"{"type":"permission_response","id":"b2","decision":"deny"}"#);
    assert_eq!(talk.next("result")["result"], "Asked again.");
    assert_eq!(env.read("ran.txt"), "ran\n");
    let (out, _) = talk.finish();
    assert!(out.status.success());
}

#[test]
fn an_interrupt_stops_the_running_turn_and_the_session_goes_on() {
    let env = Env::new();
    let pid_file = env.work.join("pid");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({"command": "echo $$ > pid; exec sleep 120"}).to_string(),
            )))
            .reply(Turn::text("Back.")),
    );
    let mut talk = Conversation::start(&env, &server, &["--permission-mode", "yolo"]);
    talk.say("wait");
    let pid: u32 = wait_for_file(&pid_file, Duration::from_secs(30))
        .trim()
        .parse()
        .unwrap();
    talk.send(r#"{"type":"control","action":"interrupt"}"#);
    let stopped = talk.next("result");
    assert_eq!(stopped["stop_reason"], "cancelled", "{stopped}");
    assert!(
        !process_alive(pid),
        "the interrupted command {pid} still runs"
    );
    talk.say("are you there?");
    assert_eq!(talk.next("result")["result"], "Back.");
    let (out, _) = talk.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    crate::support::openai_history_is_valid(&server.requests()[1].body).unwrap();
}

#[test]
fn a_malformed_line_is_reported_and_the_session_goes_on() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("Fine.")));
    let mut talk = Conversation::start(&env, &server, &[]);
    talk.send("this is not json");
    talk.send(r#"{"type":"user","message":{"role":"user"}}"#);
    talk.say("hello");
    let (out, rest) = talk.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let errors: Vec<&Value> = rest.iter().filter(|l| l["type"] == "error").collect();
    assert_eq!(errors.len(), 2, "{rest:?}");
    assert_eq!(errors[0]["line"], 1);
    assert_eq!(errors[1]["line"], 2);
    assert!(
        errors[0]["message"]
            .as_str()
            .unwrap()
            .contains("not a message")
    );
    assert_eq!(results(&rest)[0]["result"], "Fine.");
}

#[test]
fn end_of_input_mid_turn_finishes_the_turn_then_ends() {
    let env = Env::new();
    // The answer takes a moment: stdin ends while the turn runs.
    let server = MockServer::start(
        Script::new()
            .reply(Reply::from(Turn::text("Done anyway.")).delay(Duration::from_millis(800))),
    );
    let mut talk = Conversation::start(&env, &server, &[]);
    talk.say("take your time");
    let (out, rest) = talk.finish();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let results = results(&rest);
    assert_eq!(results.len(), 1, "{rest:?}");
    assert_eq!(results[0]["result"], "Done anyway.");
    assert_eq!(results[0]["stop_reason"], "end_turn");
}

#[test]
fn stream_json_input_needs_stream_json_output() {
    let env = Env::new();
    let server = MockServer::start(Script::new());
    let out = crate::support::run(
        env.rein_openai(&server)
            .args(["--input-format", "stream-json"]),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--output-format stream-json"));
}
