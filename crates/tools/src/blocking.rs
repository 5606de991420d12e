//! Running a tool's blocking file work off the async threads.

use crate::ToolError;

/// Runs `work` on tokio's blocking pool.
pub(crate) async fn run<T, F>(work: F) -> Result<T, ToolError>
where
    F: FnOnce() -> Result<T, ToolError> + Send + 'static,
    T: Send + 'static,
{
    match tokio::task::spawn_blocking(work).await {
        Ok(result) => result,
        Err(err) => Err(ToolError::Internal(format!("a tool task failed: {err}"))),
    }
}
