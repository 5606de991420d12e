//! The server: a background thread with its own tokio runtime, accepting on 127.0.0.1.

use std::{
    fmt,
    net::SocketAddr,
    sync::{Arc, atomic::AtomicU64, atomic::Ordering},
    thread::JoinHandle,
    time::Duration,
};

use parking_lot::Mutex;
use tokio::{net::TcpListener, sync::oneshot};

use crate::{
    Capture, CapturedRequest, MockError, Reply, Script, capture::RequestLog,
    connection::serve_connection,
};

/// Called with each request once its response has been fully written.
type ResponseHook = Arc<dyn Fn(&CapturedRequest) + Send + Sync>;

/// How to run a [`MockServer`] beyond its script.
#[derive(Clone, Default)]
pub struct MockOptions {
    port: u16,
    capture: Capture,
    on_response: Option<ResponseHook>,
    on_metadata: Option<ResponseHook>,
    routes: Vec<Route>,
}

/// A fixed answer to one method and path, outside the script.
#[derive(Debug, Clone)]
pub(crate) struct Route {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) reply: Reply,
}

impl MockOptions {
    /// The defaults: a free port, every request kept, no hook.
    pub fn new() -> Self {
        Self::default()
    }

    /// Listens on this port of 127.0.0.1 (0, the default, picks a free one).
    pub fn port(mut self, port: u16) -> Self {
        self.port = port;
        self
    }

    /// What to keep of each request.
    pub fn capture(mut self, capture: Capture) -> Self {
        self.capture = capture;
        self
    }

    /// Calls `hook` (on the server's thread) with each model call once its response has been
    /// fully written, or cut on purpose; not for stalled responses, clients that went away, or
    /// metadata requests (see [`MockOptions::route`]).
    pub fn on_response(mut self, hook: impl Fn(&CapturedRequest) + Send + Sync + 'static) -> Self {
        self.on_response = Some(Arc::new(hook));
        self
    }

    /// Calls `hook` (on the server's thread) with each metadata request (see
    /// [`MockOptions::route`]) once its answer has been written: benchmarks count the
    /// questions a client asks besides its model calls.
    pub fn on_metadata(mut self, hook: impl Fn(&CapturedRequest) + Send + Sync + 'static) -> Self {
        self.on_metadata = Some(Arc::new(hook));
        self
    }

    /// Answers `method path` (`GET /props`) with `reply` every time, without using a reply of
    /// the script: a server's metadata, asked besides the model calls. Such requests are kept
    /// apart from the model calls (see [`MockServer::metadata_requests`]), as are requests
    /// other than POST that no route answers, which get 404.
    pub fn route(
        mut self,
        method: impl Into<String>,
        path: impl Into<String>,
        reply: impl Into<Reply>,
    ) -> Self {
        self.routes.push(Route {
            method: method.into(),
            path: path.into(),
            reply: reply.into(),
        });
        self
    }

