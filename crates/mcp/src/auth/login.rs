//! `rein mcp login NAME`, in two steps so the front-end can show the address in between:
//! [`start_login`] asks the server, discovers its authorization server, registers rein and
//! opens the loopback port, and gives the address to send the browser to;
//! [`PendingLogin::finish`] waits for the redirect, exchanges the code and saves the
//! sign-in.

use std::path::{Path, PathBuf};
use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE, WWW_AUTHENTICATE};
use rmcp::transport::auth::{
    AuthError, AuthorizationManager, AuthorizationMetadataSource, AuthorizationRequest,
    AuthorizationSession, CredentialStore, InMemoryCredentialStore,
};

use super::LoginError;
use super::redirect::Redirect;
use super::store::{self, SignIn};
use crate::config::{ServerConfig, TransportConfig};

/// The client name rein registers under.
const CLIENT_NAME: &str = "rein";

/// A login under way: the address to open, and the port the redirect is awaited on.
pub struct PendingLogin {
    /// The address the person signs in at.
    pub url: String,
    name: String,
    server_url: String,
    dir: PathBuf,
    state: String,
    resource: Option<String>,
    client_id: String,
    client_secret: Option<String>,
    redirect: Redirect,
    session: AuthorizationSession,
    store: InMemoryCredentialStore,
    metadata: rmcp::transport::auth::AuthorizationMetadata,
}

impl std::fmt::Debug for PendingLogin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingLogin")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// A finished login.
#[derive(Debug, Clone)]
pub struct SignedIn {
    /// Where the sign-in is kept.
    pub path: PathBuf,
    /// The scopes granted.
    pub scopes: Vec<String>,
}

/// Starts signing in to `server`, whose sign-in is to be kept under `dir`.
pub async fn start_login(server: &ServerConfig, dir: &Path) -> Result<PendingLogin, LoginError> {
    let name = server.name.clone();
    let TransportConfig::Http { url, headers } = &server.transport else {
        return Err(LoginError::NotHttp(name));
    };
    if headers
        .iter()
        .any(|(h, _)| h.eq_ignore_ascii_case("authorization"))
    {
        return Err(LoginError::StaticHeader(name));
    }
    let challenge = probe(&name, url, headers).await?;
    let flow = |e: AuthError| LoginError::Flow(e.to_string());
    let mut manager = AuthorizationManager::new(url.as_str())
        .await
        .map_err(flow)?;
    let discovery = |why: String| LoginError::Discovery {
        name: name.clone(),
        why,
    };
    let resolution = manager
        .resolve_metadata_from_challenge(challenge.as_deref())
        .await
        .map_err(|e| discovery(e.to_string()))?;
    if resolution.source == AuthorizationMetadataSource::LegacyEndpointFallback {
        return Err(discovery(
            "it publishes neither protected resource metadata (RFC 9728) nor authorization \
             server metadata (RFC 8414)"
                .to_owned(),
        ));
    }
    let metadata = resolution.metadata;
    manager.set_metadata(metadata.clone());
    let store = InMemoryCredentialStore::new();
    manager.set_credential_store(store.clone());
    let redirect = Redirect::bind().await?;
    let scopes = manager.select_initial_scopes(&[]).await;
    let scope_refs: Vec<&str> = scopes.iter().map(String::as_str).collect();
    let client = manager
        .register_client(CLIENT_NAME, &redirect.uri, &scope_refs)
        .await
        .map_err(|e| LoginError::Registration {
            name: name.clone(),
            why: match e {
                AuthError::RegistrationFailed(why) if why.contains("not supported") => {
                    "it does not offer dynamic client registration, which rein signs in with; \
                     give a token in the server's `headers` instead (Authorization = \"Bearer \
                     ${TOKEN}\")"
                        .to_owned()
                }
                other => other.to_string(),
            },
        })?;
    let mut request = AuthorizationRequest::new(redirect.uri.clone())
        .with_preregistered_client(client.client_id.clone())
        .with_scopes(scopes);
    if let Some(secret) = &client.client_secret {
        request = request.with_client_secret(secret.clone());
    }
    let session = AuthorizationSession::new(manager, request)
        .await
        .map_err(|(_, e)| flow(e))?;
    let address = url::Url::parse(session.get_authorization_url())
        .map_err(|e| LoginError::Flow(format!("rmcp made a bad authorization URL: {e}")))?;
    let param = |key: &str| {
        address
            .query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    };
    let state = param("state")
        .ok_or_else(|| LoginError::Flow("the authorization URL has no state".to_owned()))?;
    Ok(PendingLogin {
        url: address.to_string(),
        name,
        server_url: url.clone(),
        dir: dir.to_path_buf(),
        state,
        resource: param("resource"),
        client_id: client.client_id,
        client_secret: client.client_secret,
        redirect,
        session,
        store,
        metadata,
    })
}

