//! A project's `.claude/settings.json` behaves as the equivalent `.rein/config.toml`, once
//! the project is trusted; the person's `~/.claude/settings.json` only when they opt in.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, stderr};

const SETTINGS_JSON: &str = r#"{
  "$schema": "https://json.schemastore.org/claude-code-settings.json",
  "permissions": {
    "allow": ["Bash(npm test:*)"],
    "deny": ["Bash(git push:*)"]
  },
  "hooks": {
    "PreToolUse": [
      {"matcher": "Bash", "hooks": [{"type": "command", "command": "echo \"hook $FOO_MODE\" >> hook.log"}]}
    ]
  },
  "env": {"FOO_MODE": "from-settings"},
  "model": "claude-opus"
}"#;

const EQUIVALENT_TOML: &str = r#"
[permissions]
allow = ["Bash(npm test:*)"]
deny = ["Bash(git push:*)"]

[[hooks.PreToolUse]]
matcher = "Bash"
command = "echo \"hook $FOO_MODE\" >> hook.log"
"#;

/// What a run that tries `npm test` then `git push` shows: the calls refused, the hook's
/// log, what `npm test` printed, and the run's report.
struct Seen {
    denied: Vec<String>,
    hook_log: String,
    npm_ran: String,
    report: serde_json::Value,
}

fn try_both(env: &Env, vars: &[(&str, &str)]) -> Seen {
    // A stand-in npm that prints the variable it got.
    let bin = env.home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let npm = bin.join("npm");
    std::fs::write(
        &npm,
        "#!/bin/sh\necho \"npm $* FOO_MODE=$FOO_MODE\" > npm.out\n",
    )
    .unwrap();
    let mut permissions = std::fs::metadata(&npm).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
    std::fs::set_permissions(&npm, permissions).unwrap();
    let _ = std::fs::remove_file(env.work.join("hook.log"));
    let _ = std::fs::remove_file(env.work.join("npm.out"));
    let call = |id: &str, command: &str| {
        Turn::new().tool_call(MockToolCall::new(
            id,
            "bash",
            json!({ "command": command }).to_string(),
        ))
    };
    let server = MockServer::start(
        Script::new()
            .reply(call("a", "npm test"))
            .reply(call("b", "git push origin main"))
            .reply(Turn::text("Done.")),
    );
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let mut cmd = env.rein_openai(&server);
    cmd.env("PATH", path)
        .args(["-p", "test and push", "--output-format", "json"]);
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    let denied = report["permission_denials"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["arguments"]["command"].as_str().unwrap_or("").to_owned())
        .collect();
    Seen {
        denied,
        hook_log: std::fs::read_to_string(env.work.join("hook.log")).unwrap_or_default(),
        npm_ran: std::fs::read_to_string(env.work.join("npm.out")).unwrap_or_default(),
        report,
    }
}

#[test]
fn settings_json_applies_like_the_equivalent_toml_only_once_trusted() {
    let claude = Env::new();
    claude.write(".claude/settings.json", SETTINGS_JSON);

    // Untrusted: the deny rule holds, the allow rule, the hook and the env do not apply.
    let seen = try_both(&claude, &[]);
    assert_eq!(
        seen.denied,
        ["npm test", "git push origin main"],
        "{}",
        seen.report
    );
    assert_eq!(seen.hook_log, "");
    let warnings = seen.report["warnings"].to_string();
    assert!(warnings.contains("not trusted"), "{warnings}");
    assert!(warnings.contains("env (FOO_MODE)"), "{warnings}");

    // Trusted: npm test runs with the env, the hook runs, git push is refused.
    claude.trust();
    let seen = try_both(&claude, &[]);
    assert_eq!(seen.denied, ["git push origin main"], "{}", seen.report);
    assert_eq!(seen.npm_ran, "npm test FOO_MODE=from-settings\n");
    assert_eq!(seen.hook_log, "hook from-settings\nhook from-settings\n");
    // The unsupported key: one warning naming it.
    let warnings: Vec<String> = seen.report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap().to_owned())
        .filter(|w| w.contains("not supported"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("\"model\""), "{warnings:?}");

    // The same in TOML (the env as the environment): the same behaviour.
    let toml = Env::new();
    toml.write(".rein/config.toml", EQUIVALENT_TOML);
    toml.trust();
    let same = try_both(&toml, &[("FOO_MODE", "from-settings")]);
    assert_eq!(same.denied, seen.denied);
    assert_eq!(same.npm_ran, seen.npm_ran);
    assert_eq!(same.hook_log, seen.hook_log);

    // A change to settings.json withdraws the trust, like a change to the TOML would.
    claude.write(
        ".claude/settings.json",
        &SETTINGS_JSON.replace("npm test", "npm run"),
    );
    let seen = try_both(&claude, &[]);
    assert_eq!(seen.hook_log, "", "a changed file's hooks ran");
}

#[test]
fn the_persons_claude_settings_apply_only_when_imported() {
    let env = Env::new();
    let home_settings = env.home.join(".claude/settings.json");
    std::fs::create_dir_all(home_settings.parent().unwrap()).unwrap();
    std::fs::write(
        &home_settings,
        r#"{"permissions": {"deny": ["Bash(npm test:*)"]}}"#,
    )
    .unwrap();
    let seen = try_both(&env, &[]);
    assert_eq!(seen.denied, ["npm test", "git push origin main"]);
    let out = run(env.rein().args(["explain-permission", "bash(npm test)"]));
    assert!(
        crate::support::stdout(&out).contains("asks first"),
        "{}",
        crate::support::stdout(&out)
    );
    std::fs::create_dir_all(&env.rein_home).unwrap();
    std::fs::write(
        env.rein_home.join("config.toml"),
        "import_claude_settings = true\n",
    )
    .unwrap();
    let out = run(env.rein().args(["explain-permission", "bash(npm test)"]));
    let text = crate::support::stdout(&out);
    assert!(
        text.contains("is refused") && text.contains(".claude/settings.json"),
        "{text}"
    );
}

#[test]
fn a_broken_settings_file_is_named() {
    let env = Env::new();
    env.write(
        ".claude/settings.json",
        "{\"permissions\": {\"deny\": [\"Bsh(ls)\"]}}",
    );
    let server = MockServer::start(Script::new().reply(Turn::text("x")));
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did you mean Bash?"),
        "{}",
        stderr(&out)
    );
    env.write(".claude/settings.json", "{\"permissions\": [}");
    let out = run(env.rein_openai(&server).args(["-p", "hi"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("invalid JSON in") && stderr(&out).contains("settings.json"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn config_show_prints_each_setting_with_where_it_came_from() {
    let env = Env::new();
    env.write(".claude/settings.json", SETTINGS_JSON);
    env.write(".rein/config.toml", "max_rounds = 7\n");
    env.trust();
    let out = run(env.rein().env("REIN_MODEL", "m-from-env").args([
        "config",
        "--show",
        "--deny",
        "Read(**/.env)",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = crate::support::stdout(&out);
    for line in [
        "max_rounds = 7  (",
        "model = \"m-from-env\"  (environment variable REIN_MODEL)",
        "retries = (default)  (built-in default)",
        "deny  Bash(git push:*)  (",
        "deny  Read(**/.env)  (flag --deny)",
        "allow Bash(npm test:*)  (",
        "PreToolUse [Bash] echo",
        "FOO_MODE=from-settings",
        "\"model\" is not supported",
    ] {
        assert!(text.contains(line), "{line:?} missing from:\n{text}");
    }
    assert!(text.contains(".claude/settings.json"), "{text}");
}
