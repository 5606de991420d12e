//! State that compaction always keeps, whatever it summarises: the todo list (built by the
//! `todo_write` tool), and anything else a feature must not lose to a summary.

/// Something the summary message always carries, as it is when the compaction happens.
///
/// The todo list implements this: its current items, rendered for the model. A compaction
/// asks each pinned state for its text and puts it in the summary message under its name.
pub trait PinnedState: Send + Sync {
    /// Its name, for the model and the person (`todo list`).
    fn name(&self) -> &str;
    /// Its content now, for the model; `None` when there is nothing to keep (an empty list).
    fn render(&self) -> Option<String>;
}
