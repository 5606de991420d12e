//! `rein mcp add` and `rein mcp remove`: one server's `[mcp_servers.NAME]` table written into
//! or taken out of a config file through toml_edit, so the person's comments, order and
//! layout stay as they were; the file is replaced atomically (a temporary file beside it,
//! synced, renamed over it), keeping its permissions.

use std::io::Write;
use std::path::{Path, PathBuf};

use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, value};

/// A server to add.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NewServer {
    /// A program rein starts (`command`, `args`, `env`).
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it.
        env: Vec<(String, String)>,
    },
    /// A streamable-HTTP server (`url`, `headers`).
    Http {
        /// Its endpoint.
        url: String,
        /// Headers sent with every request.
        headers: Vec<(String, String)>,
    },
}

/// Why a config file could not be changed.
#[derive(Debug, thiserror::Error)]
pub enum McpEditError {
    /// The file exists but could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The file is not valid TOML; nothing was changed.
    #[error("{} is not valid TOML, so it was left as it is: {message}", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
    /// `mcp_servers` (or the server's entry) is not a table.
    #[error("{}: `{key}` is not a table, so rein does not change it", path.display())]
    NotATable {
        /// The file.
        path: PathBuf,
        /// The key.
        key: String,
    },
    /// A server of that name is configured there already.
    #[error("MCP server `{name}` is configured in {} already: remove it first (rein mcp remove {name})", path.display())]
    Exists {
        /// Its name.
        name: String,
        /// The file.
        path: PathBuf,
    },
    /// The name is empty.
    #[error("an MCP server needs a name")]
    NoName,
    /// The URL is not an http(s) URL with a host.
    #[error("{0:?} is not an http(s) URL")]
    BadUrl(String),
    /// The file could not be written; the old one is untouched.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Adds server `name` to the config file at `path` (created, with its directory, if absent).
pub fn add_server(path: &Path, name: &str, server: &NewServer) -> Result<(), McpEditError> {
    if name.trim().is_empty() {
        return Err(McpEditError::NoName);
    }
    if let NewServer::Http { url, .. } = server {
        let lower = url.trim().to_ascii_lowercase();
        let web = lower.starts_with("http://") || lower.starts_with("https://");
        if !web || rein_llm::url_host(url).is_none() {
            return Err(McpEditError::BadUrl(url.clone()));
        }
    }
    let mut doc = read(path)?;
    let servers = doc
        .entry("mcp_servers")
        .or_insert_with(|| {
            let mut table = Table::new();
            // `[mcp_servers.NAME]` headers only, no empty `[mcp_servers]`.
            table.set_implicit(true);
            Item::Table(table)
        })
        .as_table_mut()
        .ok_or_else(|| McpEditError::NotATable {
            path: path.to_path_buf(),
            key: "mcp_servers".to_owned(),
        })?;
    if servers.contains_key(name) {
        return Err(McpEditError::Exists {
            name: name.to_owned(),
            path: path.to_path_buf(),
        });
    }
    let mut table = Table::new();
    let pairs = |pairs: &[(String, String)]| {
        let mut inline = InlineTable::new();
        for (k, v) in pairs {
            inline.insert(k, v.as_str().into());
        }
        value(inline)
    };
    match server {
        NewServer::Stdio { command, args, env } => {
            table.insert("command", value(command.as_str()));
            if !args.is_empty() {
                table.insert(
                    "args",
                    value(args.iter().map(String::as_str).collect::<Array>()),
                );
            }
            if !env.is_empty() {
                table.insert("env", pairs(env));
            }
        }
        NewServer::Http { url, headers } => {
            table.insert("url", value(url.as_str()));
            if !headers.is_empty() {
                table.insert("headers", pairs(headers));
            }
        }
    }
    servers.insert(name, Item::Table(table));
    write(path, &doc.to_string())
}

/// Takes server `name` out of the config file at `path`; whether it was there.
pub fn remove_server(path: &Path, name: &str) -> Result<bool, McpEditError> {
    if !path.exists() {
        return Ok(false);
    }
    let mut doc = read(path)?;
    let Some(servers) = doc.get_mut("mcp_servers") else {
        return Ok(false);
    };
    let servers = servers
        .as_table_like_mut()
        .ok_or_else(|| McpEditError::NotATable {
            path: path.to_path_buf(),
            key: "mcp_servers".to_owned(),
        })?;
    if servers.remove(name).is_none() {
        return Ok(false);
    }
    write(path, &doc.to_string())?;
    Ok(true)
}

/// Whether the config file at `path` configures server `name` (unreadable: no).
pub fn has_server(path: &Path, name: &str) -> bool {
    read(path).is_ok_and(|doc| {
        doc.get("mcp_servers")
            .and_then(Item::as_table_like)
            .is_some_and(|t| t.contains_key(name))
    })
}

fn read(path: &Path) -> Result<DocumentMut, McpEditError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => {
            return Err(McpEditError::Read {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    text.parse::<DocumentMut>()
        .map_err(|e| McpEditError::Parse {
            path: path.to_path_buf(),
            message: e.to_string(),
        })
}

/// Replaces the file atomically, keeping its permissions (a config may hold credentials).
fn write(path: &Path, text: &str) -> Result<(), McpEditError> {
    let failed = |source| McpEditError::Write {
        path: path.to_path_buf(),
        source,
    };
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(failed)?;
    let permissions = std::fs::metadata(path).ok().map(|m| m.permissions());
    let mut temp = tempfile::NamedTempFile::new_in(dir).map_err(failed)?;
    if let Some(permissions) = permissions {
        temp.as_file()
            .set_permissions(permissions)
            .map_err(failed)?;
    }
    temp.write_all(text.as_bytes()).map_err(failed)?;
    temp.as_file().sync_all().map_err(failed)?;
    temp.persist(path).map_err(|e| failed(e.error))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn add_then_remove_keeps_the_rest_of_the_file_and_its_comments() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        let before =
            "# my model\nmodel = \"x\" # pinned\n\n[mcp_servers.old]\n# keep me\ncommand = \"o\"\n";
        std::fs::write(&path, before).unwrap();
        let server = NewServer::Stdio {
            command: "npx".into(),
            args: vec!["-y".into(), "srv".into()],
            env: vec![("TOKEN".into(), "${T}".into())],
        };
        add_server(&path, "new", &server).unwrap();
        let added = std::fs::read_to_string(&path).unwrap();
        assert!(added.starts_with(before), "{added}");
        assert!(
            added.contains("[mcp_servers.new]\ncommand = \"npx\"\nargs = [\"-y\", \"srv\"]"),
            "{added}"
        );
        let parsed: toml::Table = toml::from_str(&added).unwrap();
        assert_eq!(
            parsed["mcp_servers"]["new"]["env"]["TOKEN"].as_str(),
            Some("${T}")
        );
        assert!(matches!(
            add_server(&path, "new", &server),
            Err(McpEditError::Exists { .. })
        ));
        assert!(remove_server(&path, "new").unwrap());
        assert_eq!(std::fs::read_to_string(&path).unwrap(), before);
        assert!(!remove_server(&path, "new").unwrap());
    }

    #[test]
    fn a_file_that_is_not_toml_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.toml");
        std::fs::write(&path, "model = \n").unwrap();
        let server = NewServer::Http {
            url: "http://127.0.0.1:1/mcp".into(),
            headers: vec![],
        };
        assert!(matches!(
            add_server(&path, "w", &server),
            Err(McpEditError::Parse { .. })
        ));
        let ftp = NewServer::Http {
            url: "ftp://h/x".into(),
            headers: vec![],
        };
        assert!(matches!(
            add_server(&path, "w", &ftp),
            Err(McpEditError::BadUrl(_))
        ));
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "model = \n");
        // A new file, in a directory that does not exist yet.
        let fresh = dir.path().join(".rein/config.toml");
        add_server(&fresh, "w", &server).unwrap();
        assert_eq!(
            std::fs::read_to_string(&fresh).unwrap(),
            "[mcp_servers.w]\nurl = \"http://127.0.0.1:1/mcp\"\n"
        );
    }
}
