//! A fake MCP server for rein's MCP tests, built on rmcp's server side: tools that answer,
//! fail, sleep, crash the server and change the tool or prompt list, prompts (see
//! `mcp_prompts`), a slow start, and a pid file to
//! check that rein stops it. It serves over stdio (the `rein-mcp-fake` binary) or over
//! streamable HTTP on 127.0.0.1 ([`serve_http`]).

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CancelledNotificationParam,
    ContentBlock, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::{NotificationContext, RequestContext};
use rmcp::{ErrorData as McpError, RoleServer, ServerHandler};
use serde_json::{Value, json};

/// The fake server's handler.
#[derive(Debug, Clone, Default)]
pub struct FakeServer {
    /// `change_tools` was called: `late_tool` is listed.
    grown: Arc<AtomicBool>,
    /// `change_prompts` was called: `late_prompt` is listed.
    prompts_grown: Arc<AtomicBool>,
    /// How many numbered tools (`tool_000`, ...) it lists besides its own: a server with
    /// many tools.
    extra_tools: usize,
    /// Calls under way, so that the server finishes them (and logs their end) before it
    /// exits when its input closes.
    in_flight: Arc<tokio::sync::watch::Sender<usize>>,
}

/// Counts a call as under way while it lives.
struct InFlight(Arc<tokio::sync::watch::Sender<usize>>);

impl InFlight {
    fn start(count: &Arc<tokio::sync::watch::Sender<usize>>) -> Self {
        count.send_modify(|n| *n += 1);
        InFlight(Arc::clone(count))
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.send_modify(|n| *n = n.saturating_sub(1));
    }
}

impl FakeServer {
    /// A fresh server.
    pub fn new() -> Self {
        FakeServer {
            grown: Arc::new(AtomicBool::new(false)),
            prompts_grown: Arc::new(AtomicBool::new(false)),
            extra_tools: 0,
            in_flight: Arc::new(tokio::sync::watch::channel(0).0),
        }
    }

    /// The same server listing `count` numbered tools besides its own (`tool_000`, ...; each
    /// with a schema of the usual size, and a description naming a topic to search for).
    pub fn with_extra_tools(mut self, count: usize) -> Self {
        self.extra_tools = count;
        self
    }

    fn extra_tool(index: usize) -> Tool {
        let topics = [
            "invoice",
            "calendar",
            "ticket",
            "deploy",
            "metric",
            "customer",
            "shipment",
            "repository",
        ];
        let topic = topics[index % topics.len()];
        Tool::new(
            format!("tool_{index:03}"),
            format!(
                "Looks up the {topic} record number {index} and returns its fields; use it when \
                 asked about {topic} {index}."
            ),
            schema(json!({
                "type": "object",
                "properties": {
                    "id": {"type": "string", "description": format!("The {topic} identifier.")},
                    "fields": {"type": "array", "items": {"type": "string"}, "description": "Which fields to return (default: all)."},
                    "limit": {"type": "integer", "description": "How many records at most."}
                },
                "required": ["id"]
            })),
        )
        .annotate(ToolAnnotations::new().read_only(true))
    }

