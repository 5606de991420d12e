//! Ctrl+C: the first cancels the running turn, a second one ends rein at once.

use rein_tools::bash::ProcessTracker;
use tokio_util::sync::CancellationToken;

use crate::exit::Exit;

/// Cancels `turn` on the first SIGINT; on the second, ends every process rein started and
/// exits with status 130.
pub(crate) fn install(turn: CancellationToken, processes: ProcessTracker) {
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        turn.cancel();
        if tokio::signal::ctrl_c().await.is_err() {
            return;
        }
        processes.kill_all_blocking();
        std::process::exit(i32::from(Exit::Interrupted.code()));
    });
}
