//! Every configured server of a session: started in the background, in parallel, as soon as
//! the hub is; their tools named and offered once they are ready; stopped together.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use rein_tools::DynTool;
use rein_tools::sandbox::Sandbox;
use tokio_util::sync::CancellationToken;

use crate::config::{ServerConfig, TransportConfig};
use crate::server::Server;
use crate::status::{ServerState, ServerStatus};
use crate::tool::McpTool;

/// How long listing a server's changed tools may hold up the next round.
const RELIST_LIMIT: Duration = Duration::from_secs(5);

/// What the hub is started with.
#[derive(Debug, Clone, Default)]
pub struct McpSetup {
    /// The servers, in configuration order (which decides who wins a name collision).
    pub servers: Vec<ServerConfig>,
    /// Where stdio servers run unless they say otherwise.
    pub cwd: PathBuf,
    /// Where each stdio server's stderr goes (`<dir>/<name>.log`).
    pub log_dir: PathBuf,
    /// rein's variables servers must not inherit (its secrets).
    pub env_remove: Vec<String>,
    /// The OS sandbox the stdio servers configured `sandboxed` run in (`None`: they run
    /// without one, as all others do).
    pub sandbox: Option<Sandbox>,
    /// Where the sign-ins of servers reached by URL are kept (`rein mcp login`; `None`:
    /// no sign-ins are used).
    pub auth_dir: Option<PathBuf>,
}

/// The servers of one session.
#[derive(Debug)]
pub struct McpHub {
    pub(crate) servers: Vec<Arc<Server>>,
    started: Instant,
    generation: Arc<AtomicU64>,
    stopped: CancellationToken,
    names: Mutex<Names>,
}

/// The names given to tools so far: a tool keeps its name for the session, and a name once
/// given is never given to another tool (first come, first served), so a server that
/// becomes ready late, or a changed tool list, cannot move a name the model has used.
#[derive(Debug, Default)]
struct Names {
    taken: HashSet<String>,
    /// By server (its index) and the tool's own name.
    given: HashMap<(usize, String), String>,
}

/// What the first request learns of the servers it waited for.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartReport {
    /// Servers still starting when their `startup_timeout` ran out.
    pub timed_out: Vec<String>,
    /// Servers that could not be started, with why.
    pub failed: Vec<(String, String)>,
}

impl StartReport {
    /// The warnings to show, one per line.
    pub fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if !self.timed_out.is_empty() {
            warnings.push(format!(
                "MCP server{} {}: timed out at start (`startup_timeout`), not in this request; \
                 {} tools join if {} ready later",
                if self.timed_out.len() == 1 { "" } else { "s" },
                self.timed_out.join(", "),
                if self.timed_out.len() == 1 {
                    "its"
                } else {
                    "their"
                },
                if self.timed_out.len() == 1 {
                    "it becomes"
                } else {
                    "they become"
                },
            ));
        }
        for (name, error) in &self.failed {
            warnings.push(format!("MCP server `{name}` could not be started: {error}"));
        }
        warnings
    }
}

impl McpHub {
    /// Starts every server of `setup` in the background. Must be called inside a tokio
    /// runtime; returns at once.
    pub fn start(setup: McpSetup) -> Arc<McpHub> {
        let generation = Arc::new(AtomicU64::new(0));
        if setup
            .servers
            .iter()
            .any(|s| matches!(s.transport, TransportConfig::Stdio { .. }))
        {
            // A log directory that cannot be made fails each stdio server with the reason.
            let _ = std::fs::create_dir_all(&setup.log_dir);
        }
        let servers: Vec<Arc<Server>> = setup
            .servers
            .into_iter()
            .map(|config| {
                let log = matches!(config.transport, TransportConfig::Stdio { .. })
                    .then(|| crate::process::log_path(&setup.log_dir, &config.name));
                let sandbox = match config.transport {
                    TransportConfig::Stdio {
                        sandboxed: true, ..
                    } => setup.sandbox.clone(),
                    TransportConfig::Stdio { .. } | TransportConfig::Http { .. } => None,
                };
                Arc::new(Server::new(
                    config,
                    setup.cwd.clone(),
                    setup.env_remove.clone(),
                    log,
                    sandbox,
                    setup.auth_dir.clone(),
                    Arc::clone(&generation),
                ))
            })
            .collect();
        // Every process first, then the handshakes: on a current-thread runtime a task
        // would start its process only when the thread is next free.
        for server in &servers {
            server.launch();
        }
        let stopped = CancellationToken::new();
        for server in &servers {
            let server = Arc::clone(server);
            let stopped = stopped.clone();
            tokio::spawn(async move {
                tokio::select! {
                    () = stopped.cancelled() => {}
                    () = server.start() => {}
                }
            });
        }
        Arc::new(McpHub {
            servers,
            started: Instant::now(),
            generation,
            stopped,
            names: Mutex::new(Names::default()),
        })
    }

