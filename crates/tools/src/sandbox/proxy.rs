//! rein's side of `network = "proxy"`: an HTTP proxy (plain requests in absolute form, and
//! `CONNECT` tunnels for HTTPS) serving each sandboxed command's private listening socket
//! (`netns.rs`), letting through the hosts in `[sandbox] allow_domains`, asking about the
//! others through a [`HostGate`] (the person, in the REPL), and refusing them otherwise.
//!
//! The host is judged by name as the command gave it, before any resolution, and loopback
//! names (`localhost`, `127.0.0.1`) are judged like any other: a command cannot reach a
//! service on this machine unless it is listed. What each command was refused is kept for
//! its result ([`NetUse`]), so the model is told instead of retrying.

use std::collections::HashMap;
use std::fmt;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use crate::HostPort;

/// The longest request head the proxy reads.
const MAX_HEAD_BYTES: usize = 32 * 1024;

/// Who decides about a host that is not listed.
#[async_trait]
pub trait HostGate: Send + Sync + fmt::Debug {
    /// Whether a command may reach `host` on `port` (asked at most once per host and port
    /// for the session: a yes or a no is remembered).
    async fn allow(&self, host: &str, port: u16) -> HostAnswer;
}

/// What a [`HostGate`] answered about a host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostAnswer {
    /// Let it through, for the rest of the session.
    Allowed,
    /// Refuse it, for the rest of the session.
    Refused,
    /// Refuse it, for the rest of the session, for this reason (the model is told it).
    RefusedBecause(String),
    /// No answer came (the person pressed Ctrl+C): refused this time, asked again the next.
    Unanswered,
}

/// How a connection was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HostRefusal {
    /// Not listed, and no one could be asked.
    Unlisted(String),
    /// The person was asked and said no, maybe saying why.
    Refused {
        /// The host and port.
        to: HostPort,
        /// What the person said.
        reason: Option<String>,
    },
}

/// What the proxy refused one command.
#[derive(Debug, Clone, Default)]
pub struct NetUse {
    refused: Arc<Mutex<Vec<HostRefusal>>>,
}

impl NetUse {
    /// The connections refused so far, each host once.
    pub fn refused(&self) -> Vec<HostRefusal> {
        self.refused.lock().clone()
    }

    /// The connections the person refused when asked.
    pub fn refused_by_person(&self) -> Vec<HostPort> {
        let refused = self.refused.lock();
        let by_person = refused.iter().filter_map(|refusal| match refusal {
            HostRefusal::Refused { to, .. } => Some(to.clone()),
            HostRefusal::Unlisted(_) => None,
        });
        by_person.collect()
    }

    fn record(&self, refusal: HostRefusal) {
        let mut refused = self.refused.lock();
        if !refused.contains(&refusal) {
            refused.push(refusal);
        }
    }
}

/// The proxy of one session: the allowed domains, the gate, and what was decided.
#[derive(Debug)]
pub(crate) struct Proxy {
    allowed: Vec<String>,
    gate: parking_lot::Mutex<Option<Arc<dyn HostGate>>>,
    /// Answers the gate gave, by `host:port`: asked once per session.
    answers: tokio::sync::Mutex<HashMap<String, HostAnswer>>,
}

impl Proxy {
    /// A proxy letting `allowed` through (`*.example.com`: the domain and its subdomains).
    pub(crate) fn new(allowed: &[String]) -> Proxy {
        Proxy {
            allowed: allowed.iter().map(|d| normalise(d)).collect(),
            gate: parking_lot::Mutex::default(),
            answers: tokio::sync::Mutex::default(),
        }
    }

    /// Who decides about unlisted hosts from now on (the answers given so far stay).
    pub(crate) fn set_gate(&self, gate: Arc<dyn HostGate>) {
        *self.gate.lock() = Some(gate);
    }

    /// Forgets the gate's answers: each host is asked about again.
    pub(crate) async fn forget(&self) {
        self.answers.lock().await.clear();
    }

    /// The allowed domains, as configured.
    pub(crate) fn allowed(&self) -> &[String] {
        &self.allowed
    }

    /// Whether `host` is listed.
    fn listed(&self, host: &str) -> bool {
        let host = normalise(host);
        self.allowed
            .iter()
            .any(|entry| match entry.strip_prefix("*.") {
                Some(domain) => {
                    host == domain
                        || host
                            .strip_suffix(domain)
                            .is_some_and(|rest| rest.ends_with('.'))
                }
                None => host == *entry,
            })
    }

