//! The whole permission decision for one bash command, as the tool pipeline makes it before
//! every call: parse and analyse the command line, resolve the files it names, then the
//! rules (a handful of configured ones plus rein's sensitive-file defaults) and the mode.
//! Target (issue 9): under 50 µs median for typical commands.
//!
//! Run: `cargo bench -p rein-core --bench permissions`

#![expect(
    clippy::unwrap_used,
    reason = "benchmark setup: any failure should stop the run"
)]

use std::path::Path;
use std::sync::LazyLock;

use rein_core::permissions::facts::shell_facts;
use rein_core::permissions::{
    CallView, ModePolicy, PermissionMode, Rule, RuleOrigin, RuleSet, SourcedRule,
};
use rein_tools::{ToolConfig, ToolContext, ToolKind};
use serde_json::{Value, json};

/// Commands of the kind agents run; the rules below allow some, deny others.
const COMMANDS: [&str; 12] = [
    "cargo test",
    "git status && git diff | head",
    "npm test -- --watch",
    "ls -la; pwd",
    "rg -n foo src | wc -l",
    "cargo build --release 2>&1 | tail -20",
    "find . -name '*.rs' -not -path './target/*' | xargs wc -l | sort -n | tail -5",
    "git push origin main",
    "cat .env",
    "sed -n '120,180p' src/main.rs",
    "rm -rf build && mkdir -p build && cd build && cmake .. && make -j4",
    "rm -rf ${X:-/}",
];

struct Setup {
    ctx: ToolContext,
    policy: ModePolicy,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let home = Path::new("/home/dev");
    let workspace = home.join("project");
    let mut config = ToolConfig::new(&workspace, home.join(".rein/tool-output"));
    config.home_dir = Some(home.to_path_buf());
    let rule = |text: &str| SourcedRule {
        rule: Rule::parse(text, Some(home)).unwrap(),
        origin: RuleOrigin::Configured("bench".into()),
    };
    let rules = RuleSet {
        allow: ["bash(npm test:*)", "bash(cargo test)", "edit_file(src/**)"]
            .map(rule)
            .to_vec(),
        ask: vec![rule("bash(docker:*)")],
        deny: ["bash(git push:*)", "read_file(**/secrets/**)"]
            .map(rule)
            .to_vec(),
    };
    Setup {
        ctx: ToolContext::new(config),
        policy: ModePolicy::with_rules(PermissionMode::Default, rules),
    }
});

fn main() {
    divan::main();
}

#[divan::bench(args = COMMANDS, sample_count = 200, sample_size = 20)]
fn decide_bash(bencher: divan::Bencher, command: &str) {
    let setup = &*SETUP;
    let arguments: Value = json!({ "command": command });
    bencher.bench_local(|| {
        let facts = shell_facts(&setup.ctx, "bash", divan::black_box(&arguments));
        setup
            .policy
            .explain(&CallView {
                tool: "bash",
                kind: ToolKind::Execute,
                arguments: &arguments,
                path: None,
                shell: facts.as_ref(),
                confined: true,
            })
            .decision
    });
}