    /// Waits for the servers still starting, each up to its `startup_timeout` from the
    /// hub's start (or until `cancel`), and says which are not ready.
    pub async fn wait_started(&self, cancel: &CancellationToken) -> StartReport {
        let waits = self.servers.iter().map(|server| {
            let deadline = self.started + server.config.startup_timeout;
            let mut watch = server.watch();
            async move {
                let wait = watch.wait_for(|s| *s != ServerState::Starting);
                let _ = tokio::time::timeout_at(deadline.into(), wait).await;
            }
        });
        tokio::select! {
            () = cancel.cancelled() => {}
            _ = futures::future::join_all(waits) => {}
        }
        let mut report = StartReport::default();
        for server in &self.servers {
            if Instant::now() >= self.started + server.config.startup_timeout {
                server.note_timed_out();
            }
            let status = server.status();
            match status.state {
                // Cancelled before its deadline: it is simply still starting.
                ServerState::Starting => {}
                ServerState::TimedOut => report.timed_out.push(status.name),
                ServerState::Failed | ServerState::NeedsLogin => report.failed.push((
                    status.name,
                    status
                        .last_error
                        .unwrap_or_else(|| "unknown error".to_owned()),
                )),
                ServerState::Ready | ServerState::Exited => {}
            }
        }
        report
    }

    /// Lists again the tools of servers that said theirs changed; between rounds.
    pub async fn refresh(&self) {
        let relists = self.servers.iter().map(|s| s.refresh_tools(RELIST_LIMIT));
        futures::future::join_all(relists).await;
    }

    /// A number that changes whenever the set of tools does.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }

    /// The tools of every server that has listed its tools, named `mcp__<server>__<tool>`
    /// (a collision gets a numbered suffix; names stay as first given for the session).
    pub fn tools(&self) -> Vec<Arc<dyn DynTool>> {
        let mut names = self.names.lock();
        let Names { taken, given } = &mut *names;
        let mut tools: Vec<Arc<dyn DynTool>> = Vec::new();
        for (index, server) in self.servers.iter().enumerate() {
            for tool in server.tools() {
                let name = given
                    .entry((index, tool.name.to_string()))
                    .or_insert_with(|| {
                        crate::naming::tool_name(&server.config.name, &tool.name, taken)
                    })
                    .clone();
                tools.push(Arc::new(McpTool::new(name, &tool, Arc::clone(server))));
            }
        }
        tools
    }

    /// Whether `name` is one of the servers (for `@server:uri` mentions).
    pub fn has_server(&self, name: &str) -> bool {
        self.servers.iter().any(|s| s.config.name == name)
    }

    /// The text of resource `uri` of server `name` (`@server:uri` in the REPL); the error
    /// says why it could not be read.
    pub async fn read_resource(
        &self,
        name: &str,
        uri: &str,
        cancel: &CancellationToken,
    ) -> Result<String, String> {
        let server = self
            .servers
            .iter()
            .find(|s| s.config.name == name)
            .ok_or_else(|| format!("there is no MCP server `{name}`"))?;
        server.read_resource(uri, cancel).await
    }

    /// Each server's status, in configuration order.
    pub fn statuses(&self) -> Vec<ServerStatus> {
        self.servers.iter().map(|s| s.status()).collect()
    }

    /// Stops every server: connections closed, process groups stopped.
    pub async fn shutdown(&self) {
        self.stopped.cancel();
        futures::future::join_all(self.servers.iter().map(|s| s.stop())).await;
    }

    /// Kills every server's process group at once, for exit paths that cannot wait.
    pub fn kill_now(&self) {
        self.stopped.cancel();
        for server in &self.servers {
            server.kill_now();
        }
    }
}

impl Drop for McpHub {
    fn drop(&mut self) {
        self.kill_now();
    }
}
