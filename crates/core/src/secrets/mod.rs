//! Secrets: values that must never reach the model, the terminal or a file rein writes.
//!
//! A variable whose name looks secret (`*_KEY`, `*_TOKEN`, `*_SECRET`, `*PASSWORD*`,
//! `*_CREDENTIALS`), whether in rein's environment or in a `.env` file (exported or not), and
//! the API key rein uses, count. Their names are removed from the environment of commands
//! and hooks, unless the config passes them through (`[secrets] pass_env`); their values (8
//! characters or more: shorter ones would mask ordinary words) are masked as
//! `[REDACTED:NAME]` in every tool result, before the model, a hook, the terminal or the
//! session file sees it, in every permission mode.
//!
//! A command can transform a value before printing it, so each value is looked for in the
//! forms commands commonly give it (`forms.rs`): base64 at each alignment, hex, URL-encoded,
//! reversed, and with a separator between its characters. What the model writes (its text,
//! its tool calls' arguments) is masked before the terminal or the session file gets it
//! (`stream.rs` masks text as it streams, `events.rs` every event), and so is what
//! background commands save to disk.

use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;

mod events;
mod forms;
mod matcher;
mod messages;
mod stream;

pub use events::EventMasker;
pub(crate) use events::{mask_output, mask_request};
pub(crate) use messages::{Reasoning, masked_message};
pub(crate) use stream::SecretsMask;
pub use stream::{ByteMasker, TextMasker};

use matcher::{Found, Matcher};

/// The size of the blocks a saved output is masked in.
const FILE_BLOCK_BYTES: usize = 64 * 1024;

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
    /// The name each masked value is shown under.
    labels: Vec<String>,
    matcher: Option<Matcher>,
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
        let indexed: Vec<(usize, &str)> = values
            .iter()
            .enumerate()
            .map(|(i, (_, value))| (i, value.as_str()))
            .collect();
        let matcher = Matcher::new(&indexed);
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

    /// `text` with every secret value, in any of its forms, replaced by `[REDACTED:NAME]`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        let Some(matcher) = &self.matcher else {
            return Cow::Borrowed(text);
        };
        let found = matcher.find(text.as_bytes());
        if found.is_empty() {
            return Cow::Borrowed(text);
        }
        let mut out = Vec::with_capacity(text.len());
        self.write_masked(text.as_bytes(), &found, &mut out);
        // Forms start and end on character boundaries: the text stays UTF-8.
        Cow::Owned(String::from_utf8(out).unwrap_or_default())
    }

    /// Appends `text` to `out` with the forms of `found` that lie within it masked.
    fn write_masked(&self, text: &[u8], found: &[Found], out: &mut Vec<u8>) {
        let mut last = 0;
        for f in found.iter().filter(|f| f.end <= text.len()) {
            out.extend_from_slice(&text[last..f.start]);
            out.extend_from_slice(b"[REDACTED:");
            out.extend_from_slice(self.labels[f.label].as_bytes());
            out.push(b']');
            last = f.end;
        }
        out.extend_from_slice(&text[last..]);
    }

    /// The matcher, when there is anything to mask.
    fn matcher(&self) -> Option<&Matcher> {
        self.matcher.as_ref()
    }

    /// Whether there is any value to mask.
    pub fn any(&self) -> bool {
        self.matcher.is_some()
    }

    /// Masks the file at `path` (a saved tool output) in place: the masked copy is written
    /// beside it and renamed over it, so the file never holds half of each. Read in blocks:
    /// memory stays a block, whatever the lines' length.
    pub fn redact_file(self: &Arc<Self>, path: &std::path::Path) -> std::io::Result<()> {
        use std::io::{Read as _, Write as _};
        if self.matcher.is_none() {
            return Ok(());
        }
        let mut source = std::fs::File::open(path)?;
        let dir = path.parent().unwrap_or(std::path::Path::new("."));
        let mut masked = tempfile::NamedTempFile::new_in(dir)?;
        {
            let mut masker = ByteMasker::new(Arc::clone(self));
            let mut block = vec![0u8; FILE_BLOCK_BYTES];
            let mut out = Vec::with_capacity(FILE_BLOCK_BYTES * 2);
            let writer = masked.as_file_mut();
            loop {
                let n = match source.read(&mut block) {
                    Ok(0) => break,
                    Ok(n) => n,
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                    Err(e) => return Err(e),
                };
                masker.push(&block[..n], &mut out);
                writer.write_all(&out)?;
                out.clear();
            }
            masker.finish(&mut out);
            writer.write_all(&out)?;
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