    /// Lists `models` at `GET /v1/models` as a LiteLLM proxy does: each alias with its
    /// `max_input_tokens` and prices per token (`input_cost_per_token`,
    /// `output_cost_per_token`, `cache_read_input_token_cost`).
    pub fn litellm_models(self, models: &[ListedModel<'_>]) -> Self {
        let data: Vec<serde_json::Value> = models
            .iter()
            .map(|m| {
                serde_json::json!({
                    "id": m.id, "object": "model", "owned_by": "openai",
                    "max_input_tokens": m.window,
                    "input_cost_per_token": m.input_per_mtok / 1e6,
                    "output_cost_per_token": m.output_per_mtok / 1e6,
                    "cache_read_input_token_cost": m.cached_per_mtok / 1e6,
                })
            })
            .collect();
        let list = serde_json::json!({"object": "list", "data": data});
        self.route("GET", "/v1/models", Reply::http(200, list.to_string()))
    }

    /// Lists `models` at `GET /v1/models` as OpenRouter does: `context_length`, and
    /// `pricing` as strings of USD per token (`prompt`, `completion`, `input_cache_read`).
    pub fn openrouter_models(self, models: &[ListedModel<'_>]) -> Self {
        let data: Vec<serde_json::Value> = models
            .iter()
            .map(|m| {
                serde_json::json!({
                    "id": m.id, "name": m.id, "context_length": m.window,
                    "pricing": {
                        "prompt": format!("{}", m.input_per_mtok / 1e6),
                        "completion": format!("{}", m.output_per_mtok / 1e6),
                        "input_cache_read": format!("{}", m.cached_per_mtok / 1e6),
                    },
                })
            })
            .collect();
        let list = serde_json::json!({"data": data});
        self.route("GET", "/v1/models", Reply::http(200, list.to_string()))
    }

    /// Says the model runs with a window of `tokens`, as llama.cpp's server does: `GET /props`
    /// gives it (`default_generation_settings.n_ctx`), and `GET /v1/models` lists the one
    /// model it loaded, `owned_by` llama.cpp.
    pub fn context_window(self, tokens: u64) -> Self {
        let props = serde_json::json!({
            "default_generation_settings": { "n_ctx": tokens },
            "total_slots": 1,
        });
        let list = serde_json::json!({"object": "list", "data": [{
            "id": "model.gguf",
            "object": "model",
            "owned_by": "llamacpp",
            "meta": { "n_ctx_train": tokens.max(131_072) },
        }]});
        self.route("GET", "/props", Reply::http(200, props.to_string()))
            .route("GET", "/v1/models", Reply::http(200, list.to_string()))
    }
}

impl fmt::Debug for MockOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockOptions")
            .field("port", &self.port)
            .field("capture", &self.capture)
            .field("on_response", &self.on_response.as_ref().map(|_| ".."))
            .field("on_metadata", &self.on_metadata.as_ref().map(|_| ".."))
            .field("routes", &self.routes)
            .finish()
    }
}

/// The replies not served yet.
#[derive(Debug)]
pub(crate) struct ScriptCursor {
    replies: Vec<Reply>,
    next: usize,
    repeat: bool,
}

impl ScriptCursor {
    pub(crate) fn next_reply(&mut self) -> Option<Reply> {
        if self.next >= self.replies.len() {
            if !self.repeat || self.replies.is_empty() {
                return None;
            }
            self.next = 0;
        }
        let reply = self.replies.get(self.next).cloned();
        self.next += 1;
        reply
    }
}

/// What every connection shares.
pub(crate) struct Shared {
    pub(crate) script: Mutex<ScriptCursor>,
    pub(crate) log: Arc<RequestLog>,
    /// Requests a route answered, and others that are not model calls.
    pub(crate) metadata_log: Arc<RequestLog>,
    pub(crate) routes: Vec<Route>,
    pub(crate) on_response: Option<ResponseHook>,
    pub(crate) on_metadata: Option<ResponseHook>,
    connections: AtomicU64,
}

/// A mock model server on 127.0.0.1, serving a [`Script`]; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    log: Arc<RequestLog>,
    metadata_log: Arc<RequestLog>,
    stop: Option<oneshot::Sender<()>>,
    thread: Option<JoinHandle<()>>,
}

impl fmt::Debug for MockServer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MockServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl MockServer {
    /// Starts serving `script` on a free port.
    ///
    /// # Panics
    /// When no port can be bound or no thread started: a test cannot go on without its server.
    pub fn start(script: Script) -> Self {
        match Self::try_start(script) {
            Ok(server) => server,
            Err(error) => panic!("the mock model server did not start: {error}"),
        }
    }

    /// Starts serving `script` on a free port, or says why it could not.
    pub fn try_start(script: Script) -> Result<Self, MockError> {
        Self::try_start_with(script, MockOptions::new())
    }

