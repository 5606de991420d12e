//! grep and glob against ripgrep on a large tree, wall time of equivalent work: the tool as
//! the agent calls it (through the registry, output formatted and budgeted) against `rg` run as
//! a process with the same pattern and options (its start-up included, output to /dev/null).
//! Before timing, each pair is checked to find the same number of matches.
//!
//! Corpus: `REIN_BENCH_CORPUS`, else `~/.cargo/registry/src` (filled by building the
//! workspace). `rg` must be on the PATH (`cargo install ripgrep --locked`).
//!
//! Each case alternates rein and rg runs (the load of the machine drifts) and prints medians
//! and their ratio.
//!
//! Run: `cargo bench -p rein-tools --bench search [FILTER]`; FILTER keeps the cases whose
//! name contains it (`glob`, `regex`).

#![expect(
    clippy::expect_used,
    reason = "a benchmark aborts when its setup fails"
)]
#![expect(clippy::print_stdout, reason = "a benchmark reports what it measured")]

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use rein_tools::{ToolConfig, ToolContext, ToolRegistry};
use serde_json::{Value, json};

struct Setup {
    corpus: PathBuf,
    ctx: ToolContext,
    tools: ToolRegistry,
    runtime: tokio::runtime::Runtime,
    _offload: tempfile::TempDir,
}

static SETUP: LazyLock<Setup> = LazyLock::new(|| {
    let corpus = std::env::var_os("REIN_BENCH_CORPUS").map_or_else(
        || PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cargo/registry/src"),
        PathBuf::from,
    );
    let corpus = corpus.canonicalize().expect("the corpus directory exists");
    let offload = tempfile::tempdir().expect("a temporary directory");
    let ctx = ToolContext::new(ToolConfig::new(&corpus, offload.path()));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    Setup {
        corpus,
        ctx,
        tools: ToolRegistry::builtin(),
        runtime,
        _offload: offload,
    }
});

fn tool(name: &str, args: Value) -> String {
    let setup = &*SETUP;
    let tool = setup.tools.get(name).expect("a built-in tool");
    let call = std::sync::Arc::clone(tool)
        .prepare(&args)
        .expect("valid arguments");
    let out = setup
        .runtime
        .block_on(call.run(&setup.ctx))
        .expect("the tool runs");
    assert!(!out.is_error, "{name} failed: {}", out.content);
    out.content
}

fn rg(args: &[&str]) -> String {
    let out = Command::new("rg")
        .args(args)
        .arg(&SETUP.corpus)
        .stdin(Stdio::null())
        .output()
        .expect("rg runs");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn rg_quiet(args: &[&str]) {
    let status = Command::new("rg")
        .args(args)
        .arg(&SETUP.corpus)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .status()
        .expect("rg runs");
    assert!(status.code().is_some_and(|c| c <= 1), "rg failed: {status}");
}

/// The number after `(total: ` in grep's count output.
fn tool_total(pattern: &str) -> u64 {
    let out = tool("grep", json!({"pattern": pattern, "output_mode": "count"}));
    let total = out
        .rsplit("(total: ")
        .next()
        .and_then(|t| t.split(' ').next())
        .expect("a total");
    total.parse().expect("a number")
}

fn rg_total(pattern: &str) -> u64 {
    rg(&["-c", "--no-require-git", pattern])
        .lines()
        .filter_map(|l| l.rsplit(':').next()?.parse::<u64>().ok())
        .sum()
}

fn glob_total(pattern: &str) -> u64 {
    let out = tool("glob", json!({"pattern": pattern}));
    let shown = out.lines().filter(|l| !l.starts_with('(')).count() as u64;
    let more = out
        .lines()
        .find_map(|l| l.strip_prefix('(')?.split(' ').next()?.parse::<u64>().ok())
        .unwrap_or(0);
    shown + more
}

const LITERAL: &str = "unsafe impl";
const REGEX: &str = r"fn [a-z_]+\(";

/// Alternating runs per case: the machine's load drifts, so rein and rg take turns.
const ROUNDS: usize = 15;

struct Case {
    name: &'static str,
    rein: Box<dyn Fn()>,
    rg: Vec<&'static str>,
}

fn grep_case(
    name: &'static str,
    pattern: &'static str,
    mode: &'static str,
    rg_flag: &'static str,
) -> Case {
    Case {
        name,
        rein: Box::new(move || {
            tool("grep", json!({"pattern": pattern, "output_mode": mode}));
        }),
        rg: vec![rg_flag, "--no-require-git", pattern],
    }
}

fn glob_case(name: &'static str, pattern: &'static str) -> Case {
    Case {
        name,
        rein: Box::new(move || {
            tool("glob", json!({"pattern": pattern}));
        }),
        rg: vec!["--files", "--no-require-git", "-g", pattern],
    }
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort_unstable();
    times[times.len() / 2]
}

fn main() {
    let filter = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--"))
        .unwrap_or_default();
    for pattern in [LITERAL, REGEX] {
        let (ours, theirs) = (tool_total(pattern), rg_total(pattern));
        assert_eq!(
            ours, theirs,
            "grep `{pattern}`: rein counts {ours}, rg {theirs}"
        );
        println!("grep `{pattern}`: {ours} matching lines in both");
    }
    for pattern in ["*.rs", "Cargo.toml"] {
        let ours = glob_total(pattern);
        let theirs = rg(&["--files", "--no-require-git", "-g", pattern])
            .lines()
            .count() as u64;
        assert_eq!(
            ours, theirs,
            "glob {pattern}: rein finds {ours}, rg {theirs}"
        );
        println!("glob `{pattern}`: {ours} files in both");
    }
    let cases = [
        grep_case("grep content, literal", LITERAL, "content", "-n"),
        grep_case("grep content, regex", REGEX, "content", "-n"),
        grep_case("grep count, literal", LITERAL, "count", "-c"),
        grep_case("grep count, regex", REGEX, "count", "-c"),
        grep_case("grep files, literal", LITERAL, "files", "-l"),
        grep_case("grep files, regex", REGEX, "files", "-l"),
        glob_case("glob *.rs", "*.rs"),
        glob_case("glob Cargo.toml", "Cargo.toml"),
    ];
    println!("corpus: {}", SETUP.corpus.display());
    println!(
        "{:<24} {:>10} {:>10} {:>7}",
        "case (median of 15)", "rein", "rg", "ratio"
    );
    for case in cases.iter().filter(|c| c.name.contains(&filter)) {
        // One warm-up each, so both see a warm page cache.
        (case.rein)();
        rg_quiet(&case.rg);
        let (mut ours, mut theirs) = (Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let started = Instant::now();
            (case.rein)();
            ours.push(started.elapsed());
            let started = Instant::now();
            rg_quiet(&case.rg);
            theirs.push(started.elapsed());
        }
        let (ours, theirs) = (median(&mut ours), median(&mut theirs));
        println!(
            "{:<24} {:>8.1}ms {:>8.1}ms {:>7.2}",
            case.name,
            ours.as_secs_f64() * 1000.0,
            theirs.as_secs_f64() * 1000.0,
            ours.as_secs_f64() / theirs.as_secs_f64()
        );
    }
    // Statics are never dropped.
    let _ = std::fs::remove_dir_all(SETUP._offload.path());
}
