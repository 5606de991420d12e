//! The decision for one bash command: `analyze` (parse, walk, deny list, read-only proof) on
//! typical commands an agent runs. Target: under 50 µs median each, so that it never shows in
//! the time of a round.
//!
//! Run: `cargo bench -p rein-shell --bench analysis`

use std::path::PathBuf;
use std::sync::LazyLock;

use rein_shell::{CheckPlaces, analyze};

static PLACES: LazyLock<CheckPlaces> = LazyLock::new(|| CheckPlaces {
    workspace_root: PathBuf::from("/home/dev/project"),
    home_dir: Some(PathBuf::from("/home/dev")),
    cwd: Some(PathBuf::from("/home/dev/project")),
});

/// Commands of the kind agents run, from a one-word build to a long pipeline and a heredoc.
const COMMANDS: [&str; 20] = [
    "cargo test",
    "git status && git diff | head",
    "npm run build",
    "ls -la; pwd",
    "rg -n foo src | wc -l",
    "cargo build --release 2>&1 | tail -20",
    "git log --oneline -20 --format='%h %an %s'",
    "find . -name '*.rs' -not -path './target/*' | xargs wc -l | sort -n | tail -5",
    "cd crates/tools && cargo nextest run -p rein-tools --no-fail-fast",
    "python3 -m pytest tests/ -x -q --tb=short",
    "grep -rn 'TODO' --include='*.py' . | head -50",
    "sed -n '120,180p' src/main.rs",
    "rm -rf build && mkdir -p build && cd build && cmake .. && make -j4",
    "for f in src/*.ts; do echo \"$f\"; wc -l \"$f\"; done",
    "cat <<'EOF' > notes.md\n# Notes\n\n- one\n- two $(not run)\nEOF",
    "git diff --stat HEAD~3..HEAD -- src/ tests/ && git log -3 --format=%B",
    "docker compose up -d && sleep 2 && curl -s http://localhost:8080/health | jq .",
    "LC_ALL=C sort -u words.txt | awk '{ print length($0), $0 }' | sort -rn | head",
    "if [ -f package.json ]; then npm ci; else echo 'no package.json'; fi",
    // About 300 characters of pipeline.
    "git log --since='2 weeks ago' --pretty=format:'%h|%an|%ad|%s' --date=short | grep -v 'Merge' | awk -F'|' '{ count[$2]++ } END { for (a in count) print count[a], a }' | sort -rn | head -20 | sed 's/^ *//' | column -t | tee /dev/stderr | wc -l",
];

fn main() {
    divan::main();
}

#[divan::bench(args = COMMANDS, sample_count = 200, sample_size = 20)]
fn analyze_command(command: &str) -> bool {
    let analysis = analyze(divan::black_box(command), &PLACES);
    analysis.read_only.is_ok() || analysis.danger.is_some()
}