impl PendingLogin {
    /// Waits up to `wait` for the browser's redirect, exchanges its code for tokens and saves
    /// the sign-in.
    pub async fn finish(self, wait: Duration) -> Result<SignedIn, LoginError> {
        let callback = tokio::time::timeout(wait, self.redirect.wait(&self.state))
            .await
            .map_err(|_| LoginError::TimedOut(wait))??;
        self.session
            .handle_callback_with_issuer(&callback.code, &self.state, callback.issuer.as_deref())
            .await
            .map_err(|e| LoginError::Exchange(e.to_string()))?;
        let credentials = self
            .store
            .load()
            .await
            .ok()
            .flatten()
            .ok_or_else(|| LoginError::Exchange("no tokens came back".to_owned()))?;
        let scopes = credentials.granted_scopes.clone();
        let path = store::sign_in_path(&self.dir, &self.name);
        let sign_in = SignIn {
            server_url: self.server_url,
            resource: self.resource,
            metadata: self.metadata,
            client_id: self.client_id,
            client_secret: self.client_secret,
            redirect_uri: self.redirect.uri.clone(),
            credentials,
        };
        store::write(&path, &sign_in).map_err(|source| LoginError::Save {
            path: path.clone(),
            source,
        })?;
        Ok(SignedIn { path, scopes })
    }
}

/// Asks the server to start a session without credentials: the `WWW-Authenticate` of its
/// refusal (if it sent one) seeds discovery; a server that accepts needs no login.
async fn probe(
    name: &str,
    url: &str,
    headers: &[(String, String)],
) -> Result<Option<String>, LoginError> {
    let unreachable = |why: String| LoginError::Unreachable {
        name: name.to_owned(),
        url: url.to_owned(),
        why,
    };
    rein_llm::install_crypto_provider();
    let client = reqwest::Client::builder()
        .build()
        .map_err(|e| unreachable(e.to_string()))?;
    let initialize = serde_json::json!({
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": rmcp::model::ProtocolVersion::LATEST_WITH_INITIALIZE,
            "capabilities": {},
            "clientInfo": { "name": CLIENT_NAME, "version": env!("CARGO_PKG_VERSION") }
        }
    });
    let mut request = client
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json, text/event-stream")
        .body(initialize.to_string());
    for (header, value) in headers {
        request = request.header(header.as_str(), value.as_str());
    }
    let response = match request.send().await {
        Ok(response) => response,
        // Said as the connection of a session says it.
        Err(e) => {
            let why = match crate::unreachable::reason(url, &e).await {
                Some(why) => why,
                None => crate::unreachable::words(&e),
            };
            return Err(unreachable(why));
        }
    };
    let status = response.status();
    let challenge = response
        .headers()
        .get(WWW_AUTHENTICATE)
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match status.as_u16() {
        200..=299 => Err(LoginError::NotNeeded(name.to_owned())),
        401 => Ok(challenge),
        403 if challenge.is_some() => Ok(challenge),
        _ => Err(unreachable(format!(
            "it answered HTTP {status} rather than asking for a login"
        ))),
    }
}
