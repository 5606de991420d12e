//! Which MCP servers a session starts, and with what: the `[mcp_servers]` of every config
//! layer and the project's `.mcp.json` (Claude Code's format), the project's only once the
//! person has trusted it, with `${VAR}` expanded. rein-mcp starts them.

use std::path::{Path, PathBuf};

use rein_mcp::{DEFAULT_CALL_MAX_TIMEOUT, DEFAULT_CALL_TIMEOUT, DEFAULT_STARTUP_TIMEOUT};
use serde::Deserialize;

use crate::config::{Config, McpServerEntry, McpTransportEntry, Source};
use crate::secrets::looks_secret;

/// A project's MCP servers in Claude Code's format.
pub const MCP_JSON: &str = ".mcp.json";
/// Where stdio servers' stderr goes, under rein's home.
pub const MCP_LOG_DIR: &str = "mcp-logs";
/// Where the sign-ins of servers reached by URL are kept (`rein mcp login`), under rein's
/// home: one file per server, mode 0600.
pub const MCP_AUTH_DIR: &str = "mcp-auth";

/// `rein mcp login` and `rein mcp logout`, for front-ends.
pub use rein_mcp::auth::{
    LOGIN_WAIT, LoginError, PendingLogin, SignedIn, logout, sign_in_path, start_login,
};
pub use rein_mcp::{ServerConfig, Transport, TransportConfig};

/// A configured server the plan does not start, and why (for `rein mcp list`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedServer {
    /// Its configured name.
    pub name: String,
    /// How it would be reached.
    pub transport: Transport,
    /// Why it does not start.
    pub why: SkipReason,
}

/// Why a configured server does not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// `enabled = false`.
    Disabled,
    /// A project's server, and the project is not trusted.
    Untrusted,
    /// It names variables that are not set (their names).
    UnsetVariables(Vec<String>),
}

/// The servers to start, and what the person should know about the others.
#[derive(Debug, Clone, Default)]
pub struct McpPlan {
    /// Servers to start, in configuration order.
    pub servers: Vec<ServerConfig>,
    /// Servers skipped (untrusted project, unset variable, unreadable `.mcp.json`).
    pub warnings: Vec<String>,
    /// The project's servers that wait for `rein trust` (the project is not trusted).
    pub awaiting_trust: Vec<String>,
    /// Every configured server not started (untrusted, disabled, naming an unset
    /// variable), in configuration order.
    pub skipped: Vec<SkippedServer>,
    /// Values from the servers' configuration to mask in results (secret-looking `env`
    /// values, header values), named for the mask.
    pub secrets: Vec<(String, String)>,
}

/// The plan for `config`'s servers and the project's `.mcp.json`.
pub fn plan(config: &Config, env: &dyn Fn(&str) -> Option<String>) -> McpPlan {
    let mut plan = McpPlan::default();
    let mut entries = config.mcp_servers.clone();
    let from_json = read_mcp_json(&config.project_root.join(MCP_JSON));
    plan.warnings.extend(from_json.warnings);
    for entry in from_json.servers {
        // rein's own configuration wins over the shared file.
        if !entries.iter().any(|e| e.name == entry.name) {
            entries.push(entry);
        }
    }
    let from_project = |e: &McpServerEntry| matches!(e.source, Source::ProjectFile(_));
    if entries.iter().any(from_project) && !config.trust_store().is_trusted(&config.project_root) {
        let mut not_started = Vec::new();
        for entry in &mut entries {
            if !from_project(entry) {
                continue;
            }
            // A project may not switch off the person's own server by reusing its name.
            let own = config
                .mcp_servers_replaced
                .iter()
                .rev()
                .find(|r| r.name == entry.name && !from_project(r));
            match own {
                Some(own) => {
                    plan.warnings.push(format!(
                        "MCP server `{}` of this project ({}) is not used: this project is not trusted; yours ({}) starts instead",
                        entry.name, entry.source, own.source
                    ));
                    *entry = own.clone();
                }
                None => {
                    not_started.push(entry.name.clone());
                    plan.skipped.push(SkippedServer {
                        name: entry.name.clone(),
                        transport: transport_of(entry),
                        why: SkipReason::Untrusted,
                    });
                }
            }
        }
        plan.awaiting_trust.clone_from(&not_started);
        if !not_started.is_empty() {
            plan.warnings.push(format!(
                "MCP server{} {} of this project did not start: this project is not trusted (or \
                 its config changed since it was). If you trust its servers, run `rein trust` in {}",
                if not_started.len() == 1 { "" } else { "s" },
                not_started.join(", "),
                config.project_root.display()
            ));
        }
        entries.retain(|e| !from_project(e));
    }
    for entry in entries {
        // `enabled = false`: configured, not started.
        if !entry.enabled {
            plan.skipped.push(SkippedServer {
                name: entry.name.clone(),
                transport: transport_of(&entry),
                why: SkipReason::Disabled,
            });
            continue;
        }
        match resolve(&entry, &config.project_root, config.sandbox.mcp, env) {
            Ok((server, secrets)) => {
                plan.servers.push(server);
                plan.secrets.extend(secrets);
            }
            Err(missing) => {
                plan.skipped.push(SkippedServer {
                    name: entry.name.clone(),
                    transport: transport_of(&entry),
                    why: SkipReason::UnsetVariables(missing.clone()),
                });
                plan.warnings.push(format!(
                    "MCP server `{}` ({}) did not start: it names variable{} {} that {} not set",
                    entry.name,
                    entry.source,
                    if missing.len() == 1 { "" } else { "s" },
                    missing.join(", "),
                    if missing.len() == 1 { "is" } else { "are" },
                ));
            }
        }
    }
    plan
}

