//! Config files: TOML with flat keys, every key known, every value checked, errors that name
//! the file, the key and the line.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;
use std::time::Duration;

use toml::{Spanned, Value};

use super::layer::{
    Layer, MIN_CONTEXT_WINDOW_TOKENS, Sourced, check_api_key_env, check_base_url,
    check_bash_timeout, check_compact_threshold, check_model, check_network_timeout,
    check_temperature, check_thinking_budget, check_tool_output_file_max,
};
use super::tables::{TABLE_KEYS, read_table};
use super::{ConfigError, Setting, Source};

/// Reads the layer in `path`; a missing file is `Ok(None)`.
pub(crate) fn read_layer(path: &Path, source: Source) -> Result<Option<Layer>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_layer(&text, path, source).map(Some),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Parses one config file's text.
pub(crate) fn parse_layer(text: &str, path: &Path, source: Source) -> Result<Layer, ConfigError> {
    let table: BTreeMap<String, Spanned<Value>> = toml::from_str(text).map_err(|err| {
        let (line, column) = line_column(text, err.span().map_or(0, |span| span.start));
        ConfigError::Syntax {
            path: path.to_path_buf(),
            line,
            column,
            message: err.message().trim().to_owned(),
        }
    })?;
    let mut entries: Vec<_> = table.into_iter().collect();
    // Report problems in the order a person reads the file.
    entries.sort_by_key(|(_, value)| value.span().start);

    let mut layer = Layer::default();
    for (key, value) in entries {
        let (line, _) = line_column(text, value.span().start);
        if TABLE_KEYS.contains(&key.as_str()) {
            read_table(&mut layer.tables, &key, value.get_ref(), &source).map_err(|reason| {
                ConfigError::InvalidValue {
                    key: key.clone(),
                    origin: format!("{} (line {line})", path.display()),
                    reason,
                }
            })?;
            continue;
        }
        let Some(setting) = Setting::from_file_key(&key) else {
            return Err(ConfigError::UnknownKey {
                hint: unknown_key_hint(&key),
                key,
                path: path.to_path_buf(),
                line,
            });
        };
        set(&mut layer, setting, value.get_ref(), source.clone()).map_err(|reason| {
            ConfigError::InvalidValue {
                key: key.clone(),
                origin: format!("{} (line {line})", path.display()),
                reason,
            }
        })?;
    }
    Ok(layer)
}

