//! A protected MCP server for rein's OAuth tests: the fake MCP server behind a bearer token,
//! and its authorization server, on one port of 127.0.0.1. It serves what MCP's
//! authorization flow needs: a 401 with `WWW-Authenticate` naming the protected resource
//! metadata (RFC 9728), that metadata, the authorization server's metadata (RFC 8414),
//! dynamic client registration (RFC 7591), `/authorize` (which signs in at once and
//! redirects with a code, as a browser would be after the person signed in), and `/token`
//! (the code with its PKCE verifier checked, and refresh tokens, rotated). Everything it
//! issued and every bearer token `/mcp` accepted is recorded for the test to look at.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;
use std::time::{Duration, Instant};

use base64::Engine;
use http_body_util::combinators::BoxBody;
use http_body_util::{BodyExt, Full};
use hyper::body::{Bytes, Incoming};
use hyper::{Request, Response, StatusCode};
use parking_lot::Mutex;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::mcp::FakeServer;

/// How the authorization server behaves.
#[derive(Debug, Clone)]
pub struct OAuthOptions {
    /// The lifetime of the access token the code is exchanged for (`expires_in`; 0: it is
    /// expired from the start).
    pub first_lifetime: Duration,
    /// The lifetime of the access tokens refreshes give.
    pub refreshed_lifetime: Duration,
    /// Refresh requests are refused (`invalid_grant`).
    pub refuse_refresh: bool,
    /// It offers dynamic client registration.
    pub registration: bool,
    /// `/authorize` redirects with `error=access_denied` (the person said no).
    pub deny: bool,
    /// `/authorize` redirects with a `state` other than the one it was sent.
    pub wrong_state: bool,
    /// It publishes its metadata (protected resource and authorization server).
    pub metadata: bool,
}

impl Default for OAuthOptions {
    fn default() -> Self {
        OAuthOptions {
            first_lifetime: Duration::from_secs(3600),
            refreshed_lifetime: Duration::from_secs(3600),
            refuse_refresh: false,
            registration: true,
            deny: false,
            wrong_state: false,
            metadata: true,
        }
    }
}

#[derive(Debug, Default)]
struct State {
    options: Option<OAuthOptions>,
    clients: HashMap<String, Vec<String>>,
    /// code → (PKCE challenge, redirect URI).
    codes: HashMap<String, (String, String)>,
    /// access token → when it stops being accepted.
    access: HashMap<String, Instant>,
    refresh: Vec<String>,
    issued: Vec<String>,
    accepted: Vec<String>,
    refreshes: usize,
    counter: u64,
}

impl State {
    fn options(&self) -> OAuthOptions {
        self.options.clone().unwrap_or_default()
    }

    fn next(&mut self, prefix: &str) -> String {
        self.counter += 1;
        // Long enough to be masked as a secret, distinct enough to find in a file.
        format!("{prefix}-{:04}-{}", self.counter, std::process::id())
    }

    fn issue(&mut self, lifetime: Duration) -> Value {
        let access = self.next("access-token");
        let refresh = self.next("refresh-token");
        self.access
            .insert(access.clone(), Instant::now() + lifetime);
        self.refresh.push(refresh.clone());
        self.issued.push(access.clone());
        self.issued.push(refresh.clone());
        json!({
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": lifetime.as_secs(),
            "refresh_token": refresh,
            "scope": "mcp",
        })
    }
}

/// The protected server and its authorization server, until the process ends.
#[derive(Debug, Clone)]
pub struct OAuthServer {
    /// The MCP endpoint: `http://127.0.0.1:PORT/mcp`.
    pub url: String,
    state: Arc<Mutex<State>>,
}

impl OAuthServer {
    /// Starts it on a thread of its own.
    pub fn start(options: OAuthOptions) -> anyhow::Result<OAuthServer> {
        let state = Arc::new(Mutex::new(State {
            options: Some(options),
            ..State::default()
        }));
        let shared = Arc::clone(&state);
        let address =
            crate::mcp::serve_on_thread("fake-oauth", |listener| accept(listener, shared))?;
        Ok(OAuthServer {
            url: format!("http://{address}/mcp"),
            state,
        })
    }

    /// Every access and refresh token it issued, in order.
    pub fn issued(&self) -> Vec<String> {
        self.state.lock().issued.clone()
    }

    /// Every bearer token `/mcp` accepted, in order.
    pub fn accepted(&self) -> Vec<String> {
        self.state.lock().accepted.clone()
    }

    /// How many refreshes it granted.
    pub fn refreshes(&self) -> usize {
        self.state.lock().refreshes
    }

