//! Secrets in rein's environment and in `.env` reach no command, no request, no session
//! file and no terminal, in every permission mode.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, run, stderr, stdout};

const API_KEY: &str = "sk-test-FAKEKEY0123456789";
const ENV_TOKEN: &str = "ghp_envsecretABCDEFGH";
const DOTENV_KEY: &str = "sk_live_dotenvsecret42";

fn leaky_session() -> Script {
    Script::new()
        .reply(Turn::new().tool_call(MockToolCall::new(
            "b1",
            "bash",
            json!({"command": "env; echo; cat leak.log"}).to_string(),
        )))
        .reply(Turn::new().tool_call(MockToolCall::new(
            "r1",
            "read_file",
            json!({"file_path": "leak.log"}).to_string(),
        )))
        .reply(Turn::text("Done."))
}

fn leaky_env() -> Env {
    let env = Env::new();
    // Not exported: only in the file, and still a secret.
    env.write(
        ".env",
        &format!("STRIPE_SECRET_KEY={DOTENV_KEY}\nDEBUG=true\n"),
    );
    env.write(
        "leak.log",
        &format!("api={API_KEY}\ntoken={ENV_TOKEN}\nstripe={DOTENV_KEY}\n"),
    );
    env
}

fn assert_nowhere(text: &str, place: &str) {
    for secret in [API_KEY, ENV_TOKEN, DOTENV_KEY] {
        assert!(
            !text.contains(secret),
            "{secret} leaked into {place}:\n{text}"
        );
    }
}

