//! `[mcp_servers.NAME]` tables: an MCP server to start, as written (variables are expanded
//! when the servers start, see `crate::mcp`). A later layer's server of the same name
//! replaces an earlier one.

use std::time::Duration;

use serde::{Deserialize, Deserializer};
use toml::Value;

use super::{Source, de};

/// The longest `startup_timeout` or `call_timeout` a server may be given.
const MAX_MCP_TIMEOUT: Duration = Duration::from_secs(3600);

/// One configured MCP server, as written.
#[derive(Debug, Clone, PartialEq)]
pub struct McpServerEntry {
    /// The `NAME` of `[mcp_servers.NAME]`.
    pub name: String,
    /// How to reach it.
    pub transport: McpTransportEntry,
    /// How long the first request waits for it (default 10 s).
    pub startup_timeout: Option<Duration>,
    /// How long one call may go without an answer or a progress report (default 60 s).
    pub call_timeout: Option<Duration>,
    /// How long one call may take in all, progress or not (default 600 s).
    pub call_max_timeout: Option<Duration>,
    /// `enabled = false` keeps the server configured but not started.
    pub enabled: bool,
    /// The file that configured it: a project's servers start only once it is trusted.
    pub source: Source,
}

/// How a configured server is reached, as written (`${VAR}` not yet expanded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum McpTransportEntry {
    /// A program rein starts (`command`, `args`, `env`, `cwd`).
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it.
        env: Vec<(String, String)>,
        /// Where it runs.
        cwd: Option<String>,
        /// `sandbox`: whether it runs in the OS sandbox (unset: `[sandbox] mcp` decides).
        sandbox: Option<bool>,
    },
    /// A streamable-HTTP server (`url`, `headers`).
    Http {
        /// Its endpoint.
        url: String,
        /// Headers sent with each request.
        headers: Vec<(String, String)>,
    },
}

/// A `[mcp_servers.NAME]` table as a file writes it (its keys are documented on
/// [`McpServerEntry`] and [`McpTransportEntry`]).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ServerTable {
    #[serde(default, deserialize_with = "de::some_text")]
    command: Option<String>,
    #[serde(default, deserialize_with = "de::strings")]
    args: Vec<String>,
    #[serde(default, deserialize_with = "de::string_map")]
    env: Vec<(String, String)>,
    #[serde(default, deserialize_with = "de::some_text")]
    cwd: Option<String>,
    #[serde(default, deserialize_with = "de::switch")]
    sandbox: Option<bool>,
    #[serde(default, deserialize_with = "de::some_text")]
    url: Option<String>,
    #[serde(default, deserialize_with = "de::string_map")]
    headers: Vec<(String, String)>,
    #[serde(default, alias = "startup_timeout_sec", deserialize_with = "seconds")]
    startup_timeout: Option<Duration>,
    #[serde(default, alias = "tool_timeout_sec", deserialize_with = "seconds")]
    call_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "seconds")]
    call_max_timeout: Option<Duration>,
    #[serde(default, deserialize_with = "de::switch")]
    enabled: Option<bool>,
}

/// Reads `[mcp_servers]` into `servers`, replacing same-named ones.
pub(crate) fn read_mcp_servers(
    servers: &mut Vec<McpServerEntry>,
    table: &toml::Table,
    source: &Source,
) -> Result<(), de::TableError> {
    for (name, value) in table {
        let entry = server(name, value, source).map_err(|e| e.under(name))?;
        servers.retain(|s| s.name != entry.name);
        servers.push(entry);
    }
    Ok(())
}

fn server(name: &str, value: &Value, source: &Source) -> Result<McpServerEntry, de::TableError> {
    let at = format!("mcp_servers.{name}");
    if name.is_empty() {
        return Err("[mcp_servers] has a server with an empty name"
            .to_owned()
            .into());
    }
    let read: ServerTable = de::read_keys(value, &at, &format!("[{at}]"))?;
    let command = read.command.filter(|c| !c.trim().is_empty());
    let transport = match (command, read.url) {
        (Some(command), None) => {
            if !read.headers.is_empty() {
                return Err(
                    format!("{at}: `headers` are for `url` servers, not `command` ones").into(),
                );
            }
            McpTransportEntry::Stdio {
                command,
                args: read.args,
                env: read.env,
                cwd: read.cwd,
                sandbox: read.sandbox,
            }
        }
        (None, Some(url)) => {
            if !read.args.is_empty()
                || !read.env.is_empty()
                || read.cwd.is_some()
                || read.sandbox.is_some()
            {
                return Err(format!(
                    "{at}: `args`, `env`, `cwd` and `sandbox` are for `command` servers, not \
                     `url` ones (an HTTP server runs elsewhere, outside rein's sandbox)"
                )
                .into());
            }
            McpTransportEntry::Http {
                url,
                headers: read.headers,
            }
        }
        (Some(_), Some(_)) => {
            return Err(
                format!("{at}: give either `command` (stdio) or `url` (HTTP), not both").into(),
            );
        }
        (None, None) => {
            return Err(format!(
                "{at}: give `command` (a program rein starts) or `url` (a streamable-HTTP server)"
            )
            .into());
        }
    };
    Ok(McpServerEntry {
        name: name.to_owned(),
        transport,
        startup_timeout: read.startup_timeout,
        call_timeout: read.call_timeout,
        call_max_timeout: read.call_max_timeout,
        enabled: read.enabled.unwrap_or(true),
        source: source.clone(),
    })
}

