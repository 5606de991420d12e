//! Trusted projects. A project's `.rein/config.toml` can configure hooks (and MCP servers):
//! commands a cloned repository could ship. They run only once the person has trusted that
//! project: the REPL asks the first time, `rein trust [DIR]` records it for headless runs.
//! The list is `$REIN_HOME/trusted-projects`, one canonical directory per line.

use std::io::{self, Write};
use std::path::{Path, PathBuf};

/// The file that lists trusted projects, under rein's home.
pub const TRUST_FILE: &str = "trusted-projects";

/// The trusted projects of one rein home.
#[derive(Debug, Clone)]
pub struct TrustStore {
    file: PathBuf,
}

impl TrustStore {
    /// The store of `rein_home`.
    pub fn new(rein_home: &Path) -> Self {
        TrustStore {
            file: rein_home.join(TRUST_FILE),
        }
    }

    /// Every trusted project, in the order they were trusted.
    pub fn list(&self) -> io::Result<Vec<PathBuf>> {
        match std::fs::read_to_string(&self.file) {
            Ok(text) => Ok(text
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#'))
                .map(PathBuf::from)
                .collect()),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(e),
        }
    }

    /// Whether `project` (canonical) is trusted. An unreadable list trusts nothing.
    pub fn is_trusted(&self, project: &Path) -> bool {
        self.list()
            .is_ok_and(|list| list.iter().any(|p| p == project))
    }

    /// Trusts `project`; returns its canonical path (false: it already was).
    pub fn trust(&self, project: &Path) -> io::Result<(PathBuf, bool)> {
        let project = std::fs::canonicalize(project)?;
        let mut list = self.list()?;
        if list.contains(&project) {
            return Ok((project, false));
        }
        list.push(project.clone());
        self.write(&list)?;
        Ok((project, true))
    }

    /// Withdraws the trust in `project`; false: it was not trusted.
    pub fn revoke(&self, project: &Path) -> io::Result<bool> {
        let project = std::fs::canonicalize(project).unwrap_or_else(|_| project.to_path_buf());
        let mut list = self.list()?;
        let before = list.len();
        list.retain(|p| p != &project);
        if list.len() == before {
            return Ok(false);
        }
        self.write(&list)?;
        Ok(true)
    }

    /// Replaces the list atomically (a temporary file renamed over it).
    fn write(&self, list: &[PathBuf]) -> io::Result<()> {
        let dir = self.file.parent().unwrap_or(Path::new("."));
        std::fs::create_dir_all(dir)?;
        let mut temp = tempfile::NamedTempFile::new_in(dir)?;
        writeln!(
            temp,
            "# Projects whose hooks and MCP servers rein may run (rein trust)."
        )?;
        for project in list {
            writeln!(temp, "{}", project.display())?;
        }
        temp.as_file().sync_all()?;
        temp.persist(&self.file).map_err(|e| e.error)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn trusting_lists_revoking_forgets() {
        let home = tempfile::tempdir().unwrap();
        let project = tempfile::tempdir().unwrap();
        let store = TrustStore::new(home.path());
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
}
