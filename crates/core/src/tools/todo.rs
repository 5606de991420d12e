//! The todo list: the model's plan, replaced whole by each `todo_write` call.
//!
//! - A list breaks the rules (more than [`MAX_TODOS`] items, two in progress, an empty item)
//!   is refused with the rule it broke; the model keeps its previous list.
//! - Each change is an event and a session record; a resume restores the last one, and every
//!   compaction keeps it word for word (it is [`PinnedState`]).
//! - A list left open and untouched for [`REMIND_AFTER_ROUNDS`] rounds gets a reminder with
//!   the next tool result; a turn that would end with items open gets one, once.

use std::sync::Arc;

use parking_lot::Mutex;
use rein_tools::{Tool, ToolContext, ToolError, ToolKind, ToolOutput, async_trait};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::context::PinnedState;

/// The tool's name.
pub const TODO_TOOL: &str = "todo_write";
/// The most items a list may hold.
pub const MAX_TODOS: usize = 20;
/// Rounds with open items and no update before the model is reminded.
pub const REMIND_AFTER_ROUNDS: u32 = 3;

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on (one at a time).
    InProgress,
    /// Done.
    Completed,
}

/// One item of the list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoItem {
    /// What to do.
    pub content: String,
    /// Its state.
    pub status: TodoStatus,
    /// Shown while in progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_form: Option<String>,
}

impl TodoItem {
    /// Whether the item still needs work.
    pub fn is_open(&self) -> bool {
        self.status != TodoStatus::Completed
    }
}

/// The list an agent keeps, shared by its `todo_write` tool and the loop.
#[derive(Debug, Default)]
pub struct TodoList {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    items: Vec<TodoItem>,
    /// Replaced since the loop last looked.
    changed: bool,
    /// Rounds since the last update while items were open.
    idle_rounds: u32,
}

impl TodoList {
    /// A list holding `items` (restored from a session), not reported as a change.
    pub fn restored(items: Vec<TodoItem>) -> Self {
        TodoList {
            state: Mutex::new(State {
                items,
                ..State::default()
            }),
        }
    }

    /// The items now.
    pub fn items(&self) -> Vec<TodoItem> {
        self.state.lock().items.clone()
    }

    /// Replaces the list, if it keeps the rules; else says which rule it broke.
    pub fn replace(&self, items: Vec<TodoItem>) -> Result<(), TodoRuleBroken> {
        check(&items).map_err(TodoRuleBroken)?;
        let mut state = self.state.lock();
        state.items = items;
        state.changed = true;
        state.idle_rounds = 0;
        Ok(())
    }

    /// The new list, once, after it was replaced.
    pub(crate) fn take_change(&self) -> Option<Vec<TodoItem>> {
        let mut state = self.state.lock();
        std::mem::take(&mut state.changed).then(|| state.items.clone())
    }

    /// Counts a round of tool calls; the reminder for its results when the list has stayed
    /// open and untouched for [`REMIND_AFTER_ROUNDS`] rounds (then counting starts again).
    pub(crate) fn after_round(&self, updated: bool) -> Option<String> {
        let mut state = self.state.lock();
        if updated || !state.items.iter().any(TodoItem::is_open) {
            state.idle_rounds = 0;
            return None;
        }
        state.idle_rounds += 1;
        if state.idle_rounds < REMIND_AFTER_ROUNDS {
            return None;
        }
        state.idle_rounds = 0;
        Some(format!(
            "<reminder>Your todo list has open items and has not changed for {REMIND_AFTER_ROUNDS} \
             rounds. Keep it current with todo_write (mark what is done completed).</reminder>\n{}",
            render(&state.items)
        ))
    }

    /// The reminder for a turn about to end with items still open.
    pub(crate) fn end_of_turn_reminder(&self) -> Option<String> {
        let state = self.state.lock();
        state.items.iter().any(TodoItem::is_open).then(|| {
            format!(
                "<reminder>Your todo list still has open items. Finish them, or update the list \
                 with todo_write (completed, or removed if no longer needed), then \
                 answer.</reminder>\n{}",
                render(&state.items)
            )
        })
    }
}

