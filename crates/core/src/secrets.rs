//! Secrets: values that must never reach the model, the terminal or a file rein writes.
//!
//! A variable whose name looks secret (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`,
//! `*_CREDENTIALS`), whether in rein's environment or in a `.env` file (exported or not), and
//! the API key rein uses, count. Their names are removed from the environment of commands
//! and hooks, unless the config passes them through (`[secrets] pass_env`); their values (8
//! characters or more: shorter ones would mask ordinary words) are masked as
//! `[REDACTED:NAME]` in every tool result, before the model, a hook, the terminal or the
//! session file sees it, in every permission mode.

use std::borrow::Cow;
use std::fmt;

use aho_corasick::{AhoCorasick, MatchKind};

/// Values shorter than this are not masked.
pub const MIN_SECRET_CHARS: usize = 8;

/// Whether a variable's name says it holds a secret.
pub fn looks_secret(name: &str) -> bool {
    let name = name.to_ascii_uppercase();
    ["_KEY", "_TOKEN", "_SECRET", "_CREDENTIALS"]
        .iter()
        .any(|suffix| name.ends_with(suffix))
        || name.contains("PASSWORD")
        || matches!(name.as_str(), "KEY" | "TOKEN" | "SECRET" | "PASSWORD")
}

/// Variables and their values, kept apart so `Debug` never prints a value.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct SecretValues(Vec<(String, String)>);

impl SecretValues {
    /// The variables of `vars` whose names look secret.
    pub fn of<'a>(vars: impl IntoIterator<Item = (&'a str, &'a str)>) -> Self {
        SecretValues(
            vars.into_iter()
                .filter(|(name, _)| looks_secret(name))
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
        )
    }

    /// Each variable's name and value.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }
}

impl fmt::Debug for SecretValues {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list()
            .entries(self.0.iter().map(|(name, _)| format!("{name}=<redacted>")))
            .finish()
    }
}

/// What to keep from commands and what to mask in what tools give back.
#[derive(Clone, Default)]
pub struct Secrets {
    /// Variable names removed from the environment of commands and hooks.
    remove: Vec<String>,
    /// The name each masked value is shown under, in the matcher's pattern order.
    labels: Vec<String>,
    matcher: Option<AhoCorasick>,
}

impl fmt::Debug for Secrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Secrets")
            .field("remove", &self.remove)
            .field("masked", &self.labels)
            .finish()
    }
}

