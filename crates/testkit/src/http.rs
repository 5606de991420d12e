//! A small HTTP/1.1 server side: reading requests, writing response heads and chunks.
//!
//! Hand-written so the server controls every byte it sends: it can stop half-way, stall, or
//! send lines no well-behaved library would.

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The most bytes of request line and headers accepted.
pub(crate) const MAX_HEAD_BYTES: u64 = 64 * 1024;
/// The largest request body accepted.
pub(crate) const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;
/// The longest chunk-size line of a chunked body accepted.
const MAX_CHUNK_LINE_BYTES: u64 = 1024;

/// A request as read off the wire.
#[derive(Debug)]
pub(crate) struct RawRequest {
    pub(crate) method: String,
    pub(crate) target: String,
    /// Names lowercased.
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
    /// Whether the connection may carry another request after this one.
    pub(crate) keep_alive: bool,
}

/// Why no request could be read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ReadError {
    /// The connection failed or closed in the middle of a request: nobody to answer.
    #[error("connection error: {0}")]
    Io(#[from] std::io::Error),
    /// The bytes are not an HTTP/1.1 request we accept; answer with this status and close.
    #[error("{message}")]
    Bad { status: u16, message: String },
}

fn bad(status: u16, message: impl Into<String>) -> ReadError {
    ReadError::Bad {
        status,
        message: message.into(),
    }
}

/// Reads one line (up to and including `\n`), refusing lines longer than `limit`.
/// Returns `None` at a clean end of input.
async fn read_line<R: AsyncBufRead + Unpin>(
    reader: &mut R,
    limit: u64,
    what: &str,
) -> Result<Option<Vec<u8>>, ReadError> {
    let mut line = Vec::new();
    let read = (&mut *reader)
        .take(limit + 1)
        .read_until(b'\n', &mut line)
        .await?;
    if read == 0 {
        return Ok(None);
    }
    if line.last() != Some(&b'\n') {
        if u64::try_from(line.len()).unwrap_or(u64::MAX) > limit {
            return Err(bad(431, format!("{what} longer than {limit} bytes")));
        }
        return Err(ReadError::Io(std::io::ErrorKind::UnexpectedEof.into()));
    }
    line.pop();
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    Ok(Some(line))
}

/// Reads the next request. `Ok(None)` means the client closed the connection between requests.
///
/// `writer` is only used to answer `Expect: 100-continue`.
pub(crate) async fn read_request<R, W>(
    reader: &mut R,
    writer: &mut W,
) -> Result<Option<RawRequest>, ReadError>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut budget = MAX_HEAD_BYTES;
    // RFC 9112 §2.2: ignore empty lines before the request line.
    let request_line = loop {
        match read_line(reader, budget, "the request line").await? {
            None => return Ok(None),
            Some(line) if line.is_empty() => continue,
            Some(line) => break line,
        }
    };
    budget = budget.saturating_sub(u64::try_from(request_line.len()).unwrap_or(u64::MAX));
    let request_line =
        String::from_utf8(request_line).map_err(|_| bad(400, "the request line is not UTF-8"))?;
    let mut parts = request_line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(bad(400, format!("malformed request line {request_line:?}")));
    };
    if method.is_empty() || target.is_empty() {
        return Err(bad(400, format!("malformed request line {request_line:?}")));
    }
    let http_1_0 = match version {
        "HTTP/1.1" => false,
        "HTTP/1.0" => true,
        other => return Err(bad(505, format!("unsupported HTTP version {other:?}"))),
    };

    let mut headers = Vec::new();
    loop {
        let line = read_line(reader, budget, "the request head")
            .await?
            .ok_or_else(|| ReadError::Io(std::io::ErrorKind::UnexpectedEof.into()))?;
        if line.is_empty() {
            break;
        }
        budget = budget.saturating_sub(u64::try_from(line.len()).unwrap_or(u64::MAX));
        if budget == 0 {
            return Err(bad(
                431,
                format!("request head longer than {MAX_HEAD_BYTES} bytes"),
            ));
        }
        headers.push(parse_header(&line)?);
    }

    let header = |name: &'static str| header_values(&headers, name);
    let connection_tokens: Vec<String> = header("connection")
        .flat_map(|value| value.split(','))
        .map(|token| token.trim().to_ascii_lowercase())
        .collect();
    let keep_alive = if http_1_0 {
        connection_tokens.iter().any(|token| token == "keep-alive")
    } else {
        !connection_tokens.iter().any(|token| token == "close")
    };
    let chunked = match header("transfer-encoding").last() {
        None => false,
        Some(coding) if coding.to_ascii_lowercase().ends_with("chunked") => true,
        Some(other) => return Err(bad(501, format!("unsupported transfer-encoding {other:?}"))),
    };
    let content_length = content_length(header("content-length"))?;
    if header("expect").any(|value| value.eq_ignore_ascii_case("100-continue")) {
        writer.write_all(b"HTTP/1.1 100 Continue\r\n\r\n").await?;
        writer.flush().await?;
    }
    let body = if chunked {
        read_chunked_body(reader).await?
    } else if let Some(length) = content_length {
        if length > MAX_BODY_BYTES {
            return Err(bad(
                413,
                format!("body of {length} bytes is over {MAX_BODY_BYTES}"),
            ));
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).await?;
        body
    } else {
        Vec::new()
    };
    Ok(Some(RawRequest {
        method: method.to_owned(),
        target: target.to_owned(),
        headers,
        body,
        keep_alive,
    }))
}