/// How the server of `entry` is reached.
fn transport_of(entry: &McpServerEntry) -> Transport {
    match entry.transport {
        McpTransportEntry::Stdio { .. } => Transport::Stdio,
        McpTransportEntry::Http { .. } => Transport::Http,
    }
}

/// The server `entry` describes, with its variables expanded (relative `cwd` from the
/// project root), and the values to mask; the error names the unset variables.
fn resolve(
    entry: &McpServerEntry,
    project_root: &Path,
    sandbox_default: bool,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<(ServerConfig, NamedValues), Vec<String>> {
    let mut missing = Vec::new();
    let mut expand = |text: &str| match rein_mcp::expand_vars(text, env) {
        Ok(value) => value,
        Err(names) => {
            missing.extend(names);
            String::new()
        }
    };
    let mut secrets = Vec::new();
    let transport = match &entry.transport {
        McpTransportEntry::Stdio {
            command,
            args,
            env: vars,
            cwd,
            sandbox,
        } => {
            let vars: Vec<(String, String)> =
                vars.iter().map(|(k, v)| (k.clone(), expand(v))).collect();
            for (name, value) in &vars {
                if looks_secret(name) {
                    secrets.push((name.clone(), value.clone()));
                }
            }
            TransportConfig::Stdio {
                command: expand(command),
                args: args.iter().map(|a| expand(a)).collect(),
                env: vars,
                cwd: cwd.as_deref().map(|c| project_root.join(expand(c))),
                sandboxed: sandboxed(*sandbox, sandbox_default, &entry.source),
            }
        }
        McpTransportEntry::Http { url, headers } => {
            let url = expand(url);
            let headers: Vec<(String, String)> = headers
                .iter()
                .map(|(k, v)| (k.clone(), expand(v)))
                .collect();
            for (name, value) in &headers {
                // Headers carry credentials (Authorization, API keys) more often than not.
                secrets.push((format!("{}_{name}", entry.name), value.clone()));
            }
            TransportConfig::Http { url, headers }
        }
    };
    if !missing.is_empty() {
        missing.dedup();
        return Err(missing);
    }
    Ok((
        ServerConfig {
            name: entry.name.clone(),
            transport,
            startup_timeout: entry.startup_timeout.unwrap_or(DEFAULT_STARTUP_TIMEOUT),
            call_timeout: entry.call_timeout.unwrap_or(DEFAULT_CALL_TIMEOUT),
            call_max_timeout: entry.call_max_timeout.unwrap_or(DEFAULT_CALL_MAX_TIMEOUT),
        },
        secrets,
    ))
}

/// Whether a stdio server runs in the OS sandbox: its own `sandbox` key, else `[sandbox]
/// mcp`. A project's server may ask for the sandbox but not leave the one the person's
/// `[sandbox] mcp = true` puts every server in.
fn sandboxed(own: Option<bool>, default: bool, source: &Source) -> bool {
    match source {
        Source::ProjectFile(_) => own.unwrap_or(default) || default,
        Source::Default
        | Source::UserFile(_)
        | Source::Env(_)
        | Source::DotEnv { .. }
        | Source::Flag(_) => own.unwrap_or(default),
    }
}

/// Values with the names they are masked under.
type NamedValues = Vec<(String, String)>;

/// `.mcp.json` as Claude Code writes it.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct McpJson {
    #[serde(default)]
    mcp_servers: serde_json::Map<String, serde_json::Value>,
}

