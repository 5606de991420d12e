//! Start-up path: loading the layered configuration and building the system prompt.

#![expect(
    clippy::unwrap_used,
    reason = "benchmark setup: any failure should stop the run"
)]

use std::path::Path;

use divan::Bencher;
use rein_core::config::{ConfigInputs, Overrides, load_config};
use rein_core::prompt::{PromptInputs, build_system_prompt};

fn main() {
    divan::main();
}

#[divan::bench]
fn load_config_with_files(bencher: Bencher) {
    let tmp = tempfile::tempdir().unwrap();
    let home = tmp.path().join("home");
    let project = home.join("src/app");
    std::fs::create_dir_all(project.join(".git")).unwrap();
    std::fs::create_dir_all(project.join(".rein")).unwrap();
    std::fs::create_dir_all(home.join(".rein")).unwrap();
    std::fs::write(
        home.join(".rein/config.toml"),
        "model = \"gpt-4o\"\nmax_rounds = 30\n",
    )
    .unwrap();
    std::fs::write(project.join(".rein/config.toml"), "temperature = 0.2\n").unwrap();
    std::fs::write(project.join(".env"), "OPENAI_API_KEY=sk-test\n").unwrap();
    let rein_home = home.join(".rein");
    let overrides = Overrides::default();
    let env = |_: &str| None;
    bencher.bench_local(|| {
        load_config(&ConfigInputs {
            rein_home: &rein_home,
            cwd: &project,
            home_dir: Some(&home),
            env: &env,
            overrides: &overrides,
        })
        .unwrap()
    });
}

#[divan::bench]
fn build_prompt(bencher: Bencher) {
    let tools = [
        ("read_file", "Read a file."),
        ("bash", "Run a command."),
        ("grep", "Search."),
    ];
    let instructions = "## /w/AGENTS.md\n\nRun the tests.\n".repeat(50);
    bencher.bench_local(|| {
        build_system_prompt(&PromptInputs {
            cwd: Path::new("/home/ann/src/app"),
            os: "linux",
            shell: "/bin/bash",
            date: "2025-06-01",
            is_git_repo: true,
            tools: &tools,
            project_instructions: Some(&instructions),
        })
    });
}

/// The whole agent, as the CLI builds it for a run: every built-in tool's schema, the
/// system prompt, the policy (the endpoint given, so no network set-up is timed).
#[divan::bench]
fn build_agent(bencher: Bencher) {
    let tmp = tempfile::tempdir().unwrap();
    let workspace = tmp.path().canonicalize().unwrap();
    let provider: std::sync::Arc<dyn rein_llm::Provider> =
        std::sync::Arc::new(rein_llm::ReplayProvider::parse("", "empty").unwrap());
    bencher.bench_local(|| {
        rein_core::build::AgentBuilder::new(&workspace, "gpt-4o", rein_llm::ProviderKind::OpenAi)
            .provider(std::sync::Arc::clone(&provider))
            .build()
            .unwrap()
    });
}