fn set(layer: &mut Layer, setting: Setting, value: &Value, source: Source) -> Result<(), String> {
    match setting {
        Setting::Model => {
            layer.model = Some(Sourced::new(check_model(string(value)?)?, source));
        }
        Setting::Provider => {
            layer.provider = Some(Sourced::new(
                string(value)?
                    .parse()
                    .map_err(|e: rein_llm::UnknownProvider| e.to_string())?,
                source,
            ));
        }
        Setting::BaseUrl => {
            layer.base_url = Some(Sourced::new(check_base_url(string(value)?)?, source));
        }
        Setting::ApiKeyEnv => {
            layer.api_key_env = Some(Sourced::new(check_api_key_env(string(value)?)?, source));
        }
        Setting::Temperature => {
            let temperature = check_temperature(number(value)?)?;
            layer.temperature = Some(Sourced::new(temperature, source));
        }
        Setting::MaxTokens => {
            layer.max_tokens = Some(Sourced::new(positive(value)?, source));
        }
        Setting::ContextWindow => {
            let tokens: u64 = positive(value)?;
            if tokens < MIN_CONTEXT_WINDOW_TOKENS {
                return Err(format!(
                    "{tokens} tokens is less than {MIN_CONTEXT_WINDOW_TOKENS}, too small for \
                     rein's system prompt and tools"
                ));
            }
            layer.context_window = Some(Sourced::new(tokens, source));
        }
        Setting::AutoCompact => {
            let on = value
                .as_bool()
                .ok_or_else(|| expected("true or false", value))?;
            layer.auto_compact = Some(Sourced::new(on, source));
        }
        Setting::CompactThreshold => {
            let share = check_compact_threshold(number(value)?)?;
            layer.compact_threshold = Some(Sourced::new(share, source));
        }
        Setting::MaxRounds => {
            layer.max_rounds = Some(Sourced::new(positive(value)?, source));
        }
        Setting::Retries => {
            let retries = integer(value)?;
            let retries =
                u32::try_from(retries).map_err(|_| format!("{retries} is out of range"))?;
            layer.retries = Some(Sourced::new(retries, source));
        }
        Setting::ToolOutputBudget => {
            layer.tool_output_budget = Some(Sourced::new(positive(value)?, source));
        }
        Setting::CheckpointMaxFileBytes => {
            layer.checkpoint_max_file_bytes = Some(Sourced::new(positive(value)?, source));
        }
        Setting::CheckpointKeepDays => {
            layer.checkpoint_keep_days = Some(Sourced::new(positive(value)?, source));
        }
        Setting::CheckpointMaxBytes => {
            layer.checkpoint_max_bytes = Some(Sourced::new(positive(value)?, source));
        }
        Setting::ToolOutputFileMax => {
            let bytes = check_tool_output_file_max(integer(value)?)?;
            layer.tool_output_file_max = Some(Sourced::new(bytes, source));
        }
        Setting::BashTimeout => {
            let secs: u64 = positive(value)?;
            let timeout = check_bash_timeout(Duration::from_secs(secs))?;
            layer.bash_timeout = Some(Sourced::new(timeout, source));
        }
        Setting::CaFile => {
            let path = Path::new(string(value)?);
            if path.as_os_str().is_empty() {
                return Err("the path is empty".to_owned());
            }
            // A relative path is relative to the file that names it, not to wherever rein
            // happens to run.
            let path = match &source {
                Source::UserFile(file) | Source::ProjectFile(file) if path.is_relative() => {
                    file.parent().unwrap_or(Path::new("")).join(path)
                }
                _ => path.to_path_buf(),
            };
            layer.ca_file = Some(Sourced::new(path, source));
        }
        Setting::ConnectTimeout
        | Setting::FirstByteTimeout
        | Setting::StreamIdleTimeout
        | Setting::RequestTimeout => {
            let secs: u64 = positive(value)?;
            let timeout = check_network_timeout(Duration::from_secs(secs))?;
            if let Some(slot) = layer.timeout_mut(setting) {
                *slot = Some(Sourced::new(timeout, source));
            }
        }
        Setting::ThinkingBudget => {
            let tokens = check_thinking_budget(integer(value)?)?;
            layer.thinking_budget = Some(Sourced::new(tokens, source));
        }
        // Not a file key: `from_file_key` never yields it.
        Setting::ApiKey => return Err("API keys do not belong in config files".to_owned()),
    }
    Ok(())
}

fn string(value: &Value) -> Result<&str, String> {
    value.as_str().ok_or_else(|| expected("a string", value))
}

/// A number, written with or without a decimal point.
fn number(value: &Value) -> Result<f64, String> {
    match value {
        Value::Float(number) => Ok(*number),
        Value::Integer(number) => Ok(*number as f64),
        other => Err(expected("a number", other)),
    }
}

fn integer(value: &Value) -> Result<i64, String> {
    value
        .as_integer()
        .ok_or_else(|| expected("an integer", value))
}

fn positive<T: TryFrom<i64>>(value: &Value) -> Result<T, String> {
    let number = integer(value)?;
    if number < 1 {
        return Err(format!("{number} is less than 1"));
    }
    T::try_from(number).map_err(|_| format!("{number} is too large"))
}

