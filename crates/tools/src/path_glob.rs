//! A glob compiled for matching a few paths, cheaply.
//!
//! globset turns a glob into a regex and compiles it with regex-automata's defaults. The
//! `dfa-build` feature that ripgrep's grep-regex turns on for the whole build makes those
//! defaults determinize every small regex into a full DFA up front: about 0.7 million
//! instructions a glob, half of rein's start-up when it compiled its dozen sensitive-file
//! rules. rein matches each glob against a handful of paths a call, where the lazy DFA is as
//! fast, so the same regex is built here with the full and one-pass DFAs left out.
//!
//! Most of those matches fail (a path is checked against every sensitive-file rule), so a
//! glob whose last component holds a literal (`.env`, `.pem`, `credentials`) first looks for
//! it in the path: a path without it cannot match, and the regex is not run. The regex is
//! built the first time it is run, so a rule that never meets a path it could match costs
//! nothing (the sensitive-file rules, as every session starts, cost 1.3 million instructions
//! when built up front).

use std::path::Path;
use std::sync::{Arc, OnceLock};

use globset::Glob;
use memchr::memmem::Finder;
use regex_automata::meta::Regex;
use regex_automata::util::syntax;

/// A glob ready to match: globset's syntax and meaning, built without a full DFA.
#[derive(Debug, Clone)]
pub struct PathGlob {
    /// globset's regex for the glob.
    pattern: Arc<str>,
    /// Built on first use, shared by the clones; `None` if it cannot be (globset's own
    /// matcher assumes it always can: a glob that parsed is a small regex).
    regex: Arc<OnceLock<Option<Regex>>>,
    /// Bytes every matching path contains.
    required: Option<Arc<Finder<'static>>>,
}

impl PathGlob {
    /// The matcher of `glob` (built with globset's `GlobBuilder`, whose options it keeps).
    pub fn new(glob: &Glob) -> PathGlob {
        PathGlob {
            pattern: Arc::from(glob.regex()),
            regex: Arc::default(),
            required: required_literal(glob)
                .map(|literal| Arc::new(Finder::new(literal.as_bytes()).into_owned())),
        }
    }

    /// The matcher of `pattern`, with globset's default options; an error says what is wrong
    /// with the glob.
    pub fn parse(pattern: &str) -> Result<PathGlob, globset::Error> {
        Glob::new(pattern).map(|glob| PathGlob::new(&glob))
    }

    /// Whether `path` matches, compared as bytes (as globset does on Unix).
    pub fn is_match(&self, path: impl AsRef<Path>) -> bool {
        let bytes = path.as_ref().as_os_str().as_encoded_bytes();
        if let Some(required) = &self.required
            && required.find(bytes).is_none()
        {
            return false;
        }
        self.regex
            .get_or_init(|| compile(&self.pattern))
            .as_ref()
            .is_some_and(|regex| regex.is_match(bytes))
    }
}

/// globset's regex with globset's settings (paths are bytes, `*` may match a newline), less
/// the full and one-pass DFAs.
fn compile(pattern: &str) -> Option<Regex> {
    let built = Regex::builder()
        .configure(
            Regex::config()
                .utf8_empty(false)
                .dfa(false)
                .onepass(false)
                .nfa_size_limit(Some(10 * (1 << 20))),
        )
        .syntax(syntax::Config::new().utf8(false).dot_matches_new_line(true))
        .build(pattern);
    match built {
        Ok(regex) => Some(regex),
        Err(error) => {
            tracing::warn!(%pattern, %error, "a glob's regex could not be built: it matches nothing");
            None
        }
    }
}

/// The longest literal run of the glob's last component, when every match must contain it:
/// not under a case-insensitive glob, nor where a class, an alternation or an escape could
/// stand for other bytes.
fn required_literal(glob: &Glob) -> Option<&str> {
    if glob.regex().contains("(?i)") {
        return None;
    }
    let last = glob.glob().rsplit('/').next()?;
    if last.contains(['[', ']', '{', '}', '\\']) {
        return None;
    }
    last.split(['*', '?'])
        .max_by_key(|run| run.len())
        .filter(|run| !run.is_empty())
}

#[cfg(test)]
mod tests {
    use globset::GlobBuilder;

    use super::*;

    /// The same answers as globset's own matcher, on the globs rein writes.
    #[test]
    fn it_matches_as_globset_does() {
        let globs = [
            "**/.env",
            "**/.env.*",
            "**/*.pem",
            "**/id_rsa*",
            "/proc/*/environ",
            "src/**",
            "src/*.rs",
            "{a,b}/[xy]?.txt",
            "mcp__github__*",
        ];
        let paths = [
            ".env",
            "a/.env",
            "a/.env.local",
            "/home/u/.ssh/id_rsa.pub",
            "key.pem",
            "/proc/12/environ",
            "/proc/12/task/1/environ",
            "src/main.rs",
            "src/a/b.rs",
            "a/x1.txt",
            "c/x1.txt",
            "mcp__github__search",
            "mcp__git__x",
            "line\nbreak.pem",
        ];
        for text in globs {
            for separator in [true, false] {
                let glob = GlobBuilder::new(text)
                    .literal_separator(separator)
                    .build()
                    .unwrap();
                let ours = PathGlob::new(&glob);
                let theirs = glob.compile_matcher();
                for path in paths {
                    assert_eq!(
                        ours.is_match(path),
                        theirs.is_match(path),
                        "{text} (literal_separator {separator}) on {path:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_literal_looked_for_first_is_one_every_match_holds() {
        let literal = |text: &str| required_literal(&Glob::new(text).unwrap()).map(str::to_owned);
        assert_eq!(literal("**/.env").as_deref(), Some(".env"));
        assert_eq!(literal("**/.env.*").as_deref(), Some(".env."));
        assert_eq!(literal("**/credentials*").as_deref(), Some("credentials"));
        assert_eq!(literal("/proc/*/environ").as_deref(), Some("environ"));
        assert_eq!(literal("src/**"), None);
        assert_eq!(literal("**/{a,bb}.txt"), None);
        assert_eq!(literal("**/[ab]x.txt"), None);
        let insensitive = GlobBuilder::new("**/.ENV")
            .case_insensitive(true)
            .build()
            .unwrap();
        assert_eq!(required_literal(&insensitive), None);
        let glob = PathGlob::new(&insensitive);
        assert!(glob.is_match("a/.env"), "case-insensitive still matches");
    }

    #[test]
    fn a_bad_glob_is_an_error_naming_it() {
        let err = PathGlob::parse("src/[").unwrap_err().to_string();
        assert!(err.contains("src/["), "{err}");
    }

    #[test]
    fn clones_share_the_regex_built_for_one_of_them() {
        let glob = PathGlob::parse("**/*.rs").unwrap();
        let copy = glob.clone();
        assert!(glob.is_match("src/main.rs"));
        assert!(copy.regex.get().is_some(), "built once, for both");
        assert!(!copy.is_match("src/main.py"));
    }
}
