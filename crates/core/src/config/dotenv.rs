//! The environment as rein sees it: the caller's lookup, with gaps filled from the nearest
//! `.env` file. The process environment is never modified.

use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};

use super::ConfigError;
use super::layer::Sourced;
use super::source::Source;

const DOTENV_FILE: &str = ".env";
const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// The variables of a `.env` file that choose where requests (and the API key) go: from a
/// project's `.env` they apply only once the project is trusted, and the trust covers them.
pub const ENDPOINT_VARS: [&str; 4] = [
    "REIN_BASE_URL",
    "OPENAI_BASE_URL",
    "REIN_PROVIDER",
    "SSL_CERT_FILE",
];

/// Whose a `.env` file is, by where it lies.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DotEnvOwner {
    /// In the home directory or above it: the person's own.
    Person,
    /// Below the home directory (or anywhere, when the home is unknown): a project's.
    Project {
        /// In the project root or a directory above it, where the trust covers it (a
        /// `.env` in a subdirectory of the project is not covered).
        covered: bool,
    },
}

/// Variables from the caller's lookup, then from a `.env` file.
pub(crate) struct Env<'a> {
    lookup: &'a dyn Fn(&str) -> Option<String>,
    dotenv: Option<(PathBuf, HashMap<String, String>)>,
    owner: DotEnvOwner,
}

impl<'a> Env<'a> {
    /// Finds and reads the `.env` for `cwd`; see [`find_dotenv`] for the search.
    pub(crate) fn load(
        lookup: &'a dyn Fn(&str) -> Option<String>,
        cwd: &Path,
        home_dir: Option<&Path>,
        project_root: &Path,
    ) -> Result<Self, ConfigError> {
        let dotenv = match find_dotenv(cwd, home_dir, project_root) {
            Some(path) => {
                let vars = read_dotenv(&path)?;
                Some((path, vars))
            }
            None => None,
        };
        let owner = match &dotenv {
            Some((path, _)) => owner_of(path, home_dir, project_root),
            None => DotEnvOwner::Person,
        };
        Ok(Env {
            lookup,
            dotenv,
            owner,
        })
    }

    /// Whose the `.env` file in use is.
    pub(crate) fn dotenv_owner(&self) -> DotEnvOwner {
        self.owner
    }

    /// Takes `var` out of the `.env` file's variables, when the file sets it and the
    /// environment does not (where the environment sets it, the file's value is never used).
    pub(crate) fn take_dotenv_var(&mut self, var: &str) -> Option<Sourced<String>> {
        if (self.lookup)(var).is_some_and(|value| !value.is_empty()) {
            return None;
        }
        let (file, vars) = self.dotenv.as_mut()?;
        let value = vars.remove(var).filter(|value| !value.is_empty())?;
        Some(in_file(file, var, value))
    }

    /// A variable's value and where it came from; an empty value counts as unset.
    pub(crate) fn get(&self, var: &str) -> Option<Sourced<String>> {
        if let Some(value) = (self.lookup)(var).filter(|value| !value.is_empty()) {
            return Some(Sourced::new(value, Source::Env(var.to_owned())));
        }
        let (file, vars) = self.dotenv.as_ref()?;
        let value = vars.get(var).filter(|value| !value.is_empty())?;
        Some(in_file(file, var, value.clone()))
    }