    /// Stops accepting every access token issued so far (as when they are revoked).
    pub fn revoke_access_tokens(&self) {
        self.state.lock().access.clear();
    }
}

type Reply = Response<BoxBody<Bytes, Infallible>>;

fn reply(status: StatusCode, content_type: &str, body: String) -> Reply {
    let mut response = Response::new(Full::new(Bytes::from(body)).boxed());
    *response.status_mut() = status;
    if let Ok(value) = content_type.parse() {
        response
            .headers_mut()
            .insert(hyper::header::CONTENT_TYPE, value);
    }
    response
}

fn json_reply(status: StatusCode, body: &Value) -> Reply {
    reply(status, "application/json", body.to_string())
}

fn redirect(location: &str) -> Reply {
    let mut response = reply(StatusCode::FOUND, "text/plain", String::new());
    if let Ok(value) = location.parse() {
        response
            .headers_mut()
            .insert(hyper::header::LOCATION, value);
    }
    response
}

async fn accept(listener: tokio::net::TcpListener, state: Arc<Mutex<State>>) {
    use hyper_util::rt::TokioIo;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    let Ok(address) = listener.local_addr() else {
        return;
    };
    let base = format!("http://{address}");
    let mcp = StreamableHttpService::new(
        || Ok(FakeServer::new()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let (base, state, mcp) = (base.clone(), Arc::clone(&state), mcp.clone());
        let service = hyper::service::service_fn(move |request: Request<Incoming>| {
            let (base, state, mut mcp) = (base.clone(), Arc::clone(&state), mcp.clone());
            async move {
                let reply = if request.uri().path() == "/mcp" {
                    match authorized(&state, &request) {
                        true => {
                            use tower_service::Service;
                            mcp.call(request).await?
                        }
                        false => refuse(&base),
                    }
                } else {
                    route(request, &base, &state).await
                };
                Ok::<Reply, Infallible>(reply)
            }
        });
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// Whether `request` carries an access token that is still good; it is recorded if so.
fn authorized(state: &Mutex<State>, request: &Request<Incoming>) -> bool {
    let token = request
        .headers()
        .get(hyper::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let mut state = state.lock();
    match token {
        Some(token)
            if state
                .access
                .get(token)
                .is_some_and(|end| *end > Instant::now()) =>
        {
            state.accepted.push(token.to_owned());
            true
        }
        _ => false,
    }
}

fn refuse(base: &str) -> Reply {
    let mut response = json_reply(
        StatusCode::UNAUTHORIZED,
        &json!({"error": "invalid_token", "error_description": "sign in first"}),
    );
    let challenge = format!(
        "Bearer resource_metadata=\"{base}/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
    );
    if let Ok(value) = challenge.parse() {
        response
            .headers_mut()
            .insert(hyper::header::WWW_AUTHENTICATE, value);
    }
    response
}

async fn route(request: Request<Incoming>, base: &str, state: &Mutex<State>) -> Reply {
    let path = request.uri().path().to_owned();
    let query = request.uri().query().unwrap_or_default().to_owned();
    let body = request
        .into_body()
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let mut state = state.lock();
    let options = state.options();
    let well_known = path.starts_with("/.well-known/");
    match path.as_str() {
        _ if well_known && !options.metadata => {
            reply(StatusCode::NOT_FOUND, "text/plain", "not found".into())
        }
        "/.well-known/oauth-protected-resource/mcp" | "/.well-known/oauth-protected-resource" => {
            json_reply(
                StatusCode::OK,
                &json!({
                    "resource": format!("{base}/mcp"),
                    "authorization_servers": [base],
                    "scopes_supported": ["mcp"],
                    "bearer_methods_supported": ["header"],
                }),
            )
        }
        "/.well-known/oauth-authorization-server" => {
            let mut metadata = json!({
                "issuer": base,
                "authorization_endpoint": format!("{base}/authorize"),
                "token_endpoint": format!("{base}/token"),
                "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": ["mcp"],
            });
            if options.registration {
                metadata["registration_endpoint"] = json!(format!("{base}/register"));
            }
            json_reply(StatusCode::OK, &metadata)
        }
        "/register" if options.registration => {
            let asked: Value = serde_json::from_slice(&body).unwrap_or_default();
            let redirect_uris: Vec<String> = asked["redirect_uris"]
                .as_array()
                .map(|uris| {
                    uris.iter()
                        .filter_map(|u| u.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            let id = state.next("client");
            state.clients.insert(id.clone(), redirect_uris.clone());
            json_reply(
                StatusCode::CREATED,
                &json!({
                    "client_id": id,
                    "redirect_uris": redirect_uris,
                    "client_name": asked["client_name"],
                    "token_endpoint_auth_method": "none",
                }),
            )
        }
        "/authorize" => authorize(&mut state, &options, &query),
        "/token" => token(&mut state, &options, &body),
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found".into()),
    }
}

fn form(text: &[u8]) -> HashMap<String, String> {
    url::form_urlencoded::parse(text).into_owned().collect()
}

/// Signs in at once (a test plays the person) and redirects with a code.
fn authorize(state: &mut State, options: &OAuthOptions, query: &str) -> Reply {
    let params = form(query.as_bytes());
    let get = |k: &str| params.get(k).cloned().unwrap_or_default();
    let (client, redirect_uri) = (get("client_id"), get("redirect_uri"));
    let known = state
        .clients
        .get(&client)
        .is_some_and(|uris| uris.contains(&redirect_uri));
    if !known || get("code_challenge_method") != "S256" || get("response_type") != "code" {
        return reply(
            StatusCode::BAD_REQUEST,
            "text/plain",
            "unknown client, redirect URI or PKCE method".into(),
        );
    }
    let sep = if redirect_uri.contains('?') { '&' } else { '?' };
    let state_param = if options.wrong_state {
        "not-the-state-sent".to_owned()
    } else {
        get("state")
    };
    let state_param: String =
        url::form_urlencoded::byte_serialize(state_param.as_bytes()).collect();
    if options.deny {
        return redirect(&format!(
            "{redirect_uri}{sep}error=access_denied&error_description=The+person+said+no&state={state_param}"
        ));
    }
    let code = state.next("code");
    state
        .codes
        .insert(code.clone(), (get("code_challenge"), redirect_uri.clone()));
    redirect(&format!(
        "{redirect_uri}{sep}code={code}&state={state_param}"
    ))
}

fn token(state: &mut State, options: &OAuthOptions, body: &[u8]) -> Reply {
    let params = form(body);
    let get = |k: &str| params.get(k).cloned().unwrap_or_default();
    let invalid = |what: &str| {
        json_reply(
            StatusCode::BAD_REQUEST,
            &json!({"error": "invalid_grant", "error_description": what}),
        )
    };
    match get("grant_type").as_str() {
        "authorization_code" => {
            let Some((challenge, redirect_uri)) = state.codes.remove(&get("code")) else {
                return invalid("unknown code");
            };
            let verifier = get("code_verifier");
            let computed = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(Sha256::digest(verifier.as_bytes()));
            if computed != challenge || redirect_uri != get("redirect_uri") {
                return invalid("PKCE verification failed");
            }
            let tokens = state.issue(options.first_lifetime);
            json_reply(StatusCode::OK, &tokens)
        }
        "refresh_token" => {
            let presented = get("refresh_token");
            if options.refuse_refresh || !state.refresh.contains(&presented) {
                return invalid("refresh token refused");
            }
            // Rotated: the one presented is spent.
            state.refresh.retain(|r| *r != presented);
            state.refreshes += 1;
            let tokens = state.issue(options.refreshed_lifetime);
            json_reply(StatusCode::OK, &tokens)
        }
        _ => json_reply(
            StatusCode::BAD_REQUEST,
            &json!({"error": "unsupported_grant_type"}),
        ),
    }
}

/// Plays the person's browser: opens `url` (the authorization address rein printed),
/// follows its redirect to rein's loopback listener, and returns that page's status line and
/// body.
pub fn play_browser(url: &str) -> anyhow::Result<String> {
    let (status, location, _) = get(url)?;
    anyhow::ensure!(status.contains(" 302 "), "{url} answered {status}");
    let location = location.ok_or_else(|| anyhow::anyhow!("no Location from {url}"))?;
    let (status, _, body) = get(&location)?;
    Ok(format!("{status}\n{body}"))
}

/// A plain HTTP/1.1 GET over 127.0.0.1: the status line, the `Location`, the body.
fn get(address: &str) -> anyhow::Result<(String, Option<String>, String)> {
    use std::io::{Read, Write};
    let url = url::Url::parse(address)?;
    anyhow::ensure!(
        url.host_str() == Some("127.0.0.1"),
        "not a loopback address: {url}"
    );
    let port = url
        .port()
        .ok_or_else(|| anyhow::anyhow!("no port in {url}"))?;
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let target = match url.query() {
        Some(query) => format!("{}?{query}", url.path()),
        None => url.path().to_owned(),
    };
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = String::new();
    stream.read_to_string(&mut response)?;
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let status = head.lines().next().unwrap_or_default().to_owned();
    let location = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("location")
            .then(|| value.trim().to_owned())
    });
    Ok((status, location, body.to_owned()))
}