    /// Whether a connection to `host:port` may go, asking the gate about unlisted hosts;
    /// the refusal when not.
    async fn decide(&self, host: &str, port: u16, used: &NetUse) -> Result<(), HostRefusal> {
        if self.listed(host) {
            return Ok(());
        }
        let gate = self.gate.lock().clone();
        let refusal = match gate {
            None => HostRefusal::Unlisted(format!("{host}:{port}")),
            Some(gate) => {
                // One question at a time, and each host once.
                let mut answers = self.answers.lock().await;
                let key = format!("{}:{port}", normalise(host));
                let answer = match answers.get(&key) {
                    Some(answer) => answer.clone(),
                    None => {
                        let answer = gate.allow(host, port).await;
                        // No answer (Ctrl+C) is not remembered: the next connection asks again.
                        if answer != HostAnswer::Unanswered {
                            answers.insert(key, answer.clone());
                        }
                        answer
                    }
                };
                let reason = match answer {
                    HostAnswer::Allowed => return Ok(()),
                    HostAnswer::Refused | HostAnswer::Unanswered => None,
                    HostAnswer::RefusedBecause(reason) => Some(reason),
                };
                HostRefusal::Refused {
                    to: HostPort {
                        host: host.to_owned(),
                        port,
                    },
                    reason,
                }
            }
        };
        used.record(refusal.clone());
        Err(refusal)
    }

    /// Serves `listener` (in the command's namespace) until the process `pid` ends.
    pub(crate) fn serve(self: Arc<Self>, listener: OwnedFd, pid: libc::pid_t, used: NetUse) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let std_listener = std::net::TcpListener::from(listener);
            if std_listener.set_nonblocking(true).is_err() {
                return;
            }
            let Ok(listener) = TcpListener::from_std(std_listener) else {
                return;
            };
            let ended = exited(pid);
            tokio::pin!(ended);
            loop {
                tokio::select! {
                    () = &mut ended => return,
                    accepted = listener.accept() => {
                        let Ok((client, _)) = accepted else { return };
                        let proxy = Arc::clone(&self);
                        let used = used.clone();
                        tokio::spawn(async move { proxy.handle(client, &used).await });
                    }
                }
            }
        });
    }

    /// One client connection: read the head, decide, then tunnel or forward.
    async fn handle(&self, mut client: TcpStream, used: &NetUse) {
        let Some((head, rest)) = read_head(&mut client).await else {
            return;
        };
        let Some(request) = Request::parse(&head) else {
            let _ = respond(&mut client, 400, "rein's proxy could not read this request").await;
            return;
        };
        if let Err(refusal) = self.decide(&request.host, request.port, used).await {
            // The command's own error says who refused, and why.
            let why = match refusal {
                HostRefusal::Unlisted(_) => "it is not in [sandbox] allow_domains".to_owned(),
                HostRefusal::Refused { reason: None, .. } => {
                    "the person refused it when rein asked (it is not in [sandbox] allow_domains)"
                        .to_owned()
                }
                HostRefusal::Refused {
                    reason: Some(reason),
                    ..
                } => format!("the person refused it when rein asked, saying: {reason}"),
            };
            let text = format!(
                "rein's sandbox proxy refused the connection to {}: {why}",
                request.host
            );
            let _ = respond(&mut client, 403, &text).await;
            return;
        }
        let Ok(mut upstream) = TcpStream::connect((request.host.as_str(), request.port)).await
        else {
            let text = format!("rein's proxy could not connect to {}", request.host);
            let _ = respond(&mut client, 502, &text).await;
            return;
        };
        let sent = match &request.forward {
            None => {
                client
                    .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                    .await
            }
            Some(head) => upstream.write_all(head).await,
        };
        if sent.is_err() || upstream.write_all(&rest).await.is_err() {
            return;
        }
        let _ = tokio::io::copy_bidirectional(&mut client, &mut upstream).await;
    }
}

/// Ends when process `pid` has exited (or cannot be watched).
async fn exited(pid: libc::pid_t) {
    let Ok(pid) = rustix::process::Pid::from_raw(pid).ok_or(()) else {
        return;
    };
    let Ok(pidfd) = rustix::process::pidfd_open(pid, rustix::process::PidfdFlags::NONBLOCK) else {
        return;
    };
    let Ok(watch) = watch(pidfd) else {
        return;
    };
    let _ = watch.readable().await;
}

