//! What a configured server is, once the configuration layers and `.mcp.json` are read: how
//! to reach it and how long to wait for it. Values arrive expanded (see [`expand_vars`]).

use std::path::PathBuf;
use std::time::Duration;

/// How long a server may take to start before the first request goes without it.
pub const DEFAULT_STARTUP_TIMEOUT: Duration = Duration::from_secs(10);
/// How long one tool call may go without an answer or a progress report before it is
/// cancelled.
pub const DEFAULT_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// How long one tool call may take in all, progress or not.
pub const DEFAULT_CALL_MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// One MCP server rein should start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// The name it is configured under (the `NAME` of `[mcp_servers.NAME]`).
    pub name: String,
    /// How to reach it.
    pub transport: TransportConfig,
    /// How long the first request waits for it.
    pub startup_timeout: Duration,
    /// How long one call may go without an answer or a progress report.
    pub call_timeout: Duration,
    /// How long one call may take in all, progress or not.
    pub call_max_timeout: Duration,
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportConfig {
    /// A program rein starts and talks to over its stdin and stdout.
    Stdio {
        /// The program.
        command: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it, beside rein's environment (less its secrets).
        env: Vec<(String, String)>,
        /// Where it runs (default: the working directory).
        cwd: Option<PathBuf>,
        /// It runs in the OS sandbox ([`crate::McpSetup::sandbox`]), as commands do.
        sandboxed: bool,
    },
    /// A server reached over streamable HTTP.
    Http {
        /// Its endpoint.
        url: String,
        /// Headers sent with every request (`Authorization`, say).
        headers: Vec<(String, String)>,
    },
}

/// `text` with each `${VAR}` replaced by the variable's value from `env`; the names of
/// variables that are not set come back as the error. `$` not followed by `{` stays.
pub fn expand_vars(
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            // No closing brace: not a reference, keep it as written.
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let name = &after[..end];
        // `${VAR:-default}`, as Claude Code's `.mcp.json` allows.
        let (name, default) = match name.split_once(":-") {
            Some((name, default)) => (name, Some(default)),
            None => (name, None),
        };
        match (env(name), default) {
            (Some(value), _) => out.push_str(&value),
            (None, Some(default)) => out.push_str(default),
            (None, None) => missing.push(name.to_owned()),
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<String> {
        match name {
            "TOKEN" => Some("t0k".into()),
            "EMPTY" => Some(String::new()),
            _ => None,
        }
    }

    #[test]
    fn variables_are_expanded() {
        assert_eq!(expand_vars("Bearer ${TOKEN}", &env).unwrap(), "Bearer t0k");
        assert_eq!(expand_vars("${EMPTY}x", &env).unwrap(), "x");
        assert_eq!(expand_vars("${NOPE:-d}", &env).unwrap(), "d");
        assert_eq!(expand_vars("$HOME and ${", &env).unwrap(), "$HOME and ${");
    }

    #[test]
    fn missing_variables_are_named() {
        assert_eq!(
            expand_vars("${A}/${TOKEN}/${B}", &env).unwrap_err(),
            vec!["A".to_owned(), "B".to_owned()]
        );
    }
}
