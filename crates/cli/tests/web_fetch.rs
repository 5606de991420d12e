//! web_fetch against a real HTTP server on 127.0.0.1 (a thread of this test): pages become
//! Markdown, loopback is reached only when a rule names the host, big pages are cut and
//! saved, hanging servers time out, new hosts are asked about, credentials never leave.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use rein_testkit::{MockServer, MockToolCall, Script, Turn};
use serde_json::{Value, json};

use crate::support::{Env, final_json, run, stderr};

const PAGE: &str = "<!doctype html><html><head><title>T</title><style>body{}</style>\
    <script>var secret = 1;</script></head><body><h1>Release notes</h1>\
    <p>See the <a href=\"https://docs.rs/x\">docs</a> and run <code>cargo test</code>.</p>\
    <ul><li>first</li><li>second</li></ul></body></html>";

/// A small HTTP server: each request's head is recorded; the path picks the answer.
struct Site {
    port: u16,
    heads: Arc<Mutex<Vec<String>>>,
}

impl Site {
    fn start() -> Site {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let heads = Arc::new(Mutex::new(Vec::new()));
        let recorded = Arc::clone(&heads);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let recorded = Arc::clone(&recorded);
                std::thread::spawn(move || serve(stream, port, &recorded));
            }
        });
        Site { port, heads }
    }

    fn url(&self, host: &str, path: &str) -> String {
        format!("http://{host}:{}{path}", self.port)
    }

    fn heads(&self) -> Vec<String> {
        self.heads.lock().unwrap().clone()
    }

    fn requested(&self, path: &str) -> bool {
        self.heads()
            .iter()
            .any(|h| h.starts_with(&format!("GET {path} ")))
    }
}

fn serve(stream: TcpStream, port: u16, recorded: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut head = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        head.push_str(&line);
    }
    recorded.lock().unwrap().push(head.clone());
    let path = head.split(' ').nth(1).unwrap_or("/").to_owned();
    let mut stream = stream;
    let (status, extra, content_type, body): (&str, String, &str, Vec<u8>) = match path.as_str() {
        "/page" => (
            "200 OK",
            String::new(),
            "text/html; charset=utf-8",
            PAGE.into(),
        ),
        "/to-loopback" => (
            "302 Found",
            format!("Location: http://127.0.0.1:{port}/secret\r\n"),
            "text/plain",
            Vec::new(),
        ),
        "/cookie" => (
            "302 Found",
            "Set-Cookie: session=s3cr3t; Path=/\r\nLocation: /echo\r\n".to_owned(),
            "text/plain",
            Vec::new(),
        ),
        "/big" => {
            let line = "All work and no play makes a dull page, line after line after line.\n";
            let body = line.repeat(10_000_000 / line.len() + 1);
            ("200 OK", String::new(), "text/plain", body.into_bytes())
        }
        "/hang" => {
            // Never answers; the connection stays open until rein gives up.
            let mut buf = [0u8; 1];
            let _ = std::io::Read::read(&mut reader, &mut buf);
            return;
        }
        _ => (
            "200 OK",
            String::new(),
            "text/plain",
            b"plain answer".to_vec(),
        ),
    };
    let _ = write!(
        stream,
        "HTTP/1.1 {status}\r\n{extra}Content-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = stream.write_all(&body);
}

/// A model that fetches `url` (with `extra` arguments) once, then stops.
fn fetching_model(url: &str, extra: Value) -> MockServer {
    let mut args = json!({ "url": url });
    if let (Some(args), Some(extra)) = (args.as_object_mut(), extra.as_object()) {
        args.extend(extra.clone());
    }
    MockServer::start(
        Script::new()
            .reply(Turn::new().tool_call(MockToolCall::new("w1", "web_fetch", args.to_string())))
            .reply(Turn::text("Done.")),
    )
}

/// The web_fetch result the model got back.
fn fetched(server: &MockServer) -> String {
    let requests = server.requests();
    let last = requests[1].body["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool", "{last}");
    last["content"].as_str().unwrap().to_owned()
}

#[test]
fn a_page_reaches_the_model_as_markdown_when_a_rule_names_its_host() {
    let env = Env::new();
    let site = Site::start();
    let server = fetching_model(&site.url("127.0.0.1", "/page"), json!({}));
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read the notes",
        "--output-format",
        "stream-json",
        "--allow",
        "web_fetch(domain:127.0.0.1)",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let result = fetched(&server);
    assert!(result.contains("# Release notes"), "{result}");
    assert!(result.contains("[docs](https://docs.rs/x)"), "{result}");
    assert!(result.contains("`cargo test`"), "{result}");
    assert!(
        !result.contains("var secret") && !result.contains("<p>"),
        "{result}"
    );
    // The stream carries the page's facts for a front-end.
    let text = String::from_utf8_lossy(&out.stdout);
    let display = text
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| {
            let found = v
                .pointer("/display")
                .or_else(|| v.pointer("/result/display"))?;
            (found["kind"] == "web_page").then(|| found.clone())
        })
        .unwrap_or_else(|| panic!("no web_page display in {text}"));
    assert_eq!(display["status"], 200, "{display}");
    assert!(
        display["content_type"]
            .as_str()
            .unwrap()
            .starts_with("text/html")
    );
}

