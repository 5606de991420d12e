//! Session ids: safe file names, sortable by creation time.

use std::fmt;
use std::time::SystemTime;

use super::SessionError;
use super::time::UtcTime;

/// The longest id accepted.
const MAX_ID_CHARS: usize = 128;
/// Characters of the random part of a new id.
const RANDOM_SUFFIX_CHARS: usize = 6;
const SUFFIX_ALPHABET: &[u8] = b"0123456789abcdefghijklmnopqrstuvwxyz";
/// The extension of session files; also accepted at the end of a given id.
pub(crate) const SESSION_FILE_EXTENSION: &str = "jsonl";

/// A checked session id: `[A-Za-z0-9._-]`, not starting with a dot, no `..`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SessionId(String);

impl SessionId {
    /// Checks an id given by a person; a trailing `.jsonl` (the file name) is accepted.
    pub fn parse(raw: &str) -> Result<Self, SessionError> {
        let id = raw.trim();
        let id = id.strip_suffix(".jsonl").unwrap_or(id);
        let invalid = |reason: &'static str| SessionError::InvalidId {
            id: raw.to_owned(),
            reason,
        };
        if id.is_empty() {
            return Err(invalid("it is empty"));
        }
        if id.chars().count() > MAX_ID_CHARS {
            return Err(invalid("it is longer than 128 characters"));
        }
        if !id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(invalid(
                "only letters, digits, '.', '_' and '-' are allowed",
            ));
        }
        if id.starts_with('.') || id.contains("..") {
            return Err(invalid("it may not start with '.' or contain '..'"));
        }
        Ok(SessionId(id.to_owned()))
    }

    /// A new id: the UTC creation time, then a random suffix (`20250102-150405-k3x9qa`).
    pub(crate) fn generate(now: SystemTime) -> Self {
        let suffix: String = (0..RANDOM_SUFFIX_CHARS)
            .map(|_| char::from(SUFFIX_ALPHABET[fastrand::usize(..SUFFIX_ALPHABET.len())]))
            .collect();
        SessionId(format!("{}-{suffix}", UtcTime::from_system(now).compact()))
    }

    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The session's file name.
    pub(crate) fn file_name(&self) -> String {
        format!("{}.{SESSION_FILE_EXTENSION}", self.0)
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;

    #[test]
    fn generated_ids_are_valid_sortable_and_distinct() {
        let early = SessionId::generate(UNIX_EPOCH + Duration::from_secs(1_700_000_000));
        let late = SessionId::generate(UNIX_EPOCH + Duration::from_secs(1_700_000_001));
        assert!(early < late, "{early} < {late}");
        assert!(early.as_str().starts_with("20231114-221320-"), "{early}");
        assert_eq!(SessionId::parse(early.as_str()).unwrap(), early);
        let again = SessionId::generate(UNIX_EPOCH + Duration::from_secs(1_700_000_000));
        assert_ne!(early, again);
    }

    #[test]
    fn file_names_are_accepted_as_ids() {
        assert_eq!(SessionId::parse("abc.jsonl").unwrap().as_str(), "abc");
        assert_eq!(SessionId::parse(" a-b_c.1 ").unwrap().as_str(), "a-b_c.1");
    }

    #[test]
    fn unsafe_ids_are_rejected() {
        for bad in [
            "", "..", "../x", "a/b", "a\\b", ".hidden", "a..b", "x y", "é", "a\0b",
        ] {
            assert!(
                matches!(SessionId::parse(bad), Err(SessionError::InvalidId { .. })),
                "{bad:?} was accepted"
            );
        }
        assert!(SessionId::parse(&"a".repeat(129)).is_err());
    }
}
