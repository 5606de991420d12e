//! Rules must name tools that exist: a misspelled rule stops rein at start with the
//! closest name, wherever it was written.

use crate::support::{Env, run, stderr, strict_mock};

#[test]
fn a_misspelled_tool_in_a_rule_exits_2_with_did_you_mean() {
    let env = Env::new();
    let server = strict_mock("never asked");
    // From a flag.
    let out = run(env
        .rein_openai(&server)
        .args(["--deny", "Bsh(git push:*)", "-p", "hi"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("Bsh(git push:*)")
            && err.contains("flag --deny")
            && err.contains("did you mean Bash?"),
        "{err}"
    );
    // From the project's config file (deny rules apply untrusted, so they are checked too).
    env.write(
        ".rein/config.toml",
        "[permissions]\ndeny = [\"Reed(**/.env)\"]\n",
    );
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("Reed(**/.env)") && err.contains("did you mean Read?"),
        "{err}"
    );
    assert!(server.requests().is_empty(), "the model was called");
    assert!(env.session_files().is_empty(), "a session was started");
}

#[test]
fn a_rule_for_an_unconfigured_mcp_server_only_warns() {
    let env = Env::new();
    let server = strict_mock("done");
    let out =
        run(env
            .rein_openai(&server)
            .args(["--deny", "mcp__github__create_issue", "-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("MCP server \"github\", which is not configured"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn explain_permission_of_a_bogus_tool_says_no_such_tool() {
    let env = Env::new();
    let out = run(env.rein().args(["explain-permission", "bogus"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no such tool"), "{}", stderr(&out));
    let out = run(env.rein().args(["explain-permission", "Bsh(ls)"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("did you mean Bash?"),
        "{}",
        stderr(&out)
    );
}