    /// The variables of the `.env` file in use whose names look secret, exported or not.
    pub(crate) fn dotenv_secrets(&self) -> crate::secrets::SecretValues {
        match &self.dotenv {
            Some((_, vars)) => {
                crate::secrets::SecretValues::of(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            }
            None => crate::secrets::SecretValues::default(),
        }
    }

    /// The `.env` file in use, if any.
    pub(crate) fn dotenv_file(&self) -> Option<&Path> {
        self.dotenv.as_ref().map(|(path, _)| path.as_path())
    }
}

/// `value`, set for `var` in the `.env` file `file`.
fn in_file(file: &Path, var: &str, value: String) -> Sourced<String> {
    let var = var.to_owned();
    let file = file.to_path_buf();
    Sourced::new(value, Source::DotEnv { var, file })
}

/// The nearest `.env` from `cwd` upward: up to the home directory when `cwd` is inside it,
/// otherwise up to the project root, so a stray `/tmp/.env` is never picked up.
pub(crate) fn find_dotenv(
    cwd: &Path,
    home_dir: Option<&Path>,
    project_root: &Path,
) -> Option<PathBuf> {
    let stop = match home_dir {
        Some(home) if cwd.starts_with(home) => home,
        _ => project_root,
    };
    for dir in cwd.ancestors() {
        let candidate = dir.join(DOTENV_FILE);
        if candidate.is_file() {
            return Some(candidate);
        }
        if dir == stop {
            break;
        }
    }
    None
}

/// Whose the `.env` at `path` is: the person's in the home directory or above it; otherwise
/// a project's, covered by the trust when it lies in the project root or above it.
fn owner_of(path: &Path, home_dir: Option<&Path>, project_root: &Path) -> DotEnvOwner {
    let dir = path.parent().unwrap_or(path);
    match home_dir {
        Some(home) if home.starts_with(dir) => DotEnvOwner::Person,
        _ => DotEnvOwner::Project {
            covered: project_root.starts_with(dir),
        },
    }
}

/// The directories whose `.env` endpoint lines the trust in `project` covers: the project
/// root, then each directory above it below the home directory (a run walks up through
/// them to find its `.env`); the home directory and above are the person's own.
pub(crate) fn covered_dirs(project: &Path, home_dir: Option<&Path>) -> Vec<PathBuf> {
    let dirs: Vec<&Path> = match home_dir {
        Some(home) if project.starts_with(home) => {
            project.ancestors().take_while(|dir| *dir != home).collect()
        }
        // Outside the home directory, a run stops at the project root.
        _ => vec![project],
    };
    dirs.into_iter()
        .filter(|dir| !home_dir.is_some_and(|home| home.starts_with(dir)))
        .map(Path::to_path_buf)
        .collect()
}

/// The endpoint lines ([`ENDPOINT_VARS`]) of the `.env` in `dir`, as bytes to fingerprint;
/// `None` when there is no such file or it sets none of them. A file that does not parse
/// gives its whole text (rein refuses to start with it anyway).
pub(crate) fn endpoint_lines(dir: &Path) -> Option<Vec<u8>> {
    let path = dir.join(DOTENV_FILE);
    if !path.is_file() {
        return None;
    }
    let Ok(vars) = read_dotenv(&path) else {
        return std::fs::read(&path).ok();
    };
    let mut lines = Vec::new();
    for var in ENDPOINT_VARS {
        if let Some(value) = vars.get(var).filter(|value| !value.is_empty()) {
            lines.extend_from_slice(format!("{var}={value}\n").as_bytes());
        }
    }
    (!lines.is_empty()).then_some(lines)
}

/// Parses a `.env` file with dotenvy's iterator (never touching the process environment).
/// When a variable appears twice, the first wins, as with dotenvy's own loading.
fn read_dotenv(path: &Path) -> Result<HashMap<String, String>, ConfigError> {
    let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    let text = bytes.strip_prefix(UTF8_BOM).unwrap_or(&bytes);
    let mut vars = HashMap::new();
    for item in dotenvy::from_read_iter(text) {
        let (key, value) = item.map_err(|err| ConfigError::DotEnv {
            path: path.to_path_buf(),
            message: describe(&err, text),
        })?;
        vars.entry(key).or_insert(value);
    }
    Ok(vars)
}

/// Says which line is wrong without echoing it: the value may be a secret.
fn describe(err: &dotenvy::Error, text: &[u8]) -> String {
    match err {
        dotenvy::Error::LineParse(line, _) => {
            let first = line.lines().next().unwrap_or("");
            let number = String::from_utf8_lossy(text)
                .lines()
                .position(|candidate| candidate.trim_end() == first.trim_end())
                .map_or_else(String::new, |index| format!("line {} ", index + 1));
            let name = first.split('=').next().unwrap_or("").trim();
            let name = if name.is_empty() || name.contains(char::is_whitespace) {
                String::new()
            } else {
                format!(" (setting {name})")
            };
            format!("{number}is not a valid NAME=value line{name}")
        }
        dotenvy::Error::Io(err) if err.kind() == io::ErrorKind::InvalidData => {
            "the file is not valid UTF-8".to_owned()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_errors_name_the_line_but_not_the_value() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".env");
        std::fs::write(&path, "A=1\nSECRET_KEY=\"sk-abc\nB=2\n").unwrap();
        let err = read_dotenv(&path).unwrap_err().to_string();
        assert!(
            err.contains("line 2") && err.contains("SECRET_KEY"),
            "{err}"
        );
        assert!(!err.contains("sk-abc"), "{err}");
    }

    #[test]
    fn bom_comments_quotes_and_first_wins() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(".env");
        std::fs::write(
            &path,
            "\u{feff}# comment\nA=1\nB=\"two words\"\nA=3\nexport C=x\n",
        )
        .unwrap();
        let vars = read_dotenv(&path).unwrap();
        assert_eq!(vars["A"], "1");
        assert_eq!(vars["B"], "two words");
        assert_eq!(vars["C"], "x");
    }
}
