use std::path::PathBuf;

use rein_tools::ToolKind;
use serde_json::json;

use super::super::{PathTarget, ShellFacts};
use super::*;
use crate::permissions::{Decision, ModePolicy, PermissionMode, Policy};

fn view<'a>(
    tool: &'a str,
    args: &'a serde_json::Value,
    path: Option<&'a PathTarget>,
    shell: Option<&'a ShellFacts>,
) -> CallView<'a> {
    CallView {
        tool,
        kind: ToolKind::Execute,
        arguments: args,
        path,
        shell,
        confined: true,
    }
}

fn facts(commands: &[&str]) -> ShellFacts {
    ShellFacts {
        simple_commands: commands.iter().map(|c| (*c).to_owned()).collect(),
        rule_texts: commands.iter().map(|c| Some((*c).to_owned())).collect(),
        dynamic_args: vec![false; commands.len()],
        harmless: vec![false; commands.len()],
        read_only: Err(rein_shell::NotReadOnly::NoCommand),
        prefix: None,
        danger: None,
        files: Vec::new(),
        unknown_files: None,
    }
}

fn rule(text: &str) -> Rule {
    Rule::parse(text, Some(Path::new("/home/me"))).unwrap()
}

#[test]
fn rules_parse_with_aliases_and_print_as_written() {
    assert_eq!(rule("Bash(npm test:*)").to_string(), "bash(npm test:*)");
    assert_eq!(rule("Read(**/.env)").to_string(), "read_file(**/.env)");
    assert_eq!(rule("Edit").to_string(), "edit_file");
    assert_eq!(rule("mcp__github__*").to_string(), "mcp__github__*");
    assert_eq!(rule("edit_file(*)").to_string(), "edit_file", "every file");
    assert_eq!(
        rule("read_file(~/.ssh/**)").to_string(),
        "read_file(/home/me/.ssh/**)"
    );
    for bad in ["", "bash(", "(x)", "bash()", "read_file([)", "a b(c)"] {
        assert!(Rule::parse(bad, None).is_err(), "{bad:?} parsed");
    }
}

#[test]
fn command_rules_match_whole_words_per_simple_command() {
    let prefix = rule("bash(npm test:*)");
    let exact = rule("bash(git status)");
    assert!(prefix.names_command("npm test"));
    assert!(prefix.names_command("npm   test -- --watch"));
    assert!(!prefix.names_command("npm testx"));
    assert!(!prefix.names_command("npx npm test"));
    assert!(exact.names_command("git status"));
    assert!(!exact.names_command("git status -s"));
    let shell = facts(&["npm test", "rm -rf ."]);
    let args = json!({"command": "npm test; rm -rf ."});
    assert!(
        prefix.names_call(&view("bash", &args, None, Some(&shell))),
        "names_call is 'any': the engine asks for every command to be covered before it allows"
    );
    assert!(!prefix.names_command(&shell.simple_commands[1]));
}

#[test]
fn path_rules_glob_inside_the_workspace_and_absolute_ones_anywhere() {
    let env = rule("read_file(**/.env)");
    let src = rule("edit_file(src/**)");
    let ssh = rule("read_file(~/.ssh/**)");
    let inside = |rel: &str| (PathBuf::from("/w").join(rel), Some(PathBuf::from(rel)));
    let (abs, rel) = inside(".env");
    assert!(env.names_path(&abs, rel.as_deref()));
    let (abs, rel) = inside("deep/dir/.env");
    assert!(env.names_path(&abs, rel.as_deref()));
    assert!(
        env.names_path(Path::new("/elsewhere/.env"), None),
        "**/ reaches outside the workspace"
    );
    let (abs, rel) = inside("src/a/b.rs");
    assert!(src.names_path(&abs, rel.as_deref()));
    let (abs, rel) = inside("docs/a.md");
    assert!(!src.names_path(&abs, rel.as_deref()));
    assert!(
        !src.names_path(Path::new("/other/src/a.rs"), None),
        "a relative glob means the workspace"
    );
    assert!(ssh.names_path(Path::new("/home/me/.ssh/id_rsa"), None));
    assert!(!ssh.names_path(Path::new("/home/other/.ssh/id_rsa"), None));
}

#[test]
fn a_glob_written_from_dot_or_ending_in_a_slash_means_what_it_says() {
    let inside = |rel: &str| (PathBuf::from("/w").join(rel), Some(PathBuf::from(rel)));
    let (abs, rel) = inside("src/a.rs");
    for text in [
        "edit_file(./src/**)",
        "edit_file(src/)",
        "edit_file(./src/)",
    ] {
        let rule = rule(text);
        assert!(rule.names_path(&abs, rel.as_deref()), "{text}");
        let (other, other_rel) = inside("lib/a.rs");
        assert!(!rule.names_path(&other, other_rel.as_deref()), "{text}");
    }
    assert_eq!(rule("edit_file(./src/**)").to_string(), "edit_file(src/**)");
    let ssh = Rule::parse("read_file(~/.ssh/)", Some(Path::new("/home/me"))).unwrap();
    assert!(ssh.names_path(Path::new("/home/me/.ssh/id_rsa"), None));
}

