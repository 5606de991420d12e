//! `rein acp`: rein as an Agent Client Protocol agent on stdin/stdout, for editors (Zed,
//! JetBrains IDEs, Neovim). JSON-RPC framing, method dispatch, malformed lines and unknown
//! methods are the `agent-client-protocol` crate's; what is rein's is here: each session is a
//! task owning the same [`rein_core::face::Agent`] the REPL drives (`session`), its events
//! become `session/update` notifications (`updates`), approvals go to the editor
//! (`permission`), and file tools read and write the editor's buffers when it offers them
//! (`files`).

mod commands;
mod files;
mod permission;
mod prompt;
mod session;
mod updates;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use agent_client_protocol::v1::schema::{
    AgentCapabilities, CancelNotification, ClientCapabilities, Implementation, InitializeRequest,
    InitializeResponse, LoadSessionRequest, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionRequest, NewSessionResponse, PromptCapabilities, PromptRequest, SessionId,
    SessionMode, SessionModeState, SetSessionModeRequest,
};
use agent_client_protocol::v1::{ConnectionTo, Responder};
use agent_client_protocol::{Agent as AcpAgent, Client, Error, Stdio};
use parking_lot::Mutex;
use rein_core::config::{McpServerEntry, McpTransportEntry, Source};
use rein_core::face::{Interaction, PermissionMode};

use crate::args::Args;
use crate::exit::Exit;
use crate::render;
use crate::setup::{self, McpServers, Place};
use files::EditorFiles;
use permission::EditorApprovals;
use session::{Handle, Live, Request};
use updates::Updates;

/// What the connection shares: the command line, the client's capabilities, the sessions.
struct Server {
    args: Args,
    client: Mutex<ClientCapabilities>,
    sessions: Mutex<HashMap<String, Handle>>,
}

