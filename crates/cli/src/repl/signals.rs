//! Signals while the REPL runs. SIGINT (sent by another program; the terminal's Ctrl+C is
//! read as a key) stops the running turn. SIGTERM, SIGHUP and SIGQUIT stop the turn and end
//! rein with their status once it is saved; at the prompt they end it at once, after
//! stopping every process rein started and putting the terminal back. A second one ends
//! rein whatever it is doing.

use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};

use parking_lot::Mutex;
use rein_core::face::{McpHub, ProcessTracker};
use tokio_util::sync::CancellationToken;

use super::terminal::SavedModes;
use crate::exit::Exit;

/// What the signal handlers act on.
#[derive(Clone)]
pub(crate) struct Signals {
    shared: Arc<Shared>,
}

struct Shared {
    turn: Mutex<Option<CancellationToken>>,
    processes: Mutex<ProcessTracker>,
    /// The MCP servers, killed with the processes (they change with the agent only when a
    /// new sandbox started them again).
    mcp: Mutex<Option<Arc<McpHub>>>,
    exit: AtomicU8,
    modes: SavedModes,
}

impl Signals {
    /// Installs the handlers; `modes` are the terminal's modes to put back on the way out.
    pub(crate) fn install(
        processes: ProcessTracker,
        mcp: Option<Arc<McpHub>>,
        modes: SavedModes,
    ) -> Self {
        let signals = Signals {
            shared: Arc::new(Shared {
                turn: Mutex::new(None),
                processes: Mutex::new(processes),
                mcp: Mutex::new(mcp),
                exit: AtomicU8::new(0),
                modes,
            }),
        };
        let shared = Arc::clone(&signals.shared);
        crate::interrupt::on_ending_signals(move |exit| shared.received(exit));
        signals
    }

    /// The turn that signals stop now (`None` between turns).
    pub(crate) fn set_turn(&self, turn: Option<CancellationToken>) {
        *self.shared.turn.lock() = turn;
    }

    /// The processes and MCP servers to stop on the way out (they change with the agent).
    pub(crate) fn follow(&self, processes: ProcessTracker, mcp: Option<Arc<McpHub>>) {
        *self.shared.processes.lock() = processes;
        *self.shared.mcp.lock() = mcp;
    }

    /// How rein should exit because of a signal, if one came that ends it.
    pub(crate) fn exit(&self) -> Option<Exit> {
        Exit::for_signal_status(self.shared.exit.load(Ordering::SeqCst))
    }
}

impl Shared {
    fn received(&self, signal: Exit) {
        let turn = self.turn.lock().clone();
        if signal == Exit::Interrupted {
            if let Some(turn) = turn {
                turn.cancel();
            }
            return;
        }
        let first = self.exit.load(Ordering::SeqCst) == 0;
        self.exit.store(signal.code(), Ordering::SeqCst);
        match turn {
            Some(turn) if first => turn.cancel(),
            // At the prompt, or a second signal: nothing to save, end now.
            _ => {
                self.processes.lock().kill_all_blocking();
                // `exit` runs no destructors: the MCP servers' groups are killed here.
                if let Some(mcp) = &*self.mcp.lock() {
                    mcp.kill_now();
                }
                self.modes.restore();
                rein_core::face::remove_private_dirs();
                std::process::exit(i32::from(signal.code()));
            }
        }
    }
}