    fn tools(&self) -> Vec<Tool> {
        let text_arg = schema(json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }));
        let ms_arg = schema(json!({
            "type": "object",
            "properties": {"ms": {"type": "integer"}},
            "required": ["ms"]
        }));
        let none = schema(json!({"type": "object"}));
        let read_only = ToolAnnotations::new().read_only(true);
        let mut tools = vec![
            Tool::new("echo", "Echoes the text back.", text_arg.clone())
                .annotate(read_only.clone()),
            Tool::new(
                "note",
                "Keeps a note (changes state: not read-only).",
                text_arg,
            ),
            Tool::new(
                "structured",
                "Answers with structured content.",
                none.clone(),
            )
            .annotate(read_only.clone()),
            Tool::new("fail", "Always fails with isError.", none.clone())
                .annotate(read_only.clone()),
            Tool::new("sleep", "Sleeps for `ms` milliseconds.", ms_arg).annotate(read_only.clone()),
            Tool::new(
                "crash",
                "Kills the server in the middle of the call.",
                none.clone(),
            ),
            Tool::new(
                "change_tools",
                "Adds `late_tool` (and the prompt `late_prompt`) and says the lists changed.",
                none.clone(),
            ),
            Tool::new("do.it", "A name with a dot.", none.clone()).annotate(read_only.clone()),
            Tool::new("do/it", "The same name once sanitised.", none.clone())
                .annotate(read_only.clone()),
        ];
        if self.grown.load(Ordering::SeqCst) {
            tools.push(Tool::new("late_tool", "Listed after a change.", none).annotate(read_only));
        }
        tools.extend((0..self.extra_tools).map(Self::extra_tool));
        tools
    }

    async fn call(
        &self,
        name: &str,
        args: &JsonObject,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, McpError> {
        let text = || {
            args.get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        Ok(match name {
            extra if extra.starts_with("tool_") => {
                CallToolResult::success(vec![ContentBlock::text(format!("{extra} ran"))])
            }
            "echo" => {
                // In the log too: which server answered.
                let _ = writeln!(std::io::stderr(), "fake: echo {}", text());
                CallToolResult::success(vec![ContentBlock::text(format!("echo: {}", text()))])
            }
            "note" => {
                CallToolResult::success(vec![ContentBlock::text(format!("noted: {}", text()))])
            }
            "structured" => CallToolResult::structured(json!({"sum": 42, "items": ["a", "b"]})),
            "fail" => {
                CallToolResult::error(vec![ContentBlock::text("the fake tool failed on purpose")])
            }
            "sleep" => {
                let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                let _ = writeln!(std::io::stderr(), "fake: sleeping {ms} ms");
                tokio::select! {
                    () = context.ct.cancelled() => {
                        // Seen by the test through the server's stderr log.
                        let _ = writeln!(std::io::stderr(), "fake: sleep cancelled");
                        return Err(McpError::internal_error("cancelled", None));
                    }
                    () = tokio::time::sleep(Duration::from_millis(ms)) => {}
                }
                CallToolResult::success(vec![ContentBlock::text(format!("slept {ms} ms"))])
            }
            "crash" => {
                let _ = writeln!(std::io::stderr(), "fake: crashing on purpose");
                std::process::exit(3);
            }
            "change_tools" => {
                self.grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_tool_list_changed().await;
                // The prompts change with it (`late_prompt`), told apart.
                self.prompts_grown.store(true, Ordering::SeqCst);
                let _ = context.peer.notify_prompt_list_changed().await;
                CallToolResult::success(vec![ContentBlock::text("late_tool added")])
            }
            "late_tool" => CallToolResult::success(vec![ContentBlock::text("late tool ran")]),
            "do.it" => CallToolResult::success(vec![ContentBlock::text("dot")]),
            "do/it" => CallToolResult::success(vec![ContentBlock::text("slash")]),
            other => return Err(McpError::invalid_params(format!("no tool {other}"), None)),
        })
    }
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

impl ServerHandler for FakeServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_resources()
                .enable_prompts()
                .enable_prompts_list_changed()
                .build(),
        )
    }

    async fn read_resource(
        &self,
        request: rmcp::model::ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ReadResourceResponse, McpError> {
        // `fake://notes/N` holds a line naming N; `fake://env/NAME` the server's variable
        // NAME; any other address is unknown.
        if let Some(name) = request.uri.strip_prefix("fake://env/") {
            let value = std::env::var(name).unwrap_or_default();
            return Ok(rmcp::model::ReadResourceResult::new(vec![
                rmcp::model::ResourceContents::text(format!("{name}={value}"), &request.uri),
            ])
            .into());
        }
        match request.uri.strip_prefix("fake://notes/") {
            Some(n) => {
                Ok(
                    rmcp::model::ReadResourceResult::new(vec![
                        rmcp::model::ResourceContents::text(
                            format!("note {n}: the resource body"),
                            &request.uri,
                        ),
                    ])
                    .into(),
                )
            }
            None => Err(McpError::resource_not_found(
                format!("no resource {}", request.uri),
                None,
            )),
        }
    }

    async fn on_cancelled(
        &self,
        notification: CancelledNotificationParam,
        _context: NotificationContext<RoleServer>,
    ) {
        // Logged as it arrives: the call it cancels may not get to log before the server
        // exits (rein closes its input right after).
        let reason = notification.reason.unwrap_or_default();
        let _ = writeln!(std::io::stderr(), "fake: cancellation received ({reason})");
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::ListPromptsResult, McpError> {
        Ok(rmcp::model::ListPromptsResult::with_all_items(
            crate::mcp_prompts::prompts(self.prompts_grown.load(Ordering::SeqCst)),
        ))
    }

    async fn get_prompt(
        &self,
        request: rmcp::model::GetPromptRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<rmcp::model::GetPromptResponse, McpError> {
        let args = request.arguments.clone().unwrap_or_default();
        let _ = writeln!(std::io::stderr(), "fake: prompt {} {args:?}", request.name);
        if request.name == "fails_when" {
            // Refused once the file named by `file` exists: the test decides when.
            let file = args.get("file").and_then(serde_json::Value::as_str);
            crate::mcp_prompts::wait_for_file(file.unwrap_or_default()).await;
        }
        crate::mcp_prompts::get(&request.name, &args).map(Into::into)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let _counted = InFlight::start(&self.in_flight);
        let args = request.arguments.clone().unwrap_or_default();
        self.call(&request.name, &args, &context)
            .await
            .map(Into::into)
    }
}

/// Starts a helper in this process's group, which rein must stop with the server, and
/// writes this process's pid and the helper's to `path`.
pub fn write_pid_file(path: &std::path::Path) -> anyhow::Result<()> {
    let helper = std::process::Command::new("sleep").arg("600").spawn()?;
    std::fs::write(path, format!("{} {}", std::process::id(), helper.id()))?;
    Ok(())
}

/// Serves `server` over stdin and stdout until the client goes away.
pub async fn serve_stdio(server: FakeServer) -> anyhow::Result<()> {
    use rmcp::ServiceExt;
    let mut in_flight = server.in_flight.subscribe();
    let running = server
        .serve((tokio::io::stdin(), tokio::io::stdout()))
        .await?;
    running.waiting().await?;
    // Calls cancelled as the input closed get to say so before the process ends.
    let _ = tokio::time::timeout(Duration::from_secs(2), in_flight.wait_for(|n| *n == 0)).await;
    Ok(())
}

/// A fake server on streamable HTTP at `http://127.0.0.1:PORT/mcp`, on a thread of its own
/// until the process ends; returns the URL.
pub fn serve_http() -> anyhow::Result<String> {
    let address = serve_on_thread("fake-mcp-http", accept)?;
    Ok(format!("http://{address}/mcp"))
}

/// Runs `serve` on a free port of 127.0.0.1, on a thread of its own with its own runtime,
/// until the process ends; returns the address.
pub(crate) fn serve_on_thread<F: Future<Output = ()>>(
    name: &str,
    serve: impl FnOnce(tokio::net::TcpListener) -> F + Send + 'static,
) -> anyhow::Result<std::net::SocketAddr> {
    let listener = std::net::TcpListener::bind("127.0.0.1:0")?;
    listener.set_nonblocking(true)?;
    let address = listener.local_addr()?;
    std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                if let Ok(listener) = tokio::net::TcpListener::from_std(listener) {
                    serve(listener).await;
                }
            });
        })?;
    Ok(address)
}

async fn accept(listener: tokio::net::TcpListener) {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    let service = StreamableHttpService::new(
        || Ok(FakeServer::new()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
