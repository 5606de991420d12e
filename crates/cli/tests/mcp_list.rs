//! `rein mcp list --output-format json`, and `rein mcp login` against an address where no
//! server answers: what a script or a person reads of the configured servers.

use rein_testkit::oauth::{OAuthOptions, OAuthServer};
use serde_json::Value;

use crate::mcp::fake;
use crate::support::{Env, run, stderr, stdout};

/// A port of 127.0.0.1 nothing listens on: one bound, then closed.
fn closed_port() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.local_addr().unwrap().port()
}

#[test]
fn mcp_list_as_json_gives_every_configured_server_with_its_state_tools_and_prompts() {
    let env = Env::new();
    let login = OAuthServer::start(OAuthOptions::default()).unwrap();
    let fake = fake().display().to_string();
    let refused = format!("http://127.0.0.1:{}/mcp", closed_port());
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        format!(
            "[mcp_servers.fake]\ncommand = \"{fake}\"\n\
             [mcp_servers.dies]\ncommand = \"{fake}\"\nargs = [\"--exit-at-start\"]\n\
             [mcp_servers.off]\ncommand = \"{fake}\"\nenabled = false\n\
             [mcp_servers.needs]\ncommand = \"{fake}\"\nenv = {{ TOKEN = \"${{REIN_TEST_UNSET_TOKEN}}\" }}\n\
             [mcp_servers.nobody]\nurl = \"{refused}\"\n\
             [mcp_servers.docs]\nurl = \"{}\"\n",
            login.url
        ),
    )
    .unwrap();
    // A project server, in a project not trusted.
    env.write(
        ".rein/config.toml",
        &format!("[mcp_servers.theirs]\ncommand = \"{fake}\"\n"),
    );

    let out = run(env.rein().args(["mcp", "list", "--output-format", "json"]));
    assert_eq!(
        out.status.code(),
        Some(1),
        "not all ready: {}",
        stderr(&out)
    );
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "one JSON document: {text}");
    let document: Value = serde_json::from_str(&text).unwrap();
    let servers = document["servers"].as_array().unwrap();
    let server = |name: &str| {
        servers
            .iter()
            .find(|s| s["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in {text}"))
    };
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 7, "{names:?}");

    let ready = server("fake");
    assert_eq!(ready["transport"], "stdio");
    assert_eq!(ready["state"], "ready");
    assert_eq!(ready["error"], Value::Null);
    let tools: Vec<&str> = (ready["tools"].as_array().unwrap().iter())
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tools.contains(&"echo") && tools.len() == 9, "{tools:?}");
    let prompts: Vec<&str> = (ready["prompts"].as_array().unwrap().iter())
        .map(|p| p.as_str().unwrap())
        .collect();
    assert!(prompts.contains(&"greet"), "{prompts:?}");
    assert!(
        ready["log"]
            .as_str()
            .unwrap()
            .ends_with("mcp-logs/fake.log")
    );

    let dies = server("dies");
    assert_eq!(dies["state"], "failed");
    assert!(dies["error"].as_str().unwrap().contains("exited"), "{dies}");
    assert_eq!(dies["tools"], serde_json::json!([]));

    assert_eq!(server("off")["state"], "disabled");
    assert_eq!(server("off")["transport"], "stdio");
    let needs = server("needs");
    assert_eq!(needs["state"], "failed");
    assert!(
        needs["error"]
            .as_str()
            .unwrap()
            .contains("REIN_TEST_UNSET_TOKEN"),
        "{needs}"
    );
    let nobody = server("nobody");
    assert_eq!(nobody["transport"], "http");
    assert_eq!(nobody["state"], "failed");
    assert!(
        nobody["error"]
            .as_str()
            .unwrap()
            .contains("connection refused, so no server is running there"),
        "{nobody}"
    );
    let docs = server("docs");
    assert_eq!(docs["transport"], "http");
    assert_eq!(docs["state"], "needs login");
    assert!(
        docs["error"]
            .as_str()
            .unwrap()
            .starts_with("run `rein mcp login docs`"),
        "{docs}"
    );
    let theirs = server("theirs");
    assert_eq!(theirs["state"], "untrusted");
    assert!(
        theirs["error"].as_str().unwrap().contains("rein trust"),
        "{theirs}"
    );

    // The text form is as it was: a line per started server, the untrusted one last.
    let out = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&out);
    assert!(!text.trim_start().starts_with('{'), "{text}");
    let first_words: Vec<&str> = (text.lines())
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .collect();
    assert_eq!(first_words.last(), Some(&"theirs"), "{text}");
    let mut started = first_words[..first_words.len() - 1].to_vec();
    started.sort_unstable();
    assert_eq!(started, ["dies", "docs", "fake", "nobody"], "{text}");
}

#[test]
fn mcp_list_as_json_with_no_server_is_an_empty_list_and_a_bad_config_an_error() {
    let env = Env::new();
    let out = run(env.rein().args(["mcp", "list", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let document: Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(document["servers"], serde_json::json!([]));

    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "[mcp_servers.nothing]\nargs = [\"x\"]\n",
    )
    .unwrap();
    let out = run(env.rein().args(["mcp", "list", "--output-format", "json"]));
    assert_ne!(out.status.code(), Some(0));
    let document: Value = serde_json::from_str(&stdout(&out)).unwrap();
    let error = document["error"].as_str().unwrap();
    assert!(error.contains("mcp_servers.nothing"), "{error}");
}

/// A login where nothing listens says so in words, as the connection of a session does, and
/// fails as other logins do (exit status 1). (A host name that does not resolve is not
/// tried: looking it up would leave this machine.)
#[test]
fn mcp_login_where_no_server_answers_says_why_in_words() {
    let env = Env::new();
    let url = format!("http://127.0.0.1:{}/mcp", closed_port());
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        format!("[mcp_servers.docs]\nurl = \"{url}\"\n"),
    )
    .unwrap();
    let out = run(env.rein().args(["mcp", "login", "docs", "--timeout", "5"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("login failed: cannot reach `docs`"), "{err}");
    assert!(
        err.contains(
            "connection refused, so no server is running there (start it, or check the \
             server's `url`)"
        ),
        "{err}"
    );
    assert!(!err.contains("error sending request"), "{err}");
}
