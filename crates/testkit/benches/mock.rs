//! The mock server's own cost per request, so benchmarks of rein against it can tell the
//! harness's time from the mock's: one keep-alive connection, one scripted turn per iteration.

use std::{
    io::{Read, Write},
    net::TcpStream,
};

use rein_testkit::{Capture, MockOptions, MockServer, MockToolCall, Script, Turn};

fn main() {
    divan::main();
}

/// A server repeating `turn` forever, and a connection to it.
fn serve(turn: Turn) -> (MockServer, TcpStream) {
    let options = MockOptions::new().capture(Capture::CountOnly);
    let server = MockServer::try_start_with(Script::new().reply(turn).repeating(), options)
        .unwrap_or_else(|error| panic!("{error}"));
    let stream = TcpStream::connect(server.addr()).unwrap_or_else(|error| panic!("{error}"));
    stream
        .set_nodelay(true)
        .unwrap_or_else(|error| panic!("{error}"));
    (server, stream)
}

fn request(path: &str) -> Vec<u8> {
    let body = r#"{"model":"bench","stream":true,"messages":[{"role":"user","content":"hi"}]}"#;
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Sends one request and reads its chunked response to the end; returns the bytes read.
fn round_trip(stream: &mut TcpStream, request: &[u8], buffer: &mut Vec<u8>) -> usize {
    stream
        .write_all(request)
        .unwrap_or_else(|error| panic!("{error}"));
    buffer.clear();
    let mut scratch = [0_u8; 16 * 1024];
    while !buffer.ends_with(b"\r\n0\r\n\r\n") {
        let read = stream
            .read(&mut scratch)
            .unwrap_or_else(|error| panic!("{error}"));
        assert!(read > 0, "the mock closed the connection");
        buffer.extend_from_slice(&scratch[..read]);
    }
    buffer.len()
}

fn text_turn() -> Turn {
    Turn::text("").chunks((0..10).map(|piece| format!("piece {piece} of the answer ")))
}

fn tool_turn() -> Turn {
    Turn::new().tool_call(
        MockToolCall::new(
            "call_1",
            "read_file",
            r#"{"file_path":"src/main.rs","limit":200}"#,
        )
        .split_every(8),
    )
}

#[divan::bench]
fn openai_text_10_chunks(bencher: divan::Bencher) {
    let (_server, mut stream) = serve(text_turn());
    let request = request("/v1/chat/completions");
    let mut buffer = Vec::new();
    bencher.bench_local(|| round_trip(&mut stream, &request, &mut buffer));
}

#[divan::bench]
fn anthropic_text_10_chunks(bencher: divan::Bencher) {
    let (_server, mut stream) = serve(text_turn());
    let request = request("/v1/messages");
    let mut buffer = Vec::new();
    bencher.bench_local(|| round_trip(&mut stream, &request, &mut buffer));
}

#[divan::bench]
fn openai_tool_call_split(bencher: divan::Bencher) {
    let (_server, mut stream) = serve(tool_turn());
    let request = request("/v1/chat/completions");
    let mut buffer = Vec::new();
    bencher.bench_local(|| round_trip(&mut stream, &request, &mut buffer));
}
