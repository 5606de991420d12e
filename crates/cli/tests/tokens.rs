//! Tokens are the bill: prompt caching on the wire, honest usage and cost, spending limits,
//! and what a gateway's model list says (window, prices, names).

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use rein_testkit::{
    ListedModel, MockOptions, MockServer, MockToolCall, MockUsage, Script, Turn, UsageChunk,
};

use crate::support::{
    Env, final_json, openai_history_is_valid, run, signal, stderr, stdout, strict_mock, wait_output,
};

fn read_call(id: &str) -> Turn {
    Turn::new().tool_call(MockToolCall::new(
        id,
        "read_file",
        r#"{"file_path":"a.txt"}"#,
    ))
}

#[test]
fn anthropic_requests_mark_the_prefix_and_the_newest_messages_never_more_than_four() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    env.write(".rein/config.toml", "cache_ttl = \"1h\"\n");
    env.trust();
    let server = MockServer::start(
        Script::new()
            .reply(read_call("toolu_1"))
            .reply(read_call("toolu_2"))
            .reply(Turn::text("done")),
    );
    let out = run(env
        .rein()
        .env("ANTHROPIC_API_KEY", "sk-ant-test")
        .env("REIN_BASE_URL", server.base_url())
        .args(["-m", "claude-sonnet-4-5", "-p", "read a.txt twice"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    let one_hour = serde_json::json!({"type": "ephemeral", "ttl": "1h"});
    for (round, request) in requests.iter().enumerate() {
        let body = &request.body;
        let marks = body.to_string().matches("\"cache_control\"").count();
        assert!(marks <= 4, "round {round}: {marks} breakpoints");
        let tools = body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"], one_hour);
        assert_eq!(body["system"][0]["cache_control"], one_hour);
        let messages = body["messages"].as_array().unwrap();
        let newest = messages.last().unwrap()["content"].as_array().unwrap();
        assert_eq!(
            newest.last().unwrap()["cache_control"],
            one_hour,
            "round {round}"
        );
        if round > 0 {
            // What was newest a round ago, whose prefix that round wrote to the cache.
            let before = messages[messages.len() - 3]["content"].as_array().unwrap();
            assert_eq!(
                before.last().unwrap()["cache_control"],
                one_hour,
                "round {round}"
            );
        }
    }
}

/// The bytes of an OpenAI request body up to the end of its messages (the prefix a prompt
/// cache can match): everything before the list's closing bracket.
fn messages_prefix(raw: &[u8]) -> Vec<u8> {
    let text = std::str::from_utf8(raw).unwrap();
    let at = text.find(r#"],"tools""#).unwrap();
    raw[..at].to_vec()
}

#[test]
fn openai_prefixes_stay_byte_identical_across_rounds_and_a_resume_with_one_cache_key() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    let server = MockServer::start(
        Script::new()
            .reply(read_call("call_1"))
            .reply(Turn::text("first answer"))
            .reply(Turn::text("second answer")),
    );
    let out = run(env.rein_openai(&server).args(["-p", "read a.txt"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(env.rein_openai(&server).args(["-c", "-p", "and again"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    assert_eq!(requests.len(), 3);
    for pair in requests.windows(2) {
        let before = messages_prefix(&pair[0].raw_body);
        assert!(
            pair[1].raw_body.starts_with(&before),
            "a later request does not begin with the earlier one's bytes"
        );
    }
    let key = requests[0].body["prompt_cache_key"].as_str().unwrap();
    assert!(key.starts_with("rein-"), "{key}");
    for r in &requests {
        assert_eq!(r.body["prompt_cache_key"], key);
    }
}

#[test]
fn max_cost_stops_before_the_request_that_would_cross_it_and_the_session_continues() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    // gpt-4o: $2.50 per million in: 100k tokens cost $0.25.
    let server = MockServer::start(
        Script::new().reply(read_call("call_1").usage(MockUsage::new(100_000, 100))),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read a.txt",
        "--max-cost",
        "0.3",
        "--output-format",
        "json",
    ]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["stop_reason"], "max_cost", "{report}");
    assert_eq!(report["cost_usd"].as_f64(), Some(0.251), "{report}");
    let error = report["error"].as_str().unwrap();
    assert!(error.contains("$0.2510 spent of $0.3000"), "{error}");
    assert!(error.contains("rein -c --max-cost 0.6"), "{error}");
    // The second request was never sent.
    assert_eq!(server.requests().len(), 1);
    // Every call has its result: a strict server takes the continued session.
    let strict = strict_mock("went on");
    let out = run(env
        .rein_openai(&strict)
        .args(["-c", "-p", "go on", "--max-cost", "2"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out).trim(), "went on");
    openai_history_is_valid(&strict.requests()[0].body).unwrap();
}

#[test]
fn max_tokens_counts_input_and_output_and_says_how_to_go_on() {
    let env = Env::new();
    env.write("a.txt", "hello\n");
    let server = MockServer::start(
        Script::new().reply(read_call("call_1").usage(MockUsage::new(20_000, 50))),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "read a.txt", "--max-tokens", "30000"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let progress = stderr(&out);
    assert!(
        progress.contains("20050 tokens used of 30000"),
        "{progress}"
    );
    assert!(
        progress.contains("rein -c --max-tokens 60000"),
        "{progress}"
    );
    assert_eq!(server.requests().len(), 1);
    let out = run(env.rein_openai(&server).args([
        "-p",
        "hi",
        "--max-tokens",
        "10",
        "--output-format",
        "json",
    ]));
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(final_json(&out)["stop_reason"], "max_tokens");
}

#[test]
fn a_cost_limit_needs_a_price_and_bad_limits_name_their_flag() {
    let env = Env::new();
    let server =
        MockServer::start(Script::new().reply(Turn::text("priced").usage(MockUsage::new(10, 5))));
    let out =
        run(env
            .rein_openai(&server)
            .args(["-m", "my-local-model", "-p", "hi", "--max-cost", "1"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("[pricing.\"my-local-model\"]"), "{said}");
    assert!(said.contains("--max-tokens"), "{said}");
    assert_eq!(server.requests().len(), 0);
    // Priced in the configuration, it runs.
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "[pricing.\"my-local-model\"]\ninput = 1.0\noutput = 2.0\n",
    )
    .unwrap();
    let out = run(env.rein_openai(&server).args([
        "-m",
        "my-local-model",
        "-p",
        "hi",
        "--max-cost",
        "1",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(final_json(&out)["cost_usd"].as_f64().is_some());
    for (flag, value) in [
        ("--max-cost", "-1"),
        ("--max-cost", "abc"),
        ("--max-cost", "0"),
        ("--max-tokens", "-5"),
        ("--max-tokens", "lots"),
    ] {
        let out = run(env.rein_openai(&server).args(["-p", "hi", flag, value]));
        assert_eq!(out.status.code(), Some(2), "{flag} {value}");
        assert!(
            stderr(&out).contains(flag),
            "{flag} {value}: {}",
            stderr(&out)
        );
    }
}

#[test]
fn configured_prices_override_the_table_and_price_cache_reads_apart() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "[pricing.\"gpt-4o\"]\ninput = 10.0\noutput = 20.0\ncached_input = 1.0\n",
    )
    .unwrap();
    let server = MockServer::start(
        Script::new().reply(Turn::text("ok").usage(MockUsage::new(1_000_000, 0).cached(600_000))),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "hi", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // 0.4M uncached × $10 + 0.6M cached × $1.
    assert_eq!(final_json(&out)["cost_usd"].as_f64(), Some(4.6));
}

#[test]
fn usage_the_server_never_sent_is_null_not_zero() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new().reply(Turn::text("no counts").usage_chunk(UsageChunk::Never)),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "hi", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert!(report["usage"].is_null(), "{report}");
    assert!(report["cost_usd"].is_null(), "{report}");
}

#[test]
fn a_reported_cost_is_rounded_to_micro_dollars_everywhere() {
    let env = Env::new();
    let server =
        MockServer::start(Script::new().reply(
            Turn::text("hi").usage(MockUsage::new(1200, 80).cost(0.013_166_250_000_000_001)),
        ));
    let out = run(env.rein_openai(&server).args([
        "-m",
        "team-claude",
        "-p",
        "hi",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.contains(r#""cost_usd":0.013166"#), "{text}");
    assert!(!text.contains("0.0131662"), "{text}");
}

#[test]
fn an_interrupted_turn_shows_an_estimate_marked_as_one() {
    let env = Env::new();
    let long = "word ".repeat(200);
    let server = MockServer::start(
        Script::new().reply(
            Turn::text(long.clone())
                .chunks([long.as_str(), "more"])
                .usage_chunk(UsageChunk::Never)
                .stall_after(2),
        ),
    );
    let mut child = env
        .rein_openai(&server)
        .args(["-p", "talk", "--output-format", "stream-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Waits for the text to arrive, then interrupts.
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    for line in lines.by_ref() {
        if line.unwrap().contains("\"text_delta\"") {
            break;
        }
    }
    signal(child.id(), "INT");
    let rest: Vec<String> = lines.map(Result::unwrap).collect();
    let out = wait_output(child, Duration::from_secs(10));
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let report: serde_json::Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert!(report["usage"].is_null(), "{report}");
    // 1000 characters streamed: about 250 tokens, said as an estimate.
    assert_eq!(report["estimated_output_tokens"], 250, "{report}");
}

#[test]
fn a_litellm_model_list_gives_the_window_and_prices_of_an_alias() {
    let env = Env::new();
    let options = MockOptions::new().litellm_models(&[ListedModel {
        id: "team-claude",
        window: 128_000,
        input_per_mtok: 3.0,
        output_per_mtok: 15.0,
        cached_per_mtok: 0.3,
    }]);
    let server = MockServer::try_start_with(
        Script::new().reply(Turn::text("hi").usage(MockUsage::new(1_000_000, 0))),
        options,
    )
    .unwrap();
    let out = run(env.rein_openai(&server).args([
        "-m",
        "team-claude",
        "-p",
        "hi",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(report["cost_usd"].as_f64(), Some(3.0), "{report}");
    let warnings = report["warnings"].to_string();
    assert!(!warnings.contains("context window"), "{warnings}");
    // The model check and the window probe asked together: one answer of the list serves both.
    let lists = server.metadata_requests();
    let asked = lists.iter().filter(|r| r.path == "/v1/models").count();
    assert_eq!(
        asked,
        1,
        "{:?}",
        lists.iter().map(|r| &r.path).collect::<Vec<_>>()
    );
}

#[test]
fn an_openrouter_model_list_prices_its_models() {
    let env = Env::new();
    let options = MockOptions::new().openrouter_models(&[ListedModel {
        id: "vendor/new-model",
        window: 65_536,
        input_per_mtok: 0.5,
        output_per_mtok: 1.5,
        cached_per_mtok: 0.05,
    }]);
    let server = MockServer::try_start_with(
        Script::new().reply(Turn::text("hi").usage(MockUsage::new(2_000_000, 1_000_000))),
        options,
    )
    .unwrap();
    let out = run(env.rein_openai(&server).args([
        "-m",
        "vendor/new-model",
        "-p",
        "hi",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(final_json(&out)["cost_usd"].as_f64(), Some(2.5));
}

#[test]
fn a_model_the_list_does_not_name_warns_once_with_the_closest_names() {
    let env = Env::new();
    let listed = |id| ListedModel {
        id,
        window: 128_000,
        input_per_mtok: 2.5,
        output_per_mtok: 10.0,
        cached_per_mtok: 1.25,
    };
    let options =
        MockOptions::new().litellm_models(&[listed("gpt-4o"), listed("gpt-4o-mini"), listed("o3")]);
    let server = MockServer::try_start_with(
        Script::new()
            .reply(read_call("call_1"))
            .reply(Turn::text("done")),
        options,
    )
    .unwrap();
    env.write("a.txt", "x\n");
    let out = run(env.rein_openai(&server).args([
        "-m",
        "gpt-4p",
        "-p",
        "read a.txt",
        "--output-format",
        "json",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let warnings: Vec<String> = final_json(&out)["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .filter(|w| w.contains("model list"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("does not name gpt-4p (did you mean gpt-4o"),
        "{warnings:?}"
    );
}
