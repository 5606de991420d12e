//! A tiny HTTP/1.1 client over a plain `TcpStream`, so tests see the bytes the server sends.

use std::{net::SocketAddr, time::Duration};

use serde_json::Value;
use tokio::{
    io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader},
    net::TcpStream,
};

/// How long a test waits for a response that should come.
pub(crate) const RESPONSE_TIMEOUT: Duration = Duration::from_secs(10);

/// How a response's body ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ending {
    /// Fully framed (content-length reached, or the last chunk arrived).
    Complete,
    /// The server closed the connection before the end of the body.
    Closed,
    /// Nothing more arrived within the wait.
    TimedOut,
}

/// One response as read off the socket.
#[derive(Debug, Default)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    /// The body with any chunked framing removed.
    pub(crate) body: Vec<u8>,
    /// The body's HTTP chunks, one per write the server made for it.
    pub(crate) chunks: Vec<Vec<u8>>,
    pub(crate) ending: Option<Ending>,
}

impl Response {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(key, _)| key.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }

    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap()
    }

    pub(crate) fn ending(&self) -> Ending {
        self.ending.unwrap()
    }

    /// The SSE events of the body: (event name, data), split on blank lines.
    pub(crate) fn sse(&self) -> Vec<(Option<String>, String)> {
        let text = self.text();
        assert!(
            text.is_empty() || text.ends_with("\n\n"),
            "the stream does not end on an event boundary: {text:?}"
        );
        text.split_terminator("\n\n")
            .map(|frame| {
                let mut name = None;
                let mut data = Vec::new();
                for line in frame.lines() {
                    if let Some(value) = line.strip_prefix("event: ") {
                        name = Some(value.to_owned());
                    } else if let Some(value) = line.strip_prefix("data: ") {
                        data.push(value);
                    } else {
                        panic!("unexpected SSE line {line:?} in {text:?}");
                    }
                }
                (name, data.join("\n"))
            })
            .collect()
    }

    /// The data of each SSE event parsed as JSON (`[DONE]` excluded).
    pub(crate) fn sse_json(&self) -> Vec<Value> {
        self.sse()
            .into_iter()
            .filter(|(_, data)| data != "[DONE]")
            .map(|(_, data)| serde_json::from_str(&data).unwrap())
            .collect()
    }
}

/// One keep-alive connection.
pub(crate) struct Client {
    stream: BufReader<TcpStream>,
}

impl Client {
    pub(crate) async fn connect(addr: SocketAddr) -> Self {
        let stream = TcpStream::connect(addr).await.unwrap();
        Self {
            stream: BufReader::new(stream),
        }
    }

    pub(crate) async fn send_raw(&mut self, bytes: &[u8]) {
        self.stream.get_mut().write_all(bytes).await.unwrap();
    }

    /// Sends a JSON POST with the given extra headers.
    pub(crate) async fn send_post(&mut self, path: &str, headers: &[(&str, &str)], body: &Value) {
        let body = body.to_string();
        let mut request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (name, value) in headers {
            request.push_str(&format!("{name}: {value}\r\n"));
        }
        request.push_str("\r\n");
        request.push_str(&body);
        self.send_raw(request.as_bytes()).await;
    }

    pub(crate) async fn post(&mut self, path: &str, body: &Value) -> Response {
        self.send_post(path, &[], body).await;
        self.read_response(RESPONSE_TIMEOUT).await
    }

    /// Reads one response, giving up (with what arrived) after `wait`.
    pub(crate) async fn read_response(&mut self, wait: Duration) -> Response {
        let mut response = Response::default();
        let ending = match tokio::time::timeout(wait, self.read_into(&mut response)).await {
            Ok(ending) => ending,
            Err(_) => Ending::TimedOut,
        };
        response.ending = Some(ending);
        response
    }

    /// Whether the server has closed the connection (reads EOF within `wait`).
    pub(crate) async fn is_closed_by_server(&mut self, wait: Duration) -> bool {
        let mut byte = [0_u8; 1];
        matches!(
            tokio::time::timeout(wait, self.stream.read(&mut byte)).await,
            Ok(Ok(0) | Err(_))
        )
    }

    async fn line(&mut self) -> Option<String> {
        let mut line = String::new();
        let read = self.stream.read_line(&mut line).await.ok()?;
        if read == 0 || !line.ends_with("\r\n") {
            return None;
        }
        line.truncate(line.len() - 2);
        Some(line)
    }

