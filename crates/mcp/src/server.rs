//! One configured server over the session: starting, ready (with its tools), or failed; its
//! calls, each with a timeout and cancellable; its restart, once, after it died.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use parking_lot::{Mutex, MutexGuard};
use rmcp::RoleClient;
use rmcp::model::{Prompt, Tool};
use rmcp::service::{Peer, RunningService};
use tokio::sync::watch;

#[path = "server_call.rs"]
mod call;
#[path = "server_prompts.rs"]
mod prompts;

use crate::config::{ServerConfig, TransportConfig};
use crate::connect::{self, Connection, Listener, Surroundings};
use crate::error::McpError;
use crate::process::{Group, ServerProcess};
use crate::status::{ServerState, ServerStatus, Transport};
use rein_tools::sandbox::Sandbox;

/// How many times a server that died is started again.
const RESTARTS: u32 = 1;

/// A call's failure, for the model.
#[derive(Debug)]
pub(crate) enum CallFailure {
    /// The model should read this and go on.
    Message(String),
    /// The person interrupted.
    Cancelled,
}

struct Live {
    service: RunningService<RoleClient, Listener>,
    process: Option<ServerProcess>,
}

struct Inner {
    state: ServerState,
    live: Option<Live>,
    tools: Vec<Tool>,
    /// Its prompts, when it offers them.
    prompts: Vec<Prompt>,
    last_error: Option<String>,
    restarts: u32,
}

/// One server and its connection.
pub(crate) struct Server {
    pub(crate) config: ServerConfig,
    cwd: PathBuf,
    env_remove: Vec<String>,
    log: Option<PathBuf>,
    /// The OS sandbox its process runs in, when it is configured to.
    sandbox: Option<Sandbox>,
    /// Where sign-ins are kept (`rein mcp login`).
    auth_dir: Option<PathBuf>,
    listener: Listener,
    inner: Mutex<Inner>,
    /// The process started with the hub, for the first start to shake hands with.
    launched: Mutex<Option<Result<Option<connect::Launched>, McpError>>>,
    /// The process group of the process last started, reachable while its handshake is under
    /// way (the process itself is then inside the handshake's future).
    group: Mutex<Group>,
    /// Serialises (re)starts: two calls after a death restart it once.
    starting: tokio::sync::Mutex<()>,
    /// Changes whenever the state does; the first request waits on it.
    changed: watch::Sender<ServerState>,
    /// Bumped when the hub's set of tools changes (see `McpHub::generation`).
    generation: Arc<std::sync::atomic::AtomicU64>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server")
            .field("name", &self.config.name)
            .finish_non_exhaustive()
    }
}