    /// Starts serving `script` as `options` say.
    pub fn try_start_with(script: Script, options: MockOptions) -> Result<Self, MockError> {
        let listener =
            std::net::TcpListener::bind(("127.0.0.1", options.port)).map_err(|source| {
                MockError::Bind {
                    port: options.port,
                    source,
                }
            })?;
        listener.set_nonblocking(true).map_err(MockError::Runtime)?;
        let addr = listener.local_addr().map_err(MockError::Runtime)?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(MockError::Runtime)?;
        let log = Arc::new(RequestLog::new(options.capture));
        let metadata_log = Arc::new(RequestLog::new(options.capture));
        let shared = Arc::new(Shared {
            metadata_log: Arc::clone(&metadata_log),
            routes: options.routes,
            script: Mutex::new(ScriptCursor {
                repeat: script.is_repeating(),
                replies: script.replies().to_vec(),
                next: 0,
            }),
            log: Arc::clone(&log),
            on_response: options.on_response,
            on_metadata: options.on_metadata,
            connections: AtomicU64::new(0),
        });
        let (stop, stopped) = oneshot::channel();
        let thread = std::thread::Builder::new()
            .name(format!("rein-mock-{}", addr.port()))
            .spawn(move || {
                runtime.block_on(async move {
                    let Ok(listener) = TcpListener::from_std(listener) else {
                        return;
                    };
                    tokio::select! {
                        () = accept_loop(listener, shared) => {}
                        _ = stopped => {}
                    }
                });
                // Dropping the runtime cancels every connection task, closing their sockets.
                drop(runtime);
            })
            .map_err(MockError::Thread)?;
        Ok(Self {
            addr,
            log,
            metadata_log,
            stop: Some(stop),
            thread: Some(thread),
        })
    }

    /// The socket address served.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// `http://127.0.0.1:PORT`: the Anthropic base URL (`POST {base}/v1/messages`).
    pub fn base_url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// `http://127.0.0.1:PORT/v1`: the OpenAI base URL (`POST {base}/chat/completions`).
    pub fn openai_base_url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// Every request received so far, in arrival order (empty with [`Capture::CountOnly`]).
    pub fn requests(&self) -> Vec<CapturedRequest> {
        self.log.snapshot()
    }

    /// The requests answered by a route, and those other than POST no route answered, in
    /// arrival order: not model calls, so not among [`MockServer::requests`].
    pub fn metadata_requests(&self) -> Vec<CapturedRequest> {
        self.metadata_log.snapshot()
    }

    /// The most recent request, if any.
    pub fn last_request(&self) -> Option<CapturedRequest> {
        self.log.snapshot().pop()
    }

    /// How many requests have arrived.
    pub fn request_count(&self) -> usize {
        self.log.count()
    }

    /// Blocks until `count` requests have arrived, then returns them all (none are kept with
    /// [`Capture::CountOnly`]); an error after
    /// `timeout`. Use [`MockServer::wait_for_requests_async`] when the client runs on the same
    /// async runtime as the test.
    pub fn wait_for_requests(
        &self,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<CapturedRequest>, MockError> {
        self.log.wait_blocking(count, timeout)
    }

    /// Like [`MockServer::wait_for_requests`] without blocking the caller's runtime.
    pub async fn wait_for_requests_async(
        &self,
        count: usize,
        timeout: Duration,
    ) -> Result<Vec<CapturedRequest>, MockError> {
        self.log.wait_async(count, timeout).await
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            // An error means the server thread has already ended.
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            // A panic on the server thread has already been reported by the panic hook.
            let _ = thread.join();
        }
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let id = shared.connections.fetch_add(1, Ordering::Relaxed);
                tokio::spawn(serve_connection(stream, id, Arc::clone(&shared)));
            }
            // Out of file descriptors and the like: back off instead of spinning.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// A model as a gateway's model list describes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ListedModel<'a> {
    /// Its name (an alias, or `vendor/model`).
    pub id: &'a str,
    /// Its context window in tokens.
    pub window: u64,
    /// USD per million input tokens.
    pub input_per_mtok: f64,
    /// USD per million output tokens.
    pub output_per_mtok: f64,
    /// USD per million input tokens read from the cache.
    pub cached_per_mtok: f64,
}
