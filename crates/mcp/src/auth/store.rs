//! The sign-in file of one server, `<dir>/<name>.json`: the registered client, the
//! authorization server's metadata, and the tokens. Mode 0600 from its first byte, replaced
//! atomically (temporary file, fsync, rename), in a directory of mode 0700. A refresh holds
//! an exclusive lock on `<name>.lock`, so that two rein processes never spend the same
//! refresh token (servers that rotate them would then sign both out).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use rmcp::transport::auth::{
    AuthError, AuthorizationMetadata, CredentialRefreshGuard, CredentialStore, StoredCredentials,
};
use serde::{Deserialize, Serialize};

/// The mode of a sign-in file: the person's alone.
pub(crate) const SIGN_IN_FILE_MODE: u32 = 0o600;
/// The mode of the directory of sign-in files.
const SIGN_IN_DIR_MODE: u32 = 0o700;

static TEMP_COUNTER: AtomicU64 = AtomicU64::new(0);

/// What one `rein mcp login` leaves for later connections. No `Debug`: it holds tokens.
#[derive(Clone, Serialize, Deserialize)]
pub(crate) struct SignIn {
    /// The server's URL when it was signed in to: a changed URL voids the sign-in.
    pub(crate) server_url: String,
    /// The resource the tokens are for (RFC 8707), as the login asked for them.
    pub(crate) resource: Option<String>,
    /// The authorization server's metadata, so that a connection needs no discovery.
    pub(crate) metadata: AuthorizationMetadata,
    /// The client registered for rein (dynamic client registration).
    pub(crate) client_id: String,
    /// Its secret, when the server gave it one.
    pub(crate) client_secret: Option<String>,
    /// The redirect URI it was registered with.
    pub(crate) redirect_uri: String,
    /// The tokens, their scopes and when they were received.
    pub(crate) credentials: StoredCredentials,
}

/// `name` as a file name: letters, digits, `-`, `_` and `.` kept (a leading `.` excepted),
/// anything else as `%XX`, so that no name can leave the directory or clash with another.
pub(crate) fn file_stem(name: &str) -> String {
    let mut stem = String::with_capacity(name.len());
    for (i, byte) in name.bytes().enumerate() {
        let keep =
            byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_') || (byte == b'.' && i > 0);
        if keep {
            stem.push(char::from(byte));
        } else {
            stem.push_str(&format!("%{byte:02X}"));
        }
    }
    stem
}

/// Where server `name`'s sign-in is kept under `dir`.
pub fn sign_in_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{}.json", file_stem(name)))
}

fn lock_path(dir: &Path, name: &str) -> PathBuf {
    dir.join(format!("{}.lock", file_stem(name)))
}

/// Reads a sign-in; `None` when there is none.
pub(crate) fn read(path: &Path) -> io::Result<Option<SignIn>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    serde_json::from_slice(&bytes)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

/// Writes a sign-in atomically, mode 0600, creating its directory (mode 0700).
pub(crate) fn write(path: &Path, sign_in: &SignIn) -> io::Result<()> {
    let dir = path
        .parent()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "no directory"))?;
    DirBuilder::new()
        .recursive(true)
        .mode(SIGN_IN_DIR_MODE)
        .create(dir)?;
    let bytes = serde_json::to_vec_pretty(sign_in).map_err(io::Error::other)?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(
        ".{name}.{}-{}.tmp",
        std::process::id(),
        TEMP_COUNTER.fetch_add(1, Ordering::Relaxed)
    ));
    // Created with its final mode: the tokens are never readable by others, not even while
    // being written.
    let written = (|| {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(SIGN_IN_FILE_MODE)
            .open(&temp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        std::fs::rename(&temp, path)
    })();
    if written.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    written
}

