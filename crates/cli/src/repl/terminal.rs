//! The terminal's modes and size. While a turn runs, rein reads keys itself (type-ahead,
//! Ctrl+C, approvals): the terminal then neither echoes nor edits lines nor turns Ctrl+C into
//! a signal, and output processing stays on so `\n` still starts a new line.

use rustix::termios::{self, LocalModes, OptionalActions, SpecialCodeIndex, Termios};

/// Columns assumed when the terminal does not say.
const DEFAULT_COLUMNS: usize = 80;

/// The terminal's width in columns.
pub(crate) fn width() -> usize {
    match termios::tcgetwinsize(std::io::stdout()) {
        Ok(size) if size.ws_col > 0 => usize::from(size.ws_col),
        _ => DEFAULT_COLUMNS,
    }
}

/// The terminal's modes as they were, to put back.
#[derive(Debug, Clone)]
pub(crate) struct SavedModes(Option<Termios>);

impl SavedModes {
    /// The modes of stdin now.
    pub(crate) fn now() -> Self {
        SavedModes(termios::tcgetattr(std::io::stdin()).ok())
    }

    /// Puts them back.
    pub(crate) fn restore(&self) {
        if let Some(modes) = &self.0 {
            let _ = termios::tcsetattr(std::io::stdin(), OptionalActions::Now, modes);
        }
    }
}

/// Switches stdin to reading single keys, without echo or signals; returns the modes to put
/// back.
pub(crate) fn keys_mode() -> SavedModes {
    let saved = SavedModes::now();
    if let Some(modes) = &saved.0 {
        let mut keys = modes.clone();
        keys.local_modes
            .remove(LocalModes::ICANON | LocalModes::ECHO | LocalModes::ISIG | LocalModes::IEXTEN);
        keys.special_codes[SpecialCodeIndex::VMIN] = 1;
        keys.special_codes[SpecialCodeIndex::VTIME] = 0;
        let _ = termios::tcsetattr(std::io::stdin(), OptionalActions::Now, &keys);
    }
    saved
}
