//! The provider abstraction: a request in, a stream of events out.

use std::pin::Pin;
use std::sync::Arc;

use futures::Stream;
use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};

use crate::{LlmError, Message, ModelListing, ServerWindow, StreamEvent};

/// A boxed stream of events from one model call (retries included).
pub type EventStream = Pin<Box<dyn Stream<Item = Result<StreamEvent, LlmError>> + Send>>;

/// A tool as the model sees it; rendered into each wire format by the provider.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// What the tool does, for the model.
    pub description: String,
    /// JSON Schema of the parameters object; shared, so a request's tool list is copied and
    /// compared cheaply from round to round.
    pub parameters: Arc<serde_json::Value>,
}

impl ToolSpec {
    /// A tool description from its parts.
    pub fn new(
        name: impl Into<String>,
        description: impl Into<String>,
        parameters: impl Into<Arc<serde_json::Value>>,
    ) -> Self {
        Self {
            name: name.into(),
            description: description.into(),
            parameters: parameters.into(),
        }
    }
}

/// Everything one model call needs.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Request {
    /// The model's name as the provider knows it.
    pub model: String,
    /// The system prompt.
    pub system: String,
    /// The conversation so far.
    pub messages: Vec<Message>,
    /// The tools the model may call.
    pub tools: Vec<ToolSpec>,
    /// Sampling temperature, when set.
    pub temperature: Option<f32>,
    /// The output token limit, when set.
    pub max_tokens: Option<u32>,
    /// A stable key for the conversation, sent as `prompt_cache_key` where the endpoint
    /// takes it (OpenAI routes requests with the same key to the same prompt cache).
    pub cache_key: Option<String>,
}

/// A model endpoint.
pub trait Provider: Send + Sync {
    /// Starts one model call; the request is serialised before this returns, so the stream
    /// does not borrow it. Transient failures are retried inside the stream, announced by
    /// [`StreamEvent::Retry`].
    fn stream(&self, request: &Request) -> EventStream;

    /// The context window the server runs `model` with, when it says (llama.cpp, vLLM,
    /// LM Studio, Ollama, gateways that list windows); `None` when it does not, or for an API
    /// whose models rein's table knows. Never an error: a server that does not answer says
    /// nothing.
    fn context_window<'a>(&'a self, _model: &'a str) -> BoxFuture<'a, Option<ServerWindow>> {
        Box::pin(std::future::ready(None))
    }

    /// What the server's model list says of `model` (listed or not, its prices), for an
    /// endpoint that has such a list; `None` otherwise. Never an error.
    fn model_listing<'a>(&'a self, _model: &'a str) -> BoxFuture<'a, Option<ModelListing>> {
        Box::pin(std::future::ready(None))
    }
}
