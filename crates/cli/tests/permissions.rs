//! Permission modes in a one-shot run, where no one can be asked.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, stderr};

fn edit_then_answer() -> Script {
    Script::new()
        .reply(Turn::new().tool_call(MockToolCall::new(
            "r1",
            "read_file",
            json!({"file_path": "main.py"}).to_string(),
        )))
        .reply(Turn::new().tool_call(MockToolCall::new(
            "e1",
            "edit_file",
            json!({"file_path": "main.py", "old_string": "import helpers", "new_string": "import utils"})
                .to_string(),
        )))
        .reply(Turn::text("Done."))
}

#[test]
fn headless_default_mode_refuses_an_edit_tells_the_model_and_lists_it() {
    let env = Env::new();
    env.write("main.py", "import helpers\n");
    let server = MockServer::start(edit_then_answer());
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "fix the import", "--output-format", "json"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        env.read("main.py"),
        "import helpers\n",
        "the file is untouched"
    );

    let report = final_json(&out);
    let denials = report["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{report}");
    assert_eq!(denials[0]["tool"], "edit_file");
    assert_eq!(denials[0]["arguments"]["file_path"], "main.py");
    let reason = denials[0]["reason"].as_str().unwrap();
    assert!(reason.contains("no one can be asked"), "{report}");
    assert!(
        reason.contains("--permission-mode accept-edits"),
        "the person is told how to allow it: {report}"
    );
    assert!(
        !reason.contains("Do not retry"),
        "words for the model stay with the model"
    );
    assert_eq!(report["files_changed"], json!([]));

    // The model was told what was refused and how the person can allow it.
    let told = &server.requests()[2].body["messages"];
    let result = told.as_array().unwrap().last().unwrap();
    assert_eq!(result["role"], "tool");
    let content = result["content"].as_str().unwrap();
    assert!(content.contains("did not run"), "{content}");
    assert!(
        content.contains("--permission-mode accept-edits"),
        "{content}"
    );
}

#[test]
fn accept_edits_lets_the_edit_land() {
    let env = Env::new();
    env.write("main.py", "import helpers\n");
    let server = MockServer::start(edit_then_answer());
    let out = run(env.rein_openai(&server).args([
        "-p",
        "fix the import",
        "--output-format",
        "json",
        "--permission-mode",
        "accept-edits",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(env.read("main.py"), "import utils\n");
    let report = final_json(&out);
    assert_eq!(report["permission_denials"], json!([]));
    assert_eq!(report["files_changed"], json!(["main.py"]));
}

#[test]
fn accept_edits_still_refuses_commands_and_plan_offers_only_reading_tools() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({"command": "touch made-by-bash"}).to_string(),
            )))
            .reply(Turn::text("ok")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "make a file",
        "--output-format",
        "json",
        "--permission-mode",
        "accept-edits",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!env.work.join("made-by-bash").exists());
    let report = final_json(&out);
    assert_eq!(report["permission_denials"][0]["tool"], "bash", "{report}");
    let result = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(result.contains("--permission-mode yolo"), "{result}");

    let server = MockServer::start(Script::new().reply(Turn::text("I can only read.")));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "look", "--permission-mode", "plan"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let tools: Vec<&str> = requests[0].body["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["function"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        tools,
        [
            "read_file",
            "glob",
            "grep",
            "compact",
            "todo_write",
            "web_fetch",
            "agent"
        ]
    );
}

