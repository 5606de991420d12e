//! What every test module needs: fast-retrying providers and a run that assembles.

use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use rein_llm::{
    AssembledResponse, Assembler, LlmError, Message, Part, Provider, ProviderConfig, ProviderKind,
    Request, RetryPolicy, Role, StreamEvent, ToolCall, ToolSpec, build_provider,
};
use rein_testkit::MockServer;

/// Retries quick enough for tests; server-requested waits are still honoured.
pub(crate) fn fast_retry() -> RetryPolicy {
    RetryPolicy {
        max_retries: 4,
        base_delay: Duration::from_millis(10),
        factor: 2.0,
        max_delay: Duration::from_millis(100),
        max_server_wait: Duration::from_secs(5),
    }
}

pub(crate) fn config(kind: ProviderKind, base_url: &str) -> ProviderConfig {
    let mut config = ProviderConfig::new(kind);
    config.base_url = Some(base_url.to_owned());
    config.api_key = Some("test-key".into());
    config.retry = fast_retry();
    config
}

pub(crate) fn openai(base_url: &str) -> Arc<dyn Provider> {
    build_provider(&config(ProviderKind::OpenAi, base_url)).unwrap()
}

pub(crate) fn anthropic(base_url: &str) -> Arc<dyn Provider> {
    build_provider(&config(ProviderKind::Anthropic, base_url)).unwrap()
}

/// A provider of `kind` pointed at the mock server's endpoint for that wire format.
pub(crate) fn provider_for(kind: ProviderKind, server: &MockServer) -> Arc<dyn Provider> {
    let base = match kind {
        ProviderKind::OpenAi | ProviderKind::OpenAiResponses => server.openai_base_url(),
        ProviderKind::Anthropic => server.base_url(),
    };
    build_provider(&config(kind, &base)).unwrap()
}

pub(crate) fn request(model: &str) -> Request {
    Request {
        model: model.into(),
        system: "You are terse.".into(),
        messages: vec![Message {
            role: Role::User,
            parts: vec![Part::Text {
                text: "read a.txt".into(),
            }],
        }],
        tools: vec![ToolSpec::new(
            "read_file",
            "Reads a file.",
            serde_json::json!({"type":"object","properties":{"file_path":{"type":"string"}}}),
        )],
        temperature: None,
        max_tokens: None,
        cache_key: None,
    }
}

/// What one call produced.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// Every event, in order.
    pub(crate) events: Vec<StreamEvent>,
    /// Tool calls reported early by the assembler, in order.
    pub(crate) early: Vec<ToolCall>,
    /// The assembled response, or the error that ended the stream.
    pub(crate) result: Result<AssembledResponse, LlmError>,
}

impl Outcome {
    pub(crate) fn response(&self) -> &AssembledResponse {
        match &self.result {
            Ok(r) => r,
            Err(e) => panic!("the call failed: {e:?}; events: {:?}", self.events),
        }
    }

    pub(crate) fn error(&self) -> &LlmError {
        match &self.result {
            Ok(r) => panic!("the call succeeded: {r:?}"),
            Err(e) => e,
        }
    }

    pub(crate) fn retries(&self) -> Vec<&StreamEvent> {
        self.events
            .iter()
            .filter(|e| matches!(e, StreamEvent::Retry { .. }))
            .collect()
    }

    pub(crate) fn text(&self) -> String {
        self.response()
            .message
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::Text { text } => Some(text.as_str()),
                _ => None,
            })
            .collect()
    }

    pub(crate) fn calls(&self) -> Vec<&ToolCall> {
        self.response()
            .message
            .parts
            .iter()
            .filter_map(|p| match p {
                Part::ToolCall(c) => Some(c),
                _ => None,
            })
            .collect()
    }
}

/// Runs one call to the end, feeding the assembler as the agent will.
pub(crate) async fn run(provider: &dyn Provider, request: &Request) -> Outcome {
    let mut stream = provider.stream(request);
    let mut events = Vec::new();
    let mut early = Vec::new();
    let mut assembler = Assembler::new();
    while let Some(item) = stream.next().await {
        match item {
            Ok(event) => {
                early.extend(assembler.push(&event));
                events.push(event);
            }
            Err(e) => {
                return Outcome {
                    events,
                    early,
                    result: Err(e),
                };
            }
        }
    }
    Outcome {
        events,
        early,
        result: assembler.finish(),
    }
}
