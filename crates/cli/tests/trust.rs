//! `rein trust`: recording, listing and withdrawing the trust in a project.

use crate::support::{Env, run, stderr, stdout};

#[test]
fn a_project_is_trusted_listed_and_revoked() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    std::fs::create_dir_all(env.work.join("sub/dir")).unwrap();
    let mut cmd = env.rein();
    cmd.current_dir(env.work.join("sub/dir")).arg("trust");
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("now trusted"), "{said}");
    // It has no files of its own yet: none is named as if it applied.
    assert!(said.contains("no configuration of its own"), "{said}");
    assert!(!said.contains("these now apply"), "{said}");

    let out = run(env.rein().args(["trust", "--list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim(),
        env.work.display().to_string(),
        "the project root, not the subdirectory"
    );
    assert!(
        std::fs::read_to_string(env.rein_home.join("trusted-projects"))
            .unwrap()
            .contains(&env.work.display().to_string())
    );

    let out = run(env.rein().args(["trust", "--revoke"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(env.rein().args(["trust", "--list"]));
    assert_eq!(stdout(&out).trim(), "");

    let out = run(env.rein().args(["trust", "/no/such/dir"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `rein trust` names the project's files that exist, and only those.
#[test]
fn trust_names_only_the_files_that_exist() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    env.write(".mcp.json", r#"{"mcpServers": {}}"#);
    let out = run(env.rein().arg("trust"));
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(
        said.contains("MCP servers of") && said.contains(".mcp.json"),
        "{said}"
    );
    for absent in [".rein/config.toml", "settings.json", ".env"] {
        assert!(!said.contains(absent), "{absent} does not exist: {said}");
    }
}

/// In an untrusted project, `rein mcp list` says its servers wait for `rein trust` rather
/// than that there are none.
#[test]
fn mcp_list_in_an_untrusted_project_says_its_servers_wait_for_trust() {
    let env = Env::new();
    std::fs::create_dir_all(env.work.join(".git")).unwrap();
    env.write(
        ".mcp.json",
        r#"{"mcpServers": {"proj": {"command": "definitely-not-run"}}}"#,
    );
    let out = run(env.rein().args(["mcp", "list"]));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(!text.contains("No MCP servers"), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("proj"))
        .unwrap_or_else(|| panic!("no line for proj: {text}"));
    assert!(line.contains("rein trust"), "{text}");
}
