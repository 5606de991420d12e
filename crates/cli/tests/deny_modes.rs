//! The hard deny list's misses of issue 19, refused in every permission mode. `rm` and
//! `perl` resolve to harmless stand-ins first on PATH, so a miss would delete nothing: it
//! would leave a mark.

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::json;

use crate::support::{Env, final_json, run, stderr};

const FORMS: [&str; 4] = [
    "declare -a a=(/); rm -rf \"${a[@]}\"",
    "rm -rf \"$(printf '\\x2f')\"",
    "perl -e 'system(\"rm\",\"-rf\",\"/\")'",
    "rm -rf \"$(echo ~)\"",
];

#[test]
fn the_four_forms_are_refused_in_every_mode() {
    for mode in ["default", "accept-edits", "auto", "yolo"] {
        let env = Env::new();
        // Stand-ins that only record that they ran.
        let bin = env.home.join("stand-ins");
        std::fs::create_dir_all(&bin).unwrap();
        for name in ["rm", "perl"] {
            let path = bin.join(name);
            std::fs::write(
                &path,
                format!(
                    "#!/bin/sh\necho \"{name} $*\" >> \"{}\"\n",
                    bin.join("ran").display()
                ),
            )
            .unwrap();
            let mut permissions = std::fs::metadata(&path).unwrap().permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut permissions, 0o755);
            std::fs::set_permissions(&path, permissions).unwrap();
        }
        let mut script = Script::new();
        for (i, form) in FORMS.iter().enumerate() {
            script = script.reply(Turn::new().tool_call(MockToolCall::new(
                format!("d{i}"),
                "bash",
                json!({ "command": form }).to_string(),
            )));
        }
        let server = MockServer::start(script.reply(Turn::text("Done.")));
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let out = run(env.rein_openai(&server).env("PATH", path).args([
            "-p",
            "clean up",
            "--output-format",
            "json",
            "--permission-mode",
            mode,
        ]));
        assert!(out.status.success(), "{mode}: {}", stderr(&out));
        assert!(
            !bin.join("ran").exists(),
            "{mode}: a stand-in ran: {}",
            std::fs::read_to_string(bin.join("ran")).unwrap_or_default()
        );
        let report = final_json(&out);
        let denials = report["permission_denials"].as_array().unwrap();
        assert_eq!(denials.len(), FORMS.len(), "{mode}: {report}");
        for (denial, form) in denials.iter().zip(FORMS) {
            assert_eq!(denial["arguments"]["command"], form, "{mode}: {report}");
            let reason = denial["reason"].as_str().unwrap();
            assert!(
                reason.contains("hard deny list"),
                "{mode}: {form}: {reason}"
            );
        }
    }
}
