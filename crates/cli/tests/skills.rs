//! Skills through the real binary: discovery in every place, the prompt's cap, loading a
//! skill and reading its resources, bad and duplicate SKILL.md files, and a system prompt
//! that stays byte-identical.

use rein_testkit::{CapturedRequest, MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, stderr};

fn skill_md(name: &str, description: &str, body: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\n{body}\n")
}

fn system(request: &CapturedRequest) -> String {
    request.body["messages"][0]["content"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn result_for(request: &CapturedRequest, id: &str) -> String {
    request.body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_call_id"] == id)
        .and_then(|m| m["content"].as_str())
        .unwrap_or_else(|| panic!("no result for {id}"))
        .to_owned()
}

#[test]
fn skills_are_found_listed_loaded_and_their_files_read() {
    let env = Env::new();
    env.write(
        ".rein/skills/pdf/SKILL.md",
        &skill_md("pdf", "Fill and read PDF forms", "Use pdftk."),
    );
    let deploy = env.rein_home.join("skills/deploy");
    std::fs::create_dir_all(deploy.join("scripts")).unwrap();
    std::fs::write(
        deploy.join("SKILL.md"),
        skill_md(
            "deploy",
            "Ship a release",
            "Follow checklist.md step by step.",
        ),
    )
    .unwrap();
    std::fs::write(deploy.join("checklist.md"), "1. tag the release\n").unwrap();
    std::fs::write(deploy.join("scripts/ship.sh"), "echo ship\n").unwrap();
    env.write(
        ".claude/skills/review/SKILL.md",
        &skill_md("review", "Review a diff", "Look for bugs."),
    );
    env.write(
        ".agents/skills/lint/SKILL.md",
        &skill_md("lint", "Lint the code", "Run the linter."),
    );
    env.write(
        ".claude/skills/pdf-again/SKILL.md",
        &skill_md("pdf", "Another pdf", "Shadowed."),
    );
    env.write(".agents/skills/broken/SKILL.md", "# No front matter\n");
    let checklist = deploy.join("checklist.md").display().to_string();
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "s1",
                "skill",
                json!({"name": "deploy"}).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "r1",
                "read_file",
                json!({ "file_path": checklist }).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "s2",
                "skill",
                json!({"name": "nope"}).to_string(),
            )))
            .reply(Turn::text("shipped")),
    );
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "ship it", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let requests = server.requests();
    let prompt = system(&requests[0]);
    for listed in [
        "- pdf: Fill and read PDF forms",
        "- deploy: Ship a release",
        "- review: Review a diff",
        "- lint: Lint the code",
    ] {
        assert!(prompt.contains(listed), "{listed} missing:\n{prompt}");
    }
    // Only names and descriptions: bodies wait for the tool.
    assert!(!prompt.contains("Follow checklist.md"));
    assert!(!prompt.contains("Another pdf"));
    // The same bytes every round.
    for request in &requests[1..] {
        assert_eq!(system(request), prompt);
    }
    let last = server.last_request().unwrap();
    let loaded = result_for(&last, "s1");
    assert!(
        loaded.contains("Follow checklist.md step by step."),
        "{loaded}"
    );
    assert!(loaded.contains("checklist.md, scripts/ship.sh"), "{loaded}");
    let read = result_for(&last, "r1");
    assert!(read.contains("tag the release"), "{read}");
    let unknown = result_for(&last, "s2");
    assert!(
        unknown.contains("there is no skill `nope`; the skills are: pdf, deploy, review, lint"),
        "{unknown}"
    );
    let warnings = final_json(&out)["warnings"].to_string();
    assert!(
        warnings.contains("pdf-again/SKILL.md skipped: the name `pdf` is taken"),
        "{warnings}"
    );
    assert!(warnings.contains("broken/SKILL.md skipped"), "{warnings}");
}

#[test]
fn the_list_in_the_prompt_is_capped_and_the_rest_named() {
    let env = Env::new();
    env.write(".rein/config.toml", "context_window = 20000\n");
    let long = "a description long enough that only some of them fit the share of the window";
    for i in 0..40 {
        env.write(
            &format!(".rein/skills/s{i:02}/SKILL.md"),
            &skill_md(&format!("s{i:02}"), long, "body"),
        );
    }
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let prompt = system(&server.requests()[0]);
    let section = &prompt[prompt.find("# Skills").unwrap()..];
    // 2% of 20,000 tokens, at four characters a token.
    assert!(section.len() <= 1600 + 400, "{} bytes", section.len());
    assert!(section.contains("- s00: a description"));
    let also = section.lines().find(|l| l.starts_with("- Also: ")).unwrap();
    assert!(also.contains("s39"), "{also}");
    assert!(!section.contains("- s39: "), "{section}");
}

#[test]
fn without_skills_nothing_is_added() {
    let env = Env::new();
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let request = &server.requests()[0];
    assert!(!system(request).contains("# Skills"));
    let tools = request.body["tools"].to_string();
    assert!(!tools.contains("\"skill\""), "{tools}");
}
