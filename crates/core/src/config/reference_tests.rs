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

use super::Setting;
use super::layer::{
    COMPACT_THRESHOLD_RANGE, MIN_CONTEXT_WINDOW_TOKENS, NETWORK_TIMEOUT_MAX,
    THINKING_BUDGET_MIN_TOKENS, TOOL_OUTPUT_FILE_MIN_BYTES,
};
use crate::agent::DEFAULT_MAX_ROUNDS;

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

fn row(table: &[Row], setting: Setting) -> &Row {
    table
        .iter()
        .find(|row| row.key == setting.key())
        .unwrap_or_else(|| panic!("{} is missing from docs/config.md", setting.key()))
}

#[test]
fn every_setting_is_listed_with_its_real_variable_and_flag() {
    let table = settings_table();
    for setting in Setting::FILE_KEYS {
        let row = row(&table, setting);
        let key = &row.key;
        match setting.env_var() {
            Some(var) => assert!(row.env.contains(&format!("`{var}`")), "{key}: {}", row.env),
            None => assert_eq!(row.env, "", "{key}"),
        }
        match setting.flag() {
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
            Setting::from_file_key(&row.key).is_some()
                || super::spend::KEYS.contains(&row.key.as_str()),
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
        (Setting::MaxRounds, DEFAULT_MAX_ROUNDS.to_string()),
        (Setting::Retries, DEFAULT_MAX_RETRIES.to_string()),
        (
            Setting::ToolOutputBudget,
            DEFAULT_OUTPUT_BUDGET_CHARS.to_string(),
        ),
        (
            Setting::ToolOutputFileMax,
            DEFAULT_OFFLOAD_MAX_BYTES.to_string(),
        ),
        (Setting::BashTimeout, secs(BASH_DEFAULT_TIMEOUT)),
        (Setting::ConnectTimeout, secs(DEFAULT_CONNECT_TIMEOUT)),
        (Setting::FirstByteTimeout, secs(DEFAULT_FIRST_BYTE_TIMEOUT)),
        (
            Setting::StreamIdleTimeout,
            secs(DEFAULT_STREAM_IDLE_TIMEOUT),
        ),
        (Setting::RequestTimeout, secs(DEFAULT_REQUEST_TIMEOUT)),
        (
            Setting::CompactThreshold,
            crate::context::DEFAULT_COMPACT_THRESHOLD.to_string(),
        ),
        (Setting::AutoCompact, "true".to_owned()),
    ] {
        let row = row(&table, setting);
        let first = row.default.split([' ', ';']).next().unwrap_or_default();
        assert_eq!(first, default, "default of {}", row.key);
    }
    let local = secs(DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT);
    let first_byte = &row(&table, Setting::FirstByteTimeout).default;
    assert!(first_byte.contains(&local), "{first_byte}");

    for (setting, limit) in [
        (
            Setting::BashTimeout,
            format!("1 to {}", secs(BASH_MAX_TIMEOUT)),
        ),
        (
            Setting::ThinkingBudget,
            format!("≥ {THINKING_BUDGET_MIN_TOKENS}"),
        ),
        (
            Setting::ToolOutputFileMax,
            format!("≥ {TOOL_OUTPUT_FILE_MIN_BYTES}"),
        ),
        (
            Setting::ContextWindow,
            format!("≥ {MIN_CONTEXT_WINDOW_TOKENS}"),
        ),
        (
            Setting::CompactThreshold,
            format!(
                "{} to {}",
                COMPACT_THRESHOLD_RANGE.start(),
                COMPACT_THRESHOLD_RANGE.end()
            ),
        ),
        (
            Setting::ConnectTimeout,
            format!("1 to {}", secs(NETWORK_TIMEOUT_MAX)),
        ),
        (
            Setting::FirstByteTimeout,
            format!("1 to {}", secs(NETWORK_TIMEOUT_MAX)),
        ),
        (
            Setting::StreamIdleTimeout,
            format!("1 to {}", secs(NETWORK_TIMEOUT_MAX)),
        ),
        (
            Setting::RequestTimeout,
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
