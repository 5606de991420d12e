//! What can go wrong while loading the configuration.

use std::io;
use std::path::PathBuf;

/// A configuration problem, naming the file (or variable, or flag) and the key.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// A config or `.env` file exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: io::Error,
    },
    /// A config file is not valid TOML, or a settings file not valid JSON.
    #[error("invalid {format} in {} at line {line}, column {column}: {message}", path.display())]
    Syntax {
        /// `TOML` or `JSON`.
        format: &'static str,
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// 1-based column, in characters.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A config file has a key rein does not know.
    #[error("unknown key \"{key}\" in {} (line {line}){hint}", path.display())]
    UnknownKey {
        /// The key as written.
        key: String,
        /// The file.
        path: PathBuf,
        /// 1-based line.
        line: usize,
        /// A suggestion (`; did you mean "model"?`), or empty.
        hint: String,
    },
    /// A setting has a value rein cannot use.
    #[error("invalid value for \"{key}\" in {origin}: {reason}")]
    InvalidValue {
        /// The setting's key (or the variable's name).
        key: String,
        /// Where the value came from, with the line for files.
        origin: String,
        /// What is wrong and what is expected.
        reason: String,
    },
    /// A `.env` file could not be parsed.
    #[error("cannot parse {}: {message}", path.display())]
    DotEnv {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

impl ConfigError {
    /// [`ConfigError::InvalidValue`]: the value of `key` from `origin` is wrong, for `reason`.
    pub(crate) fn invalid(
        key: impl Into<String>,
        origin: impl ToString,
        reason: impl ToString,
    ) -> Self {
        ConfigError::InvalidValue {
            key: key.into(),
            origin: origin.to_string(),
            reason: reason.to_string(),
        }
    }
}