fn expected(what: &str, found: &Value) -> String {
    format!("expected {what}, found {} {found}", found.type_str())
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn unknown_key_hint(key: &str) -> String {
    if key == Setting::ApiKey.key() {
        return "; keys do not belong in config files: put it in the environment or a .env \
                file, and name the variable with api_key_env"
            .to_owned();
    }
    let closest = Setting::FILE_KEYS
        .into_iter()
        .map(Setting::key)
        .map(|known| (edit_distance(key, known), known))
        .min();
    match closest {
        Some((distance, known)) if distance <= 2 => format!("; did you mean \"{known}\"?"),
        _ => format!(
            "; known keys: {}; tables: {}",
            Setting::FILE_KEYS.map(Setting::key).join(", "),
            TABLE_KEYS.join(", ")
        ),
    }
}

/// Levenshtein distance, for "did you mean" hints on short keys.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let substitution = diagonal + usize::from(ca != cb);
            diagonal = row[j + 1];
            row[j + 1] = substitution.min(row[j] + 1).min(diagonal + 1);
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn parse(text: &str) -> Result<Layer, ConfigError> {
        let path = PathBuf::from("/p/config.toml");
        parse_layer(text, &path, Source::UserFile(path.clone()))
    }

    #[test]
    fn every_key_parses() {
        let layer = parse(
            "model = \"m\"\nprovider = \"anthropic\"\nbase_url = \"http://127.0.0.1:1/v1\"\n\
             api_key_env = \"K\"\ntemperature = 1\nmax_tokens = 10\ncontext_window = 8192\n\
             auto_compact = false\ncompact_threshold = 0.7\n\
             max_rounds = 3\nretries = 0\ntool_output_budget_chars = 100\nbash_timeout_secs = 5\n\
             tool_output_file_max_bytes = 2097152\n",
        )
        .unwrap();
        assert_eq!(layer.tool_output_file_max.unwrap().value, 2 * 1024 * 1024);
        assert_eq!(layer.model.unwrap().value, "m");
        assert_eq!(layer.temperature.unwrap().value, 1.0);
        assert_eq!(layer.retries.unwrap().value, 0);
        assert_eq!(layer.bash_timeout.unwrap().value, Duration::from_secs(5));
        assert!(!layer.auto_compact.unwrap().value);
        assert_eq!(layer.compact_threshold.unwrap().value, 0.7);
    }

    #[test]
    fn context_settings_are_checked() {
        let err = parse("compact_threshold = 80").unwrap_err().to_string();
        assert!(err.contains("0.8 means 80%"), "{err}");
        let err = parse("compact_threshold = 0.99").unwrap_err().to_string();
        assert!(err.contains("outside 0.2 to 0.95"), "{err}");
        let err = parse("auto_compact = \"no\"").unwrap_err().to_string();
        assert!(err.contains("expected true or false"), "{err}");
        let err = parse("context_window = 2000").unwrap_err().to_string();
        assert!(err.contains("too small"), "{err}");
    }

    #[test]
    fn unknown_keys_name_the_key_the_file_and_a_suggestion() {
        let err = parse("max_rounds = 3\nmodle = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "unknown key \"modle\" in /p/config.toml (line 2); did you mean \"model\"?"
        );
        let err = parse("[permissions]\nmode = \"x\"\n")
            .unwrap_err()
            .to_string();
        assert!(
            err.contains("unknown key \"mode\" in [permissions]; known keys: allow, ask, deny"),
            "{err}"
        );
        let err = parse("[permission]\nallow = []\n").unwrap_err().to_string();
        assert!(
            err.starts_with("unknown key \"permission\" in /p/config.toml"),
            "{err}"
        );
        assert!(err.contains("known keys: model,"), "{err}");
        assert!(err.contains("tables: permissions, hooks, secrets"), "{err}");
        let err = parse("api_key = \"sk-1\"\n").unwrap_err().to_string();
        assert!(err.contains("api_key_env"), "{err}");
    }

    #[test]
    fn invalid_values_name_the_key_the_line_and_what_is_expected() {
        let err = parse("\n\nmax_rounds = \"ten\"\n").unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid value for \"max_rounds\" in /p/config.toml (line 3): \
             expected an integer, found string \"ten\""
        );
        let err = parse("max_rounds = -1").unwrap_err().to_string();
        assert!(err.contains("-1 is less than 1"), "{err}");
        let err = parse("provider = \"gemini\"").unwrap_err().to_string();
        assert!(err.contains("unknown provider"), "{err}");
        let err = parse("bash_timeout_secs = 601").unwrap_err().to_string();
        assert!(err.contains("1 to 600"), "{err}");
        let err = parse("tool_output_file_max_bytes = 1000")
            .unwrap_err()
            .to_string();
        assert_eq!(
            err,
            "invalid value for \"tool_output_file_max_bytes\" in /p/config.toml (line 1): \
             1000 is less than 1048576 bytes (1 MiB), the smallest file size rein accepts"
        );
    }

    #[test]
    fn syntax_errors_have_a_line_and_column() {
        let err = parse("model = \"m\"\nretries = = 3\n").unwrap_err();
        let ConfigError::Syntax { line, .. } = &err else {
            panic!("{err:?}")
        };
        assert_eq!(*line, 2);
        assert!(
            err.to_string()
                .starts_with("invalid TOML in /p/config.toml at line 2"),
            "{err}"
        );
    }

    #[test]
    fn edit_distance_counts_edits() {
        assert_eq!(edit_distance("modle", "model"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("retries", "retries"), 0);
    }
}
