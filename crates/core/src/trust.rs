//! Trusted projects. A project's `.rein/config.toml` can configure hooks (and MCP servers, as
//! can its `.mcp.json`): commands a cloned repository could ship. They run only once the
//! person has trusted that project: the REPL asks the first time, `rein trust [DIR]` records
//! it for headless runs.
//!
//! A project's `.env` files can also say where requests, with the API key, go
//! (`REIN_BASE_URL` and the other [`ENDPOINT_VARS`]): those lines apply only to a trusted
//! project too (`config/untrusted.rs`).
//!
//! The trust is in those files as they were when it was given: the list keeps a fingerprint
//! of them (SHA-256), and a project whose files changed since (a `git pull`, or a command
//! that wrote them) is asked about again. The fingerprint covers the config files whole, and
//! the project's Claude Code settings (`.claude/settings.json` and `settings.local.json`), and
//! the endpoint lines of the `.env` in the project root and in each directory above it
//! below the home directory (the ones a run walks up through). The list is `$REIN_HOME/trusted-projects`, one
//! canonical directory and its fingerprint per line.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

pub use crate::config::dotenv::ENDPOINT_VARS;

/// The file that lists trusted projects, under rein's home.
pub const TRUST_FILE: &str = "trusted-projects";

/// A project's files the trust covers, relative to its root.
pub const TRUSTED_FILES: [&str; 2] = [".rein/config.toml", ".mcp.json"];

/// The trusted projects of one rein home.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
    /// The home directory: `.env` files there and above are the person's, not the project's.
    home: Option<PathBuf>,
}

/// How far a project is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trust {
    /// Trusted, with its files as they are now.
    Trusted,
    /// Trusted once, but its files changed since.
    Changed,
    /// Never trusted.
    Unknown,
}

/// One line of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry {
    project: PathBuf,
    /// The fingerprint of its files when it was trusted (`None` in a list written before
    /// fingerprints: such a project is asked about again).
    fingerprint: Option<String>,
}

impl TrustStore {
    /// The store of `rein_home`, for a person whose home directory is `home_dir`.
    pub fn new(rein_home: &Path, home_dir: Option<&Path>) -> Self {
        TrustStore {
            file: rein_home.join(TRUST_FILE),
            home: home_dir.map(Path::to_path_buf),
        }
    }

    /// The fingerprint of `project`'s trusted files as they are now.
    pub fn fingerprint(&self, project: &Path) -> String {
        fingerprint(project, self.home.as_deref())
    }

    /// Every trusted project, in the order they were trusted.
    pub fn list(&self) -> io::Result<Vec<PathBuf>> {
        Ok(self.entries()?.into_iter().map(|e| e.project).collect())
    }

