//! When the endpoint refuses rein, the message says what to fix: where the rejected key came
//! from, which URL was tried.

use rein_testkit::{MockServer, Reply, Script, Turn};

use crate::support::{Env, run, stderr};

#[test]
fn a_rejected_key_names_where_it_came_from_but_not_the_key() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Reply::unauthorized()).repeating());
    let dotenv = env.write(".env", "OPENAI_API_KEY=sk-wrong-from-dotenv\n");
    let base = server.openai_base_url();
    let out = run(env.rein().env("REIN_BASE_URL", &base).args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("authentication failed"), "{message}");
    assert!(
        message.contains(&format!("OPENAI_API_KEY in {}", dotenv.display())),
        "{message}"
    );
    assert!(!message.contains("sk-wrong"), "{message}");

    let out = run(env
        .rein()
        .env("REIN_BASE_URL", &base)
        .env("REIN_API_KEY", "sk-wrong-from-env")
        .args(["-p", "hi"]));
    let message = stderr(&out);
    assert!(
        message.contains("the environment variable REIN_API_KEY"),
        "{message}"
    );
    assert!(!message.contains("sk-wrong"), "{message}");

    let out = run(env.rein().env("REIN_BASE_URL", &base).args([
        "--api-key",
        "sk-wrong-from-flag",
        "-p",
        "hi",
    ]));
    let message = stderr(&out);
    assert!(message.contains("--api-key"), "{message}");
    assert!(!message.contains("sk-wrong"), "{message}");
    assert_eq!(
        server.request_count(),
        3,
        "an authentication failure is not retried"
    );
}

#[test]
fn a_base_url_without_v1_gets_the_url_tried_and_the_fix() {
    let env = Env::new();
    // Like most OpenAI-compatible servers: everything lives under /v1.
    let server = MockServer::start(
        Script::new()
            .reply(Reply::dynamic(|request| {
                if request.path == "/v1/chat/completions" {
                    Turn::text("found it").into()
                } else {
                    Reply::http(404, "404 page not found").header("content-type", "text/plain")
                }
            }))
            .repeating(),
    );
    let out = run(env
        .rein_openai(&server)
        .env("REIN_BASE_URL", server.base_url())
        .args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    let tried = format!("{}/chat/completions", server.base_url());
    let fix = format!("{}/v1", server.base_url());
    assert!(
        message.contains("404") && message.contains(&tried) && message.contains(&fix),
        "{message}"
    );
    // The fix works.
    let out = run(env
        .rein_openai(&server)
        .env("REIN_BASE_URL", &fix)
        .args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn credentials_in_the_base_url_are_not_printed() {
    let env = crate::support::Env::new();
    let out = crate::support::run(env.rein().args([
        "--base-url",
        "http://admin:hunter2-secret@127.0.0.1:9/v1",
        "-p",
        "hi",
        "--output-format",
        "json",
    ]));
    assert_eq!(out.status.code(), Some(1));
    let all = format!(
        "{}{}",
        crate::support::stdout(&out),
        crate::support::stderr(&out)
    );
    assert!(all.contains("127.0.0.1:9"), "{all}");
    assert!(!all.contains("hunter2"), "{all}");
}
