//! Why a server could not be started or connected to. Its message is what a person sees in
//! `/mcp` and in the warning at start-up.

use std::process::ExitStatus;

/// A server that could not be started, or reached, or listed.
#[derive(Debug, thiserror::Error)]
pub enum McpError {
    /// Its process could not be started (the message names the command or the log).
    #[error("{0}")]
    Spawn(#[source] std::io::Error),
    /// Its process exited before the handshake; `said` is its log's last line, quoted.
    #[error("it exited ({status}) before the MCP handshake{said}")]
    ExitedEarly {
        /// How it exited.
        status: ExitStatus,
        /// `: "its last line"`, or empty.
        said: String,
    },
    /// The handshake over stdio failed.
    #[error("the MCP handshake failed: {0}")]
    Handshake(String),
    /// An HTTP server could not be reached (with what to do about credentials, when asked).
    #[error("{0}")]
    Unreachable(String),
    /// It wants a sign-in (OAuth) it does not have, or one that expired for good.
    #[error("needs login: run `rein mcp login {name}`{}", .why.as_deref().map(|w| format!(" ({w})")).unwrap_or_default())]
    NeedsLogin {
        /// The server's name.
        name: String,
        /// What became of its sign-in, when it had one.
        why: Option<String>,
    },
    /// A configured header cannot be sent.
    #[error("header `{name}` {problem}")]
    BadHeader {
        /// The header's name as configured.
        name: String,
        /// What is wrong with it.
        problem: String,
    },
    /// The HTTP client could not be set up.
    #[error("cannot set up the HTTP client: {0}")]
    HttpClient(#[source] reqwest::Error),
    /// Listing its tools failed.
    #[error("listing its tools failed: {0}")]
    ListTools(String),
    /// A stdio server came to its handshake without a process: a bug in rein.
    #[error("internal error: the server's process was not started")]
    NotLaunched,
}