/// `fd` registered with the current Tokio runtime (call it inside one).
#[expect(
    unsafe_code,
    reason = "AsyncFd::register: the OwnedFd it takes stays open, and the same, until dropped"
)]
pub(crate) fn watch(fd: OwnedFd) -> std::io::Result<tokio::io::unix::AsyncFd<OwnedFd>> {
    // SAFETY: an OwnedFd is open and owned by the AsyncFd until it is dropped.
    unsafe { tokio::io::unix::AsyncFd::register(fd) }
        .map_err(|err| std::io::Error::other(err.to_string()))
}

/// A request line's target, and what to send on for a plain request.
#[derive(Debug, PartialEq, Eq)]
struct Request {
    host: String,
    port: u16,
    /// For a plain request, its head rewritten to the origin form; `None` for `CONNECT`.
    forward: Option<Vec<u8>>,
}

impl Request {
    /// Parses a request head; `None` when it is not a proxy request rein can serve.
    fn parse(head: &[u8]) -> Option<Request> {
        let mut headers = [httparse::EMPTY_HEADER; 100];
        let mut parsed = httparse::Request::new(&mut headers);
        if !parsed.parse(head).ok()?.is_complete() {
            return None;
        }
        let method = parsed.method?;
        let target = parsed.path?;
        if method.eq_ignore_ascii_case("CONNECT") {
            let (host, port) = split_authority(target)?;
            return Some(Request {
                host,
                port,
                forward: None,
            });
        }
        // A plain request names its URL in full (`GET http://host/path HTTP/1.1`).
        let rest = target
            .strip_prefix("http://")
            .or_else(|| target.strip_prefix("HTTP://"))?;
        let (authority, path) = rest.find('/').map_or((rest, "/"), |at| rest.split_at(at));
        let (host, port) = if authority.contains(':') && !authority.ends_with(']') {
            split_authority(authority)?
        } else {
            (strip_brackets(authority).to_owned(), 80)
        };
        if host.is_empty() || authority.contains('@') {
            return None;
        }
        // Each request on its own connection: a second one on a kept-alive connection
        // could name another host.
        let mut out = format!("{method} {path} HTTP/1.1\r\n").into_bytes();
        for header in parsed.headers.iter() {
            let name = header.name.to_ascii_lowercase();
            if name.starts_with("proxy-") || name == "connection" || name == "keep-alive" {
                continue;
            }
            out.extend_from_slice(header.name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(header.value);
            out.extend_from_slice(b"\r\n");
        }
        out.extend_from_slice(b"Connection: close\r\n\r\n");
        Some(Request {
            host,
            port,
            forward: Some(out),
        })
    }
}

/// `host:port` (IPv6 in brackets) to its parts.
fn split_authority(authority: &str) -> Option<(String, u16)> {
    let (host, port) = authority.rsplit_once(':')?;
    let host = strip_brackets(host);
    (!host.is_empty()).then_some(())?;
    Some((host.to_owned(), port.parse().ok()?))
}

fn strip_brackets(host: &str) -> &str {
    host.strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .unwrap_or(host)
}

/// A host or an allow-list entry as compared: lower case, without a final dot.
fn normalise(host: &str) -> String {
    host.trim_end_matches('.').to_ascii_lowercase()
}

/// Reads up to the end of the request head; the head and what came after it.
async fn read_head(client: &mut TcpStream) -> Option<(Vec<u8>, Vec<u8>)> {
    let mut buffer = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        let read = client.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
        if let Some(end) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buffer.split_off(end + 4);
            return Some((buffer, rest));
        }
        if buffer.len() > MAX_HEAD_BYTES {
            return None;
        }
    }
}

