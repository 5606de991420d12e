//! Running a tool's blocking file work off the async threads.

use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

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

/// How many idle blocking threads a round of tool calls finds after [`warm_threads`].
const WARM_THREADS: usize = 3;

/// How long the warming tasks wait for each other at the most.
const WARM_WAIT: Duration = Duration::from_millis(20);

/// Makes sure a few blocking threads stand ready for the first round's tool calls.
///
/// tokio creates a blocking thread only when none is idle, on the thread that asks and under
/// its pool's lock: the first round of parallel reads in a fresh process paid for creating
/// them while the model's answer waited. Call it off the async threads (from a blocking task,
/// as the turn's checkpoint is) while the model is asked, and the threads are made then.
/// The tasks wait for each other, so each needs a thread of its own; idle threads live on
/// for tokio's keep-alive (10 s).
pub fn warm_threads(handle: &tokio::runtime::Handle) {
    let started = Arc::new((Mutex::new(0usize), Condvar::new()));
    for _ in 0..WARM_THREADS {
        let started = Arc::clone(&started);
        drop(handle.spawn_blocking(move || {
            let (count, all_in) = &*started;
            let deadline = Instant::now() + WARM_WAIT;
            let mut count = count
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            *count += 1;
            all_in.notify_all();
            while *count < WARM_THREADS {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    break;
                }
                count = match all_in.wait_timeout(count, left) {
                    Ok((guard, _)) => guard,
                    Err(poisoned) => poisoned.into_inner().0,
                };
            }
        }));
    }
}
