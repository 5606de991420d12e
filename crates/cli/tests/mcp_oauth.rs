//! `rein mcp login|logout` and connections with a sign-in, against rein-testkit's protected
//! MCP server and its authorization server (real HTTP on 127.0.0.1): the test plays the
//! browser (the `$BROWSER` rein starts writes the address to a file; the test opens it and
//! follows the redirect to rein's loopback port).

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::{Output, Stdio};
use std::time::Duration;

use rein_testkit::oauth::{OAuthOptions, OAuthServer, play_browser};
use rein_testkit::{MockServer, Script, Turn};
use serde_json::json;

use crate::mcp::{call, result_of};
use crate::support::{Env, final_json, run, stderr, stdout, wait_for_file, wait_output};

/// `config.toml` with server `docs` at `url` (and `extra` lines in its table).
fn configure(env: &Env, url: &str, extra: &str) {
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        format!("[mcp_servers.docs]\nurl = \"{url}\"\n{extra}"),
    )
    .unwrap();
}

fn token_file(env: &Env) -> PathBuf {
    env.rein_home.join("mcp-auth/docs.json")
}

/// A `$BROWSER` that writes the address it is given to a file, and that file.
fn browser(env: &Env) -> (PathBuf, PathBuf) {
    let opened = env.home.join("opened-url");
    let script = env.home.join("browser.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf '%s' \"$1\" > '{0}.tmp' && mv '{0}.tmp' '{0}'\n",
            opened.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    (script, opened)
}

/// `rein mcp login docs`, the browser played by the test; rein's output and what the
/// loopback page said.
fn login(env: &Env) -> (Output, String) {
    let (script, opened) = browser(env);
    let child = env
        .rein()
        .args(["mcp", "login", "docs", "--timeout", "60"])
        .env("BROWSER", &script)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let url = wait_for_file(&opened, Duration::from_secs(30));
    let page = play_browser(&url).unwrap();
    let out = wait_output(child, Duration::from_secs(60));
    assert!(stderr(&out).contains(&url), "the address is printed too");
    (out, page)
}

/// `rein -p` where the model calls `mcp__docs__echo`, with REIN_LOG=debug.
fn call_echo(env: &Env, text: &str) -> (Output, MockServer) {
    let model = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(call("d1", "mcp__docs__echo", json!({"text": text}))))
            .reply(Turn::text("done")),
    );
    let out = run(env.rein_openai(&model).env("REIN_LOG", "debug").args([
        "-p",
        "go",
        "--output-format",
        "json",
    ]));
    (out, model)
}

/// Everything rein wrote that a token must never be in: its output, the model's requests,
/// the session files and the log.
fn assert_nowhere(env: &Env, tokens: &[String], outputs: &[&Output], models: &[&MockServer]) {
    let mut places: Vec<(String, String)> = Vec::new();
    for out in outputs {
        places.push(("stdout".into(), stdout(out)));
        places.push(("stderr".into(), stderr(out)));
    }
    for model in models {
        for request in model.requests() {
            places.push(("a request to the model".into(), request.body.to_string()));
        }
    }
    for file in env.session_files() {
        places.push((
            file.display().to_string(),
            std::fs::read_to_string(&file).unwrap(),
        ));
    }
    let logs = env.rein_home.join("logs");
    let mut logged = 0;
    for entry in std::fs::read_dir(&logs).into_iter().flatten() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        logged += text.len();
        places.push((path.display().to_string(), text));
    }
    assert!(logged > 0, "REIN_LOG=debug wrote a log");
    for token in tokens {
        for (place, text) in &places {
            assert!(!text.contains(token.as_str()), "a token is in {place}");
        }
    }
}