/// One server of `.mcp.json`.
#[derive(Debug, Deserialize)]
struct McpJsonServer {
    #[serde(rename = "type")]
    kind: Option<String>,
    command: Option<String>,
    #[serde(default)]
    args: Vec<Scalar>,
    #[serde(default)]
    env: std::collections::BTreeMap<String, Scalar>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: std::collections::BTreeMap<String, Scalar>,
}

/// A value that stands for a string: `"3000"`, or `3000` and `true` written without quotes
/// (Claude Code takes those too).
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Scalar {
    Text(String),
    Number(serde_json::Number),
    Bool(bool),
}

impl From<Scalar> for String {
    fn from(value: Scalar) -> String {
        match value {
            Scalar::Text(text) => text,
            Scalar::Number(n) => n.to_string(),
            Scalar::Bool(b) => b.to_string(),
        }
    }
}

/// What `.mcp.json` holds: the servers rein can start, and a warning for each it cannot
/// (or for the whole file when it is not read).
#[derive(Debug, Default)]
pub struct McpJsonServers {
    /// The usable servers, in the file's order.
    pub servers: Vec<McpServerEntry>,
    /// One line per server left out, naming the file, the server and what is wrong.
    pub warnings: Vec<String>,
}

/// The servers of the project's `.mcp.json` (none when there is no such file). A server
/// rein cannot use is left out with a warning; the others still count.
pub fn read_mcp_json(path: &Path) -> McpJsonServers {
    let mut read = McpJsonServers::default();
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return read,
        Err(e) => {
            read.warnings
                .push(format!("{} was not read: {e}", path.display()));
            return read;
        }
    };
    let file: McpJson = match serde_json::from_str(&text) {
        Ok(file) => file,
        Err(e) => {
            read.warnings.push(format!(
                "the MCP servers of {} were not read: {e}",
                path.display()
            ));
            return read;
        }
    };
    let source = Source::ProjectFile(PathBuf::from(path));
    for (name, value) in file.mcp_servers {
        match json_server(&name, value) {
            Ok(transport) => read.servers.push(McpServerEntry {
                name,
                transport,
                startup_timeout: None,
                call_timeout: None,
                call_max_timeout: None,
                enabled: true,
                source: source.clone(),
            }),
            Err(why) => read.warnings.push(format!(
                "MCP server `{name}` of {} is left out: {why}",
                path.display()
            )),
        }
    }
    read
}

