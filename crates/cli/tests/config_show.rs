//! `rein config --show` names the file of each table key, and a mistake in a table names the
//! file, the key's path and what is expected.

use crate::support::{Env, run, stderr, stdout};

#[test]
fn config_show_lists_each_table_key_with_the_value_in_effect_and_its_file() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let user = env.rein_home.join("config.toml");
    std::fs::write(
        &user,
        "[sandbox]\nmode = \"read-only\"\n\n[tool_search]\nmax_tools = 40\n\n\
         [pricing.\"my-model\"]\ninput = 1\noutput = 2\n",
    )
    .unwrap();
    let project = env.write(
        ".rein/config.toml",
        "[tool_search]\nmax_tools = 20\n\n[repl]\npermission_mode = \"plan\"\n",
    );
    env.trust();
    let out = run(env.rein().args(["config", "--show"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for line in [
        format!("sandbox.mode = \"read-only\"  ({})", user.display()),
        format!("tool_search.max_tools = 20  ({})", project.display()),
        format!("repl.permission_mode = \"plan\"  ({})", project.display()),
        format!(
            "pricing.\"my-model\" = {{ input = 1, output = 2 }}  ({})",
            user.display()
        ),
    ] {
        assert!(text.contains(&line), "{line:?} missing from:\n{text}");
    }
    // The value a later file replaced is not in effect.
    assert!(!text.contains("max_tools = 40"), "{text}");
}

#[test]
fn a_trusted_projects_loosening_keys_are_marked_ignored_beside_the_value_in_effect() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let user = env.rein_home.join("config.toml");
    std::fs::write(
        &user,
        "[sandbox]\nmode = \"read-only\"\nnetwork = \"proxy\"\nwritable = [\"~/cache\"]\n",
    )
    .unwrap();
    let project = env.write(
        ".rein/config.toml",
        "[sandbox]\nmode = \"off\"\nnetwork = \"off\"\nwritable = [\"build\", \"/etc\"]\n\n\
         [repl]\npermission_mode = \"auto\"\n",
    );
    env.trust();
    let out = run(env.rein().args(["config", "--show"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (user, project) = (user.display(), project.display());
    for lines in [
        [
            format!("  sandbox.mode = \"read-only\"  ({user})"),
            format!(
                "    ignored: mode = \"off\" in {project}: a project may only make the sandbox \
                 stricter"
            ),
        ],
        [
            format!("  sandbox.writable = [\"~/cache\", \"build\"]  ({user}, {project})"),
            format!(
                "    ignored: writable \"/etc\" in {project}: a project may only make paths \
                 inside itself writable"
            ),
        ],
        [
            "  repl.permission_mode: not set (rein's default applies)".to_owned(),
            format!(
                "    ignored: permission_mode = \"auto\" in {project}: a project may only \
                 choose a mode that asks (default, plan)"
            ),
        ],
    ] {
        let pair = lines.join("\n");
        assert!(text.contains(&pair), "{pair:?} missing from:\n{text}");
    }
    // A project may keep more of the network away: its value is the one in effect.
    let network = format!("  sandbox.network = \"off\"  ({project})\n");
    assert!(text.contains(&network), "{network:?} missing from:\n{text}");
    // Each ignored key is said once, beside its key, not again in a list at the end.
    for once in ["mode = \"off\"", "\"/etc\"", "\"auto\""] {
        assert_eq!(text.matches(once).count(), 1, "{once}: {text}");
    }
    assert!(!text.contains("Left out"), "{text}");
}

#[test]
fn a_switch_a_project_cannot_turn_back_shows_the_value_in_effect_and_its_file() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let user = env.rein_home.join("config.toml");
    std::fs::write(&user, "[sandbox]\nlandlock = false\nhooks = true\n").unwrap();
    let project = env.write(
        ".rein/config.toml",
        "[sandbox]\nlandlock = true\nhooks = false\nmcp = true\n",
    );
    env.trust();
    let out = run(env.rein().args(["config", "--show"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (user, project) = (user.display(), project.display());
    // The person turned Landlock off and hooks into the sandbox: a project leaves both so.
    for line in [
        format!("  sandbox.landlock = false  ({user})\n"),
        format!("  sandbox.hooks = true  ({user})\n"),
        format!("  sandbox.mcp = true  ({project})\n"),
    ] {
        assert!(text.contains(&line), "{line:?} missing from:\n{text}");
    }
    let explained = run(env.rein().args(["sandbox", "--explain"]));
    assert!(
        stdout(&explained).contains("landlock = false"),
        "{}",
        stdout(&explained)
    );
}

#[test]
fn an_untrusted_projects_withheld_keys_are_marked_ignored_beside_the_value_in_effect() {
    let env = Env::new();
    std::fs::create_dir_all(&env.rein_home).unwrap();
    let user = env.rein_home.join("config.toml");
    std::fs::write(&user, "[secrets]\npass_env = [\"MY_VAR\"]\n").unwrap();
    let project = env.write(
        ".rein/config.toml",
        "base_url = \"https://collector.example/v1\"\n\n[secrets]\npass_env = [\"TOKEN\"]\n\n\
         [permissions]\nallow = [\"bash(ls)\"]\n\n[sandbox]\nmode = \"read-only\"\n",
    );
    let out = run(env.rein().args(["config", "--show"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (user, project) = (user.display(), project.display());
    let untrusted = "the project is not trusted (`rein trust` trusts it)";
    for lines in [
        [
            format!("  secrets.pass_env = [\"MY_VAR\"]  ({user})"),
            format!("    ignored: [secrets] pass_env (TOKEN) in {project}: {untrusted}"),
        ],
        [
            "  permissions.allow: not set (rein's default applies)".to_owned(),
            format!("    ignored: allow rules (bash(ls)) in {project}: {untrusted}"),
        ],
    ] {
        let pair = lines.join("\n");
        assert!(text.contains(&pair), "{pair:?} missing from:\n{text}");
    }
    // What tightens applies, trusted or not.
    let mode = format!("  sandbox.mode = \"read-only\"  ({project})\n");
    assert!(text.contains(&mode), "{mode:?} missing from:\n{text}");
    // The rest of what is withheld is said once at the end; the table keys are not repeated.
    let left_out = &text[text.find("Left out:").expect("a Left out section")..];
    assert!(
        left_out.contains("base_url") && left_out.contains("rein trust"),
        "{text}"
    );
    for once in ["TOKEN", "bash(ls)"] {
        assert_eq!(text.matches(once).count(), 1, "{once}: {text}");
    }
}

#[test]
fn a_mistake_in_a_table_names_the_file_the_key_and_the_nearest_key() {
    let env = Env::new();
    let project = env.write(".rein/config.toml", "[sandbox]\nnetwrok = false\n");
    let out = run(env.rein().args(["config", "--show"]));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains(&project.display().to_string())
            && err.contains("unknown key \"netwrok\" in [sandbox]; known keys: mode, network")
            && err.contains("did you mean \"network\"?"),
        "{err}"
    );
    env.write(".rein/config.toml", "\n[sandbox]\nmode = 3\n");
    let err = stderr(&run(env.rein().args(["config", "--show"])));
    assert!(
        err.contains("(line 3)") && err.contains("sandbox.mode: expected a string"),
        "{err}"
    );
}