    /// Reads the status line and headers; `Closed` if the connection ends first.
    async fn read_head(&mut self, response: &mut Response) -> Result<(), Ending> {
        let status_line = self.line().await.ok_or(Ending::Closed)?;
        response.status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
        loop {
            let line = self.line().await.ok_or(Ending::Closed)?;
            if line.is_empty() {
                return Ok(());
            }
            let (name, value) = line.split_once(':').unwrap();
            response
                .headers
                .push((name.to_ascii_lowercase(), value.trim().to_owned()));
        }
    }

    /// Reads one HTTP chunk into the body; `Ok(false)` for the last (empty) chunk.
    async fn read_chunk(&mut self, response: &mut Response) -> Result<bool, Ending> {
        let size_line = self.line().await.ok_or(Ending::Closed)?;
        let size = usize::from_str_radix(&size_line, 16).unwrap();
        if size == 0 {
            self.line().await.ok_or(Ending::Closed)?;
            return Ok(false);
        }
        let mut data = vec![0; size + 2];
        self.stream
            .read_exact(&mut data)
            .await
            .map_err(|_| Ending::Closed)?;
        data.truncate(size);
        response.body.extend_from_slice(&data);
        response.chunks.push(data);
        Ok(true)
    }

    /// Reads body bytes until the body holds `length` bytes.
    async fn read_body_to(&mut self, response: &mut Response, length: usize) -> Result<(), Ending> {
        while response.body.len() < length {
            let mut buffer = vec![0; (length - response.body.len()).min(8192)];
            match self.stream.read(&mut buffer).await {
                Ok(0) | Err(_) => return Err(Ending::Closed),
                Ok(read) => response.body.extend_from_slice(&buffer[..read]),
            }
        }
        Ok(())
    }

    fn is_chunked(response: &Response) -> bool {
        response.header("transfer-encoding") == Some("chunked")
    }

    fn content_length(response: &Response) -> usize {
        response
            .header("content-length")
            .map_or(0, |value| value.parse().unwrap())
    }

    async fn read_into(&mut self, response: &mut Response) -> Ending {
        if let Err(ending) = self.read_head(response).await {
            return ending;
        }
        if Self::is_chunked(response) {
            loop {
                match self.read_chunk(response).await {
                    Ok(true) => {}
                    Ok(false) => return Ending::Complete,
                    Err(ending) => return ending,
                }
            }
        }
        let length = Self::content_length(response);
        match self.read_body_to(response, length).await {
            Ok(()) => Ending::Complete,
            Err(ending) => ending,
        }
    }

    /// Reads the head and the first `parts` of the body (chunks when chunked, else bytes),
    /// however long that takes (up to [`RESPONSE_TIMEOUT`]); for responses that then stall.
    pub(crate) async fn read_first(&mut self, parts: usize) -> Response {
        let mut response = Response::default();
        let read = async {
            self.read_head(&mut response).await?;
            if Self::is_chunked(&response) {
                for _ in 0..parts {
                    self.read_chunk(&mut response).await?;
                }
                Ok(())
            } else {
                self.read_body_to(&mut response, parts).await
            }
        };
        let result: Result<(), Ending> = tokio::time::timeout(RESPONSE_TIMEOUT, read)
            .await
            .unwrap_or_else(|_| panic!("the first {parts} part(s) did not come"));
        result.unwrap_or_else(|ending| panic!("the response ended early: {ending:?}"));
        response
    }

    /// Whether any byte arrives within `wait` (false when the connection just stays silent).
    pub(crate) async fn gets_more_within(&mut self, wait: Duration) -> bool {
        let mut byte = [0_u8; 1];
        matches!(
            tokio::time::timeout(wait, self.stream.read(&mut byte)).await,
            Ok(Ok(1))
        )
    }
}

/// A streaming OpenAI request body.
pub(crate) fn openai_stream_request() -> Value {
    serde_json::json!({
        "model": "gpt-test",
        "stream": true,
        "messages": [{ "role": "user", "content": "hi" }],
    })
}

/// A streaming Anthropic request body.
pub(crate) fn anthropic_stream_request() -> Value {
    serde_json::json!({
        "model": "claude-test",
        "stream": true,
        "max_tokens": 100,
        "messages": [{ "role": "user", "content": "hi" }],
    })
}
