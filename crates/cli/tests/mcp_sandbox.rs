//! A sandboxed stdio MCP server runs in the sandbox the agent's commands run in: one
//! private `TMPDIR` for both while rein runs, none left once it has exited.

use std::path::{Path, PathBuf};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::pty::Pty;
use crate::support::{Env, sandbox_enforced};

/// The sandboxes' private directories in `root` (rein names them `rein-PID-XXXXXXXX`).
fn private_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| {
            path.is_dir()
                && path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_prefix("rein-"))
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        })
        .collect();
    dirs.sort();
    dirs
}

/// A fresh environment whose fake MCP server runs in the OS sandbox; `None` (the test is
/// skipped, and says why) where the sandbox cannot be enforced.
fn sandboxed_fake(test: &str) -> Option<Env> {
    let env = Env::new();
    if !sandbox_enforced(&env, test) {
        return None;
    }
    crate::mcp::configure(
        &env,
        "[mcp_servers.fake]\ncommand = \"FAKE\"\nsandbox = true\n",
    );
    Some(env)
}

/// The model's call `id`: a command that prints its `TMPDIR`.
fn echo_tmpdir(id: &str) -> Turn {
    Turn::new().tool_call(MockToolCall::new(
        id,
        "bash",
        json!({ "command": "echo \"command TMPDIR=$TMPDIR\"" }).to_string(),
    ))
}

/// The `TMPDIR` the fake server said, from the `index`th request: the last
/// `@fake:fake://env/TMPDIR` attached so far.
fn server_tmpdir(server: &MockServer, index: usize) -> PathBuf {
    let sent = server.requests()[index].body.to_string();
    let (_, said) = sent
        .rsplit_once("TMPDIR=")
        .unwrap_or_else(|| panic!("the server's TMPDIR was not attached: {sent}"));
    PathBuf::from(said.split(['\\', '"', '\n']).next().unwrap_or_default())
}

/// The `TMPDIR` the command of call `id` printed.
fn command_tmpdir(server: &MockServer, id: &str) -> PathBuf {
    let result = result_of(server, id);
    let said = result
        .split("command TMPDIR=")
        .nth(1)
        .and_then(|rest| rest.lines().next())
        .unwrap_or_else(|| panic!("the command printed no TMPDIR: {result}"));
    PathBuf::from(said)
}

/// Once rein has exited, no private directory is left in `root`.
fn assert_none_left(root: &Path) {
    assert_eq!(private_dirs(root), Vec::<PathBuf>::new(), "left after exit");
}

#[test]
fn a_sandboxed_mcp_server_shares_the_commands_private_tmpdir_and_none_is_left() {
    let test = "a_sandboxed_mcp_server_shares_the_commands_private_tmpdir_and_none_is_left";
    let Some(env) = sandboxed_fake(test) else {
        return;
    };
    let server = MockServer::start(
        Script::new()
            .reply(echo_tmpdir("b1"))
            .reply(Turn::text("Both read.")),
    );
    // Every temporary directory rein makes goes under the TMPDIR it was given.
    let root = env.home.parent().unwrap().to_path_buf();
    let mut pty = Pty::auto_ready(&env, &server.openai_base_url());
    pty.send("what is in @fake:fake://env/TMPDIR\r");
    pty.wait_for("Both read.");
    let made = private_dirs(&root);
    assert_eq!(made.len(), 1, "one private directory, not {made:?}");
    assert_eq!(server_tmpdir(&server, 0), made[0], "the server's TMPDIR");
    assert_eq!(
        command_tmpdir(&server, "b1"),
        made[0],
        "the command's TMPDIR"
    );
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
    assert_none_left(&root);
}

/// The text of the result of call `id` in whichever request carries it.
fn result_of(server: &MockServer, id: &str) -> String {
    server
        .requests()
        .iter()
        .flat_map(|r| r.body["messages"].as_array().cloned().unwrap_or_default())
        .find(|m| m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str().map(str::to_owned))
        .unwrap_or_else(|| panic!("no result of {id}"))
}

/// After `/model` the agent is rebuilt with the same sandbox settings: its commands keep
/// the sandbox, so their private `TMPDIR` is still the one the MCP server (kept across the
/// rebuild) has, no second one is made, and none is left once rein has exited.
#[test]
fn after_model_the_commands_keep_the_mcp_servers_private_tmpdir() {
    let test = "after_model_the_commands_keep_the_mcp_servers_private_tmpdir";
    let Some(env) = sandboxed_fake(test) else {
        return;
    };
    let server = MockServer::start(
        Script::new()
            .reply(echo_tmpdir("before"))
            .reply(Turn::text("Read before."))
            .reply(echo_tmpdir("after"))
            .reply(Turn::text("Read after.")),
    );
    let root = env.home.parent().unwrap().to_path_buf();
    let mut pty = Pty::auto_ready(&env, &server.openai_base_url());
    pty.send("what is in @fake:fake://env/TMPDIR\r");
    pty.wait_for("Read before.");
    let server_tmp = server_tmpdir(&server, 0);
    pty.send("/model gpt-4o-mini\r");
    pty.wait_for("switching to gpt-4o-mini");
    pty.send("and now?\r");
    pty.wait_for("Read after.");
    let made = private_dirs(&root);
    assert_eq!(made.len(), 1, "one private directory, not {made:?}");
    assert_eq!(server_tmp, made[0], "the server's TMPDIR");
    assert_eq!(command_tmpdir(&server, "before"), made[0], "before /model");
    assert_eq!(command_tmpdir(&server, "after"), made[0], "after /model");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
    assert_none_left(&root);
}

/// Leaving `auto` changes the sandbox's policy: the agent gets a new sandbox, and the MCP
/// server configured to run in it starts again there rather than go on in the old one. Its
/// `TMPDIR` is then the new sandbox's, which the commands have too, and the old sandbox's
/// directory goes with the old server.
#[test]
fn leaving_auto_starts_a_sandboxed_mcp_server_again_in_the_new_sandbox() {
    let test = "leaving_auto_starts_a_sandboxed_mcp_server_again_in_the_new_sandbox";
    let Some(env) = sandboxed_fake(test) else {
        return;
    };
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("Read in auto."))
            .reply(echo_tmpdir("after"))
            .reply(Turn::text("Read after.")),
    );
    let root = env.home.parent().unwrap().to_path_buf();
    let mut pty = Pty::auto_ready(&env, &server.openai_base_url());
    pty.send("what is in @fake:fake://env/TMPDIR\r");
    pty.wait_for("Read in auto.");
    let before = server_tmpdir(&server, 0);
    pty.send("/permissions default\r");
    pty.wait_for("permission mode: default");
    pty.send("and now @fake:fake://env/TMPDIR\r");
    pty.wait_for("Read after.");
    let after = server_tmpdir(&server, 1);
    assert_ne!(after, before, "the server went on in the old sandbox");
    assert_eq!(
        command_tmpdir(&server, "after"),
        after,
        "the command's TMPDIR and the server's"
    );
    // The old server, and with it the old sandbox's directory, are gone.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while private_dirs(&root) != [after.clone()] && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(private_dirs(&root), [after]);
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
    assert_none_left(&root);
}
