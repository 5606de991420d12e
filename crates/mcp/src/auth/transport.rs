//! A connection to a server signed in to: rmcp's `AuthClient` around the HTTP client, set up
//! from the sign-in file without any discovery (the file holds the authorization server's
//! metadata and the registered client). rmcp then sends the access token with each request,
//! refreshes it when it is about to expire or the server refuses it, and saves the new
//! tokens through the file store.

use std::path::Path;

use rmcp::transport::auth::{AuthClient, AuthorizationManager, OAuthClientConfig};

use super::store::{self, FileStore};
use crate::error::McpError;

/// Whether a connection went out with a sign-in, for what a refusal means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SignInState {
    /// No sign-in for it (or one for another URL): a refusal means it needs one.
    None,
    /// Its tokens were sent (or refreshed): a refusal means they expired for good.
    Used,
}

/// The client for server `name` at `url` when it has a sign-in under `dir` (`None`: no
/// sign-in, or one made for another URL).
pub(crate) async fn signed_in_client(
    name: &str,
    url: &str,
    dir: &Path,
    http: reqwest::Client,
) -> Result<Option<AuthClient<reqwest::Client>>, McpError> {
    let path = store::sign_in_path(dir, name);
    let unusable = |why: String| McpError::NeedsLogin {
        name: name.to_owned(),
        why: Some(format!("its sign-in ({}) {why}", path.display())),
    };
    let sign_in = match store::read(&path) {
        Ok(Some(sign_in)) if sign_in.server_url == url => sign_in,
        Ok(_) => return Ok(None),
        Err(e) => return Err(unusable(format!("cannot be read: {e}"))),
    };
    // Tokens are bound to the resource the login asked for (RFC 8707): refreshes ask for it
    // again, which rmcp does for the URL its manager is made for.
    let resource = sign_in
        .resource
        .as_deref()
        .filter(|r| url::Url::parse(r).is_ok())
        .unwrap_or(url);
    let mut manager = AuthorizationManager::new(resource)
        .await
        .map_err(|e| unusable(format!("cannot be used: {e}")))?;
    manager.set_metadata(sign_in.metadata);
    let mut client = OAuthClientConfig::new(sign_in.client_id, sign_in.redirect_uri);
    if let Some(secret) = sign_in.client_secret {
        client = client.with_client_secret(secret);
    }
    manager
        .configure_client(client)
        .map_err(|e| unusable(format!("cannot be used: {e}")))?;
    manager.set_credential_store(FileStore::new(dir, name));
    Ok(Some(AuthClient::new(http, manager)))
}
