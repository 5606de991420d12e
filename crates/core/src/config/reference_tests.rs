//! `docs/config.md`, the reference people read, against the code: every setting in its table
//! with the variable, the flag, the default and the limits rein really uses, so neither can
//! drift from the other.

use std::path::Path;
use std::time::Duration;

use rein_llm::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT, DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT,
    DEFAULT_MAX_RETRIES, DEFAULT_REQUEST_TIMEOUT, DEFAULT_STREAM_IDLE_TIMEOUT,
};
use rein_tools::bash::BASH_MAX_TIMEOUT;
use rein_tools::context::{
    BASH_DEFAULT_TIMEOUT, DEFAULT_OFFLOAD_MAX_BYTES, DEFAULT_OUTPUT_BUDGET_CHARS,
};

use super::DEFAULT_MAX_ROUNDS;
use super::check::{
    COMPACT_THRESHOLD_RANGE, MIN_CONTEXT_WINDOW_TOKENS, NETWORK_TIMEOUT_MAX,
    THINKING_BUDGET_MIN_TOKENS, TOOL_OUTPUT_FILE_MIN_BYTES,
};
use super::layer::keys;
use super::{ENV_VARS, FLAGS};

/// One row of the settings table.
struct Row {
    key: String,
    kind: String,
    default: String,
    env: String,
    flag: String,
}

fn settings_table() -> Vec<Row> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/config.md");
    let text = std::fs::read_to_string(&path).unwrap();
    text.lines()
        .filter(|line| line.starts_with("| `"))
        .map(|line| {
            let cells: Vec<String> = line.split('|').map(|c| c.trim().to_owned()).collect();
            Row {
                key: cells[1].trim_matches('`').to_owned(),
                kind: cells[2].clone(),
                default: cells[3].clone(),
                env: cells[4].clone(),
                flag: cells[5].clone(),
            }
        })
        .collect()
}

fn row<'t>(table: &'t [Row], key: &str) -> &'t Row {
    table
        .iter()
        .find(|row| row.key == key)
        .unwrap_or_else(|| panic!("{key} is missing from docs/config.md"))
}

fn named<'a>(pairs: &'a [(&str, &'a str)], key: &str) -> Option<&'a str> {
    pairs.iter().find(|(k, _)| *k == key).map(|(_, name)| *name)
}

#[test]
fn every_setting_is_listed_with_its_real_variable_and_flag() {
    let table = settings_table();
    for &key in keys() {
        let row = row(&table, key);
        match named(ENV_VARS, key) {
            Some(var) => assert!(row.env.contains(&format!("`{var}`")), "{key}: {}", row.env),
            None => assert_eq!(row.env, "", "{key}"),
        }
        match named(FLAGS, key) {
            Some(flag) => assert!(
                row.flag.contains(&format!("`{flag}`")),
                "{key}: {}",
                row.flag
            ),
            None => assert_eq!(row.flag, "", "{key}"),
        }
    }
    for row in &table {
        assert!(
            keys().contains(&row.key.as_str()),
            "{} is not a setting",
            row.key
        );
    }
}

#[test]
fn defaults_and_limits_are_the_ones_rein_uses() {
    let table = settings_table();
    let secs = |d: Duration| d.as_secs().to_string();
    for (setting, default) in [
        ("max_rounds", DEFAULT_MAX_ROUNDS.to_string()),
        ("retries", DEFAULT_MAX_RETRIES.to_string()),
        (
            "tool_output_budget_chars",
            DEFAULT_OUTPUT_BUDGET_CHARS.to_string(),
        ),
        (
            "tool_output_file_max_bytes",
            DEFAULT_OFFLOAD_MAX_BYTES.to_string(),
        ),
        ("bash_timeout_secs", secs(BASH_DEFAULT_TIMEOUT)),
        ("connect_timeout_secs", secs(DEFAULT_CONNECT_TIMEOUT)),
        ("first_byte_timeout_secs", secs(DEFAULT_FIRST_BYTE_TIMEOUT)),
        (
            "stream_idle_timeout_secs",
            secs(DEFAULT_STREAM_IDLE_TIMEOUT),
        ),
        ("request_timeout_secs", secs(DEFAULT_REQUEST_TIMEOUT)),
        (
            "compact_threshold",
            crate::context::DEFAULT_COMPACT_THRESHOLD.to_string(),
        ),
        ("auto_compact", "true".to_owned()),
    ] {
        let row = row(&table, setting);
        let first = row.default.split([' ', ';']).next().unwrap_or_default();
        assert_eq!(first, default, "default of {}", row.key);
    }
    let local = secs(DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT);
    let first_byte = &row(&table, "first_byte_timeout_secs").default;
    assert!(first_byte.contains(&local), "{first_byte}");

    for (setting, limit) in [
        (
            "bash_timeout_secs",
            format!("1 to {}", secs(BASH_MAX_TIMEOUT)),
        ),
        ("thinking_budget", format!("≥ {THINKING_BUDGET_MIN_TOKENS}")),
        (
            "tool_output_file_max_bytes",
            format!("≥ {TOOL_OUTPUT_FILE_MIN_BYTES}"),
        ),
        ("context_window", format!("≥ {MIN_CONTEXT_WINDOW_TOKENS}")),
        (
            "compact_threshold",
            format!(
                "{} to {}",
                COMPACT_THRESHOLD_RANGE.start(),
                COMPACT_THRESHOLD_RANGE.end()
            ),
        ),
        (
            "connect_timeout_secs",
            format!("1 to {}", secs(NETWORK_TIMEOUT_MAX)),
        ),
        (
            "first_byte_timeout_secs",
            format!("1 to {}", secs(NETWORK_TIMEOUT_MAX)),
        ),
        (
            "stream_idle_timeout_secs",
            format!("1 to {}", secs(NETWORK_TIMEOUT_MAX)),
        ),
        (
            "request_timeout_secs",
            format!("1 to {}", secs(NETWORK_TIMEOUT_MAX)),
        ),
    ] {
        let row = row(&table, setting);
        assert!(
            row.kind.contains(&limit),
            "{}: {} lacks {limit}",
            row.key,
            row.kind
        );
    }
}
