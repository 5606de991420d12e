//! Connecting to one server: starting it (stdio) or reaching it (streamable HTTP), the MCP
//! handshake, and the first list of its tools. rmcp speaks the protocol; rein only chooses
//! the transport and listens for one notification, `tools/list_changed`.

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use parking_lot::Mutex;
use rein_tools::{Progress, ProgressSink};
use reqwest::header::{HeaderName, HeaderValue};
use rmcp::model::{
    ClientCapabilities, ClientConfig, Implementation, ProgressNotificationParam, ProgressToken,
    ProtocolVersion, Tool,
};
use rmcp::service::{NotificationContext, RunningService};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::{ClientHandler, RoleClient, ServiceExt};

use crate::auth::SignInState;
use crate::config::{ServerConfig, TransportConfig};
use tokio::process::{ChildStdin, ChildStdout};

use crate::error::McpError;
use crate::process::{Launch, ServerProcess};

/// What rein's side of a connection does with what the server sends unasked: it notes
/// that the tool list changed, to list the tools again between rounds, and passes each
/// progress notification on to the call it is about.
#[derive(Clone, Default)]
pub(crate) struct Listener {
    pub(crate) tools_changed: Arc<AtomicBool>,
    /// Its tools that require MCP tasks (stdio servers), not offered.
    pub(crate) task_required: crate::tasks::TaskRequired,
    pub(crate) progress: ProgressRoutes,
    /// `prompts/list_changed` arrived: the prompts are listed again when next asked for.
    pub(crate) prompts: crate::prompts::PromptSignal,
}

impl std::fmt::Debug for Listener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listener").finish_non_exhaustive()
    }
}

/// Where the progress of each call in flight goes, by its progress token.
pub(crate) type ProgressRoutes = Arc<Mutex<HashMap<ProgressToken, ProgressSink>>>;

impl ClientHandler for Listener {
    fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        let sink = self.progress.lock().get(&params.progress_token).cloned();
        if let Some(sink) = sink {
            sink(Progress::Steps {
                progress: params.progress,
                total: params.total,
                message: params.message,
            });
        }
        std::future::ready(())
    }

    fn on_tool_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.tools_changed.store(true, Ordering::SeqCst);
        std::future::ready(())
    }

    fn on_prompt_list_changed(
        &self,
        _context: NotificationContext<RoleClient>,
    ) -> impl Future<Output = ()> + Send + '_ {
        self.prompts.note_stale();
        std::future::ready(())
    }

    fn get_info(&self) -> ClientConfig {
        // The newest revision that still has the `initialize` handshake: what servers in
        // use today speak, and where `tools/list_changed` arrives as a plain notification.
        ClientConfig::new(
            ClientCapabilities::default(),
            Implementation::new("rein", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }
}

/// A live connection.
pub(crate) struct Connection {
    pub(crate) service: RunningService<RoleClient, Listener>,
    /// The server's process, for stdio servers.
    pub(crate) process: Option<ServerProcess>,
    pub(crate) tools: Vec<Tool>,
}

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

/// Where a connection starts from: the working directory, rein's secret variables, the
/// server's log.
#[derive(Debug, Clone)]
pub(crate) struct Surroundings<'a> {
    pub(crate) cwd: &'a Path,
    pub(crate) env_remove: &'a [String],
    pub(crate) log: &'a Path,
    pub(crate) sandbox: Option<&'a rein_tools::sandbox::Sandbox>,
    /// Where the sign-ins of servers reached by URL are kept (`rein mcp login`).
    pub(crate) auth_dir: Option<&'a Path>,
}

/// A stdio server's process, started, with the two ends of its stdio.
pub(crate) type Launched = (ServerProcess, ChildStdout, ChildStdin);

/// Starts a stdio server's process (nothing for an HTTP server). Synchronous, so that every
/// server's process starts at once when rein does, before any handshake is under way.
pub(crate) fn launch(
    config: &ServerConfig,
    around: &Surroundings<'_>,
) -> Result<Option<Launched>, McpError> {
    match &config.transport {
        TransportConfig::Stdio {
            command,
            args,
            env,
            cwd,
            sandboxed: _,
        } => ServerProcess::spawn(&Launch {
            command,
            args,
            env,
            cwd: cwd.as_deref().unwrap_or(around.cwd),
            env_remove: around.env_remove,
            log: around.log,
            sandbox: around.sandbox,
        })
        .map(Some)
        .map_err(McpError::Spawn),
        TransportConfig::Http { .. } => Ok(None),
    }
}

