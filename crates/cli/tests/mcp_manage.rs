//! `rein mcp add` and `rein mcp remove`: servers written into your config file or the
//! project's, comments kept, and mistakes refused without touching the file.

use crate::mcp::fake;
use crate::support::{Env, run, stderr, stdout};

#[test]
fn add_and_remove_round_trip_keeping_a_comment() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let config = env.rein_home.join("config.toml");
    let before = "# my own settings, keep this comment\nmodel = \"m\" # and this one\n";
    std::fs::write(&config, before).unwrap();
    let fake = fake().display().to_string();

    let out = run(env.rein().args([
        "mcp",
        "add",
        "fs",
        "--env",
        "A=b",
        "--",
        &fake,
        "--start-delay-ms",
        "10",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let added = std::fs::read_to_string(&config).unwrap();
    assert!(added.starts_with(before), "{added}");
    // The server it names starts, as `rein mcp list` shows.
    let out = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.lines()
            .any(|l| l.starts_with("fs") && l.contains("ready")),
        "{text}"
    );

    // Mistakes change nothing: a name taken, nothing to start, a bad URL, a bad --env.
    for bad in [
        vec!["mcp", "add", "fs", "--", "other"],
        vec!["mcp", "add", "x"],
        vec!["mcp", "add", "x", "--url", "not a url"],
        vec!["mcp", "add", "x", "--env", "NOEQUALS", "--", "cmd"],
        vec!["mcp", "remove", "nothere"],
    ] {
        let out = run(env.rein().args(&bad));
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
        assert_eq!(std::fs::read_to_string(&config).unwrap(), added, "{bad:?}");
    }

    let out = run(env.rein().args(["mcp", "remove", "fs"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&config).unwrap(), before);
}

#[test]
fn a_project_server_is_added_to_the_projects_file_and_waits_for_trust() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    let out = run(env.rein().args([
        "mcp",
        "add",
        "docs",
        "--scope",
        "project",
        "--url",
        "http://127.0.0.1:9/mcp",
        "--header",
        "Authorization=Bearer ${DOCS_TOKEN}",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("rein trust"), "{}", stderr(&out));
    let file = env.work.join(".rein/config.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("[mcp_servers.docs]\nurl = \"http://127.0.0.1:9/mcp\"")
            && text.contains("${DOCS_TOKEN}"),
        "{text}"
    );
    // Without --scope, remove finds it in the project's file.
    let out = run(env.rein().args(["mcp", "remove", "docs"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!std::fs::read_to_string(&file).unwrap().contains("docs"));
}

/// In the REPL, `@server:uri` attaches an MCP server's resource to the request; one the
/// server does not have is not sent, and says why.
#[test]
fn a_resource_is_attached_with_at_server_colon_uri() {
    use rein_testkit::{MockServer, Script, Turn};

    use crate::pty::Pty;

    let env = Env::new();
    crate::mcp::configure(&env, "[mcp_servers.fake]\ncommand = \"FAKE\"\n");
    let server = MockServer::start(Script::new().reply(Turn::text("Read it.")).repeating());
    let mut pty = Pty::start(&env, &server.openai_base_url(), &[], 160);
    pty.wait_ready();
    pty.send("summarise @fake:fake://notes/7 please\r");
    pty.wait_for("Read it.");
    let body = server.requests()[0].body.to_string();
    assert!(
        body.contains("<attached file=\\\"fake:fake://notes/7\\\">\\nnote 7: the resource body"),
        "{body}"
    );
    pty.send("and @fake:fake://elsewhere\r");
    pty.wait_for("could not be attached");
    assert!(
        pty.transcript().contains("no resource fake://elsewhere"),
        "{}",
        pty.transcript()
    );
    assert_eq!(server.requests().len(), 1, "the request was not sent");
    pty.send("\x15/exit\r");
    assert_eq!(pty.wait_exit(), 0);
}

/// A resource's text is masked like a file's before anything sees it (a UserPromptSubmit
/// hook, the checkpoint of the turn, the model): here it holds the value of a secret
/// variable (given to the server under another name).
#[test]
fn an_attached_resource_has_its_secrets_masked() {
    use rein_testkit::{MockServer, Script, Turn};

    use crate::pty::Pty;

    let env = Env::new();
    let seen = env.home.join("prompt-seen.json");
    crate::mcp::configure(
        &env,
        &format!(
            "[mcp_servers.fake]\ncommand = \"FAKE\"\nenv = {{ NOTE = \"${{DEPLOY_TOKEN}}\" }}\n\n\
             [[hooks.UserPromptSubmit]]\ncommand = \"cat > '{}'\"\n",
            seen.display()
        ),
    );
    let secret = "dt-5up3r-s3cr3t-v4lue";
    let server = MockServer::start(Script::new().reply(Turn::text("Read it.")).repeating());
    let mut pty = Pty::start_with(
        &env,
        &server.openai_base_url(),
        &[],
        160,
        &[("DEPLOY_TOKEN", secret)],
    );
    pty.wait_ready();
    pty.send("what is in @fake:fake://env/NOTE\r");
    pty.wait_for("Read it.");
    pty.send("/exit\r");
    assert_eq!(pty.wait_exit(), 0);
    let body = server.requests()[0].body.to_string();
    assert!(body.contains("NOTE=[REDACTED:DEPLOY_TOKEN]"), "{body}");
    let hook = std::fs::read_to_string(&seen).unwrap();
    assert!(hook.contains("NOTE=[REDACTED:DEPLOY_TOKEN]"), "{hook}");
    // Nowhere: the request, the hook's input, anything under rein's home.
    assert!(!body.contains(secret) && !hook.contains(secret));
    let mut dirs = vec![env.rein_home.clone()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else if let Ok(bytes) = std::fs::read(&path) {
                let text = String::from_utf8_lossy(&bytes);
                assert!(
                    !text.contains(secret),
                    "the secret is in {}",
                    path.display()
                );
            }
        }
    }
}