/// Seconds, with a fraction or without, up to [`MAX_MCP_TIMEOUT`].
fn seconds<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
    de::with(d, |value| {
        let secs = match value {
            Value::Integer(n) => *n as f64,
            Value::Float(f) => *f,
            other => return Err(format!(": expected seconds, found {}", other.type_str())),
        };
        if !(secs > 0.0 && secs <= MAX_MCP_TIMEOUT.as_secs_f64()) {
            return Err(format!(
                ": {secs} is not between 0 and {} seconds",
                MAX_MCP_TIMEOUT.as_secs()
            ));
        }
        Ok(Some(Duration::from_secs_f64(secs)))
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;

    fn read(text: &str) -> Result<Vec<McpServerEntry>, String> {
        let table: toml::Table = toml::from_str(text).unwrap();
        let mut servers = Vec::new();
        let source = Source::UserFile(PathBuf::from("/c.toml"));
        read_mcp_servers(
            &mut servers,
            table["mcp_servers"].as_table().unwrap(),
            &source,
        )
        .map_err(|e| e.message)?;
        Ok(servers)
    }

    #[test]
    fn stdio_and_http_servers_are_read() {
        let servers = read(
            r#"
            [mcp_servers.fs]
            command = "npx"
            args = ["-y", "server"]
            env = { TOKEN = "${GH_TOKEN}" }
            sandbox = true
            startup_timeout = 2.5
            [mcp_servers.web]
            url = "http://127.0.0.1:1/mcp"
            headers = { Authorization = "Bearer ${T}" }
            call_timeout = 5
            "#,
        )
        .unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(
            servers[0].startup_timeout,
            Some(Duration::from_millis(2500))
        );
        assert!(
            matches!(&servers[0].transport, McpTransportEntry::Stdio { env, sandbox: Some(true), .. } if env[0].1 == "${GH_TOKEN}")
        );
        assert_eq!(servers[1].call_timeout, Some(Duration::from_secs(5)));
        assert!(matches!(
            &servers[1].transport,
            McpTransportEntry::Http { .. }
        ));
    }

    #[test]
    fn mistakes_are_named() {
        let err = read("[mcp_servers.x]\nargs = []").unwrap_err();
        assert!(err.contains("mcp_servers.x: give `command`"), "{err}");
        let err = read("[mcp_servers.x]\ncommand = \"a\"\nurl = \"b\"").unwrap_err();
        assert!(err.contains("not both"), "{err}");
        let err = read("[mcp_servers.x]\ncommand = \"a\"\ntimeout = 3").unwrap_err();
        assert!(
            err.contains("unknown key \"timeout\" in [mcp_servers.x]"),
            "{err}"
        );
        let err = read("[mcp_servers.x]\nurl = \"http://h\"\nsandbox = true").unwrap_err();
        assert!(err.contains("are for `command` servers"), "{err}");
        let err = read("[mcp_servers.x]\ncommand = \"a\"\nsandbox = \"yes\"").unwrap_err();
        assert!(
            err.contains("mcp_servers.x.sandbox: expected true or false"),
            "{err}"
        );
        let servers = read(
            "[mcp_servers.codex]\ncommand = \"a\"\nstartup_timeout_sec = 20\ntool_timeout_sec = 30\n\
             enabled = false\ncall_max_timeout = 900",
        )
        .unwrap();
        assert_eq!(servers[0].startup_timeout, Some(Duration::from_secs(20)));
        assert_eq!(servers[0].call_timeout, Some(Duration::from_secs(30)));
        assert_eq!(servers[0].call_max_timeout, Some(Duration::from_secs(900)));
        assert!(!servers[0].enabled);
        let err = read("[mcp_servers.x]\ncommand = \"a\"\nenabled = \"no\"").unwrap_err();
        assert!(err.contains("enabled: expected true or false"), "{err}");
        let err = read("[mcp_servers.x]\ncommand = \"a\"\ncall_timeout = 0").unwrap_err();
        assert!(err.contains("call_timeout: 0 is not between"), "{err}");
    }
}
