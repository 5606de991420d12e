//! Configuration from the environment: `.env` discovery and precedence, and config errors.

use rein_testkit::{MockServer, Script, Turn};

use crate::support::{Env, run, stderr};

#[test]
fn a_dotenv_above_the_project_is_found_and_never_overrides_the_environment() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("a")).reply(Turn::text("b")));
    // In the home directory, above the project.
    std::fs::write(
        env.home.join(".env"),
        format!(
            "OPENAI_API_KEY=sk-from-dotenv\nREIN_BASE_URL={}\nREIN_MODEL=model-from-dotenv\n",
            server.openai_base_url()
        ),
    )
    .unwrap();
    let out = run(env.rein().args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let first = &server.requests()[0];
    assert_eq!(first.body["model"], "model-from-dotenv");
    assert_eq!(first.header("authorization"), Some("Bearer sk-from-dotenv"));

    let out = run(env
        .rein()
        .env("REIN_MODEL", "model-from-env")
        .args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        server.requests()[1].body["model"],
        "model-from-env",
        "the environment wins"
    );
}

#[test]
fn flags_beat_the_environment_and_files() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("a")));
    env.write(".rein/config.toml", "model = \"model-from-project\"\n");
    let out = run(env
        .rein_openai(&server)
        .env("REIN_MODEL", "model-from-env")
        .args(["-m", "model-from-flag", "-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.requests()[0].body["model"], "model-from-flag");
}

#[test]
fn an_unknown_config_key_is_an_error_naming_key_and_file() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("a")));
    env.write(".rein/config.toml", "modle = \"gpt-4o\"\n");
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1));
    let message = stderr(&out);
    assert!(
        message.contains("modle") && message.contains(".rein/config.toml"),
        "{message}"
    );
    assert_eq!(server.request_count(), 0);
}

#[test]
fn a_configured_ca_file_that_cannot_be_read_stops_rein_naming_it() {
    let env = Env::new();
    env.write(".rein/config.toml", "ca_file = \"corp.pem\"\n");
    env.trust();
    let server = MockServer::start(Script::new().reply(Turn::text("unused")));
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let message = stderr(&out);
    assert!(message.contains("corp.pem"), "{message}");
    assert_eq!(server.request_count(), 0);

    // A file that holds a certificate is accepted and the run goes on.
    let ca = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../llm/tests/fixtures/ca.pem"),
    )
    .unwrap();
    env.write(".rein/corp.pem", &ca);
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn the_prompt_names_the_shell_commands_really_run_in() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let out = run(env
        .rein_openai(&server)
        .env("SHELL", "/usr/bin/zsh")
        .args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let system = server.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("Shell: bash"), "{system}");
    assert!(!system.contains("zsh"), "{system}");
}