#[test]
fn an_unknown_host_is_asked_about_and_headless_runs_deny_it() {
    let env = Env::new();
    let site = Site::start();
    let url = site.url("127.0.0.1", "/page");
    let server = fetching_model(&url, json!({}));
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "read", "--output-format", "json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let report = final_json(&out);
    let denials = report["permission_denials"].as_array().unwrap();
    assert_eq!(denials.len(), 1, "{report}");
    assert_eq!(denials[0]["tool"], "web_fetch");
    assert_eq!(denials[0]["arguments"]["url"], url.as_str());
    assert!(
        fetched(&server).contains("web_fetch(domain:127.0.0.1)"),
        "the model is told which rule would allow it: {}",
        fetched(&server)
    );
    assert!(site.heads().is_empty(), "nothing was fetched");
}

#[test]
fn loopback_is_refused_without_a_rule_even_in_yolo_mode_and_through_a_redirect() {
    let env = Env::new();
    let site = Site::start();
    // Named by a rule: localhost may be reached; its redirect to 127.0.0.1 is judged afresh.
    let server = fetching_model(&site.url("localhost", "/to-loopback"), json!({}));
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read",
        "--permission-mode",
        "yolo",
        "--allow",
        "web_fetch(domain:localhost)",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let result = fetched(&server);
    assert!(result.contains("loopback"), "{result}");
    assert!(result.contains("web_fetch(domain:127.0.0.1)"), "{result}");
    assert!(site.requested("/to-loopback"), "{:?}", site.heads());
    assert!(!site.requested("/secret"), "{:?}", site.heads());

    // Without a rule, the loopback address itself is refused.
    let env = Env::new();
    let server = fetching_model(&site.url("127.0.0.1", "/page"), json!({}));
    let before = site.heads().len();
    let out = run(env
        .rein_openai(&server)
        .args(["-p", "read", "--permission-mode", "yolo"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        fetched(&server).contains("loopback"),
        "{}",
        fetched(&server)
    );
    assert_eq!(site.heads().len(), before, "nothing was fetched");
}

#[test]
fn a_ten_megabyte_page_is_cut_and_the_rest_saved() {
    let env = Env::new();
    let site = Site::start();
    let server = fetching_model(&site.url("127.0.0.1", "/big"), json!({}));
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read",
        "--allow",
        "web_fetch(domain:127.0.0.1)",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let result = fetched(&server);
    assert!(
        result.len() < 40_000,
        "{} chars reached the model",
        result.len()
    );
    let start = result
        .find("file_path=\"")
        .unwrap_or_else(|| panic!("no saved file named: {result}"))
        + "file_path=\"".len();
    let saved = &result[start..start + result[start..].find('"').unwrap()];
    assert!(saved.starts_with(env.rein_home.join("tool-output").to_str().unwrap()));
    let whole = std::fs::read_to_string(saved).unwrap();
    assert!(whole.len() > 8_000_000, "{} bytes saved", whole.len());
    assert!(
        whole.contains("only its start was downloaded"),
        "the cut is said"
    );
}

#[test]
fn a_hanging_server_times_out() {
    let env = Env::new();
    let site = Site::start();
    let server = fetching_model(&site.url("127.0.0.1", "/hang"), json!({ "timeout": 1 }));
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read",
        "--allow",
        "web_fetch(domain:127.0.0.1)",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let result = fetched(&server);
    assert!(result.contains("within 1 s"), "{result}");
}

#[test]
fn no_credentials_leave_with_a_fetch() {
    let env = Env::new();
    let site = Site::start();
    let server = fetching_model(&site.url("127.0.0.1", "/cookie"), json!({}));
    let out = run(env
        .rein_openai(&server)
        .env("ANTHROPIC_API_KEY", "sk-ant-never-sent")
        .env("REIN_API_KEY", "sk-rein-never-sent")
        .args(["-p", "read", "--allow", "web_fetch(domain:127.0.0.1)"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        fetched(&server).contains("plain answer"),
        "{}",
        fetched(&server)
    );
    let heads = site.heads();
    assert_eq!(heads.len(), 2, "{heads:?}");
    for head in &heads {
        let lower = head.to_ascii_lowercase();
        assert!(!lower.contains("authorization:"), "{head}");
        assert!(
            !lower.contains("\ncookie:"),
            "the cookie set was not sent back: {head}"
        );
        assert!(
            !head.contains("never-sent") && !head.contains("sk-test"),
            "{head}"
        );
    }

    // A URL carrying credentials is refused before anything is sent.
    let env = Env::new();
    let server = fetching_model(
        &format!("http://me:pw@127.0.0.1:{}/page", site.port),
        json!({}),
    );
    let out = run(env.rein_openai(&server).args([
        "-p",
        "read",
        "--allow",
        "web_fetch(domain:127.0.0.1)",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        fetched(&server).contains("sends no credentials"),
        "{}",
        fetched(&server)
    );
    assert_eq!(site.heads().len(), 2);
}
