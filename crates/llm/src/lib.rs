//! rein's model layer: one provider-neutral conversation model, mapped to and from the
//! OpenAI Chat Completions and Anthropic Messages wire formats, streamed over SSE, with
//! classified errors, retries, usage accounting, pricing and offline replay.
//!
//! The agent builds a provider with [`build_provider`] from a [`ProviderConfig`], calls
//! [`Provider::stream`], and feeds every event into one [`Assembler`], which yields each tool
//! call as soon as its arguments are complete and, at the end, the assistant [`Message`].

pub mod anthropic;
pub mod assemble;
pub mod cache;
mod classify;
mod config;
mod decode;
mod driver;
mod emit;
pub mod error;
pub mod event;
mod explain;
mod http;
mod infer;
mod listing;
pub mod message;
mod network;
pub mod openai;
pub mod pricing;
mod probe;
pub mod provider;
mod record;
pub mod replay;
pub mod responses;
mod retry;
mod serde_util;
pub mod sse;
mod target;
pub mod text_calls;
mod tls;
mod toolspec;
mod url;
mod vision;
pub mod window;

pub use anthropic::AnthropicProvider;
pub use assemble::{AssembledResponse, Assembler, UNNAMED_TOOL, parse_arguments, unique_call_id};
pub use cache::{CacheTtl, MAX_CACHE_BREAKPOINTS, UnknownCacheTtl};
pub use classify::{is_context_too_long, parse_retry_after, retry_hint_in_message};
pub use config::{ConfigError, ProviderConfig, build_provider};
pub use decode::StreamDecoder;
pub use error::LlmError;
pub use event::{StopReason, StreamEvent, Usage};
pub use infer::{ProviderKind, UnknownProvider, infer_provider, is_responses_only};
pub use listing::ModelListing;
pub use message::{Image, Message, Part, Role, ToolArguments, ToolCall, ToolResult};
pub use network::{
    DEFAULT_CONNECT_TIMEOUT, DEFAULT_FIRST_BYTE_TIMEOUT, DEFAULT_LOCAL_FIRST_BYTE_TIMEOUT,
    DEFAULT_REQUEST_TIMEOUT, DEFAULT_STREAM_IDLE_TIMEOUT, NetworkConfig, WAITING_NOTICE_INTERVAL,
};
pub use openai::OpenAiProvider;
pub use pricing::{Price, PriceBook, cost_usd, micro_dollars, price_for};
pub use provider::{EventStream, Provider, Request, ToolSpec};
pub use replay::{CassetteError, RecordingProvider, ReplayProvider};
pub use responses::ResponsesProvider;
pub use retry::{DEFAULT_MAX_RETRIES, RetryPolicy};
pub use text_calls::{ToolFormat, find_text_calls};
pub use tls::{client_config as tls_client_config, install_crypto_provider};
pub use toolspec::{tool_to_wire, tools_to_wire};
pub use url::{
    BaseUrlError, is_loopback_url, is_on_domain, normalize_base_url, redact_credentials, url_host,
};
pub use vision::model_takes_images;
pub use window::{ServerWindow, context_limit_in_message, context_window_for};
