//! Reading a table of a config file into the struct its keys derive, key by key, so that a
//! mistake names its key: an unknown one with the keys the table knows (and the nearest, when
//! one is near), a wrong value with its path (`sandbox.mode: expected a string`).
//!
//! The checks (`deserialize_with` functions here and in each table's module) write what
//! follows the key's path: `: expected a string`, ` "full" is not a level`, ` is empty`,
//! `.TOKEN: expected a string`. A message of serde's own follows a colon.

use std::time::Duration;

use serde::de::{Deserialize, DeserializeOwned, Deserializer, Error as _};
use toml::{Table, Value};

use super::fields::field_names;

/// A mistake in a table, with the keys (and entry positions) that lead from the table to it
/// (`mode`, `x.comand`, `Stop.0.timeout`), so that the file's reader names the key's line
/// rather than the table's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct TableError {
    /// From the table to the mistake; empty when it is the table's own.
    pub(crate) at: Vec<String>,
    /// What is wrong.
    pub(crate) message: String,
}

impl TableError {
    /// The mistake as seen from the table holding this one under `key`.
    pub(crate) fn under(mut self, key: impl ToString) -> Self {
        self.at.insert(0, key.to_string());
        self
    }
}

impl From<String> for TableError {
    fn from(message: String) -> Self {
        let at = Vec::new();
        TableError { at, message }
    }
}

/// Reads `value`, the table at `path` (`sandbox`, `hooks.Stop`, written `header` in the file:
/// `[sandbox]`, `[[hooks.Stop]]`), as `T`, a struct with a derived `Deserialize` whose fields
/// all have a default.
pub(crate) fn read_keys<T: DeserializeOwned>(
    value: &Value,
    path: &str,
    header: &str,
) -> Result<T, TableError> {
    let known = field_names::<T>();
    let table = value.as_table().ok_or_else(|| {
        format!(
            "{path}: expected a table ({header}) with {}",
            known.join(", ")
        )
    })?;
    for (key, value) in table {
        if !known.contains(&key.as_str()) {
            let hint = crate::suggest::closest(key, known.iter().copied())
                .map(|near| format!("; did you mean \"{near}\"?"))
                .unwrap_or_default();
            let message = format!(
                "unknown key \"{key}\" in {header}; known keys: {}{hint}",
                known.join(", ")
            );
            return Err(TableError::from(message).under(key));
        }
        // Alone, a key's error can only be its own.
        let alone = Table::from_iter([(key.clone(), value.clone())]);
        T::deserialize(Value::Table(alone))
            .map_err(|e| TableError::from(after(&format!("{path}.{key}"), &e)).under(key))?;
    }
    Ok(T::deserialize(Value::Table(table.clone())).map_err(|e| after(path, &e))?)
}

/// The path and a check's message (see the module documentation).
fn after(path: &str, error: &toml::de::Error) -> String {
    let message = in_words(error.message().trim());
    if message.starts_with([':', ' ', '.']) {
        format!("{path}{message}")
    } else {
        format!("{path}: {message}")
    }
}

/// serde's message with Rust's type names said in words (`expected usize` → `expected a whole
/// number`): the person reading it writes TOML, not Rust.
fn in_words(message: &str) -> String {
    const WHOLE: [&str; 8] = ["usize", "u64", "u32", "u16", "u8", "i64", "i32", "isize"];
    let mut said = message.to_owned();
    for name in WHOLE {
        said = said.replace(&format!("expected {name}"), "expected a whole number");
    }
    said.replace("expected f64", "expected a number")
        .replace("expected f32", "expected a number")
}

/// Runs `check` on the value being deserialized; its message becomes the error's.
pub(super) fn with<'de, D: Deserializer<'de>, T>(
    deserializer: D,
    check: impl FnOnce(&Value) -> Result<T, String>,
) -> Result<T, D::Error> {
    let value = Value::deserialize(deserializer)?;
    check(&value).map_err(D::Error::custom)
}

/// A list of strings.
pub(super) fn list(value: &Value) -> Result<Vec<String>, String> {
    let items = value
        .as_array()
        .ok_or_else(|| ": expected a list of strings".to_owned())?;
    items
        .iter()
        .map(|item| {
            item.as_str()
                .map(str::to_owned)
                .ok_or_else(|| format!(": expected strings, found {}", item.type_str()))
        })
        .collect()
}

