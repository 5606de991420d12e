//! Where the agent records what has become final, so a session can be resumed.

use rein_llm::{Message, ProviderKind, Usage};

use super::TurnStop;
use crate::context::CompactionRecord;

/// A record of the conversation (the session file). Each call must make its record durable
/// before returning, so a crash loses at most what is still streaming.
pub trait Transcript: Send + Sync {
    /// Records a finished message.
    fn record_message(&mut self, message: &Message) -> std::io::Result<()>;
    /// Records the tokens one call of `model`, reached through `provider`, used.
    fn record_usage(
        &mut self,
        model: &str,
        provider: ProviderKind,
        usage: &Usage,
    ) -> std::io::Result<()>;
    /// Records the end of a turn.
    fn record_turn_end(&mut self, stop: TurnStop) -> std::io::Result<()>;
    /// Records a compaction of the context (before it applies).
    fn record_compaction(&mut self, record: &CompactionRecord) -> std::io::Result<()>;
    /// Records the todo list as it now is.
    fn record_todos(&mut self, todos: &[crate::tools::TodoItem]) -> std::io::Result<()>;
    /// Records what a sub-agent of `agent` type on `model` used in all.
    fn record_subagent_usage(
        &mut self,
        model: &str,
        agent: &str,
        usage: &Usage,
    ) -> std::io::Result<()>;
    /// Deletes the record: nothing in it is worth resuming. Later records are not kept.
    fn discard(&mut self) -> std::io::Result<()>;
    /// Writes records an earlier failure kept back; an error means some are still missing.
    fn catch_up(&mut self) -> std::io::Result<()>;
    /// How many lines the record holds (a checkpoint notes where its turn began).
    fn lines(&self) -> u64 {
        0
    }
}

impl Transcript for crate::session::Session {
    fn record_message(&mut self, message: &Message) -> std::io::Result<()> {
        self.append_message(message).map_err(std::io::Error::other)
    }

    fn record_usage(
        &mut self,
        model: &str,
        provider: ProviderKind,
        usage: &Usage,
    ) -> std::io::Result<()> {
        self.append_event(&crate::session::SessionEvent::Usage {
            model: model.to_owned(),
            provider: Some(provider),
            usage: *usage,
        })
        .map_err(std::io::Error::other)
    }

    fn record_turn_end(&mut self, stop: TurnStop) -> std::io::Result<()> {
        self.append_event(&crate::session::SessionEvent::TurnFinished { stop_reason: stop })
            .map_err(std::io::Error::other)
    }

    fn record_compaction(&mut self, record: &CompactionRecord) -> std::io::Result<()> {
        self.append_event(&crate::session::SessionEvent::Compaction(record.clone()))
            .map_err(std::io::Error::other)
    }

    fn record_todos(&mut self, todos: &[crate::tools::TodoItem]) -> std::io::Result<()> {
        self.append_event(&crate::session::SessionEvent::Todos {
            todos: todos.to_vec(),
        })
        .map_err(std::io::Error::other)
    }

    fn record_subagent_usage(
        &mut self,
        model: &str,
        agent: &str,
        usage: &Usage,
    ) -> std::io::Result<()> {
        self.append_event(&crate::session::SessionEvent::SubagentUsage {
            model: model.to_owned(),
            agent: agent.to_owned(),
            usage: *usage,
        })
        .map_err(std::io::Error::other)
    }

    fn discard(&mut self) -> std::io::Result<()> {
        crate::session::Session::discard(self).map_err(std::io::Error::other)
    }

    fn catch_up(&mut self) -> std::io::Result<()> {
        crate::session::Session::catch_up(self).map_err(std::io::Error::other)
    }

    fn lines(&self) -> u64 {
        crate::session::Session::lines(self)
    }
}
