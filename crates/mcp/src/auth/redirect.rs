//! The loopback listener the authorization server's redirect comes back to (RFC 8252 §7.3):
//! `http://127.0.0.1:<random port>/callback`. It answers the browser with a short page and
//! hands the code on only when the `state` is the one this login sent.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::LoginError;

/// The path the redirect comes to.
const CALLBACK_PATH: &str = "/callback";
/// The most of a request head read: a redirect is one short line and a few headers.
const HEAD_LIMIT_BYTES: usize = 16 * 1024;
/// How long one connection may take to send its request head.
const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// A bound listener and the redirect URI that reaches it.
#[derive(Debug)]
pub(crate) struct Redirect {
    listener: TcpListener,
    /// `http://127.0.0.1:PORT/callback`.
    pub(crate) uri: String,
}

/// What the redirect brought: the code and, when the server sends it, its issuer (RFC 9207).
#[derive(Debug)]
pub(crate) struct Callback {
    pub(crate) code: String,
    pub(crate) issuer: Option<String>,
}

impl Redirect {
    /// Listens on a random loopback port.
    pub(crate) async fn bind() -> Result<Redirect, LoginError> {
        let listener = TcpListener::bind(("127.0.0.1", 0))
            .await
            .map_err(LoginError::Listen)?;
        let port = listener.local_addr().map_err(LoginError::Listen)?.port();
        Ok(Redirect {
            listener,
            uri: format!("http://127.0.0.1:{port}{CALLBACK_PATH}"),
        })
    }

    /// Waits for the redirect to `/callback` (other requests, a favicon say, get 404) and
    /// checks it: an error from the server, a `state` that is not `state`, or no code ends
    /// the login with that error.
    pub(crate) async fn wait(&self, state: &str) -> Result<Callback, LoginError> {
        loop {
            let Ok((mut stream, _)) = self.listener.accept().await else {
                continue;
            };
            let Ok(Ok(Some(target))) =
                tokio::time::timeout(HEAD_TIMEOUT, request_target(&mut stream)).await
            else {
                continue;
            };
            let Ok(url) = url::Url::parse(&format!("http://127.0.0.1{target}")) else {
                respond(&mut stream, 400, "This is not a sign-in answer.").await;
                continue;
            };
            if url.path() != CALLBACK_PATH {
                respond(&mut stream, 404, "Not found.").await;
                continue;
            }
            let verdict = judge(&url, state);
            let page = match &verdict {
                Ok(_) => {
                    "rein received the sign-in. You can close this tab and go back to the terminal."
                        .to_owned()
                }
                Err(e) => format!("The sign-in failed: {e}. You can close this tab."),
            };
            respond(&mut stream, if verdict.is_ok() { 200 } else { 400 }, &page).await;
            return verdict;
        }
    }
}

/// What the redirect to `url` says, checked against the `state` this login sent.
fn judge(url: &url::Url, state: &str) -> Result<Callback, LoginError> {
    let param = |key: &str| {
        url.query_pairs()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.into_owned())
    };
    if let Some(error) = param("error") {
        return Err(LoginError::Denied {
            error,
            description: param("error_description"),
        });
    }
    if param("state").as_deref() != Some(state) {
        return Err(LoginError::WrongState);
    }
    let code = param("code")
        .filter(|c| !c.is_empty())
        .ok_or(LoginError::NoCode)?;
    Ok(Callback {
        code,
        issuer: param("iss"),
    })
}

/// The target of the request on `stream` (`/callback?code=…`), once its head is read.
async fn request_target(stream: &mut TcpStream) -> std::io::Result<Option<String>> {
    let mut head = Vec::new();
    let mut buf = [0u8; 2048];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        let n = stream.read(&mut buf).await?;
        if n == 0 || head.len() + n > HEAD_LIMIT_BYTES {
            return Ok(None);
        }
        head.extend_from_slice(&buf[..n]);
    }
    let head = String::from_utf8_lossy(&head);
    let mut words = head.lines().next().unwrap_or_default().split(' ');
    match (words.next(), words.next()) {
        (Some("GET"), Some(target)) if target.starts_with('/') => Ok(Some(target.to_owned())),
        _ => Ok(None),
    }
}

/// Answers the browser with a plain page and closes the connection.
async fn respond(stream: &mut TcpStream, status: u16, text: &str) {
    let reason = match status {
        200 => "OK",
        404 => "Not Found",
        _ => "Bad Request",
    };
    let body = format!(
        "<!doctype html><meta charset=\"utf-8\"><title>rein</title><p>{}</p>\n",
        escape(text)
    );
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\n\
         content-length: {}\r\nconnection: close\r\ncache-control: no-store\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
    let _ = stream.shutdown().await;
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(query: &str) -> url::Url {
        url::Url::parse(&format!("http://127.0.0.1:9/callback?{query}")).unwrap()
    }

    #[test]
    fn only_the_state_sent_is_accepted() {
        let ok = judge(&url("code=abc&state=s1&iss=https%3A%2F%2Fas"), "s1").unwrap();
        assert_eq!(ok.code, "abc");
        assert_eq!(ok.issuer.as_deref(), Some("https://as"));
        assert!(matches!(
            judge(&url("code=abc&state=s2"), "s1"),
            Err(LoginError::WrongState)
        ));
        assert!(matches!(
            judge(&url("code=abc"), "s1"),
            Err(LoginError::WrongState)
        ));
        assert!(matches!(
            judge(&url("state=s1"), "s1"),
            Err(LoginError::NoCode)
        ));
    }

    #[test]
    fn an_error_from_the_server_is_said() {
        let err = judge(
            &url("error=access_denied&error_description=The+user+said+no&state=s1"),
            "s1",
        )
        .unwrap_err();
        assert_eq!(
            err.to_string(),
            "the authorization server refused: access_denied (The user said no)"
        );
    }
}