impl Server {
    pub(crate) fn new(
        config: ServerConfig,
        cwd: PathBuf,
        env_remove: Vec<String>,
        log: Option<PathBuf>,
        sandbox: Option<Sandbox>,
        auth_dir: Option<PathBuf>,
        generation: Arc<std::sync::atomic::AtomicU64>,
    ) -> Self {
        let (changed, _) = watch::channel(ServerState::Starting);
        Server {
            config,
            cwd,
            env_remove,
            log,
            sandbox,
            auth_dir,
            listener: Listener::default(),
            inner: Mutex::new(Inner {
                state: ServerState::Starting,
                live: None,
                tools: Vec::new(),
                prompts: Vec::new(),
                last_error: None,
                restarts: 0,
            }),
            launched: Mutex::new(None),
            group: Mutex::new(Group::default()),
            starting: tokio::sync::Mutex::new(()),
            changed,
            generation,
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock()
    }

    /// Whether its process runs in an enforced OS sandbox (so its tools' effects stay there).
    pub(crate) fn confined(&self) -> bool {
        self.sandbox.as_ref().is_some_and(Sandbox::is_enforced)
    }

    /// The server's status now: one whose connection closed since is `Exited` (or `Failed`
    /// after its restart), not `Ready`.
    pub(crate) fn status(&self) -> ServerStatus {
        self.died();
        let left_out = self.left_out();
        let tool_names = self.tools().iter().map(|t| t.name.to_string()).collect();
        let inner = self.lock();
        ServerStatus {
            name: self.config.name.clone(),
            transport: match self.config.transport {
                TransportConfig::Stdio { .. } => Transport::Stdio,
                TransportConfig::Http { .. } => Transport::Http,
            },
            state: inner.state.clone(),
            tools: inner.tools.len().saturating_sub(left_out.len()),
            tool_names,
            prompts: inner.prompts.iter().map(|p| p.name.clone()).collect(),
            left_out,
            last_error: inner.last_error.clone(),
            log: self.log.clone(),
            sandboxed: self.confined(),
        }
    }

    /// Its tools as last listed, less those it cannot offer (see [`Server::left_out`]).
    pub(crate) fn tools(&self) -> Vec<Tool> {
        let required = &self.listener.task_required;
        self.lock()
            .tools
            .iter()
            .filter(|t| !required.contains(&t.name))
            .cloned()
            .collect()
    }

    /// The tools it lists that rein does not offer, each with why.
    pub(crate) fn left_out(&self) -> Vec<(String, String)> {
        let required = &self.listener.task_required;
        self.lock()
            .tools
            .iter()
            .filter(|t| required.contains(&t.name))
            .map(|t| (t.name.to_string(), crate::tasks::TASKS_REQUIRED.to_owned()))
            .collect()
    }

    /// Notes that the server is still not ready though its `startup_timeout` ran out: it
    /// shows as timed out (its start goes on in the background).
    pub(crate) fn note_timed_out(&self) {
        let mut inner = self.lock();
        if inner.state == ServerState::Starting {
            inner.last_error = Some(format!(
                "it did not finish starting within {} s (its `startup_timeout`); rein keeps \
                 waiting for it in the background",
                self.config.startup_timeout.as_secs_f64()
            ));
            self.set_state(&mut inner, ServerState::TimedOut);
        }
    }

    /// A receiver that sees each change of state.
    pub(crate) fn watch(&self) -> watch::Receiver<ServerState> {
        self.changed.subscribe()
    }

    fn set_state(&self, inner: &mut Inner, state: ServerState) {
        inner.state = state.clone();
        self.changed.send_replace(state);
    }

    fn surroundings<'a>(&'a self, log: &'a std::path::Path) -> Surroundings<'a> {
        Surroundings {
            cwd: &self.cwd,
            env_remove: &self.env_remove,
            log,
            sandbox: self.sandbox.as_ref(),
            auth_dir: self.auth_dir.as_deref(),
        }
    }

    /// Starts the server's process now (stdio servers), for [`Server::start`] to connect to.
    pub(crate) fn launch(&self) {
        let log = self.log.clone().unwrap_or_default();
        let launched = self.launch_process(&self.surroundings(&log));
        *self.launched.lock() = Some(launched);
    }

    /// Starts the process, noting its group for [`Server::kill_now`].
    fn launch_process(
        &self,
        around: &Surroundings<'_>,
    ) -> Result<Option<connect::Launched>, McpError> {
        let launched = connect::launch(&self.config, around);
        if let Ok(Some((process, _, _))) = &launched {
            *self.group.lock() = process.group();
        }
        launched
    }

    /// Starts the server (again); the state says how it went.
    pub(crate) async fn start(&self) {
        let _one = self.starting.lock().await;
        {
            let mut inner = self.lock();
            if inner.state == ServerState::Ready {
                return;
            }
            self.set_state(&mut inner, ServerState::Starting);
        }
        let log = self.log.clone().unwrap_or_default();
        let around = self.surroundings(&log);
        self.listener.tools_changed.store(false, Ordering::SeqCst);
        self.listener.prompts.stale.store(false, Ordering::SeqCst);
        let launched = self
            .launched
            .lock()
            .take()
            .unwrap_or_else(|| self.launch_process(&around));
        let connected = match launched {
            Ok(launched) => {
                connect::connect(&self.config, &around, self.listener.clone(), launched)
                    .await
                    .map_err(|error| match error {
                        McpError::NeedsLogin { .. } => (ServerState::NeedsLogin, error.to_string()),
                        _ => (ServerState::Failed, self.with_log_hint(error)),
                    })
            }
            // It never ran: its log has nothing to add.
            Err(error) => Err((ServerState::Failed, error.to_string())),
        };
        let prompts = match &connected {
            Ok(connection) => prompts::first_list(connection.service.peer()).await,
            Err(_) => Ok(Vec::new()),
        };
        let mut inner = self.lock();
        match connected {
            Ok(Connection {
                service,
                process,
                tools,
            }) => {
                let changed = inner.tools != tools;
                inner.tools = tools;
                match prompts {
                    Ok(prompts) => inner.prompts = prompts,
                    Err(error) => inner.last_error = Some(error),
                }
                self.listener.prompts.note_listed();
                inner.live = Some(Live { service, process });
                if inner.state == ServerState::TimedOut {
                    inner.last_error = None;
                }
                self.set_state(&mut inner, ServerState::Ready);
                if changed {
                    self.generation.fetch_add(1, Ordering::SeqCst);
                }
            }
            Err((state, error)) => {
                inner.last_error = Some(error);
                self.set_state(&mut inner, state);
            }
        }
    }

    /// "see its log" advice for an error of a stdio server.
    fn with_log_hint(&self, error: impl std::fmt::Display) -> String {
        match &self.log {
            Some(log) => format!("{error} (its stderr is in {})", log.display()),
            None => error.to_string(),
        }
    }

    /// Lists the tools again when the server said they changed; whether they did.
    pub(crate) async fn refresh_tools(&self, limit: Duration) -> bool {
        if !self.listener.tools_changed.swap(false, Ordering::SeqCst) {
            return false;
        }
        let Some(peer) = self.peer() else {
            return false;
        };
        let listed = tokio::time::timeout(limit, peer.list_all_tools()).await;
        let mut inner = self.lock();
        match listed {
            Ok(Ok(tools)) if tools != inner.tools => {
                inner.tools = tools;
                self.generation.fetch_add(1, Ordering::SeqCst);
                true
            }
            Ok(Ok(_)) => false,
            Ok(Err(e)) => {
                inner.last_error = Some(format!("listing its changed tools failed: {e}"));
                false
            }
            Err(_) => {
                inner.last_error = Some("listing its changed tools timed out".to_owned());
                false
            }
        }
    }

    /// The connection's peer, while the server is ready and its transport open.
    fn peer(&self) -> Option<Peer<RoleClient>> {
        let inner = self.lock();
        let live = inner.live.as_ref()?;
        (inner.state == ServerState::Ready && !live.service.is_transport_closed())
            .then(|| live.service.peer().clone())
    }

    /// Notes that the live connection closed, if it has: the server is then `Exited` (to be
    /// restarted once) or `Failed`. Whether it died.
    fn died(&self) -> bool {
        let mut inner = self.lock();
        // Only a connection that was up can have died: one still starting has none yet. The
        // process is asked too: its connection may close only a while after it is gone (a
        // child it started can hold its stdout open).
        let Some(live) = inner.live.as_mut() else {
            return false;
        };
        let exited = live.process.as_mut().and_then(ServerProcess::exited);
        if exited.is_none() && !live.service.is_transport_closed() {
            return false;
        }
        if let Some(mut live) = inner.live.take()
            && let Some(process) = live.process.as_mut()
        {
            process.kill_now();
        }
        let how = match exited {
            Some(status) => format!("it exited, {status}"),
            None => "its connection closed".to_owned(),
        };
        let state = if inner.restarts < RESTARTS {
            ServerState::Exited
        } else {
            ServerState::Failed
        };
        let said = self
            .log
            .as_deref()
            .and_then(crate::process::last_log_line)
            .map(|line| format!(": \"{line}\""))
            .unwrap_or_default();
        inner.last_error = Some(format!("the server stopped ({how}){said}"));
        self.set_state(&mut inner, state);
        true
    }

    /// Starts a server that died, within its startup timeout.
    async fn restart(&self) {
        if tokio::time::timeout(self.config.startup_timeout, self.start())
            .await
            .is_err()
        {
            let mut inner = self.lock();
            inner.last_error = Some(format!(
                "it did not start again within {} s",
                self.config.startup_timeout.as_secs_f64()
            ));
            self.set_state(&mut inner, ServerState::Failed);
        }
    }

    /// Stops the server: closes the connection, then stops its process group.
    pub(crate) async fn stop(&self) {
        drop(self.launched.lock().take());
        let live = self.lock().live.take();
        if let Some(Live {
            mut service,
            process,
        }) = live
        {
            let _ = tokio::time::timeout(Duration::from_millis(200), service.close()).await;
            if let Some(mut process) = process {
                process.stop().await;
            }
        }
        // A process whose handshake is still under way has nothing to close politely.
        self.group.lock().kill_now();
    }

    /// Kills the server's process group at once (exit paths that cannot wait).
    pub(crate) fn kill_now(&self) {
        // A process started but not yet connected to dies as it is dropped.
        drop(self.launched.lock().take());
        if let Some(live) = self.lock().live.as_mut()
            && let Some(process) = live.process.as_mut()
        {
            process.kill_now();
        }
        // A process in a handshake still under way is out of reach but for its group.
        self.group.lock().kill_now();
    }
}