/// Removes server `name`'s sign-in; whether there was one.
pub fn remove(dir: &Path, name: &str) -> io::Result<bool> {
    let _ = std::fs::remove_file(lock_path(dir, name));
    match std::fs::remove_file(sign_in_path(dir, name)) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

/// rmcp's credential store on a sign-in file: what a refresh saves goes to the file, the
/// rest of the file kept.
pub(crate) struct FileStore {
    dir: PathBuf,
    name: String,
}

impl FileStore {
    pub(crate) fn new(dir: &Path, name: &str) -> Self {
        FileStore {
            dir: dir.to_path_buf(),
            name: name.to_owned(),
        }
    }

    fn path(&self) -> PathBuf {
        sign_in_path(&self.dir, &self.name)
    }

    fn failed(&self, what: &str, error: impl std::fmt::Display) -> AuthError {
        AuthError::CredentialStoreError(format!("cannot {what} {}: {error}", self.path().display()))
    }
}

#[rein_tools::async_trait]
impl CredentialStore for FileStore {
    async fn load(&self) -> Result<Option<StoredCredentials>, AuthError> {
        read(&self.path())
            .map(|found| found.map(|s| s.credentials))
            .map_err(|e| self.failed("read", e))
    }

    async fn save(&self, credentials: StoredCredentials) -> Result<(), AuthError> {
        let path = self.path();
        // Logged out meanwhile: the new tokens are not to bring the sign-in back.
        let Some(mut sign_in) = read(&path).map_err(|e| self.failed("read", e))? else {
            return Err(self.failed("update", "it was removed (rein mcp logout)"));
        };
        sign_in.credentials = credentials;
        write(&path, &sign_in).map_err(|e| self.failed("write", e))
    }

    async fn clear(&self) -> Result<(), AuthError> {
        remove(&self.dir, &self.name)
            .map(drop)
            .map_err(|e| self.failed("remove", e))
    }

    async fn acquire_refresh_guard(&self) -> Result<Option<CredentialRefreshGuard>, AuthError> {
        let path = lock_path(&self.dir, &self.name);
        let locked = tokio::task::spawn_blocking(move || -> io::Result<File> {
            let file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .mode(SIGN_IN_FILE_MODE)
                .open(&path)?;
            rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive)?;
            Ok(file)
        })
        .await
        .map_err(|e| self.failed("lock", e))?
        .map_err(|e| self.failed("lock", e))?;
        // The lock goes with the file when the guard is dropped.
        Ok(Some(CredentialRefreshGuard::new(locked)))
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn sign_in() -> SignIn {
        SignIn {
            server_url: "http://127.0.0.1:1/mcp".into(),
            resource: None,
            metadata: AuthorizationMetadata::default(),
            client_id: "c".into(),
            client_secret: None,
            redirect_uri: "http://127.0.0.1:2/callback".into(),
            credentials: StoredCredentials::new("c".into(), None, Vec::new(), None),
        }
    }

    #[test]
    fn names_cannot_leave_the_directory() {
        assert_eq!(file_stem("docs"), "docs");
        assert_eq!(file_stem("a.b-c_d"), "a.b-c_d");
        assert_eq!(file_stem("../x"), "%2E.%2Fx");
        assert_eq!(file_stem(".."), "%2E.");
        assert_eq!(file_stem("a/b"), "a%2Fb");
        assert_ne!(file_stem("a/b"), file_stem("a%2Fb"));
    }

    #[test]
    fn a_sign_in_is_private_and_replaced_whole() {
        let dir = tempfile::tempdir().unwrap();
        let path = sign_in_path(&dir.path().join("mcp-auth"), "docs");
        write(&path, &sign_in()).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let dir_mode = std::fs::metadata(path.parent().unwrap())
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        let mut changed = sign_in();
        changed.client_id = "d".into();
        write(&path, &changed).unwrap();
        assert_eq!(read(&path).unwrap().unwrap().client_id, "d");
        // No temporary file is left beside it.
        assert_eq!(
            std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
            1
        );
        assert!(remove(path.parent().unwrap(), "docs").unwrap());
        assert!(!remove(path.parent().unwrap(), "docs").unwrap());
    }
}
