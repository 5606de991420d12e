//! MCP's authorization flow (OAuth 2.1) for servers reached by URL, on rmcp's `auth`
//! support: `rein mcp login NAME` discovers the server's authorization server (protected
//! resource metadata, RFC 9728, then its metadata, RFC 8414), registers rein as a client
//! (dynamic client registration, RFC 7591), sends the person's browser to sign in with PKCE
//! and takes the code back on a loopback port; the sign-in is kept in a file of its own
//! (`store.rs`, mode 0600). Connections then send its access token, refreshed when it
//! expires or the server refuses it (`transport.rs`); a sign-in that cannot be refreshed
//! makes the server "need login". Tokens never reach a log, a session or the model: they
//! live in the file and in the `Authorization` header, nowhere else.

mod login;
mod redirect;
mod store;
mod transport;

use std::time::Duration;

pub use login::{PendingLogin, SignedIn, start_login};
pub use store::{remove as logout, sign_in_path};
pub(crate) use transport::{SignInState, signed_in_client};

/// How long `rein mcp login` waits for the person to finish signing in in the browser.
pub const LOGIN_WAIT: Duration = Duration::from_secs(300);

/// Why `rein mcp login` did not sign in. Each message is for the person at the terminal.
#[derive(Debug, thiserror::Error)]
pub enum LoginError {
    /// A stdio server.
    #[error("login is for servers reached by URL; `{0}` is started as a command")]
    NotHttp(String),
    /// A static `Authorization` header is configured, and would win over a sign-in.
    #[error(
        "`{0}` has an Authorization header in its configuration (`headers`), which rein sends \
         instead of a sign-in; remove it from the configuration to sign in with OAuth"
    )]
    StaticHeader(String),
    /// The server answered without asking for credentials.
    #[error("`{0}` answered without asking for a login: there is nothing to sign in to")]
    NotNeeded(String),
    /// The server could not be reached, or answered something else than a refusal.
    #[error("cannot reach `{name}` at {url}: {why}")]
    Unreachable {
        /// The server's name.
        name: String,
        /// Its URL.
        url: String,
        /// What happened.
        why: String,
    },
    /// No authorization server could be found for it.
    #[error("cannot find how to sign in to `{name}`: {why}")]
    Discovery {
        /// The server's name.
        name: String,
        /// What discovery found.
        why: String,
    },
    /// The authorization server would not register rein as a client.
    #[error("the authorization server of `{name}` did not register rein as a client: {why}")]
    Registration {
        /// The server's name.
        name: String,
        /// Why.
        why: String,
    },
    /// The loopback port for the redirect could not be opened.
    #[error("cannot listen on 127.0.0.1 for the sign-in's redirect: {0}")]
    Listen(#[source] std::io::Error),
    /// Nobody finished signing in in time.
    #[error(
        "no sign-in came back within {} s (was the browser closed?); run `rein mcp login` again",
        .0.as_secs()
    )]
    TimedOut(Duration),
    /// The authorization server redirected with an error.
    #[error("the authorization server refused: {error}{}", .description.as_deref().map(|d| format!(" ({d})")).unwrap_or_default())]
    Denied {
        /// The OAuth error code (`access_denied`, say).
        error: String,
        /// Its description, when given.
        description: Option<String>,
    },
    /// The redirect carried another login's `state` (or none): not this sign-in.
    #[error(
        "the redirect did not carry this login's `state`, so it was not accepted (a stale or forged sign-in page?); run `rein mcp login` again"
    )]
    WrongState,
    /// The redirect carried no code.
    #[error("the redirect carried no authorization code")]
    NoCode,
    /// The code could not be exchanged for tokens.
    #[error("exchanging the authorization code for tokens failed: {0}")]
    Exchange(String),
    /// Something inside rmcp's flow failed.
    #[error("the sign-in failed: {0}")]
    Flow(String),
    /// The sign-in could not be saved.
    #[error("cannot save the sign-in to {path}: {source}")]
    Save {
        /// The file.
        path: std::path::PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}
