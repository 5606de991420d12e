//! What is known of a server, as `rein mcp list`, `/mcp` and the agent see it.

use std::path::PathBuf;

/// Where a server is, as `rein mcp list` and the agent see it.
#[derive(Debug, Clone, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum ServerState {
    /// Being started (or restarted).
    Starting,
    /// Still not ready when its `startup_timeout` ran out; it goes on starting in the
    /// background, and its tools join if it becomes ready.
    #[strum(serialize = "timed out")]
    TimedOut,
    /// Answering; its tools are offered.
    Ready,
    /// It stopped; it is started again on the next call (once).
    Exited,
    /// It refuses without a sign-in (OAuth), or its sign-in expired and could not be
    /// refreshed: `rein mcp login NAME`.
    #[strum(serialize = "needs login")]
    NeedsLogin,
    /// It could not be started, or died again after its restart; its tools answer with an
    /// error.
    Failed,
}

/// How a server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, strum::IntoStaticStr)]
#[strum(serialize_all = "lowercase")]
pub enum Transport {
    /// A program rein starts, spoken to over its stdin and stdout.
    Stdio,
    /// Streamable HTTP, at a URL.
    Http,
}

/// What is known of a server now.
#[derive(Debug, Clone)]
pub struct ServerStatus {
    /// Its configured name.
    pub name: String,
    /// How it is reached.
    pub transport: Transport,
    /// Its state.
    pub state: ServerState,
    /// How many tools it offers (0 until it is ready).
    pub tools: usize,
    /// The names of the tools it offers, its own (not `mcp__…`), as last listed.
    pub tool_names: Vec<String>,
    /// The names of its prompts, as last listed.
    pub prompts: Vec<String>,
    /// Tools it lists that are not offered, each with why (they require MCP tasks).
    pub left_out: Vec<(String, String)>,
    /// The last thing that went wrong with it.
    pub last_error: Option<String>,
    /// Where its stderr goes (stdio servers).
    pub log: Option<PathBuf>,
    /// Its process runs in the OS sandbox, enforced.
    pub sandboxed: bool,
}