#[test]
fn explain_permission_names_the_rule_that_decides() {
    let env = Env::new();
    env.write(
        ".rein/config.toml",
        "[permissions]\ndeny = [\"bash(git push:*)\"]\nallow = [\"Bash(npm test:*)\"]\n",
    );
    env.trust();
    let explain = |call: &str, extra: &[&str]| {
        let out = run(env.rein().arg("explain-permission").arg(call).args(extra));
        assert!(out.status.success(), "{}", stderr(&out));
        crate::support::stdout(&out)
    };
    let out = explain("bash(git push --force origin main)", &[]);
    assert!(out.contains("is refused"), "{out}");
    assert!(
        out.contains("deny rule bash(git push:*)") && out.contains(".rein/config.toml"),
        "{out}"
    );
    let out = explain("bash(npm test -- --watch)", &[]);
    assert!(
        out.contains("runs without asking") && out.contains("allow rule bash(npm test:*)"),
        "{out}"
    );
    let out = explain("read_file(.env)", &[]);
    assert!(
        out.contains("asks first") && out.contains("rein's default ask rule"),
        "{out}"
    );
    let out = explain(
        "edit_file(src/lib.rs)",
        &["--permission-mode", "accept-edits"],
    );
    assert!(out.contains("runs without asking"), "{out}");
    let out = explain(
        "edit_file(src/lib.rs)",
        &[
            "--permission-mode",
            "accept-edits",
            "--deny",
            "Edit(src/**)",
        ],
    );
    assert!(
        out.contains("is refused") && out.contains("flag --deny"),
        "{out}"
    );

    let out = explain("edit_file(/etc/hosts)", &["--permission-mode", "yolo"]);
    assert!(
        out.contains("asks first")
            && out.contains("outside the workspace")
            && out.contains("--allow 'edit_file(/etc/hosts)'"),
        "even yolo asks, and the person is told what lifts it: {out}"
    );

    let out = run(env.rein().args(["explain-permission", "bash("]));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_deny_rule_refuses_headless_and_the_json_lists_it() {
    let env = Env::new();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "p",
                "bash",
                json!({"command": "touch pushed"}).to_string(),
            )))
            .reply(Turn::text("ok")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "push it",
        "--output-format",
        "json",
        "--permission-mode",
        "yolo",
        "--deny",
        "bash(touch:*)",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !env.work.join("pushed").exists(),
        "yolo does not beat a deny rule"
    );
    let report = final_json(&out);
    assert_eq!(report["permission_denials"][0]["tool"], "bash", "{report}");
    assert!(
        report["permission_denials"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("bash(touch:*)"),
        "{report}"
    );
}

fn outside_edit_script(path: &str) -> Script {
    Script::new()
        .reply(Turn::new().tool_call(MockToolCall::new(
            "r1",
            "read_file",
            json!({"file_path": path}).to_string(),
        )))
        .reply(Turn::new().tool_call(MockToolCall::new(
            "e1",
            "edit_file",
            json!({"file_path": path, "old_string": "old", "new_string": "new"}).to_string(),
        )))
        .reply(Turn::text("Done."))
}

