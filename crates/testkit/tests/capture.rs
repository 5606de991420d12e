//! What the server records of each request, keep-alive, and waiting for requests.

use std::time::Duration;

use rein_testkit::{MockError, MockServer, Script, Turn, WireFormat};
use serde_json::json;

use crate::client::{Client, Ending, RESPONSE_TIMEOUT, openai_stream_request};

#[tokio::test]
async fn every_request_is_captured_with_headers_and_body() {
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let mut client = Client::connect(server.addr()).await;
    client
        .send_post(
            "/v1/messages?beta=true",
            &[
                ("X-Api-Key", "sk-test"),
                ("Anthropic-Version", "2023-06-01"),
            ],
            &json!({ "model": "claude-test", "stream": true, "messages": [] }),
        )
        .await;
    let response = client.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(response.ending(), Ending::Complete);

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.index, 0);
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/v1/messages?beta=true");
    assert_eq!(request.path, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some("sk-test"));
    assert_eq!(request.header("ANTHROPIC-VERSION"), Some("2023-06-01"));
    assert!(
        request
            .headers
            .iter()
            .all(|(name, _)| name == &name.to_ascii_lowercase())
    );
    assert_eq!(request.body["model"], "claude-test");
    assert_eq!(request.raw_body, request.body.to_string().into_bytes());
    assert_eq!(request.wire_format(), WireFormat::Anthropic);
    assert!(request.wants_stream());
    let responded = request.responded_at.expect("the response was written");
    assert!(responded >= request.received_at);
    assert!(request.responded_unix_nanos.unwrap() >= request.received_unix_nanos);
}

#[tokio::test]
async fn two_requests_share_one_keep_alive_connection() {
    let server = MockServer::start(
        Script::new()
            .reply(Turn::text("one"))
            .reply(Turn::text("two")),
    );
    let mut client = Client::connect(server.addr()).await;
    let first = client
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    let second = client
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    assert_eq!(first.sse_json()[1]["choices"][0]["delta"]["content"], "one");
    assert_eq!(
        second.sse_json()[1]["choices"][0]["delta"]["content"],
        "two"
    );
    let requests = server.requests();
    assert_eq!(requests[0].connection, requests[1].connection);

    let mut other = Client::connect(server.addr()).await;
    other
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    assert_ne!(server.requests()[2].connection, requests[0].connection);
}

#[tokio::test]
async fn connection_close_is_honoured() {
    let server = MockServer::start(Script::new().reply(Turn::text("bye")));
    let mut client = Client::connect(server.addr()).await;
    client
        .send_post(
            "/v1/chat/completions",
            &[("Connection", "close")],
            &openai_stream_request(),
        )
        .await;
    let response = client.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(response.ending(), Ending::Complete);
    assert_eq!(response.header("connection"), Some("close"));
    assert!(client.is_closed_by_server(RESPONSE_TIMEOUT).await);
}

#[tokio::test]
async fn a_chunked_request_body_is_decoded() {
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let mut client = Client::connect(server.addr()).await;
    client
        .send_raw(
            b"POST /v1/chat/completions HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n\
              6\r\n{\"stre\r\na\r\nam\":false}\r\n0\r\n\r\n",
        )
        .await;
    let response = client.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(response.json()["object"], "chat.completion");
    assert_eq!(server.requests()[0].body, json!({ "stream": false }));
}

#[tokio::test]
async fn an_absolute_form_target_is_recorded_as_a_proxy_would_send_it() {
    let server = MockServer::start(Script::new().reply(Turn::text("via proxy")));
    let mut client = Client::connect(server.addr()).await;
    client
        .send_post(
            "http://api.example.test/v1/chat/completions",
            &[],
            &openai_stream_request(),
        )
        .await;
    let response = client.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(response.sse_json()[0]["object"], "chat.completion.chunk");
    let request = &server.requests()[0];
    assert_eq!(
        request.target,
        "http://api.example.test/v1/chat/completions"
    );
    assert_eq!(request.path, "/v1/chat/completions");
}

#[tokio::test]
async fn waiting_for_requests_returns_them_or_says_how_many_came() {
    let server = MockServer::start(Script::new().reply(Turn::text("ok")));
    let addr = server.addr();
    let client = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut client = Client::connect(addr).await;
        client
            .post("/v1/chat/completions", &openai_stream_request())
            .await
    });
    let requests = server
        .wait_for_requests_async(1, RESPONSE_TIMEOUT)
        .await
        .unwrap();
    assert_eq!(requests.len(), 1);
    client.await.unwrap();

    let error = server
        .wait_for_requests_async(2, Duration::from_millis(50))
        .await
        .unwrap_err();
    assert!(
        matches!(
            error,
            MockError::WaitTimeout {
                wanted: 2,
                got: 1,
                ..
            }
        ),
        "{error}"
    );
    let error = server
        .wait_for_requests(3, Duration::from_millis(50))
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "waited 50ms for 3 request(s) but 1 arrived"
    );
}

#[test]
fn works_from_a_plain_test_and_blocking_waits() {
    let server = MockServer::start(Script::new().reply(Turn::text("sync")));
    let addr = server.addr();
    let client = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(addr).unwrap();
        stream
            .write_all(
                b"POST /v1/messages HTTP/1.1\r\nConnection: close\r\nContent-Length: 2\r\n\r\n{}",
            )
            .unwrap();
        let mut response = String::new();
        stream.read_to_string(&mut response).unwrap();
        response
    });
    let requests = server.wait_for_requests(1, RESPONSE_TIMEOUT).unwrap();
    assert_eq!(requests[0].path, "/v1/messages");
    let response = client.join().unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains(r#""text":"sync""#), "{response}");
}

#[test]
fn dropping_the_server_frees_its_port() {
    let server = MockServer::start(Script::new());
    let addr = server.addr();
    drop(server);
    assert!(
        std::net::TcpStream::connect(addr).is_err(),
        "nothing listens after the drop"
    );
}

#[tokio::test]
async fn routes_answer_metadata_without_using_the_script() {
    use rein_testkit::{MockOptions, Reply};
    let server = MockServer::try_start_with(
        Script::new().reply(Turn::text("the only reply")),
        MockOptions::new().context_window(8192).route(
            "POST",
            "/api/show",
            Reply::http(200, r#"{"parameters":"num_ctx 4096"}"#),
        ),
    )
    .unwrap();
    let mut client = Client::connect(server.addr()).await;
    client
        .send_raw(b"GET /props HTTP/1.1\r\nhost: x\r\n\r\n")
        .await;
    let props = client.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(props.status, 200);
    assert_eq!(props.json()["default_generation_settings"]["n_ctx"], 8192);
    let show = client.post("/api/show", &json!({"model": "m"})).await;
    assert_eq!(show.json()["parameters"], "num_ctx 4096");
    client
        .send_raw(b"GET /api/tags HTTP/1.1\r\nhost: x\r\n\r\n")
        .await;
    let unknown = client.read_response(RESPONSE_TIMEOUT).await;
    assert_eq!(unknown.status, 404);
    // The script's reply is still there for the model call.
    let answer = client
        .post("/v1/chat/completions", &openai_stream_request())
        .await;
    assert!(answer.text().contains("the only reply"));
    assert_eq!(server.requests().len(), 1, "only the model call");
    let paths: Vec<String> = server
        .metadata_requests()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect();
    assert_eq!(paths, ["GET /props", "POST /api/show", "GET /api/tags"]);
}