impl Secrets {
    /// The secrets of a run: the secret-looking variables of rein's environment (`env`) and
    /// of the `.env` file (`dotenv`), and the API key in use (`api_key`, under the name of
    /// the variable it came from, if any). Names in `pass_env` stay in commands'
    /// environment; their values are masked all the same.
    pub fn gather<'a>(
        env: impl IntoIterator<Item = (&'a str, &'a str)>,
        dotenv: &SecretValues,
        api_key: Option<(&str, &str)>,
        pass_env: &[String],
    ) -> Self {
        let env = SecretValues::of(env);
        let mut remove: Vec<String> = env
            .iter()
            .map(|(name, _)| name.to_owned())
            .filter(|name| !pass_env.contains(name))
            .collect();
        let mut values: Vec<(String, String)> = Vec::new();
        let mut add = |name: &str, value: &str| {
            if value.chars().count() >= MIN_SECRET_CHARS && !values.iter().any(|(_, v)| v == value)
            {
                values.push((name.to_owned(), value.to_owned()));
            }
        };
        if let Some((name, value)) = api_key {
            add(name, value);
            if !pass_env.iter().any(|p| p == name)
                && !remove.iter().any(|r| r == name)
                && !name.contains(' ')
            {
                remove.push(name.to_owned());
            }
        }
        for (name, value) in env.iter().chain(dotenv.iter()) {
            add(name, value);
        }
        // Longer first: a secret that contains another is masked whole.
        values.sort_by_key(|(_, value)| std::cmp::Reverse(value.len()));
        let matcher = if values.is_empty() {
            None
        } else {
            AhoCorasick::builder()
                .match_kind(MatchKind::LeftmostLongest)
                .build(values.iter().map(|(_, v)| v.as_str()))
                .ok()
        };
        Secrets {
            remove,
            labels: values.into_iter().map(|(name, _)| name).collect(),
            matcher,
        }
    }

    /// The variable names to remove from the environment of commands and hooks.
    pub fn env_remove(&self) -> &[String] {
        &self.remove
    }

    /// `text` with every secret value replaced by `[REDACTED:NAME]`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(matcher) = &self.matcher else {
            return Cow::Borrowed(text);
        };
        if !matcher.is_match(text) {
            return Cow::Borrowed(text);
        }
        let mut out = String::with_capacity(text.len());
        let mut last = 0;
        for found in matcher.find_iter(text) {
            out.push_str(&text[last..found.start()]);
            out.push_str("[REDACTED:");
            out.push_str(&self.labels[found.pattern().as_usize()]);
            out.push(']');
            last = found.end();
        }
        out.push_str(&text[last..]);
        Cow::Owned(out)
    }

    /// Whether there is any value to mask.
    pub fn any(&self) -> bool {
        self.matcher.is_some()
    }

    /// Masks the file at `path` (a saved tool output) in place: the masked copy is written
    /// beside it and renamed over it, so the file never holds half of each.
    pub fn redact_file(&self, path: &std::path::Path) -> std::io::Result<()> {
        let Some(matcher) = &self.matcher else {
            return Ok(());
        };
        use std::io::{BufRead as _, Write as _};
        let mut source = std::io::BufReader::new(std::fs::File::open(path)?);
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let mut masked = tempfile::NamedTempFile::new_in(dir)?;
        {
            // Line by line (a secret value holds no line break): memory stays one line.
            let mut writer = std::io::BufWriter::new(masked.as_file_mut());
            let mut line = Vec::new();
            while source.read_until(b'\n', &mut line)? > 0 {
                let mut last = 0;
                for found in matcher.find_iter(&line) {
                    writer.write_all(&line[last..found.start()])?;
                    write!(
                        writer,
                        "[REDACTED:{}]",
                        self.labels[found.pattern().as_usize()]
                    )?;
                    last = found.end();
                }
                writer.write_all(&line[last..])?;
                line.clear();
            }
            writer.flush()?;
        }
        masked.persist(path).map_err(|e| e.error)?;
        Ok(())
    }

    /// Masks `text` in place.
    pub fn redact_in_place(&self, text: &mut String) {
        if let Cow::Owned(masked) = self.redact(text) {
            *text = masked;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_that_look_secret() {
        for name in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_SECRET",
            "DB_PASSWORD",
            "MYSQL_ROOT_PASSWORD_FILE",
            "GOOGLE_APPLICATION_CREDENTIALS",
            "stripe_key",
        ] {
            assert!(looks_secret(name), "{name}");
        }
        for name in [
            "PATH",
            "HOME",
            "KEYBOARD",
            "TOKENIZERS_PARALLELISM",
            "SSH_AUTH_SOCK",
        ] {
            assert!(!looks_secret(name), "{name}");
        }
    }

    #[test]
    fn values_are_masked_names_removed_and_passed_ones_kept() {
        let dotenv = SecretValues::of([("STRIPE_KEY", "sk_live_0123456789"), ("DEBUG", "true")]);
        let secrets = Secrets::gather(
            [
                ("GITHUB_TOKEN", "ghp_abcdefghijklmnop"),
                ("NPM_TOKEN", "npm_zyxwvutsrq"),
                ("SHORT_KEY", "abc"),
                ("PATH", "/usr/bin"),
            ],
            &dotenv,
            Some(("OPENAI_API_KEY", "sk-proj-XYZXYZXYZ")),
            &["NPM_TOKEN".to_owned()],
        );
        assert_eq!(
            secrets.env_remove(),
            ["GITHUB_TOKEN", "SHORT_KEY", "OPENAI_API_KEY"],
            "secret-looking names go, unless passed through"
        );
        let out = "token ghp_abcdefghijklmnop, key sk-proj-XYZXYZXYZ, npm npm_zyxwvutsrq, \
                   stripe sk_live_0123456789, short abc, path /usr/bin";
        assert_eq!(
            secrets.redact(out),
            "token [REDACTED:GITHUB_TOKEN], key [REDACTED:OPENAI_API_KEY], npm \
             [REDACTED:NPM_TOKEN], stripe [REDACTED:STRIPE_KEY], short abc, path /usr/bin"
        );
        assert!(matches!(secrets.redact("nothing here"), Cow::Borrowed(_)));
        let shown = format!("{secrets:?} {dotenv:?}");
        assert!(
            !shown.contains("ghp_") && !shown.contains("sk_live"),
            "{shown}"
        );
    }

    #[test]
    fn a_secret_inside_another_is_masked_whole() {
        let secrets = Secrets::gather(
            [("A_TOKEN", "abcdefgh"), ("B_TOKEN", "xxabcdefghyy")],
            &SecretValues::default(),
            None,
            &[],
        );
        assert_eq!(secrets.redact("=xxabcdefghyy="), "=[REDACTED:B_TOKEN]=");
        assert_eq!(secrets.redact("=abcdefgh="), "=[REDACTED:A_TOKEN]=");
    }
}