impl PinnedState for TodoList {
    fn name(&self) -> &str {
        "todo list"
    }

    fn render(&self) -> Option<String> {
        let state = self.state.lock();
        (!state.items.is_empty()).then(|| render(&state.items))
    }
}

/// The rules a list keeps.
/// A todo list that breaks a rule of the list (say, two items in progress): which one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TodoRuleBroken(String);

fn check(items: &[TodoItem]) -> Result<(), String> {
    if items.len() > MAX_TODOS {
        return Err(format!(
            "the list has {} items; at most {MAX_TODOS} are allowed: merge or drop some",
            items.len()
        ));
    }
    if let Some(n) = items.iter().position(|i| i.content.trim().is_empty()) {
        return Err(format!(
            "item {} has empty content; every item needs a content",
            n + 1
        ));
    }
    let in_progress: Vec<String> = items
        .iter()
        .enumerate()
        .filter(|(_, i)| i.status == TodoStatus::InProgress)
        .map(|(n, _)| (n + 1).to_string())
        .collect();
    if in_progress.len() > 1 {
        return Err(format!(
            "at most one item may be in_progress; items {} are",
            in_progress.join(", ")
        ));
    }
    Ok(())
}

/// The list as the model reads it: one line per item, with its status.
pub fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "(empty)".to_owned();
    }
    items
        .iter()
        .enumerate()
        .map(|(n, item)| {
            let mark = match item.status {
                TodoStatus::Pending => "[ ]",
                TodoStatus::InProgress => "[>]",
                TodoStatus::Completed => "[x]",
            };
            format!("{}. {mark} {}", n + 1, item.content.trim())
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// The `todo_write` tool.
#[derive(Debug, Clone)]
pub struct TodoWriteTool {
    list: Arc<TodoList>,
}

impl TodoWriteTool {
    /// The tool, writing to `list`.
    pub fn new(list: Arc<TodoList>) -> Self {
        TodoWriteTool { list }
    }
}

/// The `todo_write` tool's arguments.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteArgs {
    /// The new list.
    pub todos: Vec<TodoItem>,
}

#[async_trait]
impl Tool for TodoWriteTool {
    type Args = TodoWriteArgs;

    fn name(&self) -> &'static str {
        TODO_TOOL
    }

    fn description(&self) -> &'static str {
        "Replace your todo list (max 20, one in_progress); keep it current in multi-step work."
    }

    fn kind(&self) -> ToolKind {
        // It changes only rein's own record of the plan.
        ToolKind::ReadOnly
    }

    async fn run(&self, args: TodoWriteArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        self.list
            .replace(args.todos)
            .map_err(|rule| ToolError::Model(format!("The todo list was not changed: {rule}.")))?;
        let items = self.list.items();
        let open = items.iter().filter(|i| i.is_open()).count();
        Ok(ToolOutput::success(format!(
            "Todo list updated ({open} of {} open):\n{}",
            items.len(),
            render(&items)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(content: &str, status: TodoStatus) -> TodoItem {
        TodoItem {
            content: content.to_owned(),
            status,
            active_form: None,
        }
    }

    #[test]
    fn reminders_come_every_third_idle_round_while_items_are_open() {
        let list = TodoList::default();
        assert_eq!(
            list.after_round(false),
            None,
            "an empty list is never reminded"
        );
        list.replace(vec![item("a", TodoStatus::InProgress)])
            .unwrap();
        assert!(list.take_change().is_some());
        assert!(list.take_change().is_none());
        assert_eq!(list.after_round(true), None);
        assert_eq!(list.after_round(false), None);
        assert_eq!(list.after_round(false), None);
        assert!(list.after_round(false).is_some());
        assert_eq!(list.after_round(false), None);
        list.replace(vec![item("a", TodoStatus::Completed)])
            .unwrap();
        for _ in 0..5 {
            assert_eq!(list.after_round(false), None);
        }
        assert_eq!(list.end_of_turn_reminder(), None);
    }
}