fn header_values<'a>(
    headers: &'a [(String, String)],
    name: &'a str,
) -> impl Iterator<Item = &'a str> {
    headers
        .iter()
        .filter(move |(key, _)| key == name)
        .map(|(_, value)| value.as_str())
}

fn parse_header(line: &[u8]) -> Result<(String, String), ReadError> {
    let text = std::str::from_utf8(line).map_err(|_| bad(400, "a header is not UTF-8"))?;
    if text.starts_with([' ', '\t']) {
        return Err(bad(400, "folded header lines are not accepted"));
    }
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| bad(400, format!("malformed header line {text:?}")))?;
    if name.is_empty() || name.contains([' ', '\t']) {
        return Err(bad(400, format!("malformed header name {name:?}")));
    }
    Ok((name.to_ascii_lowercase(), value.trim().to_owned()))
}

fn content_length<'a>(values: impl Iterator<Item = &'a str>) -> Result<Option<usize>, ReadError> {
    let mut found: Option<usize> = None;
    for value in values.flat_map(|value| value.split(',')) {
        let length: usize = value
            .trim()
            .parse()
            .map_err(|_| bad(400, format!("bad content-length {value:?}")))?;
        if found.is_some_and(|earlier| earlier != length) {
            return Err(bad(400, "conflicting content-length headers"));
        }
        found = Some(length);
    }
    Ok(found)
}

async fn read_chunked_body<R: AsyncBufRead + Unpin>(reader: &mut R) -> Result<Vec<u8>, ReadError> {
    let eof = || ReadError::Io(std::io::ErrorKind::UnexpectedEof.into());
    let mut body = Vec::new();
    loop {
        let line = read_line(reader, MAX_CHUNK_LINE_BYTES, "a chunk-size line")
            .await?
            .ok_or_else(eof)?;
        let line = String::from_utf8(line).map_err(|_| bad(400, "a chunk size is not UTF-8"))?;
        let size_text = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| bad(400, format!("bad chunk size {size_text:?}")))?;
        if size == 0 {
            // Trailers, if any, end with an empty line; they are read and dropped.
            loop {
                let trailer = read_line(reader, MAX_HEAD_BYTES, "a trailer")
                    .await?
                    .ok_or_else(eof)?;
                if trailer.is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len().saturating_add(size) > MAX_BODY_BYTES {
            return Err(bad(
                413,
                format!("chunked body is over {MAX_BODY_BYTES} bytes"),
            ));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..]).await?;
        let mut crlf = [0; 2];
        reader.read_exact(&mut crlf).await?;
        if &crlf != b"\r\n" {
            return Err(bad(400, "a chunk is not followed by CRLF"));
        }
    }
}

/// The path of a request target: origin form as is, absolute form (`http://host/p?q`)
/// without scheme and authority; the query is dropped.
pub(crate) fn target_path(target: &str) -> String {
    let origin = match target.split_once("://") {
        Some((_, rest)) => match rest.find('/') {
            Some(slash) => &rest[slash..],
            None => "/",
        },
        None => target,
    };
    let path = origin.split(['?', '#']).next().unwrap_or_default();
    path.to_owned()
}

/// The reason phrase of a status code.
pub(crate) fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        413 => "Content Too Large",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        505 => "HTTP Version Not Supported",
        529 => "Site Overloaded",
        _ => "Unknown",
    }
}

/// Checks that a scripted header cannot break the response framing.
pub(crate) fn check_header(name: &str, value: &str) -> Result<(), String> {
    let name_ok = !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_graphic() && byte != b':');
    if !name_ok {
        return Err(format!("invalid header name {name:?}"));
    }
    if value.contains(['\r', '\n']) {
        return Err(format!("header {name:?} has a line break in its value"));
    }
    Ok(())
}

/// Whether `headers` already set `name` (any case).
pub(crate) fn has_header(headers: &[(String, String)], name: &str) -> bool {
    headers
        .iter()
        .any(|(key, _)| key.eq_ignore_ascii_case(name))
}

/// The status line and headers, ending with the blank line.
pub(crate) fn response_head(status: u16, headers: &[(String, String)]) -> Vec<u8> {
    let mut head = format!("HTTP/1.1 {status} {}\r\n", reason_phrase(status));
    for (name, value) in headers {
        head.push_str(name);
        head.push_str(": ");
        head.push_str(value);
        head.push_str("\r\n");
    }
    head.push_str("\r\n");
    head.into_bytes()
}