/// Answers the client with `status` and `text`, and closes.
async fn respond(client: &mut TcpStream, status: u16, text: &str) -> std::io::Result<()> {
    let reason = match status {
        400 => "Bad Request",
        403 => "Forbidden",
        _ => "Bad Gateway",
    };
    let body = format!("{text}\n");
    let response = format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: text/plain\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n{body}",
        body.len()
    );
    client.write_all(response.as_bytes()).await?;
    client.shutdown().await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused_host(host: &str, port: u16) -> HostRefusal {
        HostRefusal::Refused {
            to: HostPort {
                host: host.to_owned(),
                port,
            },
            reason: None,
        }
    }

    /// Answers from a list, counting the questions.
    #[derive(Debug)]
    struct Answers(Mutex<Vec<HostAnswer>>);

    #[async_trait]
    impl HostGate for Answers {
        async fn allow(&self, _host: &str, _port: u16) -> HostAnswer {
            self.0.lock().remove(0)
        }
    }

    #[tokio::test]
    async fn a_yes_or_a_no_holds_for_the_session_and_no_answer_asks_again() {
        let proxy = Proxy::new(&[]);
        let gate = Arc::new(Answers(Mutex::new(vec![
            HostAnswer::Refused,
            HostAnswer::Unanswered,
            HostAnswer::Allowed,
        ])));
        proxy.set_gate(gate.clone());
        let used = NetUse::default();
        let refused = Err(refused_host("a.example", 443));
        assert_eq!(proxy.decide("a.example", 443, &used).await, refused);
        // Not asked again: the no holds (the same host however written).
        assert_eq!(
            proxy.decide("A.example.", 443, &used).await,
            Err(refused_host("A.example.", 443))
        );
        // Ctrl+C: refused now, asked again next time, and then allowed for good.
        let other = Err(refused_host("b.example", 443));
        assert_eq!(proxy.decide("b.example", 443, &used).await, other);
        assert_eq!(proxy.decide("b.example", 443, &used).await, Ok(()));
        assert_eq!(proxy.decide("b.example", 443, &used).await, Ok(()));
        assert!(gate.0.lock().is_empty(), "asked three times in all");
        // A later gate decides from then on (an agent rebuilt on this sandbox): the answers
        // stay until forgotten (a new session), then it is asked.
        let later = Arc::new(Answers(Mutex::new(vec![HostAnswer::Refused])));
        proxy.set_gate(later.clone());
        assert_eq!(proxy.decide("b.example", 443, &used).await, Ok(()));
        proxy.forget().await;
        assert_eq!(proxy.decide("b.example", 443, &used).await, other);
        assert!(later.0.lock().is_empty(), "the later gate was not asked");
    }

    #[test]
    fn listed_hosts_match_by_name_and_wildcards_cover_subdomains() {
        let proxy = Proxy::new(&["pypi.org".to_owned(), "*.pythonhosted.org".to_owned()]);
        assert!(proxy.listed("pypi.org"));
        assert!(proxy.listed("PyPI.org."));
        assert!(proxy.listed("files.pythonhosted.org"));
        assert!(proxy.listed("pythonhosted.org"));
        assert!(!proxy.listed("evilpythonhosted.org"));
        assert!(!proxy.listed("pypi.org.evil.com"));
        assert!(!proxy.listed("localhost"));
        assert!(!proxy.listed("127.0.0.1"));
    }

    #[test]
    fn requests_name_their_host_and_plain_ones_go_on_in_origin_form() {
        let connect = Request::parse(b"CONNECT example.com:443 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(
            connect,
            Some(Request {
                host: "example.com".into(),
                port: 443,
                forward: None
            })
        );
        let plain = Request::parse(
            b"POST http://localhost:8080/up?a=1 HTTP/1.1\r\nHost: localhost:8080\r\n\
              Proxy-Connection: keep-alive\r\nContent-Length: 3\r\n\r\n",
        );
        let plain = plain.unwrap();
        assert_eq!((plain.host.as_str(), plain.port), ("localhost", 8080));
        let head = String::from_utf8(plain.forward.unwrap()).unwrap();
        assert!(head.starts_with("POST /up?a=1 HTTP/1.1\r\n"), "{head}");
        assert!(!head.contains("Proxy-"), "{head}");
        assert!(head.ends_with("Connection: close\r\n\r\n"), "{head}");
        let v6 = Request::parse(b"GET http://[::1]/ HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!((v6.host.as_str(), v6.port), ("::1", 80));
        // Not a proxy request, or a user name hiding the host: refused.
        assert_eq!(Request::parse(b"GET / HTTP/1.1\r\n\r\n"), None);
        assert_eq!(
            Request::parse(b"GET http://a.com@b.com/ HTTP/1.1\r\n\r\n"),
            None
        );
    }
}