fn check_run(mode: &str, format: &str) {
    let env = leaky_env();
    let server = MockServer::start(leaky_session());
    let out = run(env
        .rein()
        .env("OPENAI_API_KEY", API_KEY)
        .env("GITHUB_TOKEN", ENV_TOKEN)
        .env("REIN_BASE_URL", server.openai_base_url())
        .env("REIN_MODEL", "gpt-4o")
        .args(["-p", "look around", "--output-format", format])
        .args(["--permission-mode", mode]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_nowhere(&stdout(&out), "stdout");
    assert_nowhere(&stderr(&out), "stderr");

    let requests = server.requests();
    assert_eq!(requests.len(), 3, "{}", stdout(&out));
    for request in &requests {
        assert_nowhere(&request.body_text(), "a request body");
    }
    // The key still authenticates: only what the model reads is masked.
    assert_eq!(
        requests[0].header("authorization"),
        Some(format!("Bearer {API_KEY}").as_str())
    );

    let messages = requests[2].body["messages"].as_array().unwrap().clone();
    let bash_result = messages[messages.len() - 3]["content"].as_str().unwrap();
    assert!(
        !bash_result.contains("GITHUB_TOKEN=") && !bash_result.contains("OPENAI_API_KEY="),
        "the command's environment has no secrets: {bash_result}"
    );
    assert!(
        bash_result.contains("PATH="),
        "the rest of the environment is there: {bash_result}"
    );
    for masked in [
        "api=[REDACTED:OPENAI_API_KEY]",
        "token=[REDACTED:GITHUB_TOKEN]",
        "stripe=[REDACTED:STRIPE_SECRET_KEY]",
    ] {
        assert!(bash_result.contains(masked), "{masked} in {bash_result}");
    }
    let read_result = messages[messages.len() - 1]["content"].as_str().unwrap();
    assert!(
        read_result.contains("token=[REDACTED:GITHUB_TOKEN]")
            && read_result.contains("stripe=[REDACTED:STRIPE_SECRET_KEY]"),
        "a file read is masked too: {read_result}"
    );

    let sessions = env.session_files();
    assert_eq!(sessions.len(), 1);
    assert_nowhere(
        &std::fs::read_to_string(&sessions[0]).unwrap(),
        "the session file",
    );
    assert_eq!(
        env.read("leak.log"),
        format!("api={API_KEY}\ntoken={ENV_TOKEN}\nstripe={DOTENV_KEY}\n"),
        "the file itself is untouched"
    );
}

#[test]
fn secrets_are_kept_from_commands_and_masked_in_yolo_mode() {
    check_run("yolo", "stream-json");
}

#[test]
fn secrets_are_masked_in_the_text_output_too() {
    check_run("yolo", "text");
}

#[test]
fn a_passed_through_variable_reaches_commands_but_is_still_masked() {
    let env = leaky_env();
    env.write(
        ".rein/config.toml",
        "[secrets]\npass_env = [\"GITHUB_TOKEN\"]\n",
    );
    env.trust();
    let server = MockServer::start(
        Script::new()
            .reply(
                Turn::new().tool_call(MockToolCall::new(
                    "b1",
                    "bash",
                    json!({"command": "printenv GITHUB_TOKEN; printenv GITHUB_TOKEN | wc -c"})
                        .to_string(),
                )),
            )
            .reply(Turn::text("Done.")),
    );
    let out = run(env
        .rein_openai(&server)
        .env("GITHUB_TOKEN", ENV_TOKEN)
        .args(["-p", "x", "--permission-mode", "yolo"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let requests = server.requests();
    let messages = requests[1].body["messages"].as_array().unwrap();
    let result = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(
        result.contains(&(ENV_TOKEN.len() + 1).to_string()),
        "the command saw the passed-through variable: {result}"
    );
    assert!(
        result.contains("[REDACTED:GITHUB_TOKEN]") && !result.contains(ENV_TOKEN),
        "its value is masked all the same: {result}"
    );
}

#[test]
fn a_big_output_is_saved_with_its_secrets_masked() {
    let env = leaky_env();
    // Far past the output budget: the whole output goes to a file under REIN_HOME.
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({"command": "awk '{for (i = 0; i < 5000; i++) print}' leak.log"}).to_string(),
            )))
            .reply(Turn::text("Done.")),
    );
    let out = run(env
        .rein()
        .env("OPENAI_API_KEY", API_KEY)
        .env("GITHUB_TOKEN", ENV_TOKEN)
        .env("REIN_BASE_URL", server.openai_base_url())
        .env("REIN_MODEL", "gpt-4o")
        .args(["-p", "x", "--permission-mode", "yolo"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let saved: Vec<std::path::PathBuf> = walk(&env.rein_home.join("tool-output"));
    assert!(!saved.is_empty(), "the output was saved");
    let mut masked = 0;
    for file in saved {
        let text = std::fs::read_to_string(&file).unwrap();
        masked += usize::from(text.contains("[REDACTED:GITHUB_TOKEN]"));
        assert_nowhere(&text, &file.display().to_string());
    }
    assert!(
        masked > 0,
        "the command's whole output is among them, masked"
    );
}

fn walk(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(walk(&path));
        } else {
            files.push(path);
        }
    }
    files
}

/// A secret can reach a result's display payload by a field other than its text: here the
/// path the sandbox refused, made of a token a command read from a file. Neither the
/// question to leave the sandbox, nor the refused result, nor the session file shows it,
/// for the person's own `!command` as for the model's call.
#[test]
fn a_secret_in_what_the_sandbox_refused_is_masked_everywhere() {
    use crate::pty::Pty;
    let test = "a_secret_in_what_the_sandbox_refused_is_masked_everywhere";
    crate::support::require_python3();
    let env = Env::new();
    if !crate::support::sandbox_enforced(&env, test) {
        return;
    }
    let secret = "dt-5up3r-s3cr3t-v4lue";
    env.write("token.txt", &format!("{secret}\n"));
    // A write outside the workspace, to a file named by the token: the sandbox refuses it
    // and names the path.
    let command = format!(
        "python3 -c \"p = open('token.txt').read().strip(); open('{}/' + p, 'w')\"",
        env.home.display()
    );
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "b1",
                "bash",
                json!({ "command": command }).to_string(),
            )))
            .reply(Turn::text("It was refused.")),
    );
    let mut pty = Pty::start_with(
        &env,
        &server.openai_base_url(),
        &["--permission-mode", "auto"],
        200,
        &[("DEPLOY_TOKEN", secret)],
    );
    pty.wait_ready();
    // The person's own command first, then the model's.
    pty.send(&format!("!{command}\r"));
    pty.wait_for("bash needs your approval");
    pty.wait_for("y yes, once");
    pty.send("n");
    pty.wait_for("(the output goes with your next request)");
    pty.send("try it\r");
    pty.wait_for_count("bash needs your approval", 2);
    pty.wait_for_count("y yes, once", 2);
    pty.send("n");
    pty.wait_for("It was refused.");
    let shown = pty.transcript();
    assert!(
        shown.contains("refused a write to") && shown.contains("[REDACTED:DEPLOY_TOKEN]"),
        "{shown}"
    );
    assert!(!shown.contains(secret), "on the terminal:\n{shown}");
    pty.send("/quit\r");
    assert_eq!(pty.wait_exit(), 0);
    let body = server.requests()[1].body.to_string();
    assert!(!body.contains(secret), "sent to the model: {body}");
    // Nowhere in rein's home but the checkpoints, which keep the workspace's own files
    // (token.txt) as they are.
    let sessions = env.session_files();
    assert!(!sessions.is_empty());
    let checkpoints = env.rein_home.join("checkpoints");
    for file in walk(&env.rein_home) {
        if file.starts_with(&checkpoints) {
            continue;
        }
        let text = String::from_utf8_lossy(&std::fs::read(&file).unwrap()).into_owned();
        assert!(!text.contains(secret), "in {}", file.display());
    }
}