/// `data` framed as one HTTP chunk.
pub(crate) fn chunk(data: &[u8]) -> Vec<u8> {
    let mut framed = format!("{:x}\r\n", data.len()).into_bytes();
    framed.extend_from_slice(data);
    framed.extend_from_slice(b"\r\n");
    framed
}

/// The zero-length chunk that ends a chunked body.
pub(crate) const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    async fn parse(bytes: &[u8]) -> (Result<Option<RawRequest>, ReadError>, Vec<u8>) {
        let mut reader = bytes;
        let mut written = Vec::new();
        let result = read_request(&mut reader, &mut written).await;
        (result, written)
    }

    fn status_of(result: Result<Option<RawRequest>, ReadError>) -> u16 {
        match result {
            Err(ReadError::Bad { status, .. }) => status,
            other => panic!("expected a bad request, got {other:?}"),
        }
    }

    #[tokio::test]
    async fn reads_a_content_length_body_and_lowercases_names() {
        let (result, _) = parse(
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nX-Api-Key: k\r\n\r\n{}",
        )
        .await;
        let request = result.unwrap().unwrap();
        assert_eq!(request.method, "POST");
        assert_eq!(request.target, "/v1/messages");
        assert_eq!(request.body, b"{}");
        assert!(request.keep_alive);
        assert!(
            request
                .headers
                .contains(&("x-api-key".to_owned(), "k".to_owned()))
        );
    }

    #[tokio::test]
    async fn reads_a_chunked_body_with_extensions_and_trailers() {
        let (result, _) = parse(
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3;ext=1\r\n{\"a\r\n4\r\n\":1}\r\n0\r\nX-T: y\r\n\r\n",
        )
        .await;
        assert_eq!(result.unwrap().unwrap().body, br#"{"a":1}"#);
    }

    #[tokio::test]
    async fn answers_expect_continue() {
        let (result, written) =
            parse(b"POST / HTTP/1.1\r\nExpect: 100-continue\r\nContent-Length: 1\r\n\r\nx").await;
        assert_eq!(result.unwrap().unwrap().body, b"x");
        assert_eq!(written, b"HTTP/1.1 100 Continue\r\n\r\n");
    }

    #[tokio::test]
    async fn a_closed_connection_is_not_an_error_between_requests() {
        let (result, _) = parse(b"").await;
        assert!(result.unwrap().is_none());
        let (result, _) = parse(b"POST / HTTP/1.1\r\nContent-Len").await;
        assert!(matches!(result, Err(ReadError::Io(_))), "{result:?}");
    }

    #[tokio::test]
    async fn bad_requests_get_a_status_not_a_panic() {
        assert_eq!(status_of(parse(b"GARBAGE\r\n\r\n").await.0), 400);
        assert_eq!(status_of(parse(b"GET / HTTP/2.0\r\n\r\n").await.0), 505);
        assert_eq!(
            status_of(parse(b"GET / HTTP/1.1\r\nno colon\r\n\r\n").await.0),
            400
        );
        assert_eq!(
            status_of(parse(b"GET / HTTP/1.1\r\n folded\r\n\r\n").await.0),
            400
        );
        assert_eq!(
            status_of(
                parse(b"POST / HTTP/1.1\r\nContent-Length: nope\r\n\r\n")
                    .await
                    .0
            ),
            400
        );
        assert_eq!(
            status_of(
                parse(b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n")
                    .await
                    .0
            ),
            400
        );
        assert_eq!(
            status_of(
                parse(b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
                    .await
                    .0
            ),
            400
        );
        assert_eq!(
            status_of(
                parse(b"POST / HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n")
                    .await
                    .0
            ),
            413
        );
        let long_header = format!("GET / HTTP/1.1\r\nx: {}\r\n\r\n", "a".repeat(70_000));
        assert_eq!(status_of(parse(long_header.as_bytes()).await.0), 431);
    }

    #[tokio::test]
    async fn connection_close_and_http_1_0_end_keep_alive() {
        let (result, _) = parse(b"GET / HTTP/1.1\r\nConnection: close\r\n\r\n").await;
        assert!(!result.unwrap().unwrap().keep_alive);
        let (result, _) = parse(b"GET / HTTP/1.0\r\n\r\n").await;
        assert!(!result.unwrap().unwrap().keep_alive);
        let (result, _) = parse(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").await;
        assert!(result.unwrap().unwrap().keep_alive);
    }

    #[test]
    fn absolute_targets_give_their_path() {
        assert_eq!(target_path("/v1/messages?beta=true"), "/v1/messages");
        assert_eq!(
            target_path("http://api.example:8080/v1/chat/completions"),
            "/v1/chat/completions"
        );
        assert_eq!(target_path("http://api.example"), "/");
    }

    #[test]
    fn scripted_headers_cannot_inject_lines() {
        assert!(check_header("retry-after", "1").is_ok());
        assert!(check_header("x", "a\r\nevil: 1").is_err());
        assert!(check_header("bad name", "1").is_err());
        assert!(check_header("", "1").is_err());
    }
}
