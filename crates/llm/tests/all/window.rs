//! Asking a local server which context window it runs the model with, the way llama.cpp,
//! vLLM, LM Studio and Ollama each say it.

use std::time::{Duration, Instant};

use rein_llm::ServerWindow;
use rein_testkit::{MockOptions, MockServer, Reply, Script};
use serde_json::json;

use crate::support::openai;

async fn window(options: MockOptions, model: &str) -> (Option<ServerWindow>, MockServer) {
    let server = MockServer::try_start_with(Script::new(), options).unwrap();
    let provider = openai(&server.openai_base_url());
    (provider.context_window(model).await, server)
}

fn json_reply(value: serde_json::Value) -> Reply {
    Reply::http(200, value.to_string())
}

/// The model list a server gives at `GET /v1/models`: one entry, `owned_by` as it says.
fn listed(options: MockOptions, id: &str, owned_by: &str) -> MockOptions {
    let list =
        json!({"object": "list", "data": [{"id": id, "object": "model", "owned_by": owned_by}]});
    options.route("GET", "/v1/models", json_reply(list))
}

/// The paths the server was asked besides model calls, in order.
fn asked(server: &MockServer) -> Vec<String> {
    server
        .metadata_requests()
        .into_iter()
        .map(|r| format!("{} {}", r.method, r.path))
        .collect()
}

#[tokio::test]
async fn llama_cpp_says_n_ctx_in_props() {
    let (found, server) = window(MockOptions::new().context_window(8192), "any").await;
    let found = found.unwrap();
    assert_eq!((found.tokens, found.settled), (8192, true));
    assert_eq!(found.source, "llama.cpp /props n_ctx");
    // Asked with the key, like a model call: vLLM behind --api-key wants it.
    let props = server
        .metadata_requests()
        .into_iter()
        .find(|r| r.path == "/props")
        .unwrap();
    assert_eq!(props.header("authorization"), Some("Bearer test-key"));
    assert!(server.requests().is_empty(), "no model call was made");
}

#[tokio::test]
async fn vllm_says_max_model_len() {
    let models = json!({"object": "list", "data": [
        {"id": "Qwen/Qwen3-8B", "object": "model", "max_model_len": 32768}
    ]});
    let (found, _server) = window(
        MockOptions::new().route("GET", "/v1/models", json_reply(models)),
        "Qwen/Qwen3-8B",
    )
    .await;
    assert_eq!(found.map(|w| w.tokens), Some(32768));
}

#[tokio::test]
async fn lm_studio_says_the_loaded_length_and_guesses_before_loading() {
    let loaded = json!({"id": "devstral", "state": "loaded", "max_context_length": 131072, "loaded_context_length": 30000});
    let lm_studio = |answer| {
        listed(MockOptions::new(), "devstral", "organization_owner").route(
            "GET",
            "/api/v0/models/devstral",
            json_reply(answer),
        )
    };
    let (found, server) = window(lm_studio(loaded), "devstral").await;
    assert_eq!(found.map(|w| (w.tokens, w.settled)), Some((30000, true)));
    // Its list names LM Studio: only its own endpoint is asked.
    assert_eq!(
        asked(&server),
        ["GET /v1/models", "GET /api/v0/models/devstral"]
    );
    let cold = json!({"id": "devstral", "state": "not-loaded", "max_context_length": 131072});
    let (found, _server) = window(lm_studio(cold), "devstral").await;
    assert_eq!(found.map(|w| (w.tokens, w.settled)), Some((4096, false)));
}

#[tokio::test]
async fn ollama_says_the_loaded_context_or_num_ctx() {
    let ps = json!({"models": [{"name": "qwen2.5-coder:14b", "model": "qwen2.5-coder:14b", "context_length": 16384}]});
    let show = json!({"parameters": "num_ctx 8192", "model_info": {"qwen2.context_length": 32768}});
    let ollama = || listed(MockOptions::new(), "qwen2.5-coder:14b", "library");
    let (found, _server) = window(
        ollama().route("GET", "/api/ps", json_reply(ps)).route(
            "POST",
            "/api/show",
            json_reply(show.clone()),
        ),
        "qwen2.5-coder:14b",
    )
    .await;
    assert_eq!(found.map(|w| w.tokens), Some(16384), "loaded wins");
    let (found, server) = window(
        ollama()
            .route("GET", "/api/ps", json_reply(json!({"models": []})))
            .route("POST", "/api/show", json_reply(show)),
        "qwen2.5-coder:14b",
    )
    .await;
    assert_eq!(found.map(|w| (w.tokens, w.settled)), Some((8192, true)));
    let show = server
        .metadata_requests()
        .into_iter()
        .find(|r| r.path == "/api/show")
        .unwrap();
    assert_eq!(show.body["model"], "qwen2.5-coder:14b");
}

