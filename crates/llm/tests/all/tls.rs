//! TLS trust: an extra CA file makes a server signed by that CA trusted; without it the same
//! server is refused. And HTTPS through an `HTTPS_PROXY` tunnels with CONNECT. The servers
//! are tiny rustls and TCP servers on 127.0.0.1.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rein_llm::{LlmError, ProviderKind, RetryPolicy, build_provider};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::support::{config, request, run};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

const REPLY: &str = r#"{"choices":[{"index":0,"message":{"role":"assistant","content":"secure hello"},"finish_reason":"stop"}]}"#;

/// Serves `connections` HTTPS connections, answering each request with `REPLY`; returns
/// the port. Handshakes the client refuses just end that connection.
fn https_server(connections: usize) -> u16 {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(fixture("server.pem"))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let key = PrivateKeyDer::from_pem_file(fixture("server.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let config = Arc::new(config);
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().take(connections) {
            let Ok(tcp) = stream else { continue };
            let conn = rustls::ServerConnection::new(config.clone()).unwrap();
            let tls = rustls::StreamOwned::new(conn, tcp);
            let _ = serve_one(tls);
        }
    });
    port
}

fn serve_one(tls: impl Read + Write) -> std::io::Result<()> {
    let mut reader = BufReader::new(tls);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        if let Some(v) = line.to_ascii_lowercase().strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        if line == "\r\n" {
            break;
        }
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let mut tls = reader.into_inner();
    write!(
        tls,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{REPLY}",
        REPLY.len()
    )?;
    tls.flush()
}

#[tokio::test]
async fn an_extra_ca_file_is_trusted() {
    let port = https_server(1);
    let mut cfg = config(
        ProviderKind::OpenAi,
        &format!("https://127.0.0.1:{port}/v1"),
    );
    cfg.network.ca_file = Some(fixture("ca.pem"));
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert_eq!(outcome.text(), "secure hello");
}

#[tokio::test]
async fn an_unknown_ca_is_refused_even_after_consulting_the_system_store() {
    let port = https_server(1);
    let mut cfg = config(
        ProviderKind::OpenAi,
        &format!("https://127.0.0.1:{port}/v1"),
    );
    cfg.retry = RetryPolicy::never();
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    match outcome.error() {
        LlmError::Connection(message) => {
            assert!(message.to_lowercase().contains("certificate"), "{message}");
        }
        other => panic!("{other:?}"),
    }
}

/// A CONNECT proxy for one tunnel; the request line it received is sent on the channel.
fn connect_proxy() -> (u16, std::sync::mpsc::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let (client, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(client.try_clone().unwrap());
        let mut request_line = String::new();
        reader.read_line(&mut request_line).unwrap();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap() == 0 || header == "\r\n" {
                break;
            }
        }
        let target = request_line
            .split_whitespace()
            .nth(1)
            .unwrap_or_default()
            .to_owned();
        tx.send(request_line.trim().to_owned()).unwrap();
        let upstream = std::net::TcpStream::connect(&target).unwrap();
        let mut client_write = client;
        client_write
            .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
            .unwrap();
        let mut upstream_read = upstream.try_clone().unwrap();
        let mut client_for_upstream = client_write.try_clone().unwrap();
        std::thread::spawn(move || std::io::copy(&mut upstream_read, &mut client_for_upstream));
        let mut upstream_write = upstream;
        let _ = std::io::copy(&mut reader, &mut upstream_write);
    });
    (port, rx)
}

#[tokio::test]
async fn an_https_proxy_tunnels_with_connect() {
    let tls_port = https_server(1);
    let (proxy_port, seen) = connect_proxy();
    let mut cfg = config(
        ProviderKind::OpenAi,
        &format!("https://127.0.0.1:{tls_port}/v1"),
    );
    cfg.network.ca_file = Some(fixture("ca.pem"));
    cfg.network.https_proxy = Some(format!("http://127.0.0.1:{proxy_port}"));
    cfg.retry = RetryPolicy::never();
    let outcome = run(&*build_provider(&cfg).unwrap(), &request("m")).await;
    assert_eq!(outcome.text(), "secure hello");
    let line = seen
        .recv_timeout(std::time::Duration::from_secs(5))
        .unwrap();
    assert!(
        line.starts_with(&format!("CONNECT 127.0.0.1:{tls_port} ")),
        "{line}"
    );
}
