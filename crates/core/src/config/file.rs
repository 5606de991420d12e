//! Config files: TOML with flat keys, every key known, every value checked, errors that name
//! the file, the key and the line.

use std::collections::BTreeMap;
use std::io;
use std::path::Path;

use toml::de::{DeTable, DeValue};
use toml::{Spanned, Value};

use super::layer::{Layer, keys};
use super::tables::{TABLE_KEYS, read_table};
use super::{ConfigError, Source};

/// Reads the layer in `path`; a missing file is `Ok(None)`.
pub(crate) fn read_layer(path: &Path, source: Source) -> Result<Option<Layer>, ConfigError> {
    let text = read_if_exists(path)?;
    text.map(|text| parse_layer(&text, path, source))
        .transpose()
}

/// The text of the file at `path`; a missing file is `Ok(None)`.
pub(crate) fn read_if_exists(path: &Path) -> Result<Option<String>, ConfigError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(Some(text)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(ConfigError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

/// Settings holding a path: a relative one is relative to the file that names it, not to
/// wherever rein happens to run.
const PATH_KEYS: [&str; 1] = ["ca_file"];

/// Parses one config file's text.
pub(crate) fn parse_layer(text: &str, path: &Path, source: Source) -> Result<Layer, ConfigError> {
    let table: BTreeMap<String, Spanned<Value>> = toml::from_str(text).map_err(|err| {
        let (line, column) = line_column(text, err.span().map_or(0, |span| span.start));
        ConfigError::Syntax {
            format: "TOML",
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
        let invalid_at = |line, reason: String| {
            ConfigError::invalid(&key, format!("{} (line {line})", path.display()), reason)
        };
        let invalid = |reason| invalid_at(line, reason);
        let mut value = value.into_inner();
        if TABLE_KEYS.contains(&key.as_str()) {
            read_table(&mut layer.tables, &key, &value, &source)
                .map_err(|e| invalid_at(key_line(text, &key, &e.at).unwrap_or(line), e.message))?;
            continue;
        }
        if !keys().contains(&key.as_str()) {
            return Err(ConfigError::UnknownKey {
                hint: unknown_key_hint(&key),
                key,
                path: path.to_path_buf(),
                line,
            });
        }
        if PATH_KEYS.contains(&key.as_str())
            && let Value::String(relative) = &value
            && Path::new(relative).is_relative()
            && !relative.is_empty()
        {
            let dir = path.parent().unwrap_or(Path::new(""));
            value = Value::String(dir.join(relative).to_string_lossy().into_owned());
        }
        layer.set(&key, value, source.clone()).map_err(invalid)?;
    }
    Ok(layer)
}

/// The line of the key that `at` leads to from the top-level key `key` (through tables by
/// key and arrays of tables by position): a mistake inside a table is on its key's line, not
/// on the table's header.
fn key_line(text: &str, key: &str, at: &[String]) -> Option<usize> {
    let document = DeTable::parse(text).ok()?;
    let (mut span, mut value) = (document.get_ref().iter())
        .find(|(name, _)| name.get_ref() == key)
        .map(|(name, value)| (name.span(), value))?;
    for step in at {
        (span, value) = match value.get_ref() {
            DeValue::Table(table) => table
                .iter()
                .find(|(name, _)| name.get_ref() == step)
                .map(|(name, value)| (name.span(), value))?,
            DeValue::Array(items) => items
                .get(step.parse::<usize>().ok()?)
                .map(|item| (item.span(), item))?,
            _ => return None,
        };
    }
    Some(line_column(text, span.start).0)
}

/// 1-based line and column (in characters) of a byte offset.
fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().unwrap_or("").chars().count() + 1;
    (line, column)
}

fn unknown_key_hint(key: &str) -> String {
    if key == "api_key" {
        return "; keys do not belong in config files: put it in the environment or a .env \
                file, and name the variable with api_key_env"
            .to_owned();
    }
    match crate::suggest::closest(key, keys().iter().copied()) {
        Some(known) => format!("; did you mean \"{known}\"?"),
        None => format!(
            "; known keys: {}; tables: {}",
            keys().join(", "),
            TABLE_KEYS.join(", ")
        ),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;
    use std::time::Duration;

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
        .unwrap()
        .settings()
        .unwrap();
        assert_eq!(layer.tool_output_file_max_bytes, 2 * 1024 * 1024);
        assert_eq!(layer.model.unwrap(), "m");
        assert_eq!(layer.temperature.unwrap(), 1.0);
        assert_eq!(layer.retries, 0);
        assert_eq!(layer.bash_default_timeout, Duration::from_secs(5));
        assert!(!layer.auto_compact);
        assert_eq!(layer.compact_threshold, 0.7);
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

    /// The line a table's mistake is reported on.
    fn line_of(text: &str) -> String {
        let err = parse(text).unwrap_err().to_string();
        let at = err.find("(line ").unwrap_or_else(|| panic!("{err}"));
        err[at..].split(')').next().unwrap().to_owned() + ")"
    }

    #[test]
    fn a_mistake_in_a_table_names_the_line_of_its_key() {
        // Several lines below the header, comments and blank lines between.
        let text = "model = \"m\"\n\n[sandbox]\n# the sandbox\nnetwork = false\n\nfoo = 1\n";
        assert_eq!(line_of(text), "(line 7)");
        let err = parse(text).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "invalid value for \"sandbox\" in /p/config.toml (line 7): unknown key \"foo\""
            ),
            "{err}"
        );
        let wrong_type = "[tool_search]\n\nmax_schema_kb = 4\nmax_tools = \"ten\"\n";
        assert_eq!(line_of(wrong_type), "(line 4)");
        let err = parse(wrong_type).unwrap_err().to_string();
        assert!(err.contains("tool_search.max_tools: "), "{err}");
        // A dotted key at the top level is on its own line too.
        assert_eq!(line_of("model = \"m\"\n\nsandbox.mode = 3\n"), "(line 3)");
    }

    #[test]
    fn a_mistake_in_a_nested_table_names_the_line_of_its_key() {
        let server = "[mcp_servers.x]\ncommand = \"a\"\nargs = []\n\ncomand = \"b\"\n";
        assert_eq!(line_of(server), "(line 5)");
        assert!(
            parse(server)
                .unwrap_err()
                .to_string()
                .contains("unknown key \"comand\" in [mcp_servers.x]")
        );
        // The second `[[hooks.Stop]]` entry's key, not the first entry's nor the header.
        let hooks = "[[hooks.Stop]]\ncommand = \"a\"\ntimeout = 5\n\n[[hooks.Stop]]\ncommand = \"b\"\ntimeout = 0\n";
        assert_eq!(line_of(hooks), "(line 7)");
        // A mistake of the entry as a whole is on the entry's header.
        let no_command = "[[hooks.Stop]]\ncommand = \"a\"\n\n[[hooks.Stop]]\nmatcher = \"x\"\n";
        assert_eq!(line_of(no_command), "(line 4)");
        let pricing =
            "[pricing]\n\"a\" = { input = 1, output = 2 }\n\"b\" = { input = -1, output = 2 }\n";
        assert_eq!(line_of(pricing), "(line 3)");
    }

    #[test]
    fn a_mistake_in_an_inline_table_names_the_line_of_its_key() {
        let one_line =
            "[mcp_servers]\nok = { command = \"a\" }\n\nx = { command = \"a\", comand = \"b\" }\n";
        assert_eq!(line_of(one_line), "(line 4)");
        let spread = "mcp_servers.x = {\n  command = \"a\",\n  args = [],\n  cwd = 3,\n}\n";
        assert_eq!(line_of(spread), "(line 4)");
        let err = parse(spread).unwrap_err().to_string();
        assert!(err.contains("mcp_servers.x.cwd"), "{err}");
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
}