#[tokio::test]
async fn only_the_server_the_list_names_is_asked_and_any_other_is_asked_everything() {
    // llama.cpp's list names it: /props alone, not LM Studio's or Ollama's endpoints.
    let (found, server) = window(MockOptions::new().context_window(16384), "any").await;
    assert_eq!(found.map(|w| w.tokens), Some(16384));
    assert_eq!(asked(&server), ["GET /v1/models", "GET /props"]);
    // vLLM's list settles the window itself.
    let models = json!({"data": [{"id": "m", "owned_by": "vllm", "max_model_len": 8192}]});
    let (found, server) = window(
        MockOptions::new().route("GET", "/v1/models", json_reply(models)),
        "m",
    )
    .await;
    assert_eq!(found.map(|w| w.tokens), Some(8192));
    assert_eq!(asked(&server), ["GET /v1/models"]);
    // A list that names no server rein knows: every local server's endpoint is asked.
    let (found, server) = window(
        listed(MockOptions::new(), "m", "someone").route(
            "GET",
            "/api/ps",
            json_reply(json!({"models": [{"name": "m:latest", "context_length": 12288}]})),
        ),
        "m",
    )
    .await;
    assert_eq!(found.map(|w| w.tokens), Some(12288));
    let mut paths = asked(&server);
    paths.sort();
    assert_eq!(
        paths,
        [
            "GET /api/ps",
            "GET /api/v0/models/m",
            "GET /props",
            "GET /v1/models"
        ]
    );
}

#[tokio::test]
async fn a_model_the_list_does_not_name_is_asked_of_the_server_every_entry_names() {
    // Ollama lists two models; a typo is still Ollama's to answer.
    let list = json!({"object": "list", "data": [
        {"id": "qwen2.5-coder:latest", "object": "model", "owned_by": "library"},
        {"id": "llama3.2:3b", "object": "model", "owned_by": "library"},
    ]});
    let (_, server) = window(
        MockOptions::new()
            .route("GET", "/v1/models", json_reply(list))
            .route("GET", "/api/ps", json_reply(json!({"models": []}))),
        "qwen2.5-codr",
    )
    .await;
    let paths = asked(&server);
    assert_eq!(paths[..2], ["GET /v1/models", "GET /api/ps"], "{paths:?}");
    assert!(
        !paths
            .iter()
            .any(|p| p.contains("/props") || p.contains("/api/v0")),
        "{paths:?}"
    );
}

#[tokio::test]
async fn a_server_without_a_model_list_is_asked_nothing_more() {
    // Every local server rein knows lists its models: one that answers 404 is none of them.
    let (found, server) = window(
        MockOptions::new().route("GET", "/api/ps", json_reply(json!({"models": []}))),
        "m",
    )
    .await;
    assert_eq!(found, None);
    assert_eq!(asked(&server), ["GET /v1/models"]);
}

#[tokio::test]
async fn a_server_that_says_nothing_or_hangs_costs_little() {
    let (found, server) = window(MockOptions::new(), "m").await;
    assert_eq!(found, None);
    assert!(server.requests().is_empty());
    // One question that hangs does not lose the others' answers.
    let started = Instant::now();
    let ps = json!({"models": [{"name": "m:latest", "context_length": 2048}]});
    let (found, _server) = window(
        listed(MockOptions::new(), "m", "someone")
            .route("GET", "/props", Reply::silent())
            .route("GET", "/api/ps", json_reply(ps)),
        "m",
    )
    .await;
    assert_eq!(found.map(|w| w.tokens), Some(2048));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn nothing_is_asked_of_a_server_that_is_not_running() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    drop(listener);
    let provider = openai(&format!("http://127.0.0.1:{port}/v1"));
    assert_eq!(provider.context_window("m").await, None);
}
