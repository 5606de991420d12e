//! Where a setting's value came from.

use std::fmt;
use std::path::PathBuf;

/// Where a setting's value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// rein's built-in default, or inferred from other settings.
    Default,
    /// `$REIN_HOME/config.toml`.
    UserFile(PathBuf),
    /// The project's `.rein/config.toml`.
    ProjectFile(PathBuf),
    /// An environment variable.
    Env(String),
    /// A variable from a `.env` file.
    DotEnv {
        /// The variable.
        var: String,
        /// The file.
        file: PathBuf,
    },
    /// A command-line flag (`--model`): one of [`super::FLAGS`].
    Flag(&'static str),
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("built-in default"),
            Source::UserFile(path) | Source::ProjectFile(path) => {
                write!(f, "{}", path.display())
            }
            Source::Env(var) => write!(f, "environment variable {var}"),
            Source::DotEnv { var, file } => write!(f, "{var} in {}", file.display()),
            Source::Flag(flag) => write!(f, "flag {flag}"),
        }
    }
}
