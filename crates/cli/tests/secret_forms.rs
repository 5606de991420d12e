//! A secret transformed by a command (base64, hex, URL-encoding, reversed, characters
//! separated) is masked in what the model gets, on the terminal, in the session file and in
//! a background command's saved output; so is the model's own text and tool arguments, and
//! a server's error that quotes the key.

use rein_testkit::{MockServer, MockToolCall, Reply, Script, Turn};
use serde_json::json;

use crate::support::{Env, run, stderr, stdout};

const TOKEN: &str = "ghp_envsecretABCDEFGH";
const WEIRD: &str = "tok/en+with=special!chars";

/// Prints the secrets of `leak.log` in every form the masking knows.
const TRANSFORMS: &str = r#"T=$(sed -n 's/^token=//p' leak.log); W=$(sed -n 's/^weird=//p' leak.log)
printf %s "$T" | base64 -w0; echo
printf x%s "$T" | base64 -w0; echo
printf xy%s "$T" | base64 -w0; echo
printf %s "$T" | base64 -w0 | tr '+/' '-_'; echo
printf %s "$T" | od -An -tx1 | tr -d ' \n'; echo
printf %s "$T" | od -An -tx1 | tr -d ' \n' | tr a-f A-F; echo
printf %s "$W" | jq -sRr @uri
printf %s "$T" | rev; echo
printf %s "$T" | sed 's/./& /g'; echo
printf %s "$T" | sed 's/./&,/g'; echo
python3 -c 'import sys; print(list(sys.argv[1]))' "$T"
echo END-OF-FORMS"#;

/// The forms as the commands print them, run here on the values themselves.
fn forms() -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("leak.log"),
        format!("token={TOKEN}\nweird={WEIRD}\n"),
    )
    .unwrap();
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(TRANSFORMS)
        .current_dir(dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8(out.stdout).unwrap();
    let forms: Vec<String> = text
        .lines()
        .filter(|l| !l.is_empty() && *l != "END-OF-FORMS")
        .map(|l| l.trim_end_matches([' ', ',']).to_owned())
        .collect();
    assert_eq!(forms.len(), 11, "{text}");
    forms
}

fn assert_masked(text: &str, place: &str, forms: &[String]) {
    for form in forms.iter().map(String::as_str).chain([TOKEN, WEIRD]) {
        assert!(!text.contains(form), "{form} leaked into {place}:\n{text}");
    }
}

#[test]
fn every_form_of_a_secret_is_masked_in_every_sink() {
    let env = Env::new();
    env.write(".env", &format!("WEIRD_TOKEN={WEIRD}\n"));
    env.write("leak.log", &format!("token={TOKEN}\nweird={WEIRD}\n"));
    let wait_for_background = "timeout 30 sh -c 'until grep -qs END-OF-FORMS \
                               \"$REIN_HOME\"/tool-output/*/bash_bg*; do sleep 0.05; done'";
    let server = MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new(
                "fg",
                "bash",
                json!({ "command": TRANSFORMS }).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "bg",
                "bash",
                json!({ "command": TRANSFORMS, "run_in_background": true }).to_string(),
            )))
            .reply(Turn::new().tool_call(MockToolCall::new(
                "wait",
                "bash",
                json!({ "command": wait_for_background }).to_string(),
            )))
            // The model writes the secret itself, cut across pieces, and in a call.
            .reply(
                Turn::new()
                    .chunks(["Your token is ghp_env", "secretABC", "DEFGH, kept."])
                    .tool_call(MockToolCall::new(
                        "w",
                        "write_file",
                        json!({ "file_path": "note.txt", "content": format!("T={TOKEN}\n") })
                            .to_string(),
                    )),
            )
            .reply(Turn::text(format!(
                "Done: {TOKEN} reversed is {}.",
                rev(TOKEN)
            ))),
    );
    let out = run(env
        .rein_openai(&server)
        .env("GITHUB_TOKEN", TOKEN)
        .args(["-p", "show me", "--output-format", "stream-json"])
        .args(["--permission-mode", "yolo"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let forms = forms();

    // What the model got.
    let requests = server.requests();
    for request in &requests {
        assert_masked(&request.body_text(), "a request", &forms);
    }
    let messages = requests[1].body["messages"].as_array().unwrap().clone();
    let result = messages.last().unwrap()["content"].as_str().unwrap();
    assert!(
        result.matches("[REDACTED:GITHUB_TOKEN]").count() >= 10
            && result.contains("[REDACTED:WEIRD_TOKEN]"),
        "{result}"
    );

    // The terminal: the streamed text, put back together, and every event.
    let printed = stdout(&out);
    assert_masked(&printed, "stdout", &forms);
    assert_masked(&stderr(&out), "stderr", &forms);
    let streamed: String = printed
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| e["type"] == "text_delta")
        .map(|e| e["text"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        streamed.contains("Your token is [REDACTED:GITHUB_TOKEN], kept."),
        "{streamed}"
    );

    // The session file.
    let sessions = env.session_files();
    let session = std::fs::read_to_string(&sessions[0]).unwrap();
    assert_masked(&session, "the session file", &forms);
    assert!(
        session.contains("T=[REDACTED:GITHUB_TOKEN]"),
        "the call, masked"
    );
    assert_eq!(
        env.read("note.txt"),
        format!("T={TOKEN}\n"),
        "it ran as written"
    );

    // The background command's saved output.
    let saved: Vec<_> = walk(&env.rein_home.join("tool-output"))
        .into_iter()
        .filter(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with("bash_bg")
        })
        .collect();
    assert_eq!(saved.len(), 1, "{saved:?}");
    let text = std::fs::read_to_string(&saved[0]).unwrap();
    assert_masked(&text, "the background output file", &forms);
    assert!(text.contains("END-OF-FORMS"), "{text}");
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

fn rev(text: &str) -> String {
    text.chars().rev().collect()
}

#[test]
fn a_servers_error_that_quotes_the_key_shows_it_masked() {
    let key = "sk-quoted-KEY0123456789";
    let env = Env::new();
    let refusal = || {
        Reply::http(
            401,
            json!({ "error": { "message": format!("Incorrect API key provided: {key}."),
                               "type": "invalid_request_error" } })
            .to_string(),
        )
    };
    let server = MockServer::start(Script::new().reply(refusal()).reply(refusal()));
    for format in ["text", "json"] {
        let out = run(env
            .rein()
            .env("OPENAI_API_KEY", key)
            .env("REIN_BASE_URL", server.openai_base_url())
            .env("REIN_MODEL", "gpt-4o")
            .args(["-p", "hi", "--output-format", format]));
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        let shown = format!("{}{}", stdout(&out), stderr(&out));
        assert!(!shown.contains(key), "{shown}");
        assert!(
            shown.contains("Incorrect API key provided: [REDACTED"),
            "{shown}"
        );
    }
    for session in env.session_files() {
        assert!(!std::fs::read_to_string(session).unwrap().contains(key));
    }
}