/// How one server of `.mcp.json` is reached; the error says what is wrong with it.
fn json_server(name: &str, value: serde_json::Value) -> Result<McpTransportEntry, String> {
    if name.trim().is_empty() {
        return Err("a server needs a name".to_owned());
    }
    let server: McpJsonServer = serde_json::from_value(value).map_err(|e| e.to_string())?;
    let strings = |map: std::collections::BTreeMap<String, Scalar>| {
        map.into_iter().map(|(k, v)| (k, v.into())).collect()
    };
    match (server.command, server.url, server.kind.as_deref()) {
        (Some(command), None, None | Some("stdio")) => Ok(McpTransportEntry::Stdio {
            command,
            args: server.args.into_iter().map(String::from).collect(),
            env: strings(server.env),
            cwd: server.cwd,
            // Claude Code's format has no such key: `[sandbox] mcp` decides.
            sandbox: None,
        }),
        (None, Some(url), None | Some("http" | "streamable-http")) => Ok(McpTransportEntry::Http {
            url,
            headers: strings(server.headers),
        }),
        (_, _, Some("sse")) => Err("it uses the legacy SSE transport, which rein does not \
             speak; most servers also serve streamable HTTP (\"type\": \"http\")"
            .to_owned()),
        (_, _, Some(other)) if !matches!(other, "stdio" | "http" | "streamable-http") => Err(
            format!("rein does not speak the \"{other}\" transport (only stdio and http)"),
        ),
        _ => Err("it needs either \"command\" or \"url\" (with \"type\" stdio or http)".to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_codes_format_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MCP_JSON);
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "fs": {"command": "npx", "args": ["-y", "x"], "env": {"A": "b"}},
                "web": {"type": "http", "url": "http://127.0.0.1:9/mcp", "headers": {"X": "y"}}
            }}"#,
        )
        .unwrap();
        let entries = read_mcp_json(&path).servers;
        assert_eq!(entries.len(), 2);
        assert!(
            matches!(&entries[0].transport, McpTransportEntry::Stdio { command, .. } if command == "npx")
        );
        assert!(
            matches!(&entries[1].transport, McpTransportEntry::Http { url, .. } if url.ends_with("/mcp"))
        );
        std::fs::write(
            &path,
            r#"{"mcpServers": {"old": {"type": "sse", "url": "http://x"}}}"#,
        )
        .unwrap();
        assert!(read_mcp_json(&path).warnings[0].contains("legacy SSE"));
        let none = read_mcp_json(&dir.path().join("none"));
        assert!(none.servers.is_empty() && none.warnings.is_empty());
    }

    #[test]
    fn one_unusable_server_leaves_the_others_in() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join(MCP_JSON);
        std::fs::write(
            &path,
            r#"{"mcpServers": {
                "a": {"command": "x", "env": {"PORT": 3000, "DEBUG": true}, "args": ["-p", 8]},
                "old": {"type": "sse", "url": "http://x"},
                "": {"command": "y"},
                "broken": {"command": 5},
                "ws": {"type": "ws", "url": "ws://x"},
                "b": {"type": "http", "url": "http://127.0.0.1:9/mcp"}
            }}"#,
        )
        .unwrap();
        let read = read_mcp_json(&path);
        let names: Vec<&str> = read.servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["a", "b"]);
        assert!(matches!(
            &read.servers[0].transport,
            McpTransportEntry::Stdio { env, args, .. }
                if env == &[("DEBUG".to_owned(), "true".to_owned()), ("PORT".to_owned(), "3000".to_owned())]
                    && args == &["-p", "8"]
        ));
        assert_eq!(read.warnings.len(), 4, "{:?}", read.warnings);
        for name in ["``", "`broken`", "`old`", "`ws`"] {
            assert!(
                read.warnings.iter().any(|w| w.contains(name)),
                "{name}: {:?}",
                read.warnings
            );
        }
    }

    #[test]
    fn a_server_is_sandboxed_by_its_own_key_else_by_the_sandbox_table() {
        let user = Source::UserFile(PathBuf::from("/h/config.toml"));
        let project = Source::ProjectFile(PathBuf::from("/p/.rein/config.toml"));
        // Off by default: servers are the person's own code.
        assert!(!sandboxed(None, false, &user));
        assert!(sandboxed(Some(true), false, &user));
        assert!(sandboxed(None, true, &user));
        // The person may leave one server out of `[sandbox] mcp = true`...
        assert!(!sandboxed(Some(false), true, &user));
        // ...a project may not.
        assert!(sandboxed(Some(false), true, &project));
        assert!(sandboxed(Some(true), false, &project));
        assert!(!sandboxed(None, false, &project));
    }

    #[test]
    fn unset_variables_are_named() {
        let entry = McpServerEntry {
            name: "gh".into(),
            transport: McpTransportEntry::Http {
                url: "${BASE}/mcp".into(),
                headers: vec![("Authorization".into(), "Bearer ${GH_TOKEN}".into())],
            },
            startup_timeout: None,
            call_timeout: None,
            call_max_timeout: None,
            enabled: true,
            source: Source::Default,
        };
        let none = |_: &str| None;
        assert_eq!(
            resolve(&entry, Path::new("/p"), false, &none).unwrap_err(),
            vec!["BASE".to_owned(), "GH_TOKEN".to_owned()]
        );
        let set = |name: &str| Some(format!("<{name}>"));
        let (server, secrets) = resolve(&entry, Path::new("/p"), false, &set).unwrap();
        assert!(
            matches!(server.transport, TransportConfig::Http { ref url, .. } if url == "<BASE>/mcp")
        );
        assert_eq!(
            secrets,
            vec![(
                "gh_Authorization".to_owned(),
                "Bearer <GH_TOKEN>".to_owned()
            )]
        );
    }
}
