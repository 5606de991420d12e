//! The round limit.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};

use crate::support::{Env, final_json, openai_history_is_valid, run, stderr};

#[test]
fn the_round_limit_stops_with_exit_status_3() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let look = || {
        Turn::new().tool_call(MockToolCall::new(
            "c",
            "read_file",
            r#"{"file_path":"a.txt"}"#,
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(look())
            .reply(look())
            .reply(look())
            .repeating(),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "loop forever",
        "--max-rounds",
        "3",
        "--output-format",
        "json",
    ]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["stop_reason"], "max_rounds");
    assert_eq!(report["rounds"], 3);
    assert_eq!(server.request_count(), 3);

    // The session ends valid: continuing sends a history where every call has its result.
    let next = MockServer::start(Script::new().reply(Turn::text("stopped looping")));
    let out = run(env.rein_openai(&next).args(["-c", "-p", "stop"]));
    assert!(out.status.success(), "{}", stderr(&out));
    openai_history_is_valid(&next.requests()[0].body).unwrap();
}

#[test]
fn the_round_limit_comes_from_config_too() {
    let env = Env::new();
    env.write(".rein/config.toml", "max_rounds = 2\n");
    let look = || Turn::new().tool_call(MockToolCall::new("c", "glob", r#"{"pattern":"*"}"#));
    let server = MockServer::start(Script::new().reply(look()).repeating());
    let out = run(env.rein_openai(&server).args(["-p", "loop"]));
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(server.request_count(), 2);
    assert!(
        stderr(&out).contains("rein -c"),
        "says how to go on: {}",
        stderr(&out)
    );
}

#[test]
fn the_same_successful_call_is_noted_at_3_and_stops_the_turn_at_8() {
    let env = Env::new();
    env.write("a.txt", "a\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "c",
                "read_file",
                r#"{"file_path":"a.txt"}"#,
            )))
            .repeating(),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read a.txt, over and over",
        "--output-format",
        "json",
    ]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["stop_reason"], "repeated_calls", "{report}");
    assert_eq!(report["rounds"], 8);
    assert_eq!(server.request_count(), 8, "no request after the 8th call");
    let last_result = |request: usize| {
        let body = &server.requests()[request].body;
        let messages = body["messages"].as_array().unwrap();
        messages.last().unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert!(
        !last_result(2).contains("Note from rein"),
        "{}",
        last_result(2)
    );
    assert!(
        last_result(3).contains("already have it"),
        "{}",
        last_result(3)
    );

    let next = MockServer::start(Script::new().reply(Turn::text("ok, stopping")));
    let out = run(env.rein_openai(&next).args(["-c", "-p", "stop"]));
    assert!(out.status.success(), "{}", stderr(&out));
    openai_history_is_valid(&next.requests()[0].body).unwrap();
}
