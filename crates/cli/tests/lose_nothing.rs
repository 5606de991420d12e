//! Data a run must never lose: the session when the disk fills up, a session holding
//! nothing worth resuming.

use std::process::Command;

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, stderr, stdout};

/// Three rounds, a write_file among them, each adding to the session file.
fn three_rounds() -> Script {
    Script::new()
        .reply(Turn::new().tool_call(MockToolCall::new(
            "w1",
            "write_file",
            json!({"file_path": "out.txt", "content": "written\n"}).to_string(),
        )))
        .reply(Turn::new().tool_call(MockToolCall::new(
            "b1",
            "bash",
            json!({"command": "echo ran"}).to_string(),
        )))
        .reply(Turn::text("All done. ".repeat(40)))
}

/// `rein` under a file-size limit: writes past `kib` KiB fail with EFBIG, as on a full disk
/// (SIGXFSZ ignored, so the write fails instead of killing rein).
fn rein_with_file_limit(env: &Env, server: &MockServer, kib: u32) -> Command {
    let plain = env.rein_openai(server);
    let mut cmd = Command::new("bash");
    cmd.env_clear()
        .envs(plain.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))))
        .current_dir(&env.work)
        .arg("-c")
        .arg(format!("trap '' XFSZ; ulimit -f {kib}; exec \"$0\" \"$@\""))
        .arg(plain.get_program());
    cmd
}

#[test]
fn a_session_file_that_cannot_be_written_is_reported_and_never_torn() {
    let env = Env::new();
    let server = MockServer::start(three_rounds());
    let out = run(rein_with_file_limit(&env, &server, 2).args([
        "-p",
        &format!("make out.txt {}", "please ".repeat(100)),
        "--permission-mode",
        "yolo",
        "--output-format",
        "json",
    ]));
    let report = final_json(&out);
    assert_eq!(out.status.code(), Some(1), "{report}\n{}", stderr(&out));
    assert_eq!(report["stop_reason"], "end_turn", "{report}");
    let warnings = report["warnings"].as_array().unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.as_str().unwrap().contains("not being saved")),
        "{report}"
    );
    assert!(
        report["error"]
            .as_str()
            .unwrap()
            .contains("could not be saved"),
        "{report}"
    );
    assert_eq!(env.read("out.txt"), "written\n", "the work itself was done");
    // Only complete records: every line is JSON, the file ends with a newline.
    let file = env.session_files().pop().unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.ends_with('\n'), "{text}");
    for line in text.lines() {
        serde_json::from_str::<serde_json::Value>(line)
            .unwrap_or_else(|e| panic!("torn record ({e}): {line}"));
    }
    assert!(text.len() <= 2048);
}

#[test]
fn stream_json_and_text_output_show_the_unsaved_session_too() {
    let env = Env::new();
    let server = MockServer::start(three_rounds());
    let out = run(rein_with_file_limit(&env, &server, 2).args([
        "-p",
        &"please ".repeat(100),
        "--permission-mode",
        "yolo",
        "--output-format",
        "stream-json",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let warned = stdout(&out).lines().any(|l| {
        let v: serde_json::Value = serde_json::from_str(l).unwrap();
        v["type"] == "warning" && v["message"].as_str().unwrap().contains("not being saved")
    });
    assert!(warned, "{}", stdout(&out));

    let env = Env::new();
    let server = MockServer::start(three_rounds());
    let out = run(rein_with_file_limit(&env, &server, 2).args([
        "-p",
        &"please ".repeat(100),
        "--permission-mode",
        "yolo",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("not being saved"), "{}", stderr(&out));
}

#[test]
fn a_first_request_that_fails_leaves_no_session_behind() {
    let env = Env::new();
    // 401: not retried, so the run ends at once.
    let server = MockServer::start(Script::new().reply(Reply::http(
        401,
        json!({"error": {"message": "bad key", "type": "invalid_request_error"}}).to_string(),
    )));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "hello", "--output-format", "json"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["rounds"], 0, "no response, no round: {report}");
    assert_eq!(report["session_id"], serde_json::Value::Null, "{report}");
    assert!(env.session_files().is_empty(), "{:?}", env.session_files());

    let out = run(env.rein_openai(&server).args(["-c", "-p", "again"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no session to continue"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn ctrl_c_before_any_answer_leaves_no_session_behind() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new().reply(Turn::text("never").chunks(["never"]).stall_after(0)),
    );
    let child = env
        .rein_openai(&server)
        .args(["-p", "hello", "--output-format", "json"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    server
        .wait_for_requests(1, std::time::Duration::from_secs(30))
        .unwrap();
    crate::support::signal(child.id(), "INT");
    let out = crate::support::wait_output(child, std::time::Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["session_id"], serde_json::Value::Null, "{report}");
    assert!(env.session_files().is_empty(), "{:?}", env.session_files());
}