    fn entries(&self) -> io::Result<Vec<Entry>> {
        match std::fs::read_to_string(&self.file) {
            Ok(text) => Ok(text
                .lines()
                .map(str::trim_end)
                .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
                .map(|line| match line.rsplit_once('\t') {
                    Some((project, fingerprint)) => Entry {
                        project: PathBuf::from(project),
                        fingerprint: Some(fingerprint.trim().to_owned()),
                    },
                    None => Entry {
                        project: PathBuf::from(line.trim()),
                        fingerprint: None,
                    },
                })
                .collect()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// How far `project` (canonical) is trusted. An unreadable list trusts nothing.
    pub fn status(&self, project: &Path) -> Trust {
        let Ok(entries) = self.entries() else {
            return Trust::Unknown;
        };
        match entries.iter().find(|e| e.project == project) {
            None => Trust::Unknown,
            Some(entry) if entry.fingerprint.as_deref() == Some(&self.fingerprint(project)) => {
                Trust::Trusted
            }
            Some(_) => Trust::Changed,
        }
    }

    /// Whether `project` (canonical) is trusted with its files as they are now.
    pub fn is_trusted(&self, project: &Path) -> bool {
        self.status(project) == Trust::Trusted
    }

    /// Trusts `project` with its files as they are now; returns its canonical path (false:
    /// it already was).
    pub fn trust(&self, project: &Path) -> io::Result<(PathBuf, bool)> {
        let project = std::fs::canonicalize(project)?;
        let now = self.fingerprint(&project);
        let mut entries = self.entries()?;
        if entries
            .iter()
            .any(|e| e.project == project && e.fingerprint.as_deref() == Some(&now))
        {
            return Ok((project, false));
        }
        entries.retain(|e| e.project != project);
        entries.push(Entry {
            project: project.clone(),
            fingerprint: Some(now),
        });
        self.write(&entries)?;
        Ok((project, true))
    }

    /// Withdraws the trust in `project`; false: it was not trusted.
    pub fn revoke(&self, project: &Path) -> io::Result<bool> {
        let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        let mut entries = self.entries()?;
        let before = entries.len();
        entries.retain(|e| e.project != project);
        if entries.len() == before {
            return Ok(false);
        }
        self.write(&entries)?;
        Ok(true)
    }

    /// Replaces the list atomically (a temporary file renamed over it).
    fn write(&self, entries: &[Entry]) -> io::Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        writeln!(
            temp,
            "# Projects whose hooks, MCP servers and endpoint settings rein may use (rein \
             trust), each with a fingerprint of its {}, Claude Code settings files and .env \
             files' endpoint lines.",
            TRUSTED_FILES.join(" and ")
        )?;
        for entry in entries {
            match &entry.fingerprint {
                Some(fingerprint) => writeln!(temp, "{}\t{fingerprint}", entry.project.display())?,
                None => writeln!(temp, "{}", entry.project.display())?,
            }
        }
        temp.as_file().sync_all()?;
        temp.persist(&self.file).map_err(|e| e.error)?;
        Ok(())
    }
}

/// The fingerprint of a project's trusted files as they are now (an absent file counts as
/// absent: one that appears later changes it), and of the endpoint lines of its `.env`
/// files (those only when there are some, so a fingerprint taken before `.env` files counted
/// still holds for a project that has none).
fn fingerprint(project: &Path, home_dir: Option<&Path>) -> String {
    let mut hasher = Sha256::new();
    for name in TRUSTED_FILES {
        hasher.update(name.as_bytes());
        match std::fs::read(project.join(name)) {
            Ok(bytes) => {
                hasher.update([1]);
                hasher.update((bytes.len() as u64).to_le_bytes());
                hasher.update(&bytes);
            }
            Err(_) => hasher.update([0]),
        }
    }
    // Claude Code's settings files count only when present, so a fingerprint taken before
    // they counted still holds for a project that has none.
    for name in crate::config::CLAUDE_PROJECT_FILES {
        if let Ok(bytes) = std::fs::read(project.join(name)) {
            hasher.update(name.as_bytes());
            hasher.update((bytes.len() as u64).to_le_bytes());
            hasher.update(&bytes);
        }
    }
    for dir in crate::config::dotenv::covered_dirs(project, home_dir) {
        if let Some(lines) = crate::config::dotenv::endpoint_lines(&dir) {
            hasher.update(b".env");
            hasher.update(dir.as_os_str().as_encoded_bytes());
            hasher.update((lines.len() as u64).to_le_bytes());
            hasher.update(&lines);
        }
    }
    hasher
        .finalize()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusting_lists_revoking_forgets() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let store = TrustStore::new(home.path(), None);
        let canonical = project.path().canonicalize().unwrap();
        assert!(!store.is_trusted(&canonical));
        assert_eq!(
            store.trust(project.path()).unwrap(),
            (canonical.clone(), true)
        );
        assert!(!store.trust(project.path()).unwrap().1, "once is enough");
        assert!(store.is_trusted(&canonical));
        assert_eq!(store.list().unwrap(), std::slice::from_ref(&canonical));
        assert!(store.revoke(project.path()).unwrap());
        assert!(!store.is_trusted(&canonical));
        assert!(!store.revoke(project.path()).unwrap());
    }

    #[test]
    fn a_file_that_changes_or_appears_withdraws_the_trust_until_given_again() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        let store = TrustStore::new(home.path(), None);
        std::fs::create_dir_all(root.join(".rein")).unwrap();
        std::fs::write(root.join(".rein/config.toml"), "max_rounds = 5\n").unwrap();
        store.trust(&root).unwrap();
        assert_eq!(store.status(&root), Trust::Trusted);
        // A hook added behind the person's back.
        std::fs::write(
            root.join(".rein/config.toml"),
            "[[hooks.Stop]]\ncommand = \"evil\"\n",
        )
        .unwrap();
        assert_eq!(store.status(&root), Trust::Changed);
        assert!(store.trust(&root).unwrap().1, "trusted again, as it is now");
        assert_eq!(store.status(&root), Trust::Trusted);
        assert_eq!(store.list().unwrap().len(), 1, "one line per project");
        // A server file that was absent appears.
        std::fs::write(root.join(".mcp.json"), "{\"mcpServers\": {}}").unwrap();
        assert_eq!(store.status(&root), Trust::Changed);
    }

    #[test]
    fn a_line_without_a_fingerprint_is_asked_about_again() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let root = project.path().canonicalize().unwrap();
        std::fs::write(
            home.path().join(TRUST_FILE),
            format!("{}\n", root.display()),
        )
        .unwrap();
        let store = TrustStore::new(home.path(), None);
        assert_eq!(store.status(&root), Trust::Changed);
        assert_eq!(store.list().unwrap(), [root]);
    }
}
