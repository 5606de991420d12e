//! `@path` imports in AGENTS.md, and nested AGENTS.md files given once, when first reached.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, stderr};

#[test]
fn imports_follow_a_chain_end_cycles_and_refuse_outside_files() {
    let env = Env::new();
    env.write(
        "AGENTS.md",
        "Root rules. See @docs/style.md and @../../outside.md, not `@code.md`.\n",
    );
    env.write("docs/style.md", "Style: tabs. Also @more.md\n");
    env.write(
        "docs/more.md",
        "More: names in snake_case. Back to @style.md\n",
    );
    env.write("code.md", "CODE SPAN FILE\n");
    let outside = env.home.parent().unwrap().join("outside.md");
    std::fs::write(&outside, "OUTSIDE SECRET\n").unwrap();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "hi", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let system = server.requests()[0].body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(system.contains("Root rules."), "{system}");
    assert_eq!(system.matches("Style: tabs.").count(), 1, "{system}");
    assert_eq!(
        system.matches("More: names in snake_case.").count(),
        1,
        "{system}"
    );
    assert!(!system.contains("OUTSIDE SECRET"), "{system}");
    assert!(!system.contains("CODE SPAN FILE"), "{system}");
    let warnings = final_json(&out)["warnings"].to_string();
    assert!(
        warnings.contains("outside.md") && warnings.contains("outside the workspace"),
        "{warnings}"
    );
}

#[test]
fn a_nested_agents_md_is_added_when_a_file_below_it_is_first_read_once() {
    let env = Env::new();
    env.write("AGENTS.md", "Top rules.\n");
    env.write("pkg/AGENTS.md", "Package rule: no unsafe.\n");
    env.write("pkg/a.rs", "fn a() {}\n");
    env.write("pkg/b.rs", "fn b() {}\n");
    env.write("other.rs", "fn o() {}\n");
    let read = |id: &str, path: &str| {
        Turn::new().tool_call(MockToolCall::new(
            id,
            "read_file",
            json!({ "file_path": path }).to_string(),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(read("o", "other.rs"))
            .reply(read("a", "pkg/a.rs"))
            .reply(read("b", "pkg/b.rs"))
            .reply(Turn::text("Read them.")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "read", "--output-format", "stream-json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    // Not in the prompt at start, nor after reading a file outside pkg/.
    assert!(!requests[0].body.to_string().contains("Package rule"));
    assert!(!requests[1].body.to_string().contains("Package rule"));
    // With the first read below it, once, and never again.
    let last = requests.last().unwrap().body.to_string();
    assert_eq!(
        last.matches("Package rule: no unsafe.").count(),
        1,
        "{last}"
    );
    let stdout = crate::support::stdout(&out);
    let loaded: Vec<&str> = stdout
        .lines()
        .filter(|l| l.contains("\"type\":\"instructions_loaded\""))
        .collect();
    assert_eq!(loaded.len(), 1, "one event for the file: {stdout}");
    assert!(loaded[0].contains("pkg/AGENTS.md"), "{stdout}");
}
