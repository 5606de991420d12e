//! What an agent shares with the `agent` tool that starts its sub-agents: where their events
//! go during a turn, and what they used, for the agent to count. The tool reaches the agent
//! through this alone, so the loop knows nothing of the tool.

use parking_lot::Mutex;
use rein_llm::Usage;

use super::event::Events;

/// The tool's name.
pub const AGENT_TOOL: &str = "agent";

/// The link between an agent and the `agent` tool of its registry.
#[derive(Debug, Default)]
pub(crate) struct SubagentLink {
    /// The events of the turn running now; sub-agents' events go out nested in them.
    turn_events: Mutex<Option<Events>>,
    /// What finished sub-agents used, waiting to be counted: (model, agent type, usage).
    pending: Mutex<Vec<(String, String, Usage)>>,
}

impl SubagentLink {
    /// A turn starts: its calls' sub-agents report to `events`.
    pub(crate) fn start_turn(&self, events: &Events) {
        *self.turn_events.lock() = Some(events.clone());
    }

    /// Where the running turn's events go; `None` outside a turn.
    pub(crate) fn turn_events(&self) -> Option<Events> {
        self.turn_events.lock().clone()
    }

    /// A sub-agent finished, having used `usage`.
    pub(crate) fn add(&self, model: &str, agent: &str, usage: Usage) {
        self.pending
            .lock()
            .push((model.to_owned(), agent.to_owned(), usage));
    }

    /// Takes what finished sub-agents used: (model, agent type, usage) each.
    pub(crate) fn take(&self) -> Vec<(String, String, Usage)> {
        std::mem::take(&mut *self.pending.lock())
    }
}