#[test]
fn a_write_outside_the_workspace_asks_in_every_mode_so_headless_refuses_it() {
    let env = Env::new();
    let outside = env.home.join("notes.txt");
    std::fs::write(&outside, "old\n").unwrap();
    // A link inside the workspace is judged by where it leads.
    std::os::unix::fs::symlink(&outside, env.work.join("link.txt")).unwrap();
    for path in ["../notes.txt", "link.txt"] {
        let server = MockServer::start(outside_edit_script(path));
        let out = run(env.rein_openai(&server).args([
            "-p",
            "edit the notes",
            "--output-format",
            "json",
            "--permission-mode",
            "yolo",
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(
            std::fs::read_to_string(&outside).unwrap(),
            "old\n",
            "{path}"
        );
        let report = final_json(&out);
        let denials = report["permission_denials"].as_array().unwrap();
        assert_eq!(
            denials.len(),
            1,
            "{path}: only the edit is refused: {report}"
        );
        assert_eq!(denials[0]["tool"], "edit_file");
        assert!(
            denials[0]["reason"]
                .as_str()
                .unwrap()
                .contains("outside the workspace"),
            "{report}"
        );
        // In yolo mode the read ran and the model saw the file.
        let read = server.requests()[1].body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()["content"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(read.contains("old"), "{read}");
    }
}

#[test]
fn an_allow_rule_naming_a_file_outside_the_workspace_lets_the_edit_land() {
    let env = Env::new();
    let outside = env.home.join("notes.txt");
    std::fs::write(&outside, "old\n").unwrap();
    let server = MockServer::start(outside_edit_script("../notes.txt"));
    let rule = format!("edit_file({})", outside.display());
    let out = run(env.rein_openai(&server).args([
        "-p",
        "edit the notes",
        "--output-format",
        "json",
        "--permission-mode",
        "yolo",
        "--allow",
        &rule,
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "new\n");
    assert_eq!(final_json(&out)["permission_denials"], json!([]));
}

#[test]
fn a_read_outside_the_workspace_asks_in_the_default_mode() {
    let env = Env::new();
    std::fs::write(env.home.join("notes.txt"), "private\n").unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r1",
                "read_file",
                json!({"file_path": "~/notes.txt"}).to_string(),
            )))
            .reply(Turn::text("Done.")),
    );
    let out =
        run(env
            .rein_openai(&server)
            .args(["-p", "read my notes", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    assert_eq!(
        report["permission_denials"][0]["tool"], "read_file",
        "{report}"
    );
    let body = server.requests()[1].body_text();
    assert!(!body.contains("private"), "the model did not see it");
}

#[test]
fn the_hard_deny_list_refuses_in_yolo_mode_and_the_json_lists_it() {
    let env = Env::new();
    let precious = env.home.join("precious.txt");
    std::fs::write(&precious, "keep me\n").unwrap();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({"command": "d=$(echo ~); rm -rf ${d:-~}"}).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b2",
                "bash",
                json!({"command": "git status >/dev/null 2>&1; echo fine"}).to_string(),
            )))
            .reply(Turn::text("Done.")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "clean up",
        "--output-format",
        "json",
        "--permission-mode",
        "yolo",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(std::fs::read_to_string(&precious).unwrap(), "keep me\n");
    let report = final_json(&out);
    let denials = report["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{report}");
    assert_eq!(denials[0]["tool"], "bash");
    assert!(
        denials[0]["reason"]
            .as_str()
            .unwrap()
            .contains("hard deny list"),
        "{report}"
    );
    // The model was told, and went on: the next command ran.
    let result = server.requests()[2].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(result.contains("fine"), "{result}");
}

#[test]
fn a_read_only_command_runs_headless_in_the_default_mode_and_one_that_writes_is_refused() {
    let env = Env::new();
    env.write("src/lib.rs", "fn main() {}\n");
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({"command": "ls src | wc -l && grep -c main src/lib.rs"}).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b2",
                "bash",
                json!({"command": "ls src > listing.txt"}).to_string(),
            )))
            .reply(Turn::text("Done.")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "look", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    let denials = report["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{report}");
    assert_eq!(denials[0]["arguments"]["command"], "ls src > listing.txt");
    assert!(!env.work.join("listing.txt").exists());
    let first = server.requests()[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(first.starts_with("1\n1"), "the read-only line ran: {first}");
}

#[test]
fn an_untrusted_projects_allow_rules_do_not_apply_and_rein_says_so() {
    let env = Env::new();
    env.write(
        ".rein/config.toml",
        "[permissions]\nallow = [\"bash\", \"write_file(/**)\"]\ndeny = [\"bash(git push:*)\"]\n",
    );
    let explain = |call: &str| {
        let out = run(env.rein().arg("explain-permission").arg(call));
        assert!(out.status.success(), "{}", stderr(&out));
        (crate::support::stdout(&out), stderr(&out))
    };
    let (out, err) = explain("bash(rm -rf src)");
    assert!(out.contains("asks first"), "{out}");
    assert!(
        err.contains("not trusted") && err.contains("allow rules (bash, write_file(/**))"),
        "{err}"
    );
    let (out, _) = explain("write_file(/etc/x)");
    assert!(out.contains("asks first"), "{out}");
    let (out, _) = explain("bash(git push)");
    assert!(
        out.contains("is refused"),
        "a project's deny rule applies: {out}"
    );

    env.trust();
    let (out, err) = explain("bash(rm -rf src)");
    assert!(out.contains("runs without asking"), "{out}");
    assert!(!err.contains("not trusted"), "{err}");
}

#[test]
fn grep_skips_files_rules_protect_and_says_so() {
    let env = Env::new();
    env.write("svc/.env", "STRIPE_SECRET=sk_live_subdirsecret123\n");
    env.write("secrets/a", "topsecret\n");
    env.write(
        "src/a.rs",
        "// topsecret is a word here\n// STRIPE_SECRET too\n",
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "g1",
                "grep",
                json!({"pattern": "STRIPE", "path": "svc/.env"}).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "g2",
                "grep",
                json!({"pattern": "topsecret|STRIPE", "include": "*"}).to_string(),
            )))
            .reply(Turn::text("done")),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "look",
        "--output-format",
        "json",
        "--deny",
        "read_file(**/secrets/**)",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let results: Vec<String> = server.requests()[1..]
        .iter()
        .map(|r| {
            let messages = r.body["messages"].as_array().unwrap();
            messages.last().unwrap()["content"]
                .as_str()
                .unwrap()
                .to_owned()
        })
        .collect();
    assert!(!results[0].contains("sk_live"), "{}", results[0]);
    assert!(results[0].contains("not searched"), "{}", results[0]);
    assert!(results[1].contains("src/a.rs"), "{}", results[1]);
    assert!(
        !results[1].contains("secrets/a:") && !results[1].contains("sk_live"),
        "{}",
        results[1]
    );
    assert!(results[1].contains("not searched"), "{}", results[1]);
}
