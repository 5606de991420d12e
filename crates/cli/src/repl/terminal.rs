//! The terminal's modes and size. For the whole session the terminal is in "keys mode": it
//! neither echoes nor edits lines nor turns Ctrl+C into a signal (output processing stays on,
//! so `\n` still starts a new line). rustyline switches to its raw mode for each input line
//! and back; between lines and during turns rein reads keys itself (type-ahead, Ctrl+C,
//! approvals). Keys pressed in between stay queued as bytes: in the terminal's line mode a
//! Ctrl+D or a line typed there could be lost when rustyline switches modes.

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