/// Shakes hands with the server (launched already, for stdio) and lists its tools.
pub(crate) async fn connect(
    config: &ServerConfig,
    around: &Surroundings<'_>,
    listener: Listener,
    launched: Option<Launched>,
) -> Result<Connection, McpError> {
    match (&config.transport, launched) {
        (TransportConfig::Stdio { .. }, Some((mut process, stdout, stdin))) => {
            let stdout = crate::tasks::TaskSniffer::new(stdout, listener.task_required.clone());
            match listener.serve((stdout, stdin)).await {
                Ok(service) => finish(service, Some(process)).await,
                // Dropped on failure: the process goes with it.
                Err(error) => Err(match process.exit_status().await {
                    Some(status) => McpError::ExitedEarly {
                        status,
                        said: crate::process::last_log_line(around.log)
                            .map(|line| format!(": \"{line}\""))
                            .unwrap_or_default(),
                    },
                    None => McpError::Handshake(handshake_error(&error)),
                }),
            }
        }
        (TransportConfig::Stdio { .. }, None) => Err(McpError::NotLaunched),
        (TransportConfig::Http { url, headers }, _) => {
            connect_http(&config.name, url, headers, around.auth_dir, listener).await
        }
    }
}

/// Reaches a streamable-HTTP server, with its sign-in when it has one and no
/// `Authorization` header is configured (a configured header wins).
async fn connect_http(
    name: &str,
    url: &str,
    headers: &[(String, String)],
    auth_dir: Option<&Path>,
    listener: Listener,
) -> Result<Connection, McpError> {
    let client = http_client()?;
    let mut custom = HashMap::new();
    for (header, value) in headers {
        let bad = |problem: String| McpError::BadHeader {
            name: header.clone(),
            problem,
        };
        let header = HeaderName::try_from(header.as_str())
            .map_err(|e| bad(format!("is not a valid header name: {e}")))?;
        let value = HeaderValue::try_from(value.as_str())
            .map_err(|e| bad(format!("has a value that cannot be sent: {e}")))?;
        custom.insert(header, value);
    }
    let static_auth = custom.contains_key(&reqwest::header::AUTHORIZATION);
    let signed_in = match auth_dir {
        Some(dir) if !static_auth => {
            crate::auth::signed_in_client(name, url, dir, client.clone()).await?
        }
        _ => None,
    };
    let config = StreamableHttpClientTransportConfig::with_uri(url).custom_headers(custom);
    let (served, sign_in) = match signed_in {
        Some(auth) => (
            listener
                .serve(StreamableHttpClientTransport::with_client(auth, config))
                .await,
            SignInState::Used,
        ),
        None => (
            listener
                .serve(StreamableHttpClientTransport::with_client(client, config))
                .await,
            SignInState::None,
        ),
    };
    match served {
        Ok(service) => finish(service, None).await,
        Err(error) if wants_login(&error) && !static_auth => Err(McpError::NeedsLogin {
            name: name.to_owned(),
            why: match sign_in {
                SignInState::None => Some(
                    "it answered HTTP 401; a token in its `headers` works too, e.g. \
                     Authorization = \"Bearer ${TOKEN}\""
                        .to_owned(),
                ),
                SignInState::Used => {
                    Some("its sign-in expired and could not be refreshed".to_owned())
                }
            },
        }),
        Err(error) => Err(McpError::Unreachable(http_error(url, &error).await)),
    }
}

/// Whether the server refused for want of a sign-in: a 401 with a `WWW-Authenticate`
/// challenge, or rmcp finding that the sign-in needs renewing by the person.
fn wants_login(error: &rmcp::service::ClientInitializeError) -> bool {
    use rmcp::transport::auth::AuthError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = error else {
        return false;
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(e) = cause {
        match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            Some(StreamableHttpError::AuthRequired(_)) => return true,
            Some(StreamableHttpError::Auth(
                AuthError::AuthorizationRequired | AuthError::TokenRefreshRejected(_),
            )) => return true,
            _ => {}
        }
        cause = e.source();
    }
    false
}

/// rmcp's handshake error for a person: a transport's failure as what went wrong and when,
/// without the Rust type of the transport it carries.
fn handshake_error(error: &rmcp::service::ClientInitializeError) -> String {
    match error {
        rmcp::service::ClientInitializeError::TransportError { error, context } => {
            let what = error.error.to_string();
            // rmcp ends some with the response body, often empty: "HTTP 401 Unauthorized: ".
            let what = what.trim_end().trim_end_matches(':');
            format!("{what}, when it was to {context}")
        }
        other => without_transport_name(other.to_string()),
    }
}

/// `text` without the ` Transport [<rust type>] error` rmcp puts in its errors: a person
/// has no use for `rmcp::transport::worker::WorkerTransport<…>`.
pub(crate) fn without_transport_name(text: String) -> String {
    match (text.find(" Transport ["), text.rfind("] error: ")) {
        (Some(start), Some(end)) if start < end => {
            format!("{}{}", &text[..start], &text[end + "] error".len()..])
        }
        _ => text,
    }
}

