//! Exit statuses, as DESIGN.md fixes them.

use std::process::ExitCode;

use rein_core::agent::TurnStop;

/// How rein ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// The work is done.
    Done,
    /// An API or configuration failure.
    Runtime,
    /// The command line was wrong (or nothing to do without a key).
    Usage,
    /// The turn stopped before the work was done: at a limit (rounds, repeated identical
    /// calls), or a hook blocked the request.
    Limit,
    /// The person interrupted (SIGINT).
    Interrupted,
    /// SIGTERM.
    Terminated,
    /// SIGHUP (the terminal went away).
    HungUp,
    /// SIGQUIT.
    Quit,
    /// The exit status of the command `rein sandbox -- CMD` ran.
    Child(u8),
}

impl Exit {
    /// The status for a turn that ended this way.
    pub(crate) fn for_stop(stop: TurnStop) -> Exit {
        match stop {
            TurnStop::EndTurn | TurnStop::MaxTokens => Exit::Done,
            TurnStop::MaxRounds
            | TurnStop::RepeatedCalls
            | TurnStop::PromptBlocked
            | TurnStop::MaxCost
            | TurnStop::MaxSessionTokens => Exit::Limit,
            TurnStop::Cancelled => Exit::Interrupted,
            TurnStop::Error => Exit::Runtime,
        }
    }

    /// The process exit status.
    pub(crate) fn code(self) -> u8 {
        match self {
            Exit::Child(code) => code,
            Exit::Done => 0,
            Exit::Runtime => 1,
            Exit::Usage => 2,
            Exit::Limit => 3,
            Exit::Interrupted => 130,
            Exit::Terminated => 143,
            Exit::HungUp => 129,
            Exit::Quit => 131,
        }
    }

    /// The exit for a signal's status (128 + the signal's number), if it is one rein handles.
    pub(crate) fn for_signal_status(code: u8) -> Option<Exit> {
        [
            Exit::Interrupted,
            Exit::Terminated,
            Exit::HungUp,
            Exit::Quit,
        ]
        .into_iter()
        .find(|exit| exit.code() == code)
    }
}

impl From<Exit> for ExitCode {
    fn from(exit: Exit) -> Self {
        ExitCode::from(exit.code())
    }
}