#[test]
fn login_then_a_call_carries_the_token_and_logout_forgets_it() {
    let env = Env::new();
    let server = OAuthServer::start(OAuthOptions::default()).unwrap();
    configure(&env, &server.url, "");

    // Before any login the server is shown as needing one.
    let listed = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&listed);
    assert!(
        text.contains("needs login") && text.contains("run `rein mcp login docs`"),
        "{text}"
    );

    let (out, page) = login(&env);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Signed in to `docs`"),
        "{}",
        stderr(&out)
    );
    assert!(page.contains("200 OK"), "{page}");
    let file = token_file(&env);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the token file is private");
    let issued = server.issued();
    let access = issued[0].clone();
    assert!(std::fs::read_to_string(&file).unwrap().contains(&access));

    // A tool call goes out with the stored access token.
    let (run_out, model) = call_echo(&env, "signed in");
    assert!(run_out.status.success(), "{}", stderr(&run_out));
    assert_eq!(result_of(&model.requests()[1], "d1"), "echo: signed in");
    assert!(server.accepted().contains(&access));
    let listed = run(env.rein().args(["mcp", "list"]));
    assert!(listed.status.success(), "{}", stdout(&listed));
    assert!(stdout(&listed).contains("ready"), "{}", stdout(&listed));
    assert_nowhere(&env, &issued, &[&out, &run_out, &listed], &[&model]);

    // Logout removes the tokens and says so; a second says there were none.
    let out = run(env.rein().args(["mcp", "logout", "docs"]));
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("Signed out of `docs`"),
        "{}",
        stderr(&out)
    );
    assert!(!file.exists());
    let out = run(env.rein().args(["mcp", "logout", "docs"]));
    assert!(out.status.success());
    assert!(
        stderr(&out).contains("No sign-in was stored"),
        "{}",
        stderr(&out)
    );
    let listed = run(env.rein().args(["mcp", "list"]));
    assert!(
        stdout(&listed).contains("needs login"),
        "{}",
        stdout(&listed)
    );
}

#[test]
fn an_expired_or_refused_token_is_refreshed_and_the_new_one_saved() {
    let env = Env::new();
    // The first access token is expired as soon as it is issued.
    let server = OAuthServer::start(OAuthOptions {
        first_lifetime: Duration::ZERO,
        ..OAuthOptions::default()
    })
    .unwrap();
    configure(&env, &server.url, "");
    let (out, _) = login(&env);
    assert!(out.status.success(), "{}", stderr(&out));
    let first = server.issued()[0].clone();

    let (run_out, model) = call_echo(&env, "after expiry");
    assert!(run_out.status.success(), "{}", stderr(&run_out));
    assert_eq!(result_of(&model.requests()[1], "d1"), "echo: after expiry");
    assert!(server.refreshes() >= 1);
    assert!(
        !server.accepted().contains(&first),
        "the expired token was not used"
    );
    let newest = server.issued()[server.issued().len() - 2].clone();
    assert!(server.accepted().contains(&newest));
    let saved = std::fs::read_to_string(token_file(&env)).unwrap();
    assert!(
        saved.contains(&newest) && !saved.contains(&first),
        "the new token is saved"
    );
    let mode = std::fs::metadata(token_file(&env))
        .unwrap()
        .permissions()
        .mode()
        & 0o777;
    assert_eq!(mode, 0o600, "still private after the refresh");

    // A token the server stops accepting (revoked) is refreshed on its 401.
    server.revoke_access_tokens();
    let before = server.refreshes();
    let (again, model2) = call_echo(&env, "after revocation");
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        result_of(&model2.requests()[1], "d1"),
        "echo: after revocation"
    );
    assert!(server.refreshes() > before);
    assert_nowhere(
        &env,
        &server.issued(),
        &[&out, &run_out, &again],
        &[&model, &model2],
    );
}

