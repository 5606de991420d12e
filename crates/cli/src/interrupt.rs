//! Signals that end a run: Ctrl+C (SIGINT), SIGTERM, SIGHUP and SIGQUIT. The first cancels the
//! running turn, which stops every command rein started and leaves the session consistent and
//! saved; rein then exits with the signal's status (130, 143, 129, 131). A second signal
//! ends rein at once, after stopping every process it started.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use rein_core::face::ProcessTracker;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;

use crate::exit::Exit;

/// Which signal (if any) ended the run.
#[derive(Debug, Clone, Default)]
pub(crate) struct Interrupts {
    /// The exit status of the first signal received; 0 while none has come.
    first: Arc<AtomicU8>,
}

impl Interrupts {
    /// How rein should exit because of a signal, if one came.
    pub(crate) fn exit(&self) -> Option<Exit> {
        Exit::for_signal_status(self.first.load(Ordering::SeqCst))
    }
}

/// Calls `handle` with the exit status each of SIGINT, SIGTERM, SIGHUP and SIGQUIT means,
/// each time one comes. A signal whose handler cannot be installed is left at its default.
pub(crate) fn on_ending_signals(handle: impl Fn(Exit) + Clone + Send + 'static) {
    for (kind, exit) in [
        (SignalKind::interrupt(), Exit::Interrupted),
        (SignalKind::terminate(), Exit::Terminated),
        (SignalKind::hangup(), Exit::HungUp),
        (SignalKind::quit(), Exit::Quit),
    ] {
        let Ok(mut stream) = signal(kind) else {
            continue;
        };
        let handle = handle.clone();
        tokio::spawn(async move {
            while stream.recv().await.is_some() {
                handle(exit);
            }
        });
    }
}

/// Cancels `turn` on the first of the signals; on the second, ends every process rein
/// started and exits. A signal whose handler cannot be installed is left at its default.
pub(crate) fn install(
    turn: CancellationToken,
    processes: ProcessTracker,
    mcp: Option<Arc<rein_core::face::McpHub>>,
) -> Interrupts {
    let interrupts = Interrupts::default();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Exit>();
    on_ending_signals(move |exit| {
        // Closed once the second signal has been handled: nothing is left to do.
        let _ = tx.send(exit);
    });
    let first = Arc::clone(&interrupts.first);
    tokio::spawn(async move {
        let Some(exit) = rx.recv().await else {
            return;
        };
        first.store(exit.code(), Ordering::SeqCst);
        turn.cancel();
        let Some(second) = rx.recv().await else {
            return;
        };
        processes.kill_all_blocking();
        // `exit` runs no destructors: the MCP servers' groups are killed here.
        if let Some(mcp) = &mcp {
            mcp.kill_now();
        }
        rein_core::face::remove_private_dirs();
        std::process::exit(i32::from(second.code()));
    });
    interrupts
}
