//! Agent-level tools: they act on the agent rather than the machine (the todo list,
//! sub-agents, skills), so they live here, beside the loop they serve.

pub mod skill;
pub mod subagent;
pub mod todo;
pub mod web_fetch;

pub use subagent::{AGENT_TOOL, AgentTool, AgentType};
pub use todo::{TODO_TOOL, TodoItem, TodoList, TodoRuleBroken, TodoStatus, TodoWriteTool};
pub use web_fetch::{WEB_FETCH_TOOL, WebFetchTool};

/// Derives every tool's parameter schema, built-in and agent-level, on a thread of its own:
/// the main thread reads the command line and the configuration meanwhile, and finds them
/// ready when it builds the agent (a third of its start-up instructions otherwise).
pub fn derive_schemas_aside() {
    let derive = || {
        drop(rein_tools::ToolRegistry::builtin());
        rein_tools::parameters_schema::<subagent::AgentArgs>();
        rein_tools::parameters_schema::<web_fetch::WebFetchArgs>();
        rein_tools::parameters_schema::<skill::SkillArgs>();
        rein_tools::parameters_schema::<todo::TodoWriteArgs>();
        rein_tools::parameters_schema::<crate::context::tool::CompactArgs>();
        rein_tools::parameters_schema::<crate::agent::ToolSearchArgs>();
    };
    // Without a thread, they are derived where they are first needed, as before.
    let _ = std::thread::Builder::new()
        .name("rein-schemas".to_owned())
        .spawn(derive);
}
