//! The slash commands a session in an editor runs itself (`/compact`, `/todos`, `/cost`,
//! `/tokens`, `/context`), advertised with `available_commands_update` with the custom
//! commands (files) and the MCP servers' prompts; the rest of the REPL's are about the
//! terminal (`/exit`, `/resume`...) and stay there. The list is sent again whenever the
//! prompts change (a server becomes ready, or says its prompts changed).

use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, UnstructuredCommandInput,
};
use rein_core::commands::CustomCommand;
use rein_core::context::ContextReport;
use rein_core::face::{Agent, CompactOutcome, cost_usd};
use rein_core::tools::{TodoItem, TodoStatus};

use crate::repl::slash;

/// The REPL's built-in commands that an ACP session runs.
const IN_EDITORS: &[&str] = &["/compact", "/todos", "/cost", "/tokens", "/context"];

/// The commands advertised to the client: those of the REPL's that work here, then the
/// custom commands and MCP prompts (`custom`).
pub(crate) fn available(custom: &[CustomCommand]) -> Vec<AvailableCommand> {
    let input = |hint: &str| {
        AvailableCommandInput::Unstructured(UnstructuredCommandInput::new(hint.to_owned()))
    };
    let built_in = slash::available()
        .into_iter()
        .filter(|c| {
            IN_EDITORS.contains(&c.name) || !slash::COMMANDS.iter().any(|b| b.name == c.name)
        })
        .map(|c| {
            let command = AvailableCommand::new(c.name.trim_start_matches('/').to_owned(), c.about);
            if c.argument.is_empty() {
                command
            } else {
                command.input(input(c.argument))
            }
        });
    let custom = custom.iter().map(|c| {
        let command = AvailableCommand::new(c.name.clone(), c.description.clone());
        match &c.argument_hint {
            Some(hint) => command.input(input(hint)),
            None => command,
        }
    });
    built_in.chain(custom).collect()
}

/// `/name rest` when `input` is one of the commands run here.
pub(crate) fn parse(input: &str) -> Option<(&str, &str)> {
    let line = input.trim();
    let (name, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let known = IN_EDITORS
        .iter()
        .any(|c| c.strip_prefix('/') == name.strip_prefix('/'));
    (name.starts_with('/') && known).then(|| (&name[1..], rest.trim()))
}

/// What `/compact` did.
pub(crate) fn compacted(done: &CompactOutcome) -> String {
    match done {
        CompactOutcome::Compacted(info) => format!(
            "Compacted: {} → {} tokens ({} messages summarised, {} kept).",
            info.tokens_before, info.tokens_after, info.summarised_messages, info.kept_messages
        ),
        CompactOutcome::NothingToCompact => "Nothing to compact yet.".to_owned(),
        CompactOutcome::Cancelled => "Compaction cancelled; the context is unchanged.".to_owned(),
    }
}

/// `/todos`.
pub(crate) fn todos(todos: &[TodoItem]) -> String {
    if todos.is_empty() {
        return "No todo list yet.".to_owned();
    }
    todos
        .iter()
        .map(|t| {
            let mark = match t.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[~]",
                TodoStatus::Completed => "[x]",
            };
            format!("{mark} {}\n", t.content)
        })
        .collect()
}

/// `/cost`, `/tokens`, `/context`: the session's tokens, cost and context use.
pub(crate) fn spending(agent: &Agent, report: &ContextReport) -> String {
    let usage = agent.total_usage();
    let cost = cost_usd(agent.model(), &usage).map_or_else(
        || "unknown (no price for this model)".to_owned(),
        |c| format!("${c:.4}"),
    );
    format!(
        "Tokens: {} in, {} out. Cost: {cost}. Context: {} of {} tokens used.",
        usage.prompt_tokens, usage.completion_tokens, report.used, report.window.tokens
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_commands_run_here_are_parsed() {
        assert_eq!(parse("/compact the API"), Some(("compact", "the API")));
        assert_eq!(parse("  /todos "), Some(("todos", "")));
        assert_eq!(parse("/exit"), None);
        assert_eq!(parse("fix /compact"), None);
    }

    #[test]
    fn advertised_commands_are_those_that_work_here() {
        let names: Vec<String> = available(&[]).into_iter().map(|c| c.name).collect();
        assert!(names.contains(&"compact".to_owned()), "{names:?}");
        assert!(!names.contains(&"exit".to_owned()), "{names:?}");
    }
}
