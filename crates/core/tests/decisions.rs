//! The permission decision table: tool, arguments, mode and rules → allow, ask or deny, each
//! row decided by the real engine with the real shell parser, in a real workspace.

use rein_core::build::AgentBuilder;
use rein_core::permissions::{
    Decision, PermissionMode, Rule, RuleOrigin, RuleSet, SourcedRule, Verdict,
};
use rein_llm::ProviderKind;
use serde_json::json;
use tempfile::TempDir;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Allow,
    Ask,
    /// Refused by a rule or the mode.
    Deny,
    /// Refused by the hard deny list, which no mode or rule lifts.
    Hard,
}

use Expect::{Allow, Ask, Deny, Hard};

/// A workspace with a source tree, a `.env`, and a link that leads outside it.
struct Fixture {
    _root: TempDir,
    work: std::path::PathBuf,
    home: std::path::PathBuf,
}

impl Fixture {
    fn new() -> Self {
        let root = TempDir::new().unwrap();
        let base = root.path().canonicalize().unwrap();
        let home = base.join("home");
        let work = home.join("project");
        std::fs::create_dir_all(work.join("src")).unwrap();
        std::fs::write(work.join("src/lib.rs"), "fn main() {}\n").unwrap();
        std::fs::write(work.join(".env"), "A=1\n").unwrap();
        std::fs::write(home.join("notes.txt"), "mine\n").unwrap();
        std::os::unix::fs::symlink(home.join("notes.txt"), work.join("escape.txt")).unwrap();
        Fixture {
            _root: root,
            work,
            home,
        }
    }

    /// Decides `call` (`tool: argument`) under `mode` and `rules` (`allow RULE, deny RULE`).
    fn decide(&self, mode: &str, rules: &str, call: &str) -> Verdict {
        let mode = match mode {
            "default" => PermissionMode::Default,
            "accept-edits" => PermissionMode::AcceptEdits,
            "plan" => PermissionMode::Plan,
            "yolo" => PermissionMode::Yolo,
            other => panic!("unknown mode {other}"),
        };
        let mut set = RuleSet::default();
        for rule in rules.split(", ").filter(|r| !r.is_empty()) {
            let (list, text) = rule.split_once(' ').unwrap();
            let rule = SourcedRule {
                rule: Rule::parse(text, Some(&self.home)).unwrap(),
                origin: RuleOrigin::Configured("the test".into()),
            };
            match list {
                "allow" => set.allow.push(rule),
                "ask" => set.ask.push(rule),
                "deny" => set.deny.push(rule),
                other => panic!("unknown list {other}"),
            }
        }
        let (tool, argument) = call.split_once(": ").unwrap();
        let arguments = match tool {
            "bash" => json!({ "command": argument }),
            _ => json!({ "file_path": argument }),
        };
        AgentBuilder::new(&self.work, "m", ProviderKind::OpenAi)
            .mode(mode)
            .rules(set)
            .tool_config(|c| c.home_dir = Some(self.home.clone()))
            .explain_call(tool, &arguments)
            .unwrap_or_else(|e| panic!("{call}: {e}"))
    }
}

fn outcome(verdict: &Verdict) -> Expect {
    match &verdict.decision {
        Decision::Allow => Allow,
        Decision::Ask { .. } => Ask,
        Decision::Deny { reason } if reason.contains("hard deny list") => Hard,
        Decision::Deny { .. } => Deny,
    }
}

/// (mode, rules, call, expected)
const TABLE: &[(&str, &str, &str, Expect)] = &[
    // File tools and the modes.
    ("default", "", "read_file: src/lib.rs", Allow),
    ("plan", "", "read_file: src/lib.rs", Allow),
    ("default", "", "edit_file: src/lib.rs", Ask),
    ("accept-edits", "", "edit_file: src/lib.rs", Allow),
    ("plan", "", "edit_file: src/lib.rs", Deny),
    ("yolo", "", "write_file: src/new.rs", Allow),
    (
        "default",
        "allow edit_file(src/**)",
        "edit_file: src/lib.rs",
        Allow,
    ),
    (
        "accept-edits",
        "deny Edit(src/**)",
        "edit_file: src/lib.rs",
        Deny,
    ),
    ("yolo", "ask Write(src/**)", "write_file: src/lib.rs", Ask),
    // Outside the workspace: writes ask in every mode, reads in all but yolo.
    ("yolo", "", "edit_file: /etc/hosts", Ask),
    ("accept-edits", "", "write_file: ../notes.txt", Ask),
    ("yolo", "", "edit_file: escape.txt", Ask),
    ("accept-edits", "", "write_file: escape.txt", Ask),
    ("yolo", "allow edit_file(**)", "edit_file: escape.txt", Ask),
    (
        "yolo",
        "allow edit_file(~/notes.txt)",
        "edit_file: escape.txt",
        Allow,
    ),
    ("default", "", "read_file: /etc/hosts", Ask),
    ("yolo", "", "read_file: /etc/hosts", Allow),
    (
        "default",
        "allow read_file(/etc/**)",
        "read_file: /etc/hosts",
        Allow,
    ),
    // Sensitive files ask by default; a rule decides either way.
    ("default", "", "read_file: .env", Ask),
    ("yolo", "", "read_file: .env", Ask),
    ("default", "", "read_file: config/.env.production", Ask),
    ("default", "", "read_file: certs/server.pem", Ask),
    ("default", "", "read_file: ~/.ssh/id_rsa", Ask),
    ("default", "allow read_file(.env)", "read_file: .env", Allow),
    ("yolo", "deny read_file(**/.env)", "read_file: .env", Deny),
    ("default", "", "read_file: src/environment.rs", Allow),
];

#[test]
fn every_row_of_the_table_decides_as_written() {
    let fx = Fixture::new();
    let mut wrong = Vec::new();
    for &(mode, rules, call, expected) in TABLE {
        let verdict = fx.decide(mode, rules, call);
        if outcome(&verdict) != expected {
            wrong.push(format!(
                "{mode:13} [{rules}] {call}: expected {expected:?}, got {:?} ({})",
                verdict.decision, verdict.because
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "{} of {} rows decide otherwise:\n{}",
        wrong.len(),
        TABLE.len(),
        wrong.join("\n")
    );
}
