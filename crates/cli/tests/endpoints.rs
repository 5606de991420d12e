//! Where requests (with the API key) go: a project's `.env` cannot send them elsewhere until
//! the project is trusted, and a change to those lines after the trust asks again.

use rein_testkit::{MockServer, Script, Turn};

use crate::support::{Env, final_json, run, stderr};

const PERSON_KEY: &str = "sk-person-KEY0123456789";

fn answers(n: usize) -> Script {
    (0..n).fold(Script::new(), |script, _| script.reply(Turn::text("ok")))
}

/// A headless run with the person's key in the environment; its final JSON.
fn headless(env: &Env) -> serde_json::Value {
    let out = run(env
        .rein()
        .env("OPENAI_API_KEY", PERSON_KEY)
        .env("REIN_MODEL", "gpt-4o")
        .args(["-p", "hi", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    final_json(&out)
}

fn warnings(report: &serde_json::Value) -> String {
    report["warnings"].to_string()
}

#[test]
fn an_untrusted_dotenv_cannot_send_the_key_elsewhere_until_trusted() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    let own = MockServer::start(answers(2));
    let collector = MockServer::start(answers(3));
    // The person's own endpoint, in their config file.
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        format!("base_url = \"{}\"\n", own.openai_base_url()),
    )
    .unwrap();
    // A cloned project's .env names a listener.
    env.write(
        ".env",
        &format!("REIN_BASE_URL={}\n", collector.openai_base_url()),
    );

    let report = headless(&env);
    assert_eq!(collector.request_count(), 0, "nothing reached the listener");
    assert_eq!(
        own.requests()[0].header("authorization"),
        Some(format!("Bearer {PERSON_KEY}").as_str()),
        "the person's own endpoint got the request"
    );
    let said = warnings(&report);
    assert!(
        said.contains("REIN_BASE_URL") && said.contains("rein trust"),
        "{said}"
    );

    // Trusted with `rein trust`, the project's endpoint applies.
    let out = run(env.rein().arg("trust"));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = headless(&env);
    assert_eq!(collector.request_count(), 1, "{}", warnings(&report));
    assert!(!warnings(&report).contains("REIN_BASE_URL"));

    // A command appends another endpoint line: the project is asked about again, and until
    // then the person's settings apply.
    let mut dotenv = env.read(".env");
    dotenv.insert_str(0, "OPENAI_BASE_URL=http://127.0.0.1:9/v1\n");
    env.write(".env", &dotenv);
    let report = headless(&env);
    assert_eq!(
        collector.request_count(),
        1,
        "the changed file is not trusted"
    );
    assert_eq!(own.request_count(), 2);
    let said = warnings(&report);
    assert!(
        said.contains("OPENAI_BASE_URL") && said.contains("REIN_BASE_URL"),
        "{said}"
    );
}

#[test]
fn a_local_server_an_untrusted_project_names_never_gets_the_persons_key() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    let listener = MockServer::start(answers(1));
    env.write(
        ".env",
        &format!("REIN_BASE_URL={}\n", listener.openai_base_url()),
    );
    // The person configured no base URL: the project's local server is used, keyless.
    let report = headless(&env);
    let requests = listener.requests();
    assert_eq!(requests.len(), 1);
    assert_eq!(requests[0].header("authorization"), None, "no key was sent");
    assert!(!requests[0].body_text().contains(PERSON_KEY));
    let said = warnings(&report);
    assert!(said.contains("without your API key"), "{said}");
    assert!(!said.contains(PERSON_KEY), "{said}");
}
