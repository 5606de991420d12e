//! Agent-level tools: they act on the agent rather than the machine (the todo list,
//! sub-agents, skills), so they live here, beside the loop they serve.

pub mod skill;
pub mod subagent;
pub mod todo;
pub mod web_fetch;

pub use subagent::{AGENT_TOOL, AgentTool, AgentType};
pub use todo::{TODO_TOOL, TodoItem, TodoList, TodoRuleBroken, TodoStatus, TodoWriteTool};
pub use web_fetch::{WEB_FETCH_TOOL, WebFetchTool};