/// A list of strings, for a `Vec<String>` or an `Option<Vec<String>>`.
pub(super) fn strings<'de, D: Deserializer<'de>, O: From<Vec<String>>>(
    d: D,
) -> Result<O, D::Error> {
    with(d, |v| list(v).map(O::from))
}

/// A string.
pub(super) fn text(value: &Value) -> Result<&str, String> {
    value
        .as_str()
        .ok_or_else(|| ": expected a string".to_owned())
}

pub(super) fn some_text<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    with(d, |v| text(v).map(|t| Some(t.to_owned())))
}

/// `true` or `false`, for a `bool` or an `Option<bool>`.
pub(super) fn switch<'de, D: Deserializer<'de>, O: From<bool>>(d: D) -> Result<O, D::Error> {
    with(d, |v| {
        (v.as_bool().map(O::from))
            .ok_or_else(|| format!(": expected true or false, found {} {v}", v.type_str()))
    })
}

/// A table of strings (`env`, `headers`), in the file's order.
pub(super) fn string_map<'de, D: Deserializer<'de>>(
    d: D,
) -> Result<Vec<(String, String)>, D::Error> {
    with(d, |v| {
        v.as_table()
            .ok_or_else(|| ": expected a table of strings".to_owned())?
            .iter()
            .map(|(k, v)| {
                v.as_str()
                    .map(|v| (k.clone(), v.to_owned()))
                    .ok_or_else(|| format!(".{k}: expected a string"))
            })
            .collect()
    })
}

/// Whole seconds from 1 to `max`.
pub(super) fn whole_seconds(value: &Value, max: Duration) -> Result<Duration, String> {
    let secs = value
        .as_integer()
        .ok_or_else(|| ": expected whole seconds".to_owned())?;
    u64::try_from(secs)
        .ok()
        .filter(|&s| s >= 1 && s <= max.as_secs())
        .map(Duration::from_secs)
        .ok_or_else(|| format!(": {secs} is not between 1 and {} seconds", max.as_secs()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Debug, Default, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Example {
        #[serde(default, alias = "old_name", deserialize_with = "some_text")]
        name: Option<String>,
        #[serde(default, deserialize_with = "strings")]
        items: Vec<String>,
        #[serde(default, deserialize_with = "switch")]
        on: bool,
    }

    fn read(text: &str) -> Result<Example, String> {
        read_keys(&Value::Table(text.parse().unwrap()), "t", "[t]").map_err(|e| e.message)
    }

    #[test]
    fn mistakes_name_the_key_and_aliases_are_known() {
        let read_ok = read("old_name = \"a\"\nitems = [\"b\"]\non = true").unwrap();
        assert_eq!(
            (read_ok.name.as_deref(), &read_ok.items[..], read_ok.on),
            (Some("a"), &["b".to_owned()][..], true)
        );
        assert_eq!(
            read("nmae = \"a\"").unwrap_err(),
            "unknown key \"nmae\" in [t]; known keys: name, old_name, items, on; did you mean \
             \"name\"?"
        );
        assert_eq!(read("name = 1").unwrap_err(), "t.name: expected a string");
        assert_eq!(
            read("items = [1]").unwrap_err(),
            "t.items: expected strings, found integer"
        );
        assert_eq!(
            read("on = \"yes\"").unwrap_err(),
            "t.on: expected true or false, found string \"yes\""
        );
    }

    #[test]
    fn rust_type_names_are_said_in_words() {
        #[derive(Debug, serde::Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Counts {
            #[serde(default)]
            most: Option<usize>,
            #[serde(default)]
            share: Option<f64>,
        }
        let parse =
            |text: &str| read_keys::<Counts>(&Value::Table(text.parse().unwrap()), "t", "[t]");
        let read = |text: &str| parse(text).unwrap_err().message;
        let counts = parse("most = 3\nshare = 0.5").unwrap();
        assert_eq!((counts.most, counts.share), (Some(3), Some(0.5)));
        let most = read("most = \"many\"");
        assert!(most.starts_with("t.most: "), "{most}");
        assert!(most.contains("expected a whole number"), "{most}");
        assert!(!most.contains("usize"), "{most}");
        let share = read("share = \"half\"");
        assert!(share.contains("expected a number"), "{share}");
    }
}