#[test]
fn a_refused_refresh_says_to_log_in_again() {
    let env = Env::new();
    let server = OAuthServer::start(OAuthOptions {
        first_lifetime: Duration::ZERO,
        refuse_refresh: true,
        ..OAuthOptions::default()
    })
    .unwrap();
    configure(&env, &server.url, "");
    let (out, _) = login(&env);
    assert!(out.status.success(), "{}", stderr(&out));

    let model = MockServer::start(Script::new().reply(Turn::text("went without it")));
    let out = run(env
        .rein_openai(&model)
        .args(["-p", "go", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    let warnings = report["warnings"].to_string();
    assert!(
        warnings.contains("needs login: run `rein mcp login docs`")
            && warnings.contains("could not be refreshed"),
        "{warnings}"
    );
    let listed = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&listed);
    assert!(text.contains("needs login"), "{text}");
    assert!(!listed.status.success());
}

#[test]
fn a_configured_authorization_header_wins_over_a_sign_in() {
    let env = Env::new();
    let server = OAuthServer::start(OAuthOptions::default()).unwrap();
    configure(&env, &server.url, "");
    let (out, _) = login(&env);
    assert!(out.status.success(), "{}", stderr(&out));
    configure(
        &env,
        &server.url,
        "headers = { Authorization = \"Bearer a-static-token-1234\" }\n",
    );
    let listed = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&listed);
    assert!(
        server.accepted().is_empty(),
        "the stored token was not sent"
    );
    // The header is what the server judged: it wants credentials, given in `headers`.
    assert!(
        text.contains("failed") && text.contains("headers"),
        "{text}"
    );
    // And login refuses while the header is there.
    let out = run(env.rein().args(["mcp", "login", "docs"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("Authorization header"),
        "{}",
        stderr(&out)
    );
}

/// A login that cannot be done says why, and leaves no token file.
#[test]
fn bad_logins_say_why() {
    let env = Env::new();
    let fail = |env: &Env, args: &[&str]| {
        let out = run(env.rein().args(args));
        assert!(!out.status.success(), "{args:?}");
        assert!(!token_file(env).exists());
        stderr(&out)
    };
    // Unknown server.
    configure(&env, "http://127.0.0.1:9/mcp", "");
    let said = fail(&env, &["mcp", "login", "nope"]);
    assert!(
        said.contains("no MCP server `nope` is configured"),
        "{said}"
    );
    // Unreachable server.
    let said = fail(&env, &["mcp", "login", "docs"]);
    assert!(said.contains("cannot reach `docs`"), "{said}");
    // A stdio server.
    crate::mcp::configure(&env, "[mcp_servers.docs]\ncommand = \"FAKE\"\n");
    let said = fail(&env, &["mcp", "login", "docs"]);
    assert!(
        said.contains("login is for servers reached by URL"),
        "{said}"
    );
    // A server that needs no login.
    configure(&env, &rein_testkit::mcp::serve_http().unwrap(), "");
    let said = fail(&env, &["mcp", "login", "docs"]);
    assert!(
        said.contains("answered without asking for a login"),
        "{said}"
    );
    // No metadata to discover.
    let bare = OAuthServer::start(OAuthOptions {
        metadata: false,
        ..OAuthOptions::default()
    })
    .unwrap();
    configure(&env, &bare.url, "");
    let said = fail(&env, &["mcp", "login", "docs"]);
    assert!(
        said.contains("cannot find how to sign in to `docs`"),
        "{said}"
    );
    // No dynamic client registration.
    let closed = OAuthServer::start(OAuthOptions {
        registration: false,
        ..OAuthOptions::default()
    })
    .unwrap();
    configure(&env, &closed.url, "");
    let said = fail(&env, &["mcp", "login", "docs"]);
    assert!(
        said.contains("does not offer dynamic client registration"),
        "{said}"
    );
    // Nobody signs in: it gives up after its timeout, and says the address without a browser.
    let open = OAuthServer::start(OAuthOptions::default()).unwrap();
    configure(&env, &open.url, "");
    let said = fail(&env, &["mcp", "login", "docs", "--timeout", "1"]);
    assert!(said.contains("/authorize?"), "{said}");
    assert!(said.contains("no browser was opened"), "{said}");
    assert!(said.contains("no sign-in came back within 1 s"), "{said}");
}

/// The redirect brings an error, or another login's `state`: refused, nothing saved.
#[test]
fn a_denied_or_forged_redirect_is_refused() {
    for (options, expected) in [
        (
            OAuthOptions {
                deny: true,
                ..OAuthOptions::default()
            },
            "refused: access_denied (The person said no)",
        ),
        (
            OAuthOptions {
                wrong_state: true,
                ..OAuthOptions::default()
            },
            "did not carry this login's `state`",
        ),
    ] {
        let env = Env::new();
        let server = OAuthServer::start(options).unwrap();
        configure(&env, &server.url, "");
        let (out, page) = login(&env);
        assert_eq!(out.status.code(), Some(1));
        assert!(stderr(&out).contains(expected), "{}", stderr(&out));
        assert!(page.contains("400"), "{page}");
        assert!(!token_file(&env).exists());
        assert!(server.issued().is_empty(), "no code was exchanged");
    }
}