/// Why an HTTP server could not be reached, for a person: nothing listening or a name that
/// does not resolve said as such (see [`crate::unreachable`]), rmcp's error cleaned
/// otherwise, and for a server that wants credentials, how to give them.
async fn http_error(url: &str, error: &rmcp::service::ClientInitializeError) -> String {
    if let rmcp::service::ClientInitializeError::TransportError { error, .. } = error
        && let Some(why) = crate::unreachable::reason(url, error.error.as_ref()).await
    {
        return format!("cannot reach {url}: {why}");
    }
    let text = format!("cannot reach {url}: {}", handshake_error(error));
    match refused_status(error) {
        Some(status) => format!(
            "{text}. It answered HTTP {status}: it wants credentials. Give them in the server's \
             `headers`, e.g. Authorization = \"Bearer ${{TOKEN}}\", or sign in with `rein mcp \
             login` if it supports OAuth"
        ),
        None => text,
    }
}

/// 401 or 403, when that is what the server answered.
fn refused_status(error: &rmcp::service::ClientInitializeError) -> Option<u16> {
    use rmcp::transport::streamable_http_client::StreamableHttpError;
    let rmcp::service::ClientInitializeError::TransportError { error, .. } = error else {
        return None;
    };
    let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(error.error.as_ref());
    while let Some(e) = cause {
        if let Some(http) = e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
            match http {
                StreamableHttpError::AuthRequired(_) => return Some(401),
                StreamableHttpError::InsufficientScope(_) => return Some(403),
                // Without a WWW-Authenticate header rmcp has no variant for it.
                StreamableHttpError::UnexpectedServerResponse(said)
                    if said.starts_with("HTTP 401") =>
                {
                    return Some(401);
                }
                StreamableHttpError::UnexpectedServerResponse(said)
                    if said.starts_with("HTTP 403") =>
                {
                    return Some(403);
                }
                _ => {}
            }
        }
        if let Some(status) = e
            .downcast_ref::<reqwest::Error>()
            .and_then(reqwest::Error::status)
            .map(|s| s.as_u16())
            .filter(|s| matches!(s, 401 | 403))
        {
            return Some(status);
        }
        cause = e.source();
    }
    None
}

async fn finish(
    service: RunningService<RoleClient, Listener>,
    process: Option<ServerProcess>,
) -> Result<Connection, McpError> {
    let tools = service
        .list_all_tools()
        .await
        .map_err(|e| McpError::ListTools(e.to_string()))?;
    Ok(Connection {
        service,
        process,
        tools,
    })
}

/// The HTTP client for streamable-HTTP servers; reqwest is built without a crypto provider,
/// so rein-llm's is installed first.
fn http_client() -> Result<reqwest::Client, McpError> {
    rein_llm::install_crypto_provider();
    reqwest::Client::builder()
        .build()
        .map_err(McpError::HttpClient)
}

#[cfg(test)]
mod tests {
    use rmcp::service::ClientInitializeError;
    use rmcp::transport::DynamicTransportError;
    use rmcp::transport::streamable_http_client::StreamableHttpError;

    use super::*;

    fn refused(said: &'static str) -> ClientInitializeError {
        let error: StreamableHttpError<reqwest::Error> =
            StreamableHttpError::UnexpectedServerResponse(said.into());
        ClientInitializeError::TransportError {
            error: DynamicTransportError::from_parts(
                "rmcp::transport::worker::WorkerTransport<X>",
                std::any::TypeId::of::<()>(),
                Box::new(error),
            ),
            context: "send initialize request".into(),
        }
    }

    #[tokio::test]
    async fn http_errors_read_as_words_and_a_refusal_says_how_to_sign_in() {
        let text = http_error("http://h/mcp", &refused("HTTP 401 Unauthorized: ")).await;
        assert!(
            text.starts_with(
                "cannot reach http://h/mcp: unexpected server response: HTTP 401 Unauthorized, \
                 when it was to send initialize request. It answered HTTP 401"
            ),
            "{text}"
        );
        assert!(
            text.contains("Authorization = \"Bearer ${TOKEN}\""),
            "{text}"
        );
        assert!(!text.contains("WorkerTransport"), "{text}");
        let text = http_error("http://h/mcp", &refused("HTTP 403 Forbidden: ")).await;
        assert!(text.contains("It answered HTTP 403"), "{text}");
        let text = http_error("http://h/mcp", &refused("HTTP 502 Bad Gateway: ")).await;
        assert!(!text.contains("credentials"), "{text}");
    }

    #[test]
    fn transport_type_names_are_left_out() {
        assert_eq!(
            without_transport_name(
                "Send message error Transport [rmcp::X<Y>] error: it broke, when send".to_owned()
            ),
            "Send message error: it broke, when send"
        );
        assert_eq!(without_transport_name("plain".to_owned()), "plain");
    }
}
