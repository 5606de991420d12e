//! One layer of settings (a file, the environment, the flags), each value checked where it
//! was read, and how layers stack: a later layer's value wins, and keeps where it came from.

use std::collections::BTreeMap;

use toml::{Table, Value};

use super::dotenv::Env;
use super::fields::field_names;
use super::settings::{ENV_VARS, flag};
use super::tables::{ConfiguredRule, Tables};
use super::{ApiKey, ConfigError, Overrides, Settings, Source};

/// A value and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Sourced<T> {
    pub(crate) value: T,
    pub(crate) source: Source,
}

impl<T> Sourced<T> {
    pub(crate) fn new(value: T, source: Source) -> Self {
        Sourced { value, source }
    }
}

/// The settings one layer sets; a key it leaves out keeps the value of the layers below.
#[derive(Debug, Clone, Default)]
pub(crate) struct Layer {
    /// Flat settings by key, each checked as its [`Settings`] field.
    pub(crate) values: BTreeMap<String, Sourced<Value>>,
    /// Rules, hooks and passed variables: added to, never replaced.
    pub(crate) tables: Tables,
}

/// Every flat key a config file may hold: the fields of [`Settings`].
pub(crate) fn keys() -> &'static [&'static str] {
    field_names::<Settings>()
}

impl Layer {
    /// Sets `key` once `value` passes its check; the error says why not.
    pub(crate) fn set(&mut self, key: &str, value: Value, source: Source) -> Result<(), String> {
        let mut alone = Table::new();
        alone.insert(key.to_owned(), value.clone());
        alone
            .try_into::<Settings>()
            .map_err(|err| err.message().to_owned())?;
        self.values
            .insert(key.to_owned(), Sourced::new(value, source));
        Ok(())
    }

    /// Puts `above` on top of this layer: what it sets wins.
    pub(crate) fn stack(&mut self, above: Layer) {
        self.tables.stack(above.tables);
        self.values.extend(above.values);
    }

    /// Where `key`'s value comes from: a layer, or the default.
    pub(crate) fn source(&self, key: &str) -> &Source {
        self.values
            .get(key)
            .map_or(&Source::Default, |value| &value.source)
    }

    /// The settings this layer sets, with the defaults for the rest.
    pub(crate) fn settings(&self) -> Result<Settings, ConfigError> {
        let table: Table = (self.values.iter())
            .map(|(key, value)| (key.clone(), value.value.clone()))
            .collect();
        // Each value passed its check on its own; only a check that depends on another
        // setting could fail here.
        table.try_into().map_err(|err| {
            ConfigError::invalid("configuration", "the stacked layers", err.message())
        })
    }

    /// The environment as a layer: the settings [`ENV_VARS`] names.
    pub(crate) fn from_env(env: &Env<'_>) -> Result<Layer, ConfigError> {
        let mut layer = Layer::default();
        for (key, var) in ENV_VARS {
            let Some(text) = env.get(var) else { continue };
            let value = typed(key, &text.value)
                .map_err(|reason| ConfigError::invalid(*var, &text.source, reason))?;
            layer
                .values
                .insert((*key).to_owned(), Sourced::new(value, text.source));
        }
        Ok(layer)
    }

    /// The flags as a layer, validated like any other; also returns the `--api-key` value.
    pub(crate) fn from_overrides(
        flags: &Overrides,
    ) -> Result<(Layer, Option<ApiKey>), ConfigError> {
        let invalid = |key: &'static str| {
            move |reason: String| ConfigError::invalid(key, Source::Flag(flag(key)), reason)
        };
        let mut layer = Layer::default();
        let given = [
            ("model", flags.model.clone().map(Value::String)),
            (
                "provider",
                flags.provider.map(|p| Value::String(p.to_string())),
            ),
            ("base_url", flags.base_url.clone().map(Value::String)),
            (
                "max_rounds",
                flags.max_rounds.map(|n| Value::Integer(n.into())),
            ),
            ("max_cost", flags.max_cost.map(Value::Float)),
            (
                "max_session_tokens",
                flags
                    .max_session_tokens
                    .map(|n| Value::Integer(i64::try_from(n).unwrap_or(i64::MAX))),
            ),
        ];
        for (key, value) in given {
            if let Some(value) = value {
                layer
                    .set(key, value, Source::Flag(flag(key)))
                    .map_err(invalid(key))?;
            }
        }
        for (texts, list, name) in [
            (&flags.allow, &mut layer.tables.rules.allow, "--allow"),
            (&flags.deny, &mut layer.tables.rules.deny, "--deny"),
        ] {
            for text in texts {
                crate::permissions::Rule::parse(text, None).map_err(|reason| {
                    ConfigError::invalid(
                        name.trim_start_matches('-'),
                        format!("flag {name}"),
                        reason,
                    )
                })?;
                list.push(ConfiguredRule {
                    text: text.clone(),
                    source: Source::Flag(name),
                });
            }
        }
        let key = match &flags.api_key {
            Some(key) if key.expose().trim().is_empty() => {
                return Err(invalid("api_key")("the key is empty".to_owned()));
            }
            other => other.clone(),
        };
        Ok((layer, key))
    }
}

/// A variable's text as the value its setting takes: the text itself, else the number or
/// boolean it spells; when none passes, the check's message for the most likely one.
fn typed(key: &str, text: &str) -> Result<Value, String> {
    let mut probe = Layer::default();
    let as_text = Value::String(text.to_owned());
    let text_err = match probe.set(key, as_text.clone(), Source::Default) {
        Ok(()) => return Ok(as_text),
        Err(reason) => reason,
    };
    let trimmed = text.trim();
    let spelled = (trimmed.parse().map(Value::Integer).ok())
        .or_else(|| {
            trimmed
                .parse()
                .ok()
                .filter(|f: &f64| f.is_finite())
                .map(Value::Float)
        })
        .or_else(|| trimmed.parse().ok().map(Value::Boolean));
    match spelled {
        Some(value) => probe
            .set(key, value.clone(), Source::Default)
            .map(|()| value),
        None => Err(text_err),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_validated_like_files_and_named_in_errors() {
        let flags = Overrides {
            max_rounds: Some(0),
            ..Overrides::default()
        };
        let err = Layer::from_overrides(&flags).unwrap_err().to_string();
        assert_eq!(
            err,
            "invalid value for \"max_rounds\" in flag --max-rounds: 0 is less than 1"
        );
        let flags = Overrides {
            base_url: Some("localhost:8080".into()),
            ..Overrides::default()
        };
        let err = Layer::from_overrides(&flags).unwrap_err().to_string();
        assert!(err.contains("in flag --base-url: "), "{err}");
        let flags = Overrides {
            api_key: Some(ApiKey::new(" ")),
            ..Overrides::default()
        };
        let err = Layer::from_overrides(&flags).unwrap_err().to_string();
        assert!(err.contains("in flag --api-key: the key is empty"), "{err}");
    }

    #[test]
    fn a_later_layer_wins_only_where_it_sets_something() {
        let mut below = Layer::default();
        below.set("model", "a".into(), Source::Default).unwrap();
        below.set("retries", 1.into(), Source::Default).unwrap();
        let mut above = Layer::default();
        above
            .set("model", "b".into(), Source::Flag("--model"))
            .unwrap();
        below.stack(above);
        assert_eq!(below.source("model"), &Source::Flag("--model"));
        let settings = below.settings().unwrap();
        assert_eq!(settings.model.as_deref(), Some("b"));
        assert_eq!(settings.retries, 1);
    }
}