/// A deny or ask rule about another tool's paths (edits) does not keep searches out of
/// them: read_file reads there without asking.
#[test]
fn searches_are_kept_only_from_paths_that_reading_rules_name() {
    let parse = |text: &str| crate::permissions::SourcedRule {
        rule: rule(text),
        origin: crate::permissions::RuleOrigin::Configured("--deny".to_owned()),
    };
    let rules = crate::permissions::RuleSet {
        allow: Vec::new(),
        ask: vec![parse("read_file(secrets/**)"), parse("grep(private/)")],
        deny: vec![parse("edit_file(src/**)")],
    };
    let guard =
        ModePolicy::with_rules(PermissionMode::Default, rules).read_guard(PathBuf::from("/w"));
    assert!(!guard.protects(Path::new("/w/src/a.rs")), "an edit rule");
    assert!(
        guard.protects(Path::new("/w/secrets/key.txt")),
        "a read rule"
    );
    assert!(guard.protects(Path::new("/w/.env")), "a sensitive file");
    assert!(
        guard.protects(Path::new("/w/private/a.txt")),
        "a search rule"
    );
}

#[test]
fn tool_names_can_be_globs_for_mcp_servers() {
    let all = rule("mcp__github__*");
    assert!(all.names_tool("mcp__github__create_issue"));
    assert!(!all.names_tool("mcp__gitlab__create_issue"));
    assert!(!rule("bash").names_tool("bash2"));
    // Claude Code's form for a whole server.
    let server = rule("mcp__github");
    assert!(server.names_tool("mcp__github__create_issue"));
    assert!(!server.names_tool("mcp__github2__create_issue"));
    assert!(!server.names_tool("mcp__gitlab__create_issue"));
    assert!(rule("mcp__github__create_issue").names_tool("mcp__github__create_issue"));
    assert!(!rule("mcp__github__create_issue").names_tool("mcp__github__create_issue_2"));
}

#[test]
fn the_session_rule_is_the_exact_command_or_the_workspace() {
    let args = json!({"command": "cargo  test"});
    assert_eq!(
        Rule::for_session(&view("bash", &args, None, None)).to_string(),
        "bash(cargo test)"
    );
    let args = json!({"file_path": "a"});
    let session = Rule::for_session(&view("edit_file", &args, None, None));
    assert_eq!(session.to_string(), "edit_file(**)");
    assert!(session.names_path(
        Path::new("/w/src/deep/a.rs"),
        Some(Path::new("src/deep/a.rs"))
    ));
    assert!(
        !session.names_path(Path::new("/home/me/.bashrc"), None),
        "a yes inside the workspace lets nothing through outside it"
    );
    let args = json!({"query": "x"});
    assert_eq!(
        Rule::for_session(&view("mcp__docs__search", &args, None, None)).to_string(),
        "mcp__docs__search"
    );
}

#[test]
fn web_fetch_rules_name_hosts_as_written_in_the_url() {
    let docs = rule("WebFetch(domain:Docs.rs)");
    assert_eq!(docs.to_string(), "web_fetch(domain:docs.rs)");
    let args = json!({"url": "https://DOCS.rs/serde/latest"});
    assert!(docs.names_call(&view("web_fetch", &args, None, None)));
    let args = json!({"url": "https://docs.rs.evil.dev/"});
    assert!(!docs.names_call(&view("web_fetch", &args, None, None)));
    let below = rule("web_fetch(domain:*.github.com)");
    assert!(below.names_host("api.github.com"));
    assert!(!below.names_host("github.com") && !below.names_host("evilgithub.com"));
    for bad in [
        "web_fetch(docs.rs)",
        "web_fetch(domain:https://docs.rs)",
        "web_fetch(domain:)",
    ] {
        assert!(Rule::parse(bad, None).is_err(), "{bad}");
    }
    let args = json!({"url": "https://docs.rs/x?q=1"});
    assert_eq!(
        Rule::for_session(&view("web_fetch", &args, None, None)).to_string(),
        "web_fetch(domain:docs.rs)"
    );
}

#[test]
fn ask_first_rules_ask_in_every_mode_until_cleared() {
    let target = PathTarget {
        absolute: PathBuf::from("/work/p/AGENTS.md"),
        in_workspace: Some(PathBuf::from("AGENTS.md")),
        outside: false,
        write: true,
    };
    let args = json!({"file_path": "AGENTS.md", "content": "x"});
    let call = CallView {
        kind: ToolKind::Edit,
        ..view("write_file", &args, Some(&target), None)
    };
    let other_target = PathTarget {
        absolute: PathBuf::from("/work/p/README.md"),
        in_workspace: Some(PathBuf::from("README.md")),
        ..target.clone()
    };
    let other = CallView {
        kind: ToolKind::Edit,
        ..view("write_file", &args, Some(&other_target), None)
    };
    for mode in [PermissionMode::AcceptEdits, PermissionMode::Yolo] {
        let policy = ModePolicy::new(mode);
        assert_eq!(policy.decide(&call), Decision::Allow, "{mode:?}");
        policy.ask_first(vec![rule("write_file(/work/p/AGENTS.md)")]);
        assert!(
            matches!(policy.decide(&call), Decision::Ask { firm: true, .. }),
            "{mode:?}"
        );
        assert_eq!(policy.decide(&other), Decision::Allow, "only AGENTS.md");
        policy.ask_first(Vec::new());
        assert_eq!(policy.decide(&call), Decision::Allow, "{mode:?}");
    }
}