/// Serves ACP on stdin/stdout until the client closes it.
pub(crate) async fn run(args: &Args) -> Exit {
    let server = Arc::new(Server {
        args: args.clone(),
        client: Mutex::new(ClientCapabilities::new()),
        sessions: Mutex::default(),
    });
    let (s1, s2, s3, s4, s5, s6) = (
        Arc::clone(&server),
        Arc::clone(&server),
        Arc::clone(&server),
        Arc::clone(&server),
        Arc::clone(&server),
        Arc::clone(&server),
    );
    let served = AcpAgent
        .v1()
        .name("rein")
        .on_receive_request(
            async move |request: InitializeRequest, responder, _cx| {
                responder.respond(s1.initialize(request))
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: NewSessionRequest, responder, cx| {
                s2.new_session(request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: LoadSessionRequest, responder, cx| {
                s3.load_session(request, responder, cx);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: PromptRequest, responder, _cx| {
                s4.prompt(request, responder);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_request(
            async move |request: SetSessionModeRequest, responder, _cx| {
                s5.set_mode(request, responder);
                Ok(())
            },
            agent_client_protocol::on_receive_request!(),
        )
        .on_receive_notification(
            async move |cancel: CancelNotification, _cx| {
                s6.cancel(&cancel.session_id);
                Ok(())
            },
            agent_client_protocol::on_receive_notification!(),
        )
        .connect_to(Stdio::new())
        .await;
    // The client is gone: every session's turn is cancelled, its processes stopped, its
    // record saved.
    let sessions: Vec<Handle> = server
        .sessions
        .lock()
        .drain()
        .map(|(_, handle)| handle)
        .collect();
    for handle in sessions {
        handle.close().await;
    }
    match served {
        Ok(()) => Exit::Done,
        Err(e) => {
            render::error(&format!("rein acp: the connection failed: {}", e.message));
            Exit::Runtime
        }
    }
}

impl Server {
    fn initialize(&self, request: InitializeRequest) -> InitializeResponse {
        *self.client.lock() = request.client_capabilities.clone();
        // One protocol version exists: it is the answer whatever the client asked for.
        InitializeResponse::new(agent_client_protocol::schema::ProtocolVersion::V1)
            .agent_capabilities(
                AgentCapabilities::new()
                    .load_session(true)
                    .prompt_capabilities(PromptCapabilities::new().embedded_context(true))
                    .mcp_capabilities(McpCapabilities::new().http(true)),
            )
            .agent_info(Implementation::new("rein", env!("CARGO_PKG_VERSION")))
    }

    fn new_session(
        self: &Arc<Self>,
        request: NewSessionRequest,
        responder: Responder<NewSessionResponse>,
        cx: ConnectionTo<Client>,
    ) {
        let mut args = self.args.clone();
        args.resume = None;
        args.continue_session = false;
        match self.open(&args, request.cwd, &request.mcp_servers, &cx, Opening::New) {
            Ok((id, modes)) => {
                let _ = responder.respond(NewSessionResponse::new(id.clone()).modes(modes));
                self.advertise(&cx, &id);
            }
            Err(error) => {
                let _ = responder.respond_with_error(error);
            }
        }
    }

    fn load_session(
        self: &Arc<Self>,
        request: LoadSessionRequest,
        responder: Responder<LoadSessionResponse>,
        cx: ConnectionTo<Client>,
    ) {
        let id = request.session_id.0.to_string();
        if self.handle_exists(&id) {
            let _ = responder.respond_with_error(
                Error::invalid_params().data(format!("session {id} is open already")),
            );
            return;
        }
        let mut args = self.args.clone();
        args.resume = Some(id.clone());
        args.continue_session = false;
        args.fork = false;
        match self.open(&args, request.cwd, &request.mcp_servers, &cx, Opening::Load) {
            Ok((_, modes)) => {
                let _ = responder.respond(LoadSessionResponse::new().modes(modes));
                self.advertise(&cx, &SessionId::new(id));
            }
            Err(error) => {
                let _ = responder.respond_with_error(error);
            }
        }
    }

    /// Builds a session's agent (new, or resumed when `args.resume` names one; then its
    /// history is replayed) and starts its task.
    fn open(
        &self,
        args: &Args,
        cwd: PathBuf,
        servers: &[McpServer],
        cx: &ConnectionTo<Client>,
        opening: Opening,
    ) -> Result<(SessionId, SessionModeState), Error> {
        if !cwd.is_absolute() {
            return Err(Error::invalid_params().data("cwd must be an absolute path"));
        }
        let cwd = cwd.canonicalize().map_err(|e| {
            Error::invalid_params().data(format!("cannot use {} as cwd: {e}", cwd.display()))
        })?;
        let mcp_servers = servers
            .iter()
            .filter_map(mcp_entry)
            .collect::<Result<Vec<_>, _>>()?;
        let fs = self.client.lock().fs.clone();
        let pending = Pending::new(cx.clone(), fs.read_text_file && fs.write_text_file);
        let place = Place {
            cwd: cwd.clone(),
            mcp_servers,
            files: pending
                .files
                .clone()
                .map(|f| f as Arc<dyn rein_core::face::ClientFiles>),
        };
        let interaction: Arc<dyn Interaction> = pending.approvals.clone();
        let prepared = setup::prepare_at(args, &place, Arc::clone(&interaction), McpServers::Start)
            .map_err(|e| match e {
                setup::SetupError::Usage(m) => Error::invalid_params().data(m),
                setup::SetupError::Runtime(m) => Error::internal_error().data(m),
            })?;
        // The session's id is known once it is built; the editor pieces are named then.
        let id = prepared.session_id.clone();
        let session = SessionId::new(id.clone());
        pending.name(&session);
        let updates = Updates::new(cx.clone(), session.clone(), cwd, pending.files.clone());
        match opening {
            Opening::New => {}
            Opening::Load => updates.replay(prepared.agent.history()),
        }
        let mode = args.mode();
        let live = Live {
            agent: prepared.agent,
            args: args.clone(),
            place,
            interaction,
            updates,
            id: id.clone(),
            custom_commands: prepared.custom_commands,
        };
        self.sessions.lock().insert(id, session::start(live));
        Ok((session, modes(mode)))
    }

    /// Tells the client the slash commands, once the session exists (and again whenever
    /// its MCP prompts change).
    fn advertise(&self, _cx: &ConnectionTo<Client>, session: &SessionId) {
        if let Some(handle) = self.sessions.lock().get(&*session.0) {
            handle.advertise();
        }
    }

    fn handle_exists(&self, id: &str) -> bool {
        self.sessions.lock().contains_key(id)
    }

    fn prompt(&self, request: PromptRequest, responder: Responder<PromptResponseOf>) {
        let sessions = self.sessions.lock();
        let Some(handle) = sessions.get(&*request.session_id.0) else {
            let _ = responder.respond_with_error(unknown_session(&request.session_id));
            return;
        };
        if let Err(refused) = handle.send(Request::Prompt {
            blocks: request.prompt,
            responder,
        }) && let Request::Prompt { responder, .. } = *refused
        {
            let _ = responder.respond_with_error(unknown_session(&request.session_id));
        }
    }

    fn set_mode(&self, request: SetSessionModeRequest, responder: Responder<SetModeResponseOf>) {
        let Some(mode) = PermissionMode::parse(&request.mode_id.0) else {
            let _ = responder.respond_with_error(Error::invalid_params().data(format!(
                "unknown mode {}: one of {}",
                request.mode_id.0,
                PermissionMode::ALL.map(<&str>::from).join(", ")
            )));
            return;
        };
        let sessions = self.sessions.lock();
        let Some(handle) = sessions.get(&*request.session_id.0) else {
            let _ = responder.respond_with_error(unknown_session(&request.session_id));
            return;
        };
        if let Err(refused) = handle.send(Request::SetMode { mode, responder })
            && let Request::SetMode { responder, .. } = *refused
        {
            let _ = responder.respond_with_error(unknown_session(&request.session_id));
        }
    }

    fn cancel(&self, session: &SessionId) {
        if let Some(handle) = self.sessions.lock().get(&*session.0) {
            handle.cancel();
        }
    }
}

/// Whether a session is new or an earlier one loaded (its history then replayed).
#[derive(Debug, Clone, Copy)]
enum Opening {
    New,
    Load,
}

type PromptResponseOf = agent_client_protocol::v1::schema::PromptResponse;
type SetModeResponseOf = agent_client_protocol::v1::schema::SetSessionModeResponse;

/// The editor pieces of a session being built: they ask and read in the session's name,
/// which is known only once the agent is.
struct Pending {
    approvals: Arc<EditorApprovals>,
    files: Option<Arc<EditorFiles>>,
}

impl Pending {
    fn new(cx: ConnectionTo<Client>, fs: bool) -> Self {
        let runtime = tokio::runtime::Handle::current();
        Pending {
            approvals: Arc::new(EditorApprovals::new(cx.clone())),
            files: fs.then(|| Arc::new(EditorFiles::new(cx, runtime))),
        }
    }

    fn name(&self, session: &SessionId) {
        self.approvals.name(session.clone());
        if let Some(files) = &self.files {
            files.name(session.clone());
        }
    }
}

/// The permission modes, as the protocol's session modes.
fn modes(current: PermissionMode) -> SessionModeState {
    let about = |mode: PermissionMode| match mode {
        PermissionMode::Plan => "Read-only: nothing is changed, nothing is run",
        PermissionMode::Default => "Reads run; edits and commands ask",
        PermissionMode::AcceptEdits => "Reads and edits in the workspace run; commands ask",
        PermissionMode::Auto => {
            "Everything in the workspace runs, commands in the OS sandbox; leaving it asks"
        }
        PermissionMode::Yolo => "Everything runs without asking, but the hard deny list",
    };
    SessionModeState::new(
        current.to_string(),
        PermissionMode::ALL
            .into_iter()
            .map(|mode| {
                SessionMode::new(mode.to_string(), mode.to_string()).description(about(mode))
            })
            .collect(),
    )
}

/// A client's MCP server as rein configures one; `None` for transports rein does not
/// speak (SSE, MCP over ACP).
fn mcp_entry(server: &McpServer) -> Option<Result<McpServerEntry, Error>> {
    let (name, transport) = match server {
        McpServer::Stdio(stdio) => (
            stdio.name.clone(),
            McpTransportEntry::Stdio {
                command: stdio.command.to_string_lossy().into_owned(),
                args: stdio.args.clone(),
                env: stdio
                    .env
                    .iter()
                    .map(|v| (v.name.clone(), v.value.clone()))
                    .collect(),
                cwd: None,
                sandbox: None,
            },
        ),
        McpServer::Http(http) => (
            http.name.clone(),
            McpTransportEntry::Http {
                url: http.url.clone(),
                headers: http
                    .headers
                    .iter()
                    .map(|h| (h.name.clone(), h.value.clone()))
                    .collect(),
            },
        ),
        _ => return None,
    };
    if name.is_empty() {
        return Some(Err(
            Error::invalid_params().data("an MCP server of the session has no name")
        ));
    }
    Some(Ok(McpServerEntry {
        name,
        transport,
        startup_timeout: None,
        call_timeout: None,
        call_max_timeout: None,
        enabled: true,
        source: Source::Flag("session/new"),
    }))
}

fn unknown_session(id: &SessionId) -> Error {
    Error::invalid_params().data(format!("no session {} in this rein", id.0))
}
