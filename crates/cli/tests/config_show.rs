//! `rein config --show` names the file of each table key, and a mistake in a table names the
//! file, the key's path and what is expected.

use crate::support::{Env, run, stderr, stdout};

#[test]
fn config_show_lists_each_table_key_with_the_file_that_set_it() {
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
        format!("tool_search.max_tools = 40  ({})", user.display()),
        format!("tool_search.max_tools = 20  ({})", project.display()),
        format!("repl.permission_mode = \"plan\"  ({})", project.display()),
        format!(
            "pricing.\"my-model\" = {{ input = 1, output = 2 }}  ({})",
            user.display()
        ),
    ] {
        assert!(text.contains(&line), "{line:?} missing from:\n{text}");
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
