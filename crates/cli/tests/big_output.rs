//! A command that prints megabytes: the model gets the two ends and the name of a file that
//! holds every byte, and can read the middle back with read_file.

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::json;

use crate::support::{Env, run, stderr};

/// The content of the tool result for `call_id` in an OpenAI request body.
fn tool_result(body: &serde_json::Value, call_id: &str) -> String {
    body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {call_id} in {body}"))
        .to_owned()
}

/// The file named in a result's notice, and the line it says to read on from.
fn file_and_offset(result: &str) -> Option<(String, u64)> {
    let path = result.split("file_path=\"").nth(1)?.split('"').next()?;
    let offset = result
        .split("offset=")
        .nth(1)?
        .split(|c: char| !c.is_ascii_digit())
        .next()?
        .parse()
        .ok()?;
    Some((path.to_owned(), offset))
}

#[test]
fn a_huge_command_output_is_saved_whole_and_the_model_can_read_the_middle() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "big",
                "bash",
                json!({"command": "seq 1 700000"}).to_string(),
            )))
            .reply(Reply::dynamic(|request| {
                // The model reads on where the result's head stopped.
                let result = tool_result(&request.body, "big");
                let Some((path, offset)) = file_and_offset(&result) else {
                    return Turn::text("no file was named").into();
                };
                let args = json!({"file_path": path, "offset": offset, "limit": 3});
                Turn::new()
                    .tool_call(MockToolCall::new("more", "read_file", args.to_string()))
                    .into()
            }))
            .reply(Turn::text("read it")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "count",
        "--output-format",
        "json",
        "--permission-mode",
        "yolo",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{}", stderr(&out));

    let result = tool_result(&requests[1].body, "big");
    assert!(result.chars().count() <= 30_000, "{} chars", result.len());
    assert!(result.starts_with("1\n2\n3\n"));
    assert!(result.ends_with("699999\n700000\nexit code: 0"), "{result}");
    assert!(!result.contains("lost"), "{result}");
    let (path, offset) = file_and_offset(&result).expect("the result names a file");
    // In this session's tool-output directory, and every byte of the output is there.
    let sessions = env.rein_home.join("tool-output");
    assert!(path.starts_with(sessions.to_str().unwrap()), "{path}");
    let expected: String = (1..=700_000).map(|i| format!("{i}\n")).collect();
    assert!(
        std::fs::read_to_string(&path).unwrap() == expected,
        "{path} is not the whole output"
    );

    // read_file may read it although it is outside the workspace.
    let more = tool_result(&requests[2].body, "more");
    let want: String = (offset..offset + 3)
        .map(|i| format!("{i}\t{i}\n"))
        .collect();
    assert!(more.starts_with(&want), "{more}");
}
