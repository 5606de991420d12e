//! What a front-end needs from rein, in one place: the cli, and anything else that embeds the
//! agent, imports from here and depends on `rein-core` alone.
//!
//! - Build: [`AgentBuilder`] (for an endpoint: [`ProviderConfig`] or any [`Provider`]).
//! - Run: [`Agent::run_turn`] emits [`AgentEvent`]s into [`Events`] and returns a
//!   [`TurnOutcome`]; a [`TurnStop`] says how the turn ended, [`Usage`] what it cost
//!   ([`cost_usd`]).
//! - Ask: an [`Interaction`] answers approvals ([`ApprovalRequest`] → [`Approval`]), showing
//!   a call's [`Preview`]; results carry a [`Display`] payload to show them by.
//! - Own the processes: a [`ProcessTracker`] ends what tool calls left running; the
//!   [`McpHub`] holds the session's MCP servers; [`SandboxLevel`] says how commands are
//!   confined.
//!
//! ```no_run
//! use rein_core::face::{
//!     AgentBuilder, AgentEvent, Events, ProviderConfig, ProviderKind, build_provider,
//! };
//! # async fn turn() -> Result<(), Box<dyn std::error::Error>> {
//! let mut endpoint = ProviderConfig::new(ProviderKind::OpenAi);
//! endpoint.base_url = Some("http://127.0.0.1:8080/v1".to_owned());
//! let mut agent = AgentBuilder::new("/path/to/project", "my-model", ProviderKind::OpenAi)
//!     .provider(build_provider(&endpoint)?)
//!     .build()?;
//! let events = Events::new(|event: AgentEvent| println!("{event:?}"));
//! let outcome = agent.run_turn("list the files", &events, Default::default()).await;
//! println!("{}", outcome.text);
//! # Ok(()) }
//! ```

pub use rein_llm::replay::{RecordingProvider, ReplayProvider};
pub use rein_llm::{
    Message, Part, Provider, ProviderConfig, ProviderKind, Role, ToolArguments, Usage,
    build_provider, cost_usd, micro_dollars,
};
pub use rein_mcp::{McpHub, ServerState, ServerStatus, Transport};
pub use rein_tools::bash::{
    ProcessTracker, TrackedChild, adopt_orphans, hide_from_commands, spawn_tracked,
};
pub use rein_tools::sandbox::{Enforcement, SandboxLevel, SandboxPolicy, remove_private_dirs};
pub use rein_tools::{ClientFiles, Display, HostPort, Preview, Progress, ToolConfig, async_trait};

pub use crate::agent::{
    Agent, AgentEvent, CompactOutcome, EventSink, Events, LimitReached, NestedEvent, SpendLimit,
    SpendLimits, SpendTotals, TurnEnd, TurnError, TurnOutcome, TurnStop,
};
pub use crate::build::{AgentBuilder, BuildError};
pub use crate::interaction::{AnswerScope, Approval, ApprovalRequest, Interaction, Unattended};
pub use crate::network_gate::NETWORK_QUESTION;
pub use crate::permissions::PermissionMode;
pub use crate::sandboxing::KeptSandbox;
